//! Short real runs of `rtlat cyclictest` (root, SCHED_FIFO, on the CPUs
//! each test leases): structure and invariants of the output, never
//! absolute latencies; the plain runs first, then the options with blocks
//! or side effects of their own: `-b` (with and without tracefs marks),
//! `-x`, `-s`, `-A`, `--secaligned`, `-F`, `-M`, `-R`, `--smi`.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::time::Duration;

use crate::cyclictest::synthetic::{deadline_phases, parse_break, parse_spike_block};
use crate::support::cpus::CpuLease;
use crate::support::tracefs::TraceGuard;
use crate::support::{
    check_histogram_invariants, check_status_invariants, json_thread_ints, parse_histogram,
    parse_status_lines, rtlat_cyclictest, run, run_with_json, run_with_timeout, safety_net, shape,
    spawn, wait_until,
};

#[test]
fn quiet_two_threads_fifo() {
    require_root!();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_cyclictest([
        "-q",
        "-m",
        "-p",
        "80",
        "-i",
        "500",
        "-l",
        "200",
        "-t",
        "2",
        "-a",
        &lease.list(),
    ]));
    r.expect_code(0);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 2, "one T: line per thread\n{}", r.describe());
    check_status_invariants(&lines);
    assert_eq!((lines[0].index, lines[1].index), (0, 1));
    assert_eq!(
        lines[0].cycles, 200,
        "-l 200 ends the run when thread 0 is done"
    );
    assert!(
        0 < lines[1].cycles && lines[1].cycles < 200,
        "thread 1 (I:1000) has fewer cycles: {:?}",
        lines[1]
    );
    assert_eq!((lines[0].prio, lines[1].prio), (80, 80));
    assert_eq!((lines[0].interval, lines[1].interval), (500, 1000));
    assert!(lines[0].tid > 0 && lines[1].tid > 0 && lines[0].tid != lines[1].tid);
    assert_eq!(
        r.stdout.lines().next(),
        Some("# /dev/cpu_dma_latency set to 0us")
    );
}

#[test]
fn histogram_total_plus_overflows_is_cycles() {
    require_root!();
    let lease = CpuLease::one();
    let (r, json) = run_with_json(&[
        "-q",
        "-m",
        "-p80",
        "-i200",
        "-h",
        "100",
        "-l",
        "300",
        "-t",
        "2",
        "-a",
        &lease.list(),
    ]);
    assert!(
        parse_status_lines(&r.stdout).is_empty(),
        "-q -h: no T: lines"
    );
    let h = parse_histogram(&r.stdout).expect("histogram block");
    assert_eq!((h.threads(), h.buckets()), (2, 100));
    let cycles: Vec<u64> = json_thread_ints(&json, "cycles")
        .into_iter()
        .map(|c| c as u64)
        .collect();
    // -h forces one interval for both threads: the one that completes its
    // 300 loops first ends the run (under load thread 0 may have skipped a
    // deadline and be the one behind).
    assert_eq!(cycles.iter().max(), Some(&300), "{cycles:?}");
    assert!(cycles.iter().all(|&c| c > 0 && c <= 300), "{cycles:?}");
    check_histogram_invariants(&h, Some(&cycles));
    assert_eq!(h.min, json_thread_ints(&json, "min"));
    assert_eq!(h.max, json_thread_ints(&json, "max"));
}

#[test]
fn policy_other_runs_with_a_note() {
    require_root!();
    let r = run(&mut rtlat_cyclictest([
        "--policy", "other", "-q", "-l", "100", "-i", "1000",
    ]));
    r.expect_code(0);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 1, "{}", r.describe());
    check_status_invariants(&lines);
    assert_eq!((lines[0].prio, lines[0].cycles), (0, 100));
    assert!(
        r.stderr.contains("note") && r.stderr.contains("SCHED_OTHER"),
        "a note about SCHED_OTHER on stderr\n{}",
        r.describe()
    );
}

