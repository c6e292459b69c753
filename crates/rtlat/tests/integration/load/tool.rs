//! `rtlat load`: runs of the real binary (no privilege needed): the report
//! lines, stop by duration and by signal with nothing left behind, and bad
//! input refused with one line before anything starts. A load keeps a CPU
//! busy: each run holds a CPU lease and keeps its workers on it (`--cpus`).

use std::process::Command;
use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::{SpawnChecked, rtlat, run_with_timeout, spawn, wait_until};

fn load(args: &[&str]) -> Command {
    let mut cmd = rtlat();
    cmd.arg("load").args(args);
    cmd
}

/// `KIND: N ops/s (W worker[s])` with N > 0: the kind and W.
fn parse_line(line: &str) -> (String, f64, usize) {
    let (kind, rest) = line.split_once(": ").expect(line);
    let (rate, rest) = rest.split_once(" ops/s (").expect(line);
    let workers = rest
        .strip_suffix(" workers)")
        .or_else(|| rest.strip_suffix(" worker)"))
        .expect(line);
    (
        kind.to_string(),
        rate.parse().expect(line),
        workers.parse().expect(line),
    )
}

#[test]
fn load_cpu_for_a_second_prints_its_rate() {
    let lease = CpuLease::one();
    let r = run_with_timeout(
        &mut load(&["cpu:1", "-D", "1", "--cpus", &lease.list()]),
        Duration::from_secs(10),
    );
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.describe());
    let (kind, rate, workers) = parse_line(lines[0]);
    assert_eq!((kind.as_str(), workers), ("cpu", 1));
    assert!(rate > 0.0, "{}", r.describe());
    assert!(r.stderr.is_empty(), "{}", r.describe());
}

#[test]
fn default_workers_are_one_per_cpu_of_the_list() {
    let lease = CpuLease::one();
    let r = run_with_timeout(
        &mut load(&[
            "timers,cache:2",
            "-D1",
            "--cpus",
            &lease.list(),
            "--nice",
            "5",
        ]),
        Duration::from_secs(10),
    );
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let parsed: Vec<_> = r.stdout.lines().map(parse_line).collect();
    assert_eq!(parsed.len(), 2, "{}", r.describe());
    assert_eq!(
        (parsed[0].0.as_str(), parsed[0].2),
        ("timers", lease.cpus().len())
    );
    assert_eq!((parsed[1].0.as_str(), parsed[1].2), ("cache", 2));
    assert!(parsed.iter().all(|p| p.1 > 0.0), "{}", r.describe());
}

/// SIGINT ends an endless load with its lines and status 0, and leaves no
/// process behind: `ps --ppid PID` lists nothing once it has exited, and
/// while it ran it never had more than its workers' fork children.
#[test]
fn sigint_stops_fork_and_messaging_with_nothing_left() {
    let lease = CpuLease::one();
    let child = spawn(&mut load(&["fork:1,messaging:1", "--cpus", &lease.list()]));
    let pid = child.pid();
    wait_for_load_workers(pid, 2);
    // The duration is the point: each kind must count operations for a
    // rate above 0.
    std::thread::sleep(Duration::from_millis(200));
    child.signal("INT");
    let r = child.wait(Duration::from_secs(5));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let kinds: Vec<String> = r.stdout.lines().map(|l| parse_line(l).0).collect();
    assert_eq!(kinds, ["fork", "messaging"], "{}", r.describe());
    assert!(
        r.stdout.lines().all(|l| parse_line(l).1 > 0.0),
        "{}",
        r.describe()
    );
    let ps = Command::new("ps")
        .args(["--no-headers", "--ppid", &pid.to_string()])
        .output_checked()
        .expect("ps");
    assert!(
        String::from_utf8_lossy(&ps.stdout).trim().is_empty(),
        "children of {pid} left: {}",
        String::from_utf8_lossy(&ps.stdout)
    );
}

