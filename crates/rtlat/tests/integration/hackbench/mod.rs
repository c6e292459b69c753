//! `rtlat hackbench` (and the `hackbench` load kind): the same commands as
//! `/usr/bin/hackbench` 2.4 give lines of the same shape and task counts;
//! bad input is one line, exit 2; SIGINT and SIGTERM end a run with C's
//! lines and exit 0, nothing left; SIGKILL of rtlat leaves no worker
//! running. Every run is CPU-bound, so each takes a CPU lease and is
//! pinned to it. Short runs: the whole file takes a few seconds.

use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::ipc::{c_tool, has_c};
use crate::support::{Run, rtlat_tool, run_with_timeout, spawn, wait_until};

/// `rtlat hackbench ARGS` pinned to the lease's CPUs.
fn rtlat_pinned(lease: &CpuLease, args: &[&str]) -> std::process::Command {
    let mut cmd = lease.pinned(crate::support::rtlat_path().to_str().unwrap());
    cmd.arg("hackbench").args(args);
    cmd
}

/// The children of `pid` that still run (not zombies), from /proc.
fn live_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(1) == Some(&pid.to_string().as_str())
            && fields.first() != Some(&"Z")
            && let Some(p) = head.split_whitespace().next().and_then(|p| p.parse().ok())
        {
            found.push(p);
        }
    }
    found
}

/// Whether process `pid` still runs (exists and is no zombie).
fn runs(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// The threads of `pid`.
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

/// The three lines of a run: C's two opening lines exactly, then `Time:
/// S.mmm`.
fn check_shape(r: &Run) -> (String, String) {
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.describe());
    let time = lines[2].strip_prefix("Time: ").expect("a Time: line");
    let (secs, millis) = time.split_once('.').expect("S.mmm");
    assert!(secs.parse::<u64>().is_ok(), "{time}");
    assert!(
        millis.len() == 3 && millis.bytes().all(|b| b.is_ascii_digit()),
        "{time}"
    );
    assert!(r.stderr.is_empty(), "{}", r.describe());
    (lines[0].to_owned(), lines[1].to_owned())
}

#[test]
fn same_commands_as_c_give_the_same_lines() {
    let lease = CpuLease::one();
    let cases: [&[&str]; 4] = [
        &["-g", "2", "-l", "50"],
        &["-T", "-p", "-g", "1", "-f", "2", "-l", "5"],
        &["-i", "-g", "1", "-f", "3", "-l", "5", "-s", "1000"],
        &["--thr", "--proc", "-pg2", "--fds=4", "--loops", "20"],
    ];
    // -F: the main thread at SCHED_FIFO 1, on the leased CPU (root).
    let fifo: &[&str] = &["-F", "-T", "-g", "1", "-f", "4", "-l", "10"];
    let with_fifo = crate::support::is_root().then_some(fifo);
    if with_fifo.is_none() {
        println!("SKIPPED (not root): -F in same_commands_as_c_give_the_same_lines");
    }
    for args in cases.into_iter().chain(with_fifo) {
        let ours = run_with_timeout(&mut rtlat_pinned(&lease, args), Duration::from_secs(20));
        let (first, second) = check_shape(&ours);
        if !has_c("hackbench") {
            continue;
        }
        let mut c = lease.pinned("/usr/bin/hackbench");
        c.args(args);
        let theirs = run_with_timeout(&mut c, Duration::from_secs(20));
        assert_eq!(check_shape(&theirs), (first, second), "{args:?}");
    }
    if !has_c("hackbench") {
        println!("SKIPPED (no /usr/bin/hackbench): the comparison with C");
    }
}

#[test]
fn c_help_names_processes_our_way_too() {
    // 2.4's help says --process; its getopt table, --processes: both reach -P.
    if !has_c("hackbench") {
        println!("SKIPPED (no /usr/bin/hackbench): same_long_spellings_as_c");
        return;
    }
    let lease = CpuLease::one();
    for spelling in ["--processes", "--process", "--proc"] {
        let args = ["-T", spelling, "-g", "1", "-f", "1", "-l", "1"];
        let ours = run_with_timeout(&mut rtlat_pinned(&lease, &args), Duration::from_secs(10));
        let mut c = lease.pinned("/usr/bin/hackbench");
        c.args(args);
        let theirs = run_with_timeout(&mut c, Duration::from_secs(10));
        assert_eq!(check_shape(&ours), check_shape(&theirs), "{spelling}");
        assert!(ours.stdout.starts_with("Running in process mode"));
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, wants) in [
        (&["-g", "0"][..], "-g/--groups: invalid value '0'"),
        (&["-f", "0"][..], "-f/--fds: invalid value '0'"),
        (&["-l", "x"][..], "-l/--loops: invalid value 'x'"),
        (&["-l", "5x"][..], "-l/--loops: invalid value '5x'"),
        (&["-s", "-1"][..], "-s/--datasize: invalid value '-1'"),
        (&["-s", "16777217"][..], "1 to 16777216"),
        (&["-g", "10001"][..], "1 to 10000"),
        (
            &["-p", "-i"][..],
            "-p/--pipe and -i/--inet cannot be used together",
        ),
        (&["--groups"][..], "--groups"),
        (&["-Z"][..], "'-Z'"),
        (&["--bogus"][..], "--bogus"),
        (&["extra"][..], "'extra'"),
    ] {
        let r = run_with_timeout(&mut rtlat_tool("hackbench", args), Duration::from_secs(5));
        assert_eq!(r.code(), Some(2), "{args:?}: {}", r.describe());
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.describe());
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{args:?}: {}", r.describe());
        assert!(lines[0].starts_with("rtlat hackbench: "), "{}", lines[0]);
        assert!(lines[0].contains(wants), "{args:?}: {}", lines[0]);
    }
}

