//! The running-status file (root): SIGUSR2 writes the status block to `/dev/shm/cyclictest<pid>`, read back with rt-tests' `get_cyclictest_snapshot`; the file is exactly the block (no NUL bytes) and is removed at every clean exit. Each run is pinned to its test's leased CPU; the file is made before the measuring threads start, so it exists once they are real-time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::{
    Run, check_status_invariants, parse_status_lines, rtlat_cyclictest, run_with_timeout, spawn,
    wait_for_realtime_threads, wait_until,
};

const SNAPSHOT_TOOLS: &[&str] = &[
    "/usr/sbin/get_cyclictest_snapshot",
    "/usr/bin/get_cyclictest_snapshot",
];

fn snapshot_tool() -> Option<&'static str> {
    SNAPSHOT_TOOLS
        .iter()
        .copied()
        .find(|p| Path::new(p).is_file())
}

fn shm_file(pid: u32) -> PathBuf {
    PathBuf::from(format!("/dev/shm/cyclictest{pid}"))
}

fn get_snapshot(tool: &str, args: &[&str]) -> Run {
    let r = run_with_timeout(
        Command::new(tool)
            .args(args)
            .stdin(std::process::Stdio::null()),
        Duration::from_secs(5),
    );
    r.expect_code(0);
    r
}

/// Removes a status file left behind when a failing test killed its child
/// (SIGKILL allows no clean-up). Declare it before the child so that it
/// drops after it.
struct LeftoverCleanup(Option<u32>);

impl Drop for LeftoverCleanup {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = std::fs::remove_file(shm_file(pid));
        }
    }
}

const RULE: &str = "#---------------------------";

/// Checks the status block and returns its `T:` lines.
fn check_block(text: &str, threads: usize) -> Vec<crate::support::StatusLine> {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), threads + 3, "block: {text:?}");
    assert_eq!(lines[0], RULE);
    assert_eq!(lines[1], "# cyclictest current status:");
    assert_eq!(lines[threads + 2], RULE);
    let status = parse_status_lines(text);
    assert_eq!(status.len(), threads, "{text:?}");
    check_status_invariants(&status);
    for (i, l) in status.iter().enumerate() {
        assert_eq!(l.index, i as i64);
        assert!(l.cycles > 0, "snapshot mid-run: {l:?}");
        assert_eq!(l.prio, 80);
    }
    status
}

/// Waits until the status file holds a whole block other than `old` (the
/// sign that a SIGUSR2 was answered: the file is emptied, then written).
fn wait_for_block(pid: u32, threads: usize, old: &str) {
    let whole = |text: &str| {
        text != old && text.lines().count() == threads + 3 && text.ends_with(&format!("{RULE}\n"))
    };
    let mut seen = String::new();
    let written = wait_until(Duration::from_secs(3), || {
        seen = std::fs::read_to_string(shm_file(pid)).unwrap_or_default();
        whole(&seen)
    });
    assert!(
        written,
        "no new status block in {} after SIGUSR2: {seen:?}",
        shm_file(pid).display()
    );
}

/// Reads the status file and checks it is exactly one block.
fn read_file(pid: u32, threads: usize) -> (String, Vec<crate::support::StatusLine>) {
    let bytes = std::fs::read(shm_file(pid)).expect("reading the status file");
    assert!(!bytes.contains(&0), "no NUL bytes: {bytes:?}");
    let text = String::from_utf8(bytes).expect("UTF-8");
    assert!(text.ends_with('\n'));
    let status = check_block(&text, threads);
    (text, status)
}

