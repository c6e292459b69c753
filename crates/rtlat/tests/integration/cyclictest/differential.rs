//! Differential tests (root): `/usr/bin/cyclictest` and `rtlat cyclictest`
//! with the same options give the same exit status and print the same
//! structure (lines, line shapes with the numbers hidden, JSON keys) on
//! stdout, and on stderr where it is meant to match; the plain options
//! first, then those that add blocks of their own. The real-time runs
//! of both tools are pinned (`-a`) to the CPU their test leases.

use std::collections::BTreeSet;

use crate::cyclictest::synthetic::{parse_break, parse_samples, parse_spike_block};
use crate::support::cpus::CpuLease;
use crate::support::tracefs::TraceGuard;
use crate::support::{
    Run, check_status_invariants, cyclictest_c, json_key_paths, parse_histogram,
    parse_status_lines, read_json, rtlat_cyclictest, run, shape,
};

/// Runs the C tool, then rtlat, with the same arguments (one after the
/// other, so they do not compete with each other for the CPUs).
pub(crate) fn both(args: &[&str]) -> (Run, Run) {
    let c = run(cyclictest_c().args(args));
    c.expect_code(0);
    let ours = run(&mut rtlat_cyclictest(args));
    ours.expect_code(0);
    (c, ours)
}

/// [`both`] with `-a` the leased CPUs first: the real-time threads of
/// either tool stay on them (C 2.4 pins thread i to CPU i without `-a`).
/// First, because C 2.4 given `-v` before `-a` prints `Using N cpus.`
/// twice, once while it parses `-a`, and rtlat once.
fn both_on(lease: &CpuLease, args: &[&str]) -> (Run, Run) {
    let cpus = lease.list();
    let mut pinned = vec!["-a", &cpus];
    pinned.extend(args);
    both(&pinned)
}

/// The shape used for comparison. The overflow-at lines list a
/// data-dependent number of cycles: only their `# Thread N:` head counts.
/// In a `T:` line a latency's sign is data, not shape (C `-x` can show
/// negative latencies after a preemption; see docs/compatibility.md).
pub(crate) fn compare_shape(line: &str) -> String {
    if line.starts_with("# Thread ")
        && let Some((head, _)) = line.split_once(':')
    {
        return format!("{}:", shape(head));
    }
    if line.starts_with("T:") {
        return shape(line).replace(":-N", ":N");
    }
    shape(line)
}

pub(crate) fn assert_same_shapes(c: &Run, ours: &Run) {
    let c_lines: Vec<&str> = c.stdout.lines().collect();
    let our_lines: Vec<&str> = ours.stdout.lines().collect();
    assert_eq!(
        c_lines.len(),
        our_lines.len(),
        "line counts differ\n--- C ---\n{}\n--- rtlat ---\n{}",
        c.stdout,
        ours.stdout
    );
    for (i, (a, b)) in c_lines.iter().zip(&our_lines).enumerate() {
        assert_eq!(
            compare_shape(a),
            compare_shape(b),
            "line {i} differs in shape:\n C:     {a:?}\n rtlat: {b:?}"
        );
    }
    assert_eq!(
        c.stdout.ends_with('\n'),
        ours.stdout.ends_with('\n'),
        "final newline"
    );
}

#[test]
fn quiet_two_threads() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(
        &lease,
        &["-q", "-p", "80", "-i", "500", "-l", "200", "-t", "2"],
    );
    assert_same_shapes(&c, &ours);
    let lines = parse_status_lines(&ours.stdout);
    check_status_invariants(&lines);
    let c_lines = parse_status_lines(&c.stdout);
    for (a, b) in c_lines.iter().zip(&lines) {
        assert_eq!((a.index, a.prio, a.interval), (b.index, b.prio, b.interval));
    }
    assert_eq!(c_lines[0].cycles, lines[0].cycles);
}