#[test]
fn duration_one_second() {
    require_root!();
    let r = run(&mut rtlat_cyclictest(["-q", "-D", "1", "-i", "1000"]));
    r.expect_code(0);
    let wall = r.elapsed.as_secs_f64();
    assert!((0.9..3.0).contains(&wall), "-D 1 took {wall} s");
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 1);
    check_status_invariants(&lines);
    assert!(
        (500..=1100).contains(&lines[0].cycles),
        "about 1000 cycles of 1 ms: {:?}",
        lines[0]
    );
}

#[test]
fn smp_one_thread_per_allowed_cpu() {
    require_root!();
    // One thread on every allowed CPU: the whole machine.
    let lease = CpuLease::all();
    let (r, json) = run_with_json(&["-S", "-q", "-p", "80", "-l", "100", "-i", "500"]);
    let cpus = lease.cpus();
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), cpus.len(), "one thread per allowed CPU");
    check_status_invariants(&lines);
    let mut used = json_thread_ints(&json, "cpu");
    assert!(
        used.iter().all(|&c| cpus.contains(&(c as usize))),
        "{used:?} within {cpus:?}"
    );
    used.sort();
    used.dedup();
    assert_eq!(used.len(), cpus.len(), "distinct cpu values");
}

#[test]
fn affinity_pins_every_thread() {
    require_root!();
    let lease = CpuLease::one();
    let (r, json) = run_with_json(&["-a", &lease.list(), "-t", "2", "-q", "-l", "50", "-p", "80"]);
    assert_eq!(parse_status_lines(&r.stdout).len(), 2);
    let cpu = lease.cpu() as i64;
    assert_eq!(json_thread_ints(&json, "cpu"), [cpu, cpu]);
}

#[test]
fn no_affinity_means_not_pinned() {
    require_root!();
    // Unpinned real-time threads may run on any CPU.
    let lease = CpuLease::all();
    let (_, json) = run_with_json(&["-t", "2", "-q", "-l", "50", "-p", "80"]);
    assert_eq!(json_thread_ints(&json, "cpu"), [-1, -1], "2.5+ behaviour");
    drop(lease);
}

// ---------------------------------------------------------------------------
// tracefs

/// The guard with tracefs, or `None` after printing the SKIPPED line.
macro_rules! require_tracefs {
    () => {{
        let guard = TraceGuard::acquire();
        if guard.dir.is_none() {
            skip_note!(
                "SKIPPED (tracefs not mounted and mounting failed): {}",
                function_name!()
            );
            return;
        }
        guard
    }};
}

// ---------------------------------------------------------------------------
// -b

/// A `-b` run of `args` on the leased CPU.
fn break_run(lease: &CpuLease, args: &[&str]) -> crate::support::Run {
    let r = run(rtlat_cyclictest(args).args(["-a", &lease.list()]));
    r.expect_code(0);
    let lines = parse_status_lines(&r.stdout);
    check_status_invariants(&lines);
    let b = parse_break(&r.stdout);
    assert_eq!(
        b.thread_ids,
        lines.iter().map(|l| l.tid).collect::<Vec<_>>(),
        "# Thread Ids: the T: tids\n{}",
        r.stdout
    );
    let t = lines
        .iter()
        .find(|l| l.tid == b.thread)
        .unwrap_or_else(|| panic!("break thread {} is one of ours\n{}", b.thread, r.stdout));
    assert!(b.value > 1, "{b:?}");
    assert!(b.value <= t.max, "{b:?} within the thread's max {t:?}");
    assert!(
        lines[0].cycles < 10_000,
        "stopped long before -l 10000: {:?}",
        lines[0]
    );
    r
}

#[test]
fn breaktrace_stops_at_the_first_spike() {
    require_root!();
    let _guard = TraceGuard::acquire();
    let lease = CpuLease::one();
    let r = break_run(
        &lease,
        &["-b", "1", "-q", "-p", "80", "-i", "500", "-l", "10000"],
    );
    assert_faster_than!(
        r.elapsed,
        Duration::from_secs(2),
        "the run ends early: {:?}",
        r.elapsed
    );
    let b = parse_break(&r.stdout);
    let line = parse_status_lines(&r.stdout)[0];
    assert_eq!(b.value, line.max, "single thread: the break is its max");
    assert_eq!(b.value, line.act, "and its last sample");
}

