//! The Debian package (`ci/package-deb`), built from this test run's
//! binaries for their own architecture (arm64 or armhf in a cross test run
//! under qemu-user): lintian finds no error; where this machine's dpkg
//! takes that architecture, `dpkg -i` installs it; the C tools'
//! names in /usr/lib/rtlat/bin run rtlat without shadowing Debian's
//! rt-tests; `man rtlat-cyclictest` and the bash completion work; the
//! monitor's state in /var/lib/rtlat survives `dpkg -r` and goes with
//! `dpkg --purge` (its postrm); and `dpkg --purge` leaves nothing of it
//! behind. Root, with dpkg.
//!
//! The release artifacts of this commit (`ci/release`, in target/dist) for
//! amd64 and i386: SHA256SUMS holds, each tarball runs from where it is
//! unpacked, and each package installs, runs (`cyclictest -l 100`, `rtlat
//! audit`) and is purged. i386 packages install here once dpkg takes the
//! architecture and libc6:i386 is installed. Where the artifacts or that
//! architecture are missing the test says SKIPPED, unless
//! `RTLAT_RELEASE_REQUIRED=1` (what .ci/run sets after `ci/release`), when
//! it fails.

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

/// dpkg installs and purges one rtlat at a time, whichever test or test
/// process (another tree's suite) does it.
fn dpkg_lock() -> std::fs::File {
    crate::support::machine_lock::lock_named("rtlat-test-dpkg.lock")
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
    // The README's guide ships beside it, every page of docs/.
    let contents = sh(&format!("dpkg-deb --contents {}", deb.display()));
    let guide: Vec<String> = std::fs::read_dir(repository().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".md"))
        .collect();
    assert!(guide.iter().any(|name| name == "usage.md"), "{guide:?}");
    for page in &guide {
        let shipped = format!("./usr/share/doc/rtlat/docs/{page}.gz");
        assert!(
            contents.stdout.lines().any(|l| l.ends_with(&shipped)),
            "{shipped} not in the package:\n{}",
            contents.stdout
        );
    }
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
    let _dpkg = dpkg_lock();
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
        // Every measuring tool's C name, each a link that runs its tool.
        let names = crate::docs::c_names();
        for name in &names {
            let help = sh(&format!("/usr/lib/rtlat/bin/{name} --help | head -1"));
            assert!(
                help.stdout.starts_with(&format!("rtlat {name}:")),
                "{name}: {}",
                help.describe()
            );
        }
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

/// Says that `what` cannot be checked and why: a failure where the caller
/// asked for the release artifacts to be checked (`RTLAT_RELEASE_REQUIRED`),
/// a SKIPPED line otherwise.
fn release_missing(test: &str, what: &str, why: &str) {
    if std::env::var_os("RTLAT_RELEASE_REQUIRED").is_some_and(|v| v == "1") {
        panic!("{what}: {why} (RTLAT_RELEASE_REQUIRED=1)");
    }
    skip_note!("SKIPPED {what} ({why}): {test}");
}

/// The file names of this commit's release artifacts start with this
/// (`ci/release`: version and commit, as `rtlat --version` says them).
fn release_stem() -> String {
    format!(
        "rtlat-{}-{}",
        env!("CARGO_PKG_VERSION"),
        rtlat_args::version::COMMIT
    )
}

/// The Rust target each Debian architecture's binaries are built for.
fn release_target(arch: &str) -> &'static str {
    match arch {
        "amd64" => "x86_64-unknown-linux-gnu",
        _ => "i686-unknown-linux-gnu",
    }
}

#[test]
fn the_release_artifacts_install_run_and_go_away() {
    let test = function_name!();
    if std::env::consts::ARCH != "x86_64" {
        skip_note!(
            "SKIPPED (the release artifacts are checked by the x86-64 suite, not the {} one): \
             {test}",
            std::env::consts::ARCH
        );
        return;
    }
    if !is_root() || !has("dpkg") {
        release_missing(test, "the release artifacts", "needs root and dpkg");
        return;
    }
    let dist = repository().join("target/dist");
    let stem = release_stem();
    let sums = dist.join(format!("{stem}-SHA256SUMS"));
    if !sums.exists() {
        release_missing(
            test,
            "the release artifacts",
            &format!(
                "no {}: run ci/release --arch amd64 --arch i386",
                sums.display()
            ),
        );
        return;
    }
    let checked = sh(&format!(
        "cd {} && sha256sum --check --strict {stem}-SHA256SUMS 2>&1",
        dist.display()
    ));
    assert_eq!(checked.code(), Some(0), "{}", checked.stdout);
    for arch in ["amd64", "i386"] {
        let deb = dist.join(format!("{stem}-{arch}.deb"));
        let tarball = dist.join(format!("{stem}-{arch}.tar.gz"));
        if !deb.exists() || !tarball.exists() {
            release_missing(
                test,
                &format!("the {arch} release artifacts"),
                &format!(
                    "no {} or {}: run ci/release --arch {arch}",
                    deb.display(),
                    tarball.display()
                ),
            );
            continue;
        }
        let listed = checked.stdout.lines().filter(|l| {
            l.ends_with(": OK")
                && (l.starts_with(&format!("{stem}-{arch}.deb"))
                    || l.starts_with(&format!("{stem}-{arch}.tar.gz")))
        });
        assert_eq!(
            listed.count(),
            2,
            "{arch} in SHA256SUMS: {}",
            checked.stdout
        );
        if !dpkg_installs(arch) || !sh(&format!("dpkg -s libc6:{arch}")).status.success() {
            release_missing(
                test,
                &format!("the {arch} release artifacts"),
                &format!(
                    "this machine does not run {arch} programs: as root, dpkg \
                     --add-architecture {arch}; apt-get update; apt-get install libc6:{arch}"
                ),
            );
            continue;
        }
        release_tarball_runs(&tarball, arch);
        release_package_installs_runs_and_goes_away(&deb, arch);
    }
}