#[test]
fn quiet_histogram() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(
        &lease,
        &[
            "-q", "-p", "80", "-i", "500", "-l", "200", "-h", "30", "-t", "2",
        ],
    );
    assert_same_shapes(&c, &ours);
    let (hc, ho) = (
        parse_histogram(&c.stdout).unwrap(),
        parse_histogram(&ours.stdout).unwrap(),
    );
    assert_eq!((hc.threads(), hc.buckets()), (ho.threads(), ho.buckets()));
    assert_eq!(ho.bucket_sums, None);
    crate::support::check_histogram_invariants(&ho, None);
}

#[test]
fn quiet_histofall() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(
        &lease,
        &[
            "-q", "-p", "80", "-i", "500", "-l", "200", "-H", "30", "-t", "2",
        ],
    );
    assert_same_shapes(&c, &ours);
    let (hc, ho) = (
        parse_histogram(&c.stdout).unwrap(),
        parse_histogram(&ours.stdout).unwrap(),
    );
    assert_eq!(hc.bucket_sums.is_some(), ho.bucket_sums.is_some());
    assert_eq!(hc.total_sum.is_some(), ho.total_sum.is_some());
    crate::support::check_histogram_invariants(&ho, None);
}

#[test]
fn live_frames() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-p", "80", "-i", "1000", "-l", "100"]);
    for (who, r) in [("C", &c), ("rtlat", &ours)] {
        let lines: Vec<&str> = r.stdout.lines().collect();
        assert_eq!(lines[0], "# /dev/cpu_dma_latency set to 0us", "{who}");
        assert!(
            lines[1].starts_with("policy: fifo: loadavg: ") && lines[1].ends_with("          "),
            "{who}: header {:?}",
            lines[1]
        );
        assert_eq!(lines[2], "", "{who}: empty line after the header");
        assert!(lines[3].starts_with("T: 0 ("), "{who}: {:?}", lines[3]);
        assert!(r.stdout.contains("\x1b[3A"), "{who}: cursor-up by 3");
        assert!(
            !r.stdout.ends_with("\x1b[3A"),
            "{who}: no cursor-up after the last frame"
        );
    }
    // Every frame after a cursor-up has the shape of C's last frame.
    let frame_shape = |frame: &str| frame.lines().map(shape).collect::<Vec<_>>();
    let c_last = frame_shape(c.stdout.rsplit("\x1b[3A").next().unwrap());
    assert_eq!(
        c_last.len(),
        3,
        "C's last frame: header, empty line, T: line"
    );
    for frame in ours.stdout.split("\x1b[3A").skip(1) {
        assert_eq!(frame_shape(frame), c_last, "frame {frame:?}");
    }
    let last = parse_status_lines(&ours.stdout);
    assert_eq!(
        last.last().unwrap().cycles,
        100,
        "the last frame shows -l reached"
    );
}

#[test]
fn quiet_nanoseconds() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-q", "-N", "-p", "80", "-i", "500", "-l", "100"]);
    assert_same_shapes(&c, &ours);
}

#[test]
fn quiet_round_robin() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-q", "-p", "80", "-l", "50", "--policy=rr"]);
    assert_same_shapes(&c, &ours);
}

#[test]
fn quiet_without_priority_shows_p0() {
    require_root!();
    require_c_cyclictest!();
    // SCHED_OTHER: nothing real-time to keep on a leased CPU.
    let (c, ours) = both(&["-q", "-l", "50"]);
    assert_same_shapes(&c, &ours);
    for r in [&c, &ours] {
        assert!(r.stdout.contains(" P: 0 "), "{}", r.stdout);
    }
}