#[test]
fn breaktrace_two_threads() {
    require_root!();
    let _guard = TraceGuard::acquire();
    let lease = CpuLease::one();
    break_run(
        &lease,
        &[
            "-b", "1", "-q", "-p", "80", "-i", "500", "-l", "10000", "-t", "2",
        ],
    );
}

/// With `--tracemark`: the marker text in the trace, then tracing stopped.
#[test]
fn breaktrace_tracemark_writes_the_marker_and_stops_tracing() {
    require_root!();
    let guard = require_tracefs!();
    let dir = guard.dir.clone().unwrap();
    let tracer = std::fs::read_to_string(dir.join("current_tracer")).unwrap_or_default();
    if tracer.trim() != "nop" {
        skip_note!(
            "SKIPPED (tracer {:?} active, not turning tracing on): {}",
            tracer.trim(),
            function_name!()
        );
        return;
    }
    let lease = CpuLease::one();
    guard.set_tracing_on("1");
    let r = break_run(
        &lease,
        &[
            "-b",
            "1",
            "--tracemark",
            "-q",
            "-p",
            "80",
            "-i",
            "500",
            "-l",
            "10000",
        ],
    );
    assert_eq!(guard.tracing_on().as_deref(), Some("0"), "tracing stopped");
    let b = parse_break(&r.stdout);
    let trace = std::fs::read_to_string(dir.join("trace")).expect("reading trace");
    let ours: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("tracing_mark_write:") && l.contains(&format!("-{} ", b.thread)))
        .collect();
    assert_eq!(ours.len(), 1, "one marker from the break thread: {ours:?}");
    let text = ours[0].split("tracing_mark_write: ").nth(1).unwrap();
    assert_eq!(text, format!("hit latency threshold ({} > 1)", b.value));
}

/// Without `--tracemark` (C 2.4 leaves ftrace alone; we stop tracing).
#[test]
fn breaktrace_without_tracemark_stops_tracing() {
    require_root!();
    let guard = require_tracefs!();
    let lease = CpuLease::one();
    guard.set_tracing_on("1");
    let r = break_run(
        &lease,
        &["-b", "1", "-q", "-p", "80", "-i", "500", "-l", "10000"],
    );
    assert_eq!(
        guard.tracing_on().as_deref(),
        Some("0"),
        "tracing_on after the break\n{}",
        r.describe()
    );
    assert_eq!(r.stderr, "", "nothing on stderr");
}

/// A threshold never reached: the run ends at `-l`, only the ids line.
#[test]
fn breaktrace_not_reached() {
    require_root!();
    let guard = TraceGuard::acquire();
    let lease = CpuLease::one();
    let before = guard.tracing_on();
    let r = run(&mut rtlat_cyclictest([
        "-b",
        "1000000",
        "-q",
        "-p",
        "80",
        "-i",
        "500",
        "-l",
        "100",
        "-a",
        &lease.list(),
    ]));
    r.expect_code(0);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines[0].cycles, 100);
    assert_eq!(
        r.stdout.lines().last().unwrap(),
        format!("# Thread Ids: {:05}", lines[0].tid)
    );
    assert_eq!(guard.tracing_on(), before, "no break, tracing untouched");
}

// ---------------------------------------------------------------------------
// Wait modes and alignment