/// The tarball unpacks into one directory of its name, whose rtlat runs
/// from there and finds rtlat-plot beside it; it holds the man pages, the
/// completions, the C tools' names and every file of contrib/systemd.
fn release_tarball_runs(tarball: &Path, arch: &str) {
    let dir = tempfile::tempdir().unwrap();
    let unpacked = sh(&format!(
        "tar -xzf {} -C {} 2>&1",
        tarball.display(),
        dir.path().display()
    ));
    assert_eq!(unpacked.code(), Some(0), "{}", unpacked.stdout);
    let name = tarball.file_name().unwrap().to_str().unwrap();
    let top = dir.path().join(name.strip_suffix(".tar.gz").unwrap());
    let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(entries.len(), 1, "{arch}: one directory at the top");
    let version = sh(&format!("{}/bin/rtlat --version", top.display()));
    assert_eq!(
        version.stdout,
        format!(
            "rtlat {} (commit {}, {})\n",
            env!("CARGO_PKG_VERSION"),
            rtlat_args::version::COMMIT,
            release_target(arch)
        ),
        "{}",
        version.describe()
    );
    let plot = sh(&format!("{}/bin/rtlat plot --help", top.display()));
    assert_eq!(plot.code(), Some(0), "{}", plot.describe());
    let c_name = sh(&format!(
        "{}/lib/rtlat/bin/cyclictest -q -l 10 -i 1000",
        top.display()
    ));
    assert_eq!(
        parse_status_lines(&c_name.stdout).len(),
        1,
        "{}",
        c_name.describe()
    );
    for file in [
        "share/man/man1/rtlat.1.gz",
        "share/man/man1/rtlat-cyclictest.1.gz",
        "share/bash-completion/completions/rtlat",
        "share/doc/rtlat/README.md",
        "share/doc/rtlat/docs/usage.md",
        "share/doc/rtlat/LICENSE-MIT",
        "share/doc/rtlat/LICENSE-APACHE",
    ] {
        assert!(top.join(file).is_file(), "{arch}: no {file} in {name}");
    }
    for unit in std::fs::read_dir(repository().join("contrib/systemd")).unwrap() {
        let unit = unit.unwrap();
        let shipped = top.join("share/rtlat/systemd").join(unit.file_name());
        assert_eq!(
            std::fs::read(&shipped).ok(),
            std::fs::read(unit.path()).ok(),
            "{arch}: {} as in contrib/systemd",
            shipped.display()
        );
    }
}

/// `dpkg -i`, the C tools' name and `rtlat audit` run, `dpkg --purge`
/// leaves nothing of it.
fn release_package_installs_runs_and_goes_away(deb: &Path, arch: &str) {
    let _dpkg = dpkg_lock();
    purge();
    let installed = sh(&format!("dpkg -i {} 2>&1", deb.display()));
    assert_eq!(installed.code(), Some(0), "{arch}: {}", installed.stdout);
    let result = std::panic::catch_unwind(|| {
        let status = sh("dpkg-query -W -f '${Architecture} ${Status}' rtlat");
        assert_eq!(status.stdout, format!("{arch} install ok installed"));
        let version = sh("rtlat --version");
        assert!(
            version
                .stdout
                .ends_with(&format!(", {})\n", release_target(arch))),
            "{arch}: {}",
            version.describe()
        );
        let run = sh("PATH=/usr/lib/rtlat/bin:$PATH cyclictest -q -l 100");
        run.expect_code(0);
        assert_eq!(parse_status_lines(&run.stdout).len(), 1, "{}", run.stdout);
        // The audit reads the machine, whatever it finds: exit 0.
        let audit = sh("rtlat audit");
        audit.expect_code(0);
        assert!(!audit.stdout.trim().is_empty(), "{}", audit.describe());
    });
    let purged = sh("dpkg --purge rtlat 2>&1");
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
    assert_eq!(purged.code(), Some(0), "{arch}: {}", purged.stdout);
    for gone in ["/usr/bin/rtlat", "/usr/lib/rtlat", "/usr/share/doc/rtlat"] {
        assert!(!Path::new(gone).exists(), "{arch}: {gone} left behind");
    }
}