/// The keys rtlat adds to C's JSON (extended output only ever adds).
const EXTRA_KEYS: &[&str] = &[
    "all_threads",
    "all_threads.max",
    "all_threads.p50",
    "all_threads.p90",
    "all_threads.p99",
    "all_threads.p99.9",
    "all_threads.p99.99",
    "all_threads.p99.999",
    "audit",
    "environment",
    "measure_method",
    "rtlat_version",
    "thread.*.blocks",
    "thread.*.blocks.at_or_above",
    "thread.*.blocks.block_s",
    "thread.*.blocks.cycles",
    "thread.*.blocks.ladder_ns",
    "thread.*.blocks.lost",
    "thread.*.blocks.max_ns",
    "thread.*.blocks.sum_ns",
    "thread.*.distribution",
    "thread.*.distribution.buckets",
    "thread.*.distribution.unit",
    "thread.*.disturbances",
    "thread.*.disturbances.involuntary_switches",
    "thread.*.disturbances.major_faults",
    "thread.*.disturbances.migrations",
    "thread.*.disturbances.minor_faults",
    "thread.*.interval_us",
    "thread.*.max_ns",
    "thread.*.max_time",
    "thread.*.mean_ns",
    "thread.*.min_ns",
    "thread.*.overruns",
    "thread.*.percentiles",
    "thread.*.percentiles.max",
    "thread.*.percentiles.p50",
    "thread.*.percentiles.p90",
    "thread.*.percentiles.p99",
    "thread.*.percentiles.p99.9",
    "thread.*.percentiles.p99.99",
    "thread.*.percentiles.p99.999",
    "thread.*.priority",
    "thread.*.stddev",
    "thread.*.tid",
    "verdict",
    "verdict.level",
    "verdict.machine",
    "verdict.measurement",
    "verdict.projection",
    "verdict.reasons",
    "verdict.steal_share",
    "verdict.suggested_duration_s",
    "wait_method",
];

/// Runs both tools with `args` on the leased CPU, each writing `--json`.
fn json_keys_superset(lease: &CpuLease, args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let c_json = dir.path().join("c.json");
    let our_json = dir.path().join("rtlat.json");
    let with = |path: &std::path::Path| {
        let mut v: Vec<String> = vec![format!("--json={}", path.display())];
        v.extend(["-a".to_owned(), lease.list()]);
        v.extend(args.iter().map(|s| s.to_string()));
        v
    };
    let c = run(cyclictest_c().args(with(&c_json)));
    c.expect_code(0);
    let ours = run(&mut rtlat_cyclictest(with(&our_json)));
    ours.expect_code(0);
    assert_same_shapes(&c, &ours);
    let (cj, oj) = (read_json(&c_json), read_json(&our_json));
    let (ck, ok) = (json_key_paths(&cj), json_key_paths(&oj));
    let missing: Vec<_> = ck.difference(&ok).collect();
    assert!(
        missing.is_empty(),
        "keys C has and rtlat lacks: {missing:?}"
    );
    // The environment's own keys are checked by the environment module,
    // the projection's (projected or refused) by the verdict's.
    let extra: BTreeSet<&str> = ok
        .difference(&ck)
        .map(String::as_str)
        .filter(|k| !k.starts_with("environment.") && !k.starts_with("verdict.projection."))
        .collect();
    assert_eq!(
        extra,
        EXTRA_KEYS.iter().copied().collect::<BTreeSet<_>>(),
        "rtlat's extra JSON keys"
    );
    // Same types where the keys match; the same CPU, the leased one.
    for key in [
        "num_threads",
        "resolution_in_ns",
        "return_code",
        "rt_test_version:",
    ] {
        assert_eq!(cj[key], oj[key], "{key}");
    }
    for t in cj["thread"].as_object().unwrap().keys() {
        for field in ["cycles", "min", "max", "avg", "cpu", "node", "histogram"] {
            let (a, b) = (&cj["thread"][t][field], &oj["thread"][t][field]);
            assert_eq!(
                std::mem::discriminant(a),
                std::mem::discriminant(b),
                "thread {t} {field}: C {a} vs rtlat {b}"
            );
        }
        let leased = serde_json::Value::from(lease.cpu());
        for (who, json) in [("C", &cj), ("rtlat", &oj)] {
            assert_eq!(json["thread"][t]["cpu"], leased, "{who}: thread {t} cpu");
        }
    }
}

#[test]
fn json_keys_with_histogram() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    json_keys_superset(&lease, &["-q", "-p", "80", "-l", "100", "-h", "10"]);
}

#[test]
fn json_keys_without_histogram() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    json_keys_superset(
        &lease,
        &["-q", "-p", "80", "-i", "500", "-l", "100", "-t", "2"],
    );
}

