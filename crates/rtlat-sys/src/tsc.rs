//! The time-stamp counter (`rtlat cyclictest --measure tsc`), x86_64 only.
//!
//! Reads are `rdtscp` (which waits for earlier instructions to finish);
//! [`support`] says whether the counter is usable as a clock: it must tick
//! at a constant rate (`constant_tsc`) and keep ticking in deep idle states
//! (`nonstop_tsc`).
#![allow(unsafe_code)]

/// Whether this machine's TSC can measure time: `Err` with a one-line
/// reason otherwise (not x86_64, or `/proc/cpuinfo` lacks the flags).
pub fn support() -> Result<(), String> {
    if !cfg!(target_arch = "x86_64") {
        return Err(format!(
            "the TSC is an x86_64 counter and this is {}",
            std::env::consts::ARCH
        ));
    }
    let info = std::fs::read_to_string("/proc/cpuinfo")
        .map_err(|e| format!("cannot read /proc/cpuinfo: {e}"))?;
    let flags = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .ok_or("/proc/cpuinfo has no flags line")?;
    let has = |name: &str| flags.split_whitespace().any(|f| f == name);
    let missing: Vec<&str> = ["constant_tsc", "nonstop_tsc"]
        .into_iter()
        .filter(|f| !has(f))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the CPU flags lack {}: the TSC does not tick at a steady rate",
            missing.join(" and ")
        ))
    }
}

/// The current TSC value (`rdtscp`). Only meaningful where [`support`]
/// says yes; 0 on other architectures.
#[inline(always)]
pub fn read() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut aux = 0u32;
        // SAFETY: rdtscp exists on every x86_64 CPU with constant_tsc (all
        // since 2008), has no memory side effect and only writes `aux`, a
        // live local.
        unsafe { core::arch::x86_64::__rdtscp(&mut aux) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    #[test]
    fn tsc_moves_forward() {
        let a = super::read();
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert!(super::read() > a);
    }
}