#[test]
fn sigusr2_round_trip_with_get_cyclictest_snapshot() {
    require_root!();
    let Some(tool) = snapshot_tool() else {
        skip_note!(
            "SKIPPED (needs get_cyclictest_snapshot): {}",
            function_name!()
        );
        return;
    };
    let lease = CpuLease::one();
    let mut cleanup = LeftoverCleanup(None);
    // Ended by SIGINT below; -D only bounds it. Three runs of the Python
    // tool can take seconds on a loaded machine: the run must outlast them.
    let child = spawn(&mut rtlat_cyclictest([
        "-q",
        "-p",
        "80",
        "-i",
        "1000",
        "-D",
        "20",
        "-t",
        "2",
        "-a",
        &lease.list(),
    ]));
    let pid = child.pid();
    cleanup.0 = Some(pid);
    wait_for_realtime_threads(pid, 2);
    assert!(
        shm_file(pid).exists(),
        "the status file exists while running"
    );
    // The duration is the point: each thread has samples (thread 1 every
    // 1.5 ms) when the snapshot is taken.
    std::thread::sleep(Duration::from_millis(50));

    let list = get_snapshot(tool, &["-l"]);
    assert!(
        list.stdout.lines().any(|l| l.trim() == pid.to_string()),
        "-l lists {pid}:\n{}",
        list.describe()
    );
    let pid_s = pid.to_string();
    get_snapshot(tool, &["-s", &pid_s]);
    wait_for_block(pid, 2, "");
    let printed = get_snapshot(tool, &["-p", &pid_s]);
    let (text, first) = read_file(pid, 2);
    assert_eq!(
        printed.stdout,
        format!("{text}\n"),
        "-p prints the file (plus print()'s newline)"
    );

    // A second snapshot replaces the first: still exactly one block.
    child.signal("USR2");
    wait_for_block(pid, 2, &text);
    let (_, second) = read_file(pid, 2);
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(a.tid, b.tid);
        assert!(b.cycles > a.cycles, "a newer snapshot: {a:?} then {b:?}");
    }

    child.signal("INT");
    let r = child.wait(Duration::from_secs(3));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert!(!shm_file(pid).exists(), "removed after SIGINT");
    assert_eq!(r.stderr, "", "SIGUSR2 writes nothing to stderr");
    let end = parse_status_lines(&r.stdout);
    assert_eq!(end.len(), 2);
    assert_eq!(
        end.iter().map(|l| l.tid).collect::<Vec<_>>(),
        second.iter().map(|l| l.tid).collect::<Vec<_>>()
    );
}

#[test]
fn status_file_removed_after_sigterm() {
    skip_if_emulated!(
        "the snapshot must show samples 50 ms into the run, a time an emulated run does not keep"
    );
    require_root!();
    let lease = CpuLease::one();
    let mut cleanup = LeftoverCleanup(None);
    // Ended by SIGTERM below; -D only bounds it.
    let child = spawn(&mut rtlat_cyclictest([
        "-q",
        "-p",
        "80",
        "-D",
        "20",
        "-a",
        &lease.list(),
    ]));
    let pid = child.pid();
    cleanup.0 = Some(pid);
    wait_for_realtime_threads(pid, 1);
    assert!(
        shm_file(pid).exists(),
        "the status file exists while running"
    );
    // The duration is the point: the thread has samples when the snapshot
    // is taken.
    std::thread::sleep(Duration::from_millis(50));
    child.signal("USR2");
    wait_for_block(pid, 1, "");
    read_file(pid, 1);
    child.signal("TERM");
    let r = child.wait(Duration::from_secs(3));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert!(!shm_file(pid).exists(), "removed after SIGTERM");
}

#[test]
fn status_file_removed_after_loops() {
    require_root!();
    let lease = CpuLease::one();
    let mut cleanup = LeftoverCleanup(None);
    let child = spawn(&mut rtlat_cyclictest([
        "-q",
        "-p",
        "80",
        "-l",
        "400",
        "-a",
        &lease.list(),
    ]));
    let pid = child.pid();
    cleanup.0 = Some(pid);
    wait_for_realtime_threads(pid, 1);
    assert!(
        shm_file(pid).exists(),
        "the status file exists while running"
    );
    let r = child.wait(Duration::from_secs(3));
    r.expect_code(0);
    assert_eq!(parse_status_lines(&r.stdout)[0].cycles, 400);
    assert!(!shm_file(pid).exists(), "removed after -l");
}

#[test]
fn sigusr1_status_block_on_stderr_two_threads() {
    require_root!();
    let lease = CpuLease::one();
    let mut cleanup = LeftoverCleanup(None);
    let child = spawn(&mut rtlat_cyclictest([
        "-q",
        "-p",
        "80",
        "-i",
        "1000",
        "-l",
        "600",
        "-t",
        "2",
        "-a",
        &lease.list(),
    ]));
    cleanup.0 = Some(child.pid());
    wait_for_realtime_threads(child.pid(), 2);
    // The duration is the point: each thread has samples when the status
    // is asked for, well before the run's end at 600 ms.
    std::thread::sleep(Duration::from_millis(300));
    child.signal("USR1");
    let r = child.wait(Duration::from_secs(3));
    r.expect_code(0);
    check_block(&r.stderr, 2);
    assert_eq!(parse_status_lines(&r.stdout)[0].cycles, 600);
    assert!(!shm_file(r.pid).exists(), "removed after -l");
}
