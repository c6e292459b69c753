//! Signals and pipes (root for real runs): SIGINT/SIGTERM/SIGHUP end a run cleanly with its report, SIGUSR1 prints a status block, a closed stdout pipe ends it quietly. Each run is pinned to the CPUs its test leases, and signalled once its measuring threads are real-time (its stop-signal handlers are installed by then).

use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::{
    check_histogram_invariants, json_thread_ints, parse_histogram, parse_status_line,
    parse_status_lines, read_json, rtlat_cyclictest, rtlat_path, run_with_timeout, spawn,
    symlinked_cyclictest, wait_for_realtime_threads,
};

/// An endless run (no `-l`) stopped by `signal` 700 ms after its measuring
/// thread started.
fn stops_cleanly_on(signal: &str, with_json: bool) {
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("sig.json");
    let mut cmd = rtlat_cyclictest([
        "-q",
        "-m",
        "-p",
        "80",
        "-i",
        "1000",
        "-h",
        "100",
        "-a",
        &lease.list(),
    ]);
    if with_json {
        cmd.arg(format!("--json={}", json_path.display()));
    }
    let child = spawn(&mut cmd);
    wait_for_realtime_threads(child.pid(), 1);
    // The duration is the point: the run measures for a while (about 700
    // samples) before it is stopped.
    std::thread::sleep(Duration::from_millis(700));
    child.signal(signal);
    let r = child.wait(Duration::from_secs(2));
    assert_eq!(r.code(), Some(0), "SIG{signal}\n{}", r.describe());
    assert!(r.stdout.contains("# Total:"), "{}", r.describe());
    let h = parse_histogram(&r.stdout).expect("histogram block");
    let samples = h.total[0] + h.overflows[0];
    assert!(
        samples > 100,
        "about 700 cycles before SIG{signal}: {samples}"
    );
    if with_json {
        let json = read_json(&json_path);
        assert_eq!(json["return_code"], 0);
        let cycles = json_thread_ints(&json, "cycles");
        check_histogram_invariants(&h, Some(&[cycles[0] as u64]));
    } else {
        check_histogram_invariants(&h, None);
    }
}

#[test]
fn sigint_stops_with_the_histogram() {
    require_root!();
    stops_cleanly_on("INT", false);
}

#[test]
fn sigterm_stops_with_histogram_and_json() {
    require_root!();
    stops_cleanly_on("TERM", true);
}

#[test]
fn sighup_stops_with_histogram_and_json() {
    require_root!();
    stops_cleanly_on("HUP", true);
}

/// rteval's command line, verbatim, through a `cyclictest` symlink.
#[test]
fn rteval_command_through_the_symlink() {
    require_root!();
    let cpus = crate::support::allowed_cpus();
    if !(cpus.contains(&0) && cpus.contains(&1)) {
        skip_note!("SKIPPED (needs CPUs 0 and 1): {}", function_name!());
        return;
    }
    // rteval's -a0-1: CPUs 0 and 1, the lowest allowed ones.
    let lease = CpuLease::several(2).expect("two allowed CPUs");
    assert_eq!(lease.cpus(), [0, 1]);
    let link = symlinked_cyclictest();
    let child = spawn(
        link.command()
            .args(["-i100", "-qmu", "-h 3500", "-p95", "-t2", "-a0-1"]),
    );
    wait_for_realtime_threads(child.pid(), 2);
    // The duration is the point: 1.5 s of samples at -i100 (15000 each).
    std::thread::sleep(Duration::from_millis(1500));
    child.signal("INT");
    let r = child.wait(Duration::from_secs(2));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let lines: Vec<&str> = r.stdout.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == "# Histogram")
        .expect("# Histogram");
    assert!(
        lines[start + 1].starts_with("000000 "),
        "{:?}",
        lines[start + 1]
    );
    assert!(
        lines[start + 3500].starts_with("003499 "),
        "{:?}",
        lines[start + 3500]
    );
    assert!(
        lines[start + 3501].starts_with("# Total: "),
        "{:?}",
        lines[start + 3501]
    );
    let h = parse_histogram(&r.stdout).unwrap();
    assert_eq!((h.threads(), h.buckets()), (2, 3500));
    assert_eq!(h.total_sum, None, "-h: no sum column");
    assert_eq!(
        lines[start + 3501].split_whitespace().count(),
        4,
        "# Total: with 2 columns"
    );
    assert!(
        h.total[0] + h.overflows[0] > 1000,
        "-i100 for 1.5 s: {:?}",
        h.total
    );
    check_histogram_invariants(&h, None);
}