/// A run long enough to be stopped: it says it runs, and every task of it
/// is there (processes, or threads), before the signal.
fn stopped_run(args: &[&str], signal: &str, tasks: usize) -> (Run, Vec<u32>) {
    let lease = CpuLease::one();
    let child = spawn(&mut rtlat_pinned(&lease, args));
    let pid = child.pid();
    child.wait_for_stdout(Duration::from_secs(10), "the opening lines", |s| {
        s.contains("Each sender will pass")
    });
    // taskset execs rtlat in place: `pid` is rtlat's.
    let process_mode = !args.contains(&"-T");
    let all_there = wait_until(Duration::from_secs(10), || {
        if process_mode {
            live_children(pid).len() >= tasks
        } else {
            threads(pid) > tasks
        }
    });
    assert!(all_there, "{}", crate::support::describe_process(pid));
    let workers = live_children(pid);
    child.signal(signal);
    let r = child.wait(Duration::from_secs(10));
    (r, workers)
}

#[test]
fn sigint_and_sigterm_end_the_run_with_cs_lines_and_nothing_left() {
    for (args, signal, number, tasks) in [
        (&["-g", "1", "-f", "5", "-l", "100000000"][..], "INT", 2, 10),
        (
            &["-T", "-g", "1", "-f", "5", "-l", "100000000"][..],
            "TERM",
            15,
            10,
        ),
    ] {
        let (r, workers) = stopped_run(args, signal, tasks);
        assert_eq!(r.code(), Some(0), "{}", r.describe());
        let process_mode = !args.contains(&"-T");
        let mut want_err = vec![
            format!("Signal {number} caught, longjmp'ing out!"),
            "longjmp'ed out, reaping children".to_owned(),
        ];
        if process_mode {
            want_err.push("sending SIGTERM to all child processes".to_owned());
        }
        assert_eq!(r.stderr_lines(), want_err, "{}", r.describe());
        let lines: Vec<&str> = r.stdout.lines().collect();
        let time = if process_mode {
            assert_eq!(lines.len(), 4, "{}", r.describe());
            assert_eq!(lines[2], "signaling 10 worker threads to terminate");
            lines[3]
        } else {
            assert_eq!(lines.len(), 3, "{}", r.describe());
            lines[2]
        };
        assert!(time.starts_with("Time: "), "{}", r.describe());
        let left: Vec<u32> = workers.into_iter().filter(|&p| runs(p)).collect();
        assert!(left.is_empty(), "still running: {left:?}");
    }
}

#[test]
fn sigkill_of_rtlat_leaves_no_worker_running() {
    let lease = CpuLease::one();
    let child = spawn(&mut rtlat_pinned(
        &lease,
        &["-g", "2", "-f", "5", "-l", "100000000"],
    ));
    let pid = child.pid();
    let all_there = wait_until(Duration::from_secs(10), || live_children(pid).len() >= 20);
    assert!(all_there, "{}", crate::support::describe_process(pid));
    let workers = live_children(pid);
    child.signal("KILL");
    let _ = child.wait(Duration::from_secs(5));
    // The kernel's parent death signal ends them; init reaps them when it
    // does (a zombie is a dead process).
    let gone = wait_until(Duration::from_secs(2), || workers.iter().all(|&p| !runs(p)));
    let left: Vec<u32> = workers.into_iter().filter(|&p| runs(p)).collect();
    assert!(gone, "still running: {left:?}");
}

#[test]
fn the_hackbench_load_runs_beside_cyclictest_and_alone_and_stops_cleanly() {
    let lease = CpuLease::one();
    let cpu = lease.list();
    let r = run_with_timeout(
        &mut rtlat_tool(
            "cyclictest",
            [
                "-q",
                "-D",
                "1",
                "-i",
                "1000",
                "-a",
                &cpu,
                "--load",
                "hackbench:1",
                "--load-cpus",
                &cpu,
            ],
        ),
        Duration::from_secs(15),
    );
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("# load hackbench: "))
        .unwrap_or_else(|| panic!("no hackbench load line: {}", r.describe()));
    assert!(line.ends_with("ops/s (1 worker)"), "{line}");
    // rtlat load alone, stopped by SIGINT: its line, status 0, no helper
    // and none of its tasks left.
    let child = spawn(&mut rtlat_tool("load", ["hackbench:1", "--cpus", &cpu]));
    let pid = child.pid();
    let helper = wait_until(Duration::from_secs(10), || !live_children(pid).is_empty());
    assert!(helper, "{}", crate::support::describe_process(pid));
    let helpers = live_children(pid);
    let tasks: Vec<u32> = helpers.iter().flat_map(|&h| live_children(h)).collect();
    child.signal("INT");
    let r = child.wait(Duration::from_secs(10));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert!(r.stdout.starts_with("hackbench: "), "{}", r.describe());
    let left: Vec<u32> = helpers
        .into_iter()
        .chain(tasks)
        .filter(|&p| runs(p))
        .collect();
    assert!(left.is_empty(), "still running: {left:?}");
}

#[test]
fn c_and_rtlat_refuse_pipe_with_inet() {
    if !has_c("hackbench") {
        println!("SKIPPED (no /usr/bin/hackbench): c_and_rtlat_refuse_pipe_with_inet");
        return;
    }
    let c = run_with_timeout(
        &mut c_tool("hackbench", &["-p", "-i"]),
        Duration::from_secs(5),
    );
    // C: its line and the usage, exit 1; ours: the line alone, exit 2.
    assert_eq!(c.code(), Some(1), "{}", c.describe());
    assert!(
        c.stderr
            .contains("--pipe|-p and --inet|-i cannot be used together")
    );
}