/// stderr: every C line must be in ours; ours may add only `rtlat cyclictest: note:` lines.
fn assert_same_stderr(c: &Run, ours: &Run) {
    let c_lines: Vec<&str> = c.stderr.lines().collect();
    let our_lines: Vec<&str> = ours.stderr.lines().collect();
    for l in &c_lines {
        assert!(
            our_lines.contains(l),
            "C's stderr line {l:?} missing\n{}",
            ours.describe()
        );
    }
    for l in &our_lines {
        assert!(
            c_lines.contains(l) || l.starts_with("rtlat cyclictest: note:"),
            "rtlat prints {l:?} on stderr, C 2.4 does not (C stderr: {c_lines:?})"
        );
    }
}

#[test]
fn stderr_like_c_without_priority() {
    require_root!();
    require_c_cyclictest!();
    // SCHED_OTHER: nothing real-time to keep on a leased CPU.
    let (c, ours) = both(&["-q", "-l", "50"]);
    assert_same_stderr(&c, &ours);
}

#[test]
fn stderr_like_c_with_round_robin() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-q", "-p", "80", "-l", "50", "--policy=rr"]);
    assert_same_stderr(&c, &ours);
}

/// Regression: `-p 80` alone used to add `policy and priority don't match:
/// setting policy to SCHED_FIFO`; C 2.4 prints nothing (`-p` selects FIFO).
#[test]
fn stderr_like_c_with_priority() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-q", "-p", "80", "-i", "500", "-l", "50"]);
    assert_same_stderr(&c, &ours);
}

fn assert_same_stderr_shapes(c: &Run, ours: &Run) {
    let c_err: Vec<String> = c.stderr.lines().map(shape).collect();
    let our_err: Vec<String> = ours.stderr.lines().map(shape).collect();
    assert_eq!(
        c_err, our_err,
        "stderr shapes\n--- C ---\n{}\n--- rtlat ---\n{}",
        c.stderr, ours.stderr
    );
}

#[test]
fn spike_block() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    // Trigger 1 µs: reliably exceeded, so both print the block.
    let (c, ours) = both_on(
        &lease,
        &[
            "-q",
            "-p",
            "80",
            "-i",
            "500",
            "-l",
            "3000",
            "--spike",
            "1",
            "--spike-nodes",
            "3",
            "-t",
            "2",
        ],
    );
    assert_same_shapes(&c, &ours);
    for r in [&c, &ours] {
        let block = parse_spike_block(&r.stdout).expect("spike block");
        assert_eq!(block.spikes.len(), 3, "{}", r.stdout);
        assert!(block.count >= 3);
        assert!(block.spikes.iter().all(|s| s.value > 1));
    }
}

#[test]
fn breaktrace_lines() {
    require_root!();
    require_c_cyclictest!();
    let _guard = TraceGuard::acquire();
    let lease = CpuLease::one();
    let (c, ours) = both_on(
        &lease,
        &["-q", "-p", "80", "-i", "500", "-l", "5000", "-b", "1"],
    );
    assert_same_shapes(&c, &ours);
    for r in [&c, &ours] {
        let b = parse_break(&r.stdout);
        assert!(b.value > 1, "{b:?}");
        assert_eq!(b.thread_ids.len(), 1);
        assert_eq!(b.thread, b.thread_ids[0]);
    }
}

#[test]
fn breaktrace_lines_two_threads() {
    require_root!();
    require_c_cyclictest!();
    let _guard = TraceGuard::acquire();
    let lease = CpuLease::one();
    let (c, ours) = both_on(
        &lease,
        &[
            "-q", "-p", "80", "-i", "500", "-l", "5000", "-b", "1", "-t", "2",
        ],
    );
    assert_same_shapes(&c, &ours);
}