#[test]
fn closed_pipe_ends_the_run_quietly() {
    require_root!();
    let lease = CpuLease::one();
    let script = format!(
        "'{}' cyclictest -p 80 -i 1000 -D 3 -a {} | head -3; echo \"rc=${{PIPESTATUS[0]}}\" >&2",
        rtlat_path().display(),
        lease.list()
    );
    let r = run_with_timeout(
        std::process::Command::new("bash").args(["-c", &script]),
        Duration::from_secs(5),
    );
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert_faster_than!(
        r.elapsed,
        Duration::from_millis(1500),
        "the pipeline ends well before -D 3: {:?}",
        r.elapsed
    );
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.describe());
    let lines = r.stderr_lines();
    assert_eq!(
        lines.last(),
        Some(&"rc=0"),
        "rtlat's own exit status\n{}",
        r.describe()
    );
    for l in &lines {
        let lower = l.to_lowercase();
        assert!(
            !lower.contains("panic") && !lower.contains("error") && !lower.contains("broken pipe"),
            "stderr line {l:?}\n{}",
            r.describe()
        );
    }
}

#[test]
fn sigusr1_prints_status_and_the_run_continues() {
    require_root!();
    let lease = CpuLease::one();
    let child = spawn(&mut rtlat_cyclictest([
        "-q",
        "-m",
        "-p",
        "80",
        "-i",
        "1000",
        "-l",
        "800",
        "-a",
        &lease.list(),
    ]));
    wait_for_realtime_threads(child.pid(), 1);
    // The duration is the point: the status shows samples (about 300 of
    // the run's 800) when it is asked for.
    std::thread::sleep(Duration::from_millis(300));
    child.signal("USR1");
    let r = child.wait(Duration::from_secs(3));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let err: Vec<&str> = r.stderr_lines();
    let at = err
        .iter()
        .position(|l| *l == "# cyclictest current status:")
        .unwrap_or_else(|| panic!("no status block\n{}", r.describe()));
    assert_eq!(err[at - 1], "#---------------------------");
    assert_eq!(err[at + 2], "#---------------------------");
    let snapshot = parse_status_line(err[at + 1]).expect("T: line in the status block");
    assert!(
        0 < snapshot.cycles && snapshot.cycles < 800,
        "snapshot mid-run: {snapshot:?}"
    );
    let last = parse_status_lines(&r.stdout);
    assert_eq!(last.len(), 1);
    assert_eq!(last[0].cycles, 800, "the run went on to -l 800");
    assert_eq!(last[0].tid, snapshot.tid);
}

/// SIGINT before the first wake-up: the histogram block shows zero samples
/// as C does, and the JSON stays valid (`null`, never `-nan`).
#[test]
fn sigint_before_the_first_sample() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("zero.json");
    let child = spawn(&mut rtlat_cyclictest([
        "-q",
        "-p",
        "80",
        "-i",
        "2000000",
        "-h",
        "5",
        "-a",
        &lease.list(),
        &format!("--json={}", json_path.display()),
    ]));
    // Set up, its first deadline 2 s away: the stop comes before it,
    // wherever the thread is in its start (the run wakes it until it
    // has left its loop).
    wait_for_realtime_threads(child.pid(), 1);
    child.signal("INT");
    let r = child.wait(Duration::from_secs(2));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let h = parse_histogram(&r.stdout).expect("histogram block");
    assert_eq!((h.total[0], h.overflows[0]), (0, 0));
    assert_eq!(h.min, [1_000_000], "C's initial Min");
    assert!(r.stdout.contains("\n# Thread 0:\n"), "{}", r.stdout);
    let json = read_json(&json_path);
    assert_eq!(json["return_code"], 0);
    assert_eq!(json["thread"]["0"]["cycles"], 0);
    assert!(
        json["thread"]["0"]["avg"].is_null(),
        "avg: {}",
        json["thread"]["0"]["avg"]
    );
}
