//! The System Management Interrupt counter of Intel CPUs (`--smi`): model
//! specific register 0x34, `MSR_SMI_COUNT`, read through the `msr` driver's
//! `/dev/cpu/<cpu>/msr`.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::Errno;

/// Address of `MSR_SMI_COUNT`.
pub const MSR_SMI_COUNT: u64 = 0x34;

/// Whether this CPU has the SMI counter: `Ok` on x86 with an Intel
/// (`GenuineIntel`) family-6 CPU, the rule of rt-tests 2.7 and later;
/// otherwise a one-line reason.
pub fn smi_support() -> Result<(), String> {
    if !cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        return Err(format!(
            "the SMI counter (MSR 0x34) exists only on Intel x86 CPUs; this is {}",
            std::env::consts::ARCH
        ));
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo")
        .map_err(|e| format!("cannot read /proc/cpuinfo to check for the SMI counter: {e}"))?;
    smi_support_from_cpuinfo(&cpuinfo)
}

/// The value of the first `key : value` line of `/proc/cpuinfo` text.
fn cpuinfo_field<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == key).then(|| value.trim())
    })
}

fn smi_support_from_cpuinfo(cpuinfo: &str) -> Result<(), String> {
    let vendor = cpuinfo_field(cpuinfo, "vendor_id").unwrap_or("an unknown vendor");
    let family = cpuinfo_field(cpuinfo, "cpu family").unwrap_or("unknown");
    if vendor == "GenuineIntel" && family == "6" {
        Ok(())
    } else {
        Err(format!(
            "the SMI counter (MSR 0x34) exists only on Intel family-6 CPUs; \
             this CPU is {vendor} family {family}"
        ))
    }
}

/// An open `/dev/cpu/<cpu>/msr`, for reading the SMI count of that CPU.
#[derive(Debug)]
pub struct SmiCounter {
    file: File,
}

impl SmiCounter {
    /// Opens the MSR device of `cpu` (needs the `msr` module and, usually,
    /// root). The error is the operating system's, as is (its errno
    /// intact).
    pub fn open(cpu: usize) -> io::Result<SmiCounter> {
        let file = File::open(format!("/dev/cpu/{cpu}/msr"))?;
        Ok(SmiCounter { file })
    }

    /// The current SMI count: one `pread` of 8 bytes at offset 0x34. No
    /// allocation: measuring threads call it every cycle.
    pub fn read(&self) -> Result<u64, Errno> {
        let mut bytes = [0u8; 8];
        match self.file.read_exact_at(&mut bytes, MSR_SMI_COUNT) {
            Ok(()) => Ok(u64::from_ne_bytes(bytes)),
            Err(e) => Err(e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn support_follows_the_vendor_and_family_of_this_cpu() {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").expect("read /proc/cpuinfo");
        let vendor = cpuinfo_field(&cpuinfo, "vendor_id").unwrap_or("an unknown vendor");
        let family = cpuinfo_field(&cpuinfo, "cpu family").unwrap_or("unknown");
        let x86 = cfg!(any(target_arch = "x86", target_arch = "x86_64"));
        match smi_support() {
            Ok(()) => assert!(x86 && vendor == "GenuineIntel" && family == "6"),
            Err(reason) => {
                assert!(!(x86 && vendor == "GenuineIntel" && family == "6"));
                if x86 {
                    assert!(reason.contains(vendor), "{reason}");
                }
                assert!(!reason.contains('\n'), "{reason}");
            }
        }
    }

    #[test]
    fn cpuinfo_rule() {
        let intel = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n";
        assert_eq!(smi_support_from_cpuinfo(intel), Ok(()));
        let amd = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n";
        assert_eq!(
            smi_support_from_cpuinfo(amd),
            Err(
                "the SMI counter (MSR 0x34) exists only on Intel family-6 CPUs; \
                 this CPU is AuthenticAMD family 25"
                    .to_string()
            )
        );
        let old_intel = "vendor_id\t: GenuineIntel\ncpu family\t: 15\n";
        assert!(smi_support_from_cpuinfo(old_intel).is_err());
    }

    #[test]
    fn open_errors_are_io_errors() {
        let err = SmiCounter::open(1_000_000).expect_err("no such CPU");
        assert_eq!(err.raw_os_error(), Some(Errno::NOENT.raw_os_error()));
        // CPU 0 exists; its MSR device may or may not (module, privilege,
        // vendor). Either way no panic, and a read gives a count or an errno.
        match SmiCounter::open(0) {
            Ok(counter) => {
                let _ = counter.read();
            }
            Err(e) => eprintln!("/dev/cpu/0/msr: {e}"),
        }
    }
}