/// 200 cycles of `mode` at priority 80, on a leased CPU.
fn two_hundred_cycles(mode: &[&str]) {
    let lease = CpuLease::one();
    let cpu = lease.list();
    let mut args = mode.to_vec();
    args.extend(["-q", "-p", "80", "-l", "200", "-a", &cpu]);
    let r = run(&mut rtlat_cyclictest(&args));
    r.expect_code(0);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 1, "{args:?}\n{}", r.describe());
    check_status_invariants(&lines);
    assert_eq!(lines[0].cycles, 200, "{args:?}");
    assert!(
        lines[0].min >= 0 && lines[0].min <= lines[0].avg && lines[0].avg <= lines[0].max,
        "{:?}",
        lines[0]
    );
    assert_eq!(r.stderr, "", "{args:?}: nothing on stderr");
}

#[test]
fn posix_timers_absolute() {
    require_root!();
    two_hundred_cycles(&["-x"]);
}

#[test]
fn posix_timers_relative() {
    require_root!();
    two_hundred_cycles(&["-x", "-r"]);
}

#[test]
fn nanosleep() {
    require_root!();
    two_hundred_cycles(&["-s"]);
}

#[test]
fn relative_clock_nanosleep() {
    require_root!();
    two_hundred_cycles(&["-r"]);
}

#[test]
fn nanosleep_with_posix_timers_warns_and_falls_back() {
    require_root!();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_cyclictest([
        "-s",
        "-x",
        "-q",
        "-p",
        "80",
        "-l",
        "50",
        "-a",
        &lease.list(),
    ]));
    r.expect_code(0);
    assert_eq!(
        r.stderr_lines(),
        [
            "WARN: The system option requires clock_nanosleep",
            "WARN: and is not compatible with posix_timers",
            "WARN: Using clock_nanosleep",
        ]
    );
    assert_eq!(parse_status_lines(&r.stdout)[0].cycles, 50);
}

/// `-A 100 -d 0 -t 2`: thread 1's deadlines lie 100 µs after thread 0's
/// (± 1 µs of truncation), seen through the spike timestamps.
#[test]
fn aligned_two_threads() {
    require_root!();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_cyclictest([
        "-A",
        "100",
        "-t",
        "2",
        "-d",
        "0",
        "--spike",
        "1",
        "-q",
        "-p",
        "80",
        "-l",
        "100",
        "-a",
        &lease.list(),
    ]));
    r.expect_code(0);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 2);
    check_status_invariants(&lines);
    // One interval for both (-d 0): the thread that completes its loops
    // first ends the run; under load thread 0 may have skipped a deadline.
    assert_eq!(lines.iter().map(|l| l.cycles).max(), Some(100), "{lines:?}");
    let block = parse_spike_block(&r.stdout).expect("spike block (samples above 1 µs)");
    let phases = deadline_phases(&block, 1000);
    let phase = |t: i64| {
        phases
            .iter()
            .find(|p| p.0 == t)
            .unwrap_or_else(|| panic!("a spike of thread {t}: {phases:?}"))
            .1
    };
    let diff = (phase(1) - phase(0)).rem_euclid(1000);
    assert!((99..=101).contains(&diff), "offset {diff} µs: {phases:?}");
    // Every deadline of a thread is on the same grid.
    for (t, p) in &phases {
        let d = (p - phase(*t)).rem_euclid(1000);
        assert!(d <= 1 || d >= 999, "thread {t}: {phases:?}");
    }
}

/// `--secaligned 250 -d 0`: every deadline of both threads is 250 µs past
/// a whole millisecond (start = a whole second + 250 µs); the run waits at
/// most ~2 s for it.
#[test]
fn secaligned_two_threads() {
    require_root!();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_cyclictest([
        "--secaligned",
        "250",
        "-t",
        "2",
        "-d",
        "0",
        "--spike",
        "1",
        "-q",
        "-p",
        "80",
        "-l",
        "50",
        "-a",
        &lease.list(),
    ]));
    r.expect_code(0);
    assert_faster_than!(r.elapsed, Duration::from_millis(2600), "{:?}", r.elapsed);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 2);
    check_status_invariants(&lines);
    // One interval for both (-d 0): whichever completes its loops first
    // ends the run.
    assert_eq!(lines.iter().map(|l| l.cycles).max(), Some(50), "{lines:?}");
    let block = parse_spike_block(&r.stdout).expect("spike block");
    let phases = deadline_phases(&block, 1000);
    assert!(phases.len() > 10, "{phases:?}");
    for (t, p) in &phases {
        assert!((249..=251).contains(p), "thread {t}: {phases:?}");
    }
}