/// Waits until process `pid` has `count` load worker threads (named
/// `load-KIND-N`): the sign that its load has started, after its stop
/// signals' handlers were installed. Panics, describing the process, if
/// the sign has not come within a safety net of 10 s.
pub(crate) fn wait_for_load_workers(pid: u32, count: usize) {
    let workers = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|tasks| {
                tasks
                    .flatten()
                    .filter(|task| {
                        std::fs::read_to_string(task.path().join("comm"))
                            .is_ok_and(|name| name.starts_with("load-"))
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    assert!(
        wait_until(Duration::from_secs(10), || workers() >= count),
        "not {count} load workers in process {pid}: {}",
        crate::support::describe_process(pid)
    );
}

/// Descriptors of process `pid` open on files in `dir`.
pub(crate) fn open_files_in(pid: u32, dir: &std::path::Path) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.flatten()
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                .filter(|target| target.starts_with(dir))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn io_writes_in_tmpdir_to_files_without_a_name() {
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let child = spawn(load(&["io:1", "--cpus", &lease.list()]).env("TMPDIR", &root));
    // Its file is in TMPDIR, and nothing there has a name (a SIGKILL
    // could not leave it behind).
    assert!(
        wait_until(Duration::from_secs(10), || open_files_in(
            child.pid(),
            &root
        ) > 0),
        "no file open in TMPDIR: {}",
        crate::support::describe_process(child.pid())
    );
    assert_eq!(open_files_in(child.pid(), &root), 1);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    child.signal("TERM");
    let r = child.wait(Duration::from_secs(5));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert!(r.stdout.starts_with("io: "), "{}", r.describe());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn io_in_an_unwritable_directory_exits_1() {
    let r = run_with_timeout(
        load(&["io:1", "-D", "1"]).env("TMPDIR", "/proc"),
        Duration::from_secs(5),
    );
    assert_eq!(r.code(), Some(1), "{}", r.describe());
    assert!(r.stdout.is_empty(), "{}", r.describe());
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.describe());
    assert!(
        r.stderr
            .starts_with("rtlat load: io load: cannot create a file in '/proc': "),
        "{}",
        r.describe()
    );
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    for (args, want) in [
        (
            &["cpu:0"][..],
            "invalid load spec 'cpu:0': worker count '0' of cpu",
        ),
        (
            &["bogus"][..],
            "invalid load spec 'bogus': unknown load kind 'bogus'",
        ),
        (
            &["cpu:x"][..],
            "invalid load spec 'cpu:x': worker count 'x' of cpu",
        ),
        (&[""][..], "invalid load spec '': "),
        (&[][..], "no load given"),
        (&["cpu,cpu"][..], "load kind 'cpu' is given twice"),
        (
            &["cpu", "-D", "soon"][..],
            "-D/--duration: invalid value 'soon'",
        ),
        (
            &["cpu", "--cpus", "999999"][..],
            "--cpus: invalid value '999999'",
        ),
        (&["cpu", "--nice", "-21"][..], "--nice: invalid value '-21'"),
        (&["cpu", "--frobnicate"][..], "frobnicate"),
    ] {
        let r = run_with_timeout(&mut load(args), Duration::from_secs(5));
        assert_eq!(r.code(), Some(2), "{args:?}\n{}", r.describe());
        assert!(r.stdout.is_empty(), "{args:?}\n{}", r.describe());
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}\n{}", r.describe());
        assert!(r.stderr.contains(want), "{args:?}\n{}", r.describe());
    }
}

#[test]
fn help_lists_kinds_and_top_help_lists_load() {
    let r = run_with_timeout(&mut load(&["--help"]), Duration::from_secs(5));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    for kind in [
        "cpu",
        "memory",
        "cache",
        "io",
        "messaging",
        "hackbench",
        "syscalls",
        "timers",
        "fork",
    ] {
        assert!(r.stdout.contains(&format!("\n  {kind} ")), "{kind}");
    }
    let mut top = rtlat();
    top.arg("--help");
    let r = run_with_timeout(&mut top, Duration::from_secs(5));
    assert!(r.stdout.contains("Load:\n  load "), "{}", r.describe());
}
