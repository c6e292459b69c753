//! A run the machine cannot hold is refused before anything is measured,
//! with one line naming the limit (exit 1), never an allocation failing in
//! the middle of the run: the process used to abort (exit 134, with a
//! backtrace) and leave `/dev/shm/cyclictest<pid>` behind.

use std::process::Command;

use crate::support::*;

/// `rtlat ARGS...` under an address-space limit of `kib` KiB (`ulimit -v`,
/// which any user may lower).
fn under_address_space_limit(kib: u64, args: &[&str]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(rtlat_path())
        .args(args)
        .stdin(std::process::Stdio::null());
    cmd
}

/// The refusal: exit 1, one line on stderr naming `limit`, nothing on
/// stdout, no snapshot file left.
fn assert_refused(run: &Run, limit: &str) {
    run.expect_code(1);
    let lines = run.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", run.describe());
    assert!(lines[0].contains(limit), "{}", run.describe());
    assert!(
        lines[0].contains("use fewer threads (-t)"),
        "{}",
        run.describe()
    );
    assert!(run.stdout.is_empty(), "{}", run.describe());
    let snapshot = format!("/dev/shm/cyclictest{}", run.pid);
    assert!(
        !std::path::Path::new(&snapshot).exists(),
        "{snapshot} left behind"
    );
}

#[test]
fn sixty_five_thousand_threads_under_one_gib_are_refused_up_front() {
    skip_if_emulated!(
        "ulimit -v leaves qemu-user no room to reserve its guest address space and code buffer"
    );
    let run = run(&mut under_address_space_limit(
        1 << 20,
        &["cyclictest", "-t", "65536", "-l", "3", "-q"],
    ));
    assert_refused(&run, "RLIMIT_AS leaves");
    assert!(
        run.stderr
            .starts_with("rtlat cyclictest: -t 65536: the run needs about "),
        "{}",
        run.describe()
    );
}

#[test]
fn every_threaded_tool_checks_its_memory_before_the_run() {
    skip_if_emulated!(
        "ulimit -v leaves qemu-user no room to reserve its guest address space and code buffer"
    );
    for args in [
        &["cyclictest", "-t", "4000", "-D", "30", "-q"][..],
        &[
            "cyclictest",
            "--synthetic",
            "1",
            "-t",
            "4000",
            "-l",
            "10",
            "-q",
        ],
        &["svsematest", "-t", "1000", "-D", "30", "-q"],
        &["pmqtest", "-t", "1000", "-D", "30", "-q"],
        &["signaltest", "-t", "4000", "-D", "30", "-q"],
    ] {
        // 64 MiB: far less than 2000 to 4000 threads' stacks and buffers.
        let run = run(&mut under_address_space_limit(64 << 10, args));
        assert_refused(&run, "RLIMIT_AS leaves");
        assert!(run.elapsed.as_secs() < 5, "{args:?} took {:?}", run.elapsed);
    }
}

#[test]
fn more_threads_than_the_kernel_allows_are_refused_up_front() {
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let threads = (pid_max + 1).to_string();
    let run = run(&mut rtlat_cyclictest(["-t", &threads, "-l", "3", "-q"]));
    // Memory may run out first on a small machine; either limit is named.
    run.expect_code(1);
    assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
    assert!(
        run.stderr.contains("threads do not fit") || run.stderr.contains("the run needs about"),
        "{}",
        run.describe()
    );
}