// ---------------------------------------------------------------------------
// -F, -M, -R, --smi

#[test]
fn fifo_serves_status_lines_while_running() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let child = spawn(&mut rtlat_cyclictest([
        "-F",
        path.to_str().unwrap(),
        "-D",
        "1",
        "-q",
        "-p",
        "80",
        "-a",
        &lease.list(),
    ]));
    // Made once the measuring thread runs, early in the 1 s run.
    assert!(
        wait_until(Duration::from_millis(800), || path.exists()),
        "no FIFO at {} while the run goes on",
        path.display()
    );
    let meta = std::fs::metadata(&path).expect("the FIFO exists while running");
    assert!(meta.file_type().is_fifo(), "{meta:?}");
    assert_eq!(meta.permissions().mode() & 0o7777, 0o600, "mode 0600");
    // Snapshots, each read in a thread (opening a FIFO blocks until the
    // writer opens it), until one shows a sample: the FIFO is made before
    // the thread's first cycle ends, and on a loaded machine a reader can
    // come first (seen: "cycles: 0" beside stress-ng and three other
    // tests). The run lasts 1 s.
    let mut tries = 0;
    let (text, lines) = loop {
        tries += 1;
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = path.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            let res = std::fs::File::open(&reader).and_then(|mut f| f.read_to_string(&mut text));
            let _ = tx.send(res.map(|_| text));
        });
        let text = rx
            .recv_timeout(safety_net(Duration::from_millis(1500)))
            .expect("a snapshot from the FIFO within 1.5 s")
            .expect("reading the FIFO");
        // One snapshot of one thread: one line. A reader slower than the
        // server's pause between snapshots (250 us, as C) may find the
        // next snapshot written before it saw the end of the first: each
        // whole.
        let lines = parse_status_lines(&text);
        assert!(!lines.is_empty(), "{text:?}");
        assert!(lines.iter().all(|l| l.index == 0), "{text:?}");
        assert!(
            text.lines().all(|l| l.starts_with("T:")),
            "only T: lines: {text:?}"
        );
        assert_eq!(lines[0].prio, 80, "{lines:?}");
        // Polled (a state, not a duration): every 10 ms, for half the run.
        if lines[0].cycles > 0 || tries == 50 {
            break (text, lines);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(
        lines[0].cycles > 0,
        "no sample in {tries} snapshots: {text:?}"
    );
    let r = child.wait(Duration::from_secs(3));
    r.expect_code(0);
    assert!(!path.exists(), "the FIFO is removed at exit");
    assert_eq!(parse_status_lines(&r.stdout).len(), 1, "{}", r.describe());
}

#[test]
fn refresh_on_max_ends_with_up_and_down() {
    require_root!();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_cyclictest([
        "-M",
        "-p",
        "80",
        "-l",
        "300",
        "-a",
        &lease.list(),
    ]));
    r.expect_code(0);
    assert!(
        r.stdout.ends_with("\x1b[3A\x1b[3B"),
        "ends with ESC[3A ESC[3B: {:?}",
        &r.stdout[r.stdout.len().saturating_sub(120)..]
    );
    // Frames are drawn only on a new max: each frame's Max grows.
    let lines = parse_status_lines(&r.stdout);
    assert!(!lines.is_empty());
    let maxes: Vec<i64> = lines.iter().skip(1).map(|l| l.max).collect();
    assert!(
        maxes.windows(2).all(|w| w[0] < w[1]),
        "a new frame only for a new max: {maxes:?}"
    );
    assert!(
        lines.len() < 300,
        "far fewer frames than cycles: {}",
        lines.len()
    );
    check_status_invariants(&lines[1..]);
}