#[test]
fn refresh_on_max_tail() {
    skip_if_emulated!(
        "the refresh lines follow each run's timing, compared with the native C tool's"
    );
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-M", "-p", "80", "-l", "300"]);
    // rtlat draws a frame, moves the cursor up after it, redraws each time
    // a maximum grows, and moves the cursor down at the end. It need not
    // redraw at all: when the run's first sample is its largest and lands
    // before the first look at the maxima, no maximum grows after the
    // first frame (seen in .ci/run's i686 suite beside the cross builds:
    // a first wake-up 4 ms late, then nothing later). So one frame and
    // its move up at least.
    let ours_frames = ours.stdout.split("\x1b[3A").count();
    assert!(
        ours_frames >= 2,
        "a frame and a move up:\n{:?}",
        ours.stdout
    );
    assert!(
        ours.stdout.ends_with("\x1b[3A\x1b[3B"),
        "rtlat always moves up after its last frame, then down:\n{:?}",
        ours.stdout
    );
    assert_eq!(
        c.stdout.lines().next(),
        ours.stdout.lines().next(),
        "first line"
    );
    // C's main thread draws a frame, sleeps 10 ms, checks for the end,
    // moves the cursor up and waits for a new maximum; the end of the run
    // wakes it to move the cursor down. A maximum signalled while it is not
    // waiting is lost (its condition-variable wait races with the signal),
    // so C may draw a single frame, and when the end comes during a
    // frame's sleep that frame is not followed by the move up, the first
    // one included (no cursor move up at all). Whichever way C ended, its
    // last frame is the one before the final move down.
    let tail = |r: &Run| -> Vec<String> {
        let drawn = r
            .stdout
            .strip_suffix("\x1b[3B")
            .unwrap_or_else(|| panic!("the cursor goes back down at the end: {:?}", r.stdout));
        let drawn = drawn.strip_suffix("\x1b[3A").unwrap_or(drawn);
        let last = drawn.rsplit("\x1b[3A").next().unwrap();
        // The first frame also carries the cpu_dma_latency line printed
        // before it; compare the frame itself.
        last.lines()
            .filter(|l| !l.starts_with("# /dev/cpu_dma_latency"))
            .map(shape)
            .collect()
    };
    let c_last = tail(&c);
    assert_eq!(
        c_last.len(),
        3,
        "header, empty line, T: line: {:?}",
        c.stdout
    );
    assert_eq!(c_last, tail(&ours), "the last frame and the tail");
}

#[test]
fn oscope_verbose_lines() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-v", "-o", "10", "-l", "100", "-p", "80"]);
    assert_same_shapes(&c, &ours);
    for r in [&c, &ours] {
        let s = parse_samples(&r.stdout);
        assert_eq!(s.len(), 10, "{}", r.stdout);
        for (k, x) in s.iter().enumerate() {
            assert!(
                (10 * k as i64..10 * k as i64 + 10).contains(&x.cycle),
                "{x:?}"
            );
        }
    }
}

#[test]
fn quiet_posix_timers() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-q", "-x", "-p", "80", "-l", "100"]);
    assert_same_shapes(&c, &ours);
    assert_same_stderr_shapes(&c, &ours);
}

#[test]
fn quiet_nanosleep() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-q", "-s", "-p", "80", "-l", "100"]);
    assert_same_shapes(&c, &ours);
    assert_same_stderr_shapes(&c, &ours);
}

#[test]
fn nanosleep_with_posix_timers() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-q", "-s", "-x", "-p", "80", "-l", "50"]);
    assert_same_shapes(&c, &ours);
    assert_eq!(c.stderr, ours.stderr, "the three WARN lines");
}

#[test]
fn quiet_aligned_two_threads() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(
        &lease,
        &["-q", "-A", "100", "-p", "80", "-l", "100", "-t", "2"],
    );
    assert_same_shapes(&c, &ours);
    let (a, b) = (
        parse_status_lines(&c.stdout),
        parse_status_lines(&ours.stdout),
    );
    assert_eq!(
        a.iter().map(|l| (l.interval, l.prio)).collect::<Vec<_>>(),
        b.iter().map(|l| (l.interval, l.prio)).collect::<Vec<_>>()
    );
}

#[test]
fn resolution_warnings() {
    require_root!();
    require_c_cyclictest!();
    let lease = CpuLease::one();
    let (c, ours) = both_on(&lease, &["-R", "-v", "-q", "-l", "10", "-p", "80"]);
    assert_same_stderr_shapes(&c, &ours);
    assert_eq!(ours.stderr_lines().len(), 2);
}
