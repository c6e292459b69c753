//! The Debian package (`ci/package-deb`), built from this test run's
//! binaries for their own architecture (arm64 or armhf in a cross test run
//! under qemu-user): lintian finds no error; where this machine's dpkg
//! takes that architecture, `dpkg -i` installs it; the C tools'
//! names in /usr/lib/rtlat/bin run rtlat without shadowing Debian's
//! rt-tests; `man rtlat-cyclictest` and the bash completion work; the
//! monitor's state in /var/lib/rtlat survives `dpkg -r` and goes with
//! `dpkg --purge` (its postrm); and `dpkg --purge` leaves nothing of it
//! behind. Root, with dpkg.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn has(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output_checked()
        .is_ok_and(|o| o.status.success())
}

fn sh(script: &str) -> Run {
    run_with_timeout(
        Command::new("sh").args(["-c", script]),
        std::time::Duration::from_secs(120),
    )
}

fn purge() {
    let _ = Command::new("dpkg")
        .args(["--purge", "rtlat"])
        .output_checked();
}

/// The Debian architecture of the binaries this test run built (a cross
/// test run under qemu-user builds arm64 or armhf ones on an amd64 host).
fn built_architecture() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Some("amd64"),
        "x86" => Some("i386"),
        "aarch64" => Some("arm64"),
        "arm" => Some("armhf"),
        _ => None,
    }
}

/// Whether this machine's dpkg installs packages of `arch`.
fn dpkg_installs(arch: &str) -> bool {
    let listed = sh("dpkg --print-architecture; dpkg --print-foreign-architectures");
    listed.stdout.lines().any(|a| a.trim() == arch)
}