#[test]
fn refresh_on_max_two_threads() {
    require_root!();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_cyclictest([
        "-M",
        "-p",
        "80",
        "-l",
        "200",
        "-t",
        "2",
        "-a",
        &lease.list(),
    ]));
    r.expect_code(0);
    assert!(r.stdout.ends_with("\x1b[4A\x1b[4B"), "{:?}", r.stdout);
}

#[test]
fn resolution_warnings_with_verbose() {
    require_root!();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_cyclictest([
        "-R",
        "-v",
        "-q",
        "-l",
        "10",
        "-p",
        "80",
        "-a",
        &lease.list(),
    ]));
    r.expect_code(0);
    let err = r.stderr_lines();
    assert_eq!(err.len(), 2, "{}", r.describe());
    assert_eq!(shape(err[0]), "WARN: reported clock resolution:N nsec");
    assert_eq!(
        shape(err[1]),
        "WARN: measured clock resolution approximately:N nsec"
    );
    assert_eq!(parse_status_lines(&r.stdout)[0].cycles, 10);
}

#[test]
fn resolution_debug_lines() {
    require_root!();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_cyclictest([
        "-R",
        "--dbg_cyclictest",
        "-q",
        "-l",
        "10",
        "-p",
        "80",
        "-a",
        &lease.list(),
    ]));
    r.expect_code(0);
    let err = r.stderr_lines();
    let calls: usize = err[0]
        .strip_prefix("INFO: For ")
        .and_then(|s| s.strip_suffix(" consecutive calls to clock_gettime():"))
        .unwrap_or_else(|| panic!("first line {:?}", err[0]))
        .parse()
        .unwrap();
    assert_eq!(err[1], "INFO: time, delta time (nsec)");
    let deltas: Vec<&str> = err
        .iter()
        .copied()
        .filter(|l| l.starts_with("INFO: ") && l.as_bytes()[6].is_ascii_digit())
        .collect();
    assert_eq!(
        deltas.len(),
        calls - 1,
        "one delta line per call after the first"
    );
    let mut last = (0u64, 0u64);
    for l in &deltas {
        // `INFO: %ld.%06ld  %5llu`
        let rest = &l["INFO: ".len()..];
        let (time, delta) = rest.split_once("  ").unwrap_or_else(|| panic!("{l:?}"));
        let (s, ns) = time.split_once('.').unwrap();
        let t = (s.parse::<u64>().unwrap(), ns.parse::<u64>().unwrap());
        assert!(t >= last, "times do not go back: {l:?}");
        last = t;
        assert!(delta.trim().parse::<u64>().is_ok(), "{l:?}");
    }
    let warns: Vec<&str> = err
        .iter()
        .copied()
        .filter(|l| l.starts_with("WARN:"))
        .collect();
    assert!(warns.len() <= 2, "{warns:?}");
    assert_eq!(
        err.len(),
        2 + deltas.len() + warns.len(),
        "nothing else on stderr"
    );
}

#[test]
fn smi_real_run_is_refused_off_intel() {
    require_root!();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if cpuinfo.contains("GenuineIntel") {
        skip_note!(
            "SKIPPED (Intel CPU: the SMI counter may exist): {}",
            function_name!()
        );
        return;
    }
    for pin in [&["-a", "0"][..], &["-S"]] {
        let mut args = vec!["--smi"];
        args.extend(pin);
        args.extend(["-q", "-p", "80", "-l", "10"]);
        let r = run_with_timeout(&mut rtlat_cyclictest(&args), Duration::from_secs(2));
        assert_eq!(r.code(), Some(1), "{args:?}\n{}", r.describe());
        let err = r.stderr_lines();
        assert_eq!(err.len(), 1, "{}", r.describe());
        assert!(
            err[0].contains("SMI") && err[0].contains("not available on this CPU"),
            "{err:?}"
        );
        assert!(
            parse_status_lines(&r.stdout).is_empty(),
            "nothing measured\n{}",
            r.describe()
        );
    }
}
