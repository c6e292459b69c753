//! Whether this program runs under a user-mode emulator (qemu-user), where
//! timing does not hold: a "sleep" of 200 µs takes whatever the translated
//! code takes, signals arrive when the emulator delivers them, and `strace`
//! sees the emulator's system calls rather than the program's. Tests that
//! depend on timing or on tracing the program's calls ask this and say
//! SKIPPED with the reason.
//!
//! Two honest signs, either one enough:
//! - `RTLAT_EMULATED` set and not empty (what `ci/cross` sets when it runs
//!   the ARM tests under qemu; the value names the emulator);
//! - the running kernel's architecture (`/proc/sys/kernel/arch`, which
//!   qemu-user passes through from the host, unlike `uname(2)`, which it
//!   answers with the guest's) cannot run this program's code natively:
//!   an aarch64 program on an x86_64 kernel. A 32-bit program on its
//!   64-bit kernel (i686 on x86_64, armv7 on aarch64) runs natively. An
//!   enabled binfmt_misc entry `qemu-<arch>` names the emulator.

use std::path::Path;

/// The reason this program is emulated ("qemu-aarch64 (RTLAT_EMULATED)",
/// "aarch64 code on an x86_64 kernel, through binfmt_misc qemu-aarch64"),
/// or `None` when it runs natively (or nothing says otherwise).
pub fn emulated() -> Option<String> {
    emulated_in(
        std::env::var("RTLAT_EMULATED").ok().as_deref(),
        std::env::consts::ARCH,
        Path::new("/proc/sys"),
    )
}

fn emulated_in(variable: Option<&str>, ours: &str, proc_sys: &Path) -> Option<String> {
    if let Some(name) = variable.filter(|v| !v.is_empty()) {
        return Some(format!("{name} (RTLAT_EMULATED)"));
    }
    let kernel = std::fs::read_to_string(proc_sys.join("kernel/arch")).ok()?;
    let kernel = kernel.trim();
    if kernel.is_empty() || runs_natively(ours, kernel) {
        return None;
    }
    let mut reason = format!("{ours} code on an {kernel} kernel");
    let entry = format!("qemu-{}", qemu_name(ours));
    let binfmt = std::fs::read_to_string(proc_sys.join("fs/binfmt_misc").join(&entry));
    if binfmt.is_ok_and(|text| text.starts_with("enabled")) {
        reason.push_str(&format!(", through binfmt_misc {entry}"));
    }
    Some(reason)
}

/// Whether a kernel of architecture `kernel` (as `uname -m` names it)
/// runs code of Rust's architecture `ours` without an emulator.
fn runs_natively(ours: &str, kernel: &str) -> bool {
    match ours {
        "x86" => matches!(kernel, "i386" | "i486" | "i586" | "i686" | "x86_64"),
        "x86_64" => kernel == "x86_64",
        "arm" => kernel.starts_with("arm") || kernel == "aarch64",
        "aarch64" => kernel == "aarch64",
        other => kernel.starts_with(other),
    }
}

/// qemu-user's name for Rust's architecture (`qemu-i386`, `qemu-arm`).
fn qemu_name(ours: &str) -> &str {
    match ours {
        "x86" => "i386",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc_sys(kernel: &str, binfmt: Option<(&str, &str)>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("kernel")).unwrap();
        std::fs::create_dir_all(dir.path().join("fs/binfmt_misc")).unwrap();
        std::fs::write(dir.path().join("kernel/arch"), format!("{kernel}\n")).unwrap();
        if let Some((name, text)) = binfmt {
            std::fs::write(dir.path().join("fs/binfmt_misc").join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn the_variable_says_so() {
        let dir = proc_sys("x86_64", None);
        assert_eq!(
            emulated_in(Some("qemu-arm"), "x86_64", dir.path()).as_deref(),
            Some("qemu-arm (RTLAT_EMULATED)")
        );
        assert_eq!(emulated_in(Some(""), "x86_64", dir.path()), None);
    }

    #[test]
    fn foreign_code_on_the_kernel_is_emulated() {
        let dir = proc_sys("x86_64", Some(("qemu-aarch64", "enabled\ninterpreter x\n")));
        assert_eq!(
            emulated_in(None, "aarch64", dir.path()).as_deref(),
            Some("aarch64 code on an x86_64 kernel, through binfmt_misc qemu-aarch64")
        );
        let dir = proc_sys("x86_64", Some(("qemu-arm", "disabled\n")));
        assert_eq!(
            emulated_in(None, "arm", dir.path()).as_deref(),
            Some("arm code on an x86_64 kernel")
        );
    }

    #[test]
    fn a_32_bit_program_on_its_64_bit_kernel_is_native() {
        let dir = proc_sys("x86_64", Some(("qemu-i386", "enabled\n")));
        assert_eq!(emulated_in(None, "x86", dir.path()), None);
        assert_eq!(emulated_in(None, "x86_64", dir.path()), None);
        let dir = proc_sys("aarch64", None);
        assert_eq!(emulated_in(None, "arm", dir.path()), None);
        assert_eq!(emulated_in(None, "aarch64", dir.path()), None);
    }

    #[test]
    fn no_kernel_arch_file_means_native() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(emulated_in(None, "aarch64", dir.path()), None);
    }
}