#[test]
fn the_package_installs_runs_and_goes_away() {
    require_root!();
    let Some(arch) = built_architecture() else {
        skip_note!(
            "SKIPPED (ci/package-deb packs amd64, arm64, armhf or i386, not {}): {}",
            std::env::consts::ARCH,
            function_name!()
        );
        return;
    };
    if !has("dpkg-deb") {
        skip_note!("SKIPPED (needs dpkg-deb): {}", function_name!());
        return;
    }
    let bin_dir = rtlat_path().parent().unwrap().to_path_buf();
    if !bin_dir.join("rtlat-plot").exists() {
        skip_note!(
            "SKIPPED (rtlat-plot not built: run cargo test --workspace): {}",
            function_name!()
        );
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let built = run_with_timeout(
        Command::new(repository().join("ci/package-deb"))
            .args(["--arch", arch])
            .arg("--bin-dir")
            .arg(&bin_dir)
            .arg("--host-bin-dir")
            .arg(&bin_dir)
            .arg("--out")
            .arg(out.path()),
        std::time::Duration::from_secs(120),
    );
    built.expect_code(0);
    let deb = PathBuf::from(built.stdout.lines().last().unwrap());
    assert!(
        deb.ends_with(format!("rtlat_0.1.0-1_{arch}.deb")) && deb.exists(),
        "{deb:?}"
    );
    let control = sh(&format!("dpkg-deb --field {} Architecture", deb.display()));
    assert_eq!(control.stdout.trim(), arch, "{}", control.describe());

    if has("lintian") {
        let l = sh(&format!("lintian --allow-root {} 2>&1", deb.display()));
        let errors: Vec<&str> = l.stdout.lines().filter(|l| l.starts_with("E:")).collect();
        assert!(errors.is_empty(), "lintian errors:\n{}", l.stdout);
    } else {
        skip_note!("SKIPPED lintian (not installed): {}", function_name!());
    }

    if !dpkg_installs(arch) {
        skip_note!(
            "SKIPPED dpkg -i and what follows (this machine's dpkg does not install {arch} \
             packages; built and checked by lintian): {}",
            function_name!()
        );
        return;
    }
    purge();
    // A machine's own /var/lib/rtlat (not this test's) is left alone.
    let state = Path::new("/var/lib/rtlat");
    let own_state = !state.exists();
    let c_before = std::fs::read("/usr/bin/cyclictest").ok();
    let installed = sh(&format!("dpkg -i {} 2>&1", deb.display()));
    assert_eq!(installed.code(), Some(0), "{}", installed.stdout);
    let result = std::panic::catch_unwind(|| {
        // The C tools' names run rtlat, from the symlink directory only.
        let ours = sh("PATH=/usr/lib/rtlat/bin:$PATH cyclictest --help | head -1");
        assert!(
            ours.stdout.starts_with("rtlat cyclictest:"),
            "{}",
            ours.describe()
        );
        let run = sh("PATH=/usr/lib/rtlat/bin:$PATH cyclictest -q -l 50 -i 1000");
        run.expect_code(0);
        assert_eq!(parse_status_lines(&run.stdout).len(), 1, "{}", run.stdout);
        assert_eq!(
            std::fs::read("/usr/bin/cyclictest").ok(),
            c_before,
            "Debian's cyclictest is left alone"
        );
        let version = sh("rtlat --version");
        assert!(
            version.stdout.starts_with("rtlat 0.1.0 (commit "),
            "{}",
            version.stdout
        );
        if has("man") {
            let page = sh("MANPAGER=cat MANWIDTH=80 man rtlat-cyclictest 2>&1");
            assert_eq!(page.code(), Some(0), "{}", page.stdout);
            assert!(page.stdout.contains("--histogram"), "{}", page.stdout);
        } else {
            skip_note!("SKIPPED man (man-db not installed): {}", function_name!());
        }
        let completion =
            sh("bash -c '. /usr/share/bash-completion/completions/rtlat && complete -p rtlat'");
        assert!(
            completion.stdout.contains("rtlat"),
            "{}",
            completion.describe()
        );
        assert!(Path::new("/lib/systemd/system/rtlat-monitor.service").exists());
        // The unit's options, a conffile (an admin's edits survive upgrades).
        let conffiles = sh("dpkg-query -W -f='${Conffiles}' rtlat");
        assert!(
            conffiles.stdout.contains("/etc/default/rtlat-monitor "),
            "{}",
            conffiles.describe()
        );
        if own_state {
            // What rtlat-monitor.service leaves (StateDirectory=rtlat): its
            // checkpoint, kept by a removal for a reinstall to resume.
            std::fs::create_dir(state).unwrap();
            std::fs::write(state.join("monitor.json"), "{}").unwrap();
            let removed = sh("dpkg -r rtlat 2>&1");
            assert_eq!(removed.code(), Some(0), "{}", removed.stdout);
            assert!(
                state.join("monitor.json").exists(),
                "dpkg -r keeps the state"
            );
        } else {
            skip_note!(
                "SKIPPED the state on purge (this machine has its own /var/lib/rtlat): {}",
                function_name!()
            );
        }
    });
    let purged = sh("dpkg --purge rtlat 2>&1");
    if own_state && result.is_err() {
        let _ = std::fs::remove_dir_all(state);
    }
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
    assert_eq!(purged.code(), Some(0), "{}", purged.stdout);
    for gone in [
        "/usr/bin/rtlat",
        "/usr/bin/rtlat-plot",
        "/usr/lib/rtlat",
        "/usr/share/man/man1/rtlat-cyclictest.1.gz",
        "/usr/share/doc/rtlat",
        "/lib/systemd/system/rtlat-monitor.service",
        "/etc/default/rtlat-monitor",
    ] {
        assert!(!Path::new(gone).exists(), "{gone} left behind");
    }
    if own_state {
        assert!(!state.exists(), "/var/lib/rtlat left behind by the purge");
    }
    let listed = sh("dpkg -s rtlat 2>&1");
    assert_ne!(
        listed.code(),
        Some(0),
        "still known to dpkg: {}",
        listed.stdout
    );
}
