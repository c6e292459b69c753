//! `rtlat latency`: Xenomai's formats from the synthetic source (snapshots
//! and invariants), the gnuplot file, short real runs (root) with the
//! invariants of real measurements, the end by signal, `-f` on the kernel
//! trace, refused Xenomai-only modes and the `latency` symlink. A real run
//! holds a CPU lease and measures on its CPU (`-c`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::tracefs::TraceGuard;
use crate::support::{rtlat_path, rtlat_tool, run, run_with_timeout, shape, spawn};

pub(crate) fn latency(args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>) -> Command {
    rtlat_tool("latency", args)
}

fn synthetic_latency(seed: u64, args: &[&str]) -> String {
    let mut cmd = latency(["--synthetic", &seed.to_string()]);
    cmd.args(args);
    let r = run(&mut cmd);
    r.expect_code(0);
    if !args.contains(&"-q") {
        assert_eq!(r.stderr, "", "{}", r.describe());
    }
    r.stdout
}

/// One `RTD|` line's seven columns.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rtd {
    min: f64,
    avg: f64,
    max: f64,
    overruns: u64,
    msw: u64,
    best: f64,
    worst: f64,
}

fn columns<'a>(line: &'a str, tag: &str) -> Option<Vec<&'a str>> {
    let rest = line.strip_prefix(tag)?.strip_prefix('|')?;
    Some(rest.split('|').map(str::trim).collect())
}

fn rtd_lines(text: &str) -> Vec<Rtd> {
    text.lines()
        .filter_map(|l| columns(l, "RTD"))
        .map(|c| {
            assert_eq!(c.len(), 7, "{c:?}");
            let f = |i: usize| c[i].parse::<f64>().unwrap_or_else(|_| panic!("{c:?}"));
            let u = |i: usize| c[i].parse::<u64>().unwrap_or_else(|_| panic!("{c:?}"));
            Rtd {
                min: f(0),
                avg: f(1),
                max: f(2),
                overruns: u(3),
                msw: u(4),
                best: f(5),
                worst: f(6),
            }
        })
        .collect()
}

/// `RTS|` min, avg, max, overruns, actual seconds, requested seconds.
fn rts_line(text: &str) -> (f64, f64, f64, u64, String) {
    let line = text
        .lines()
        .find_map(|l| columns(l, "RTS"))
        .unwrap_or_else(|| panic!("no RTS line in\n{text}"));
    assert_eq!(line.len(), 6, "{line:?}");
    let f = |i: usize| line[i].parse::<f64>().unwrap();
    (
        f(0),
        f(1),
        f(2),
        line[3].parse().unwrap(),
        line[5].to_string(),
    )
}

/// `HSD|` lines of one kind: (bucket, count).
fn hsd(text: &str, kind: &str) -> Vec<(i64, u64)> {
    text.lines()
        .filter_map(|l| columns(l, "HSD"))
        .filter(|c| c[0] == kind)
        .map(|c| {
            let (from, to) = c[1].split_once(" -").unwrap();
            let from: i64 = from.trim().parse().unwrap();
            assert_eq!(to.trim().parse::<i64>().unwrap(), from + 1);
            (from, c[2].parse().unwrap())
        })
        .collect()
}

/// `HSO|` counts of one kind.
fn hso_total(text: &str, kind: &str) -> u64 {
    text.lines()
        .filter_map(|l| columns(l, "HSO"))
        .filter(|c| c[0] == kind)
        .map(|c| c[2].parse::<u64>().unwrap())
        .sum()
}

/// `HSS|` samples, average, deviation of one kind.
fn hss(text: &str, kind: &str) -> (u64, f64, f64) {
    let c = text
        .lines()
        .filter_map(|l| columns(l, "HSS"))
        .find(|c| c[0] == kind)
        .unwrap_or_else(|| panic!("no HSS {kind} line in\n{text}"));
    (
        c[1].parse().unwrap(),
        c[2].parse().unwrap(),
        c[3].parse().unwrap(),
    )
}

/// What every run's lines must satisfy, whatever the latencies.
fn check_invariants(text: &str, seconds: usize) {
    let rtd = rtd_lines(text);
    assert_eq!(rtd.len(), seconds, "one RTD line per second\n{text}");
    let mut best = f64::INFINITY;
    let mut worst = f64::NEG_INFINITY;
    let mut overruns = 0;
    for r in &rtd {
        assert!(r.min <= r.avg && r.avg <= r.max, "{r:?}");
        best = best.min(r.min);
        worst = worst.max(r.max);
        assert_eq!((r.best, r.worst), (best, worst), "running best/worst {r:?}");
        assert!(r.overruns >= overruns, "overruns are cumulative {r:?}");
        overruns = r.overruns;
        assert_eq!(r.msw, 0);
    }
    let (min, avg, max, rts_overruns, _) = rts_line(text);
    // The summary also holds the samples of the last, partial second.
    assert!(
        min <= best && max >= worst,
        "RTS {min} {max} vs {best} {worst}"
    );
    assert!(min <= avg && avg <= max);
    assert!(rts_overruns >= overruns);
}

#[test]
fn synthetic_default_output() {
    let out = synthetic_latency(1, &["-T", "3", "-p", "1000"]);
    check_invariants(&out, 3);
    insta::assert_snapshot!(out);
}

#[test]
fn synthetic_histograms_and_statistics() {
    let out = synthetic_latency(
        1,
        &["-T", "3", "-p", "1000", "-h", "-s", "-H", "100", "-l", "2"],
    );
    check_invariants(&out, 3);
    insta::assert_snapshot!(out);
}

#[test]
fn synthetic_quiet_statistics_only() {
    // The period given: the default is 1000 us off x86 (Xenomai's).
    let r = run(&mut latency([
        "--synthetic",
        "2",
        "-q",
        "-T",
        "2",
        "-s",
        "-B",
        "500",
        "-p",
        "100",
    ]));
    r.expect_code(0);
    assert_eq!(r.stderr, "running quietly for 2 seconds\n");
    assert!(!r.stdout.contains("RTD|"), "{}", r.stdout);
    insta::assert_snapshot!(r.stdout);
}

#[test]
fn headers_come_every_l_lines_and_not_at_all_with_l0() {
    let out = synthetic_latency(3, &["-T", "5", "-p", "1000", "-l", "2"]);
    let tags: Vec<&str> = out.lines().map(|l| &l[..3.min(l.len())]).collect();
    let rtt = tags.iter().filter(|t| **t == "RTT").count();
    let rth = tags.iter().filter(|t| **t == "RTH").count();
    assert_eq!((rtt, rth), (3, 3), "5 lines, a header every 2\n{out}");
    let times: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("RTT|"))
        .map(|l| &l[6..14])
        .collect();
    assert_eq!(times, ["00:00:01", "00:00:03", "00:00:05"]);
    let none = synthetic_latency(3, &["-T", "5", "-p", "1000", "-l", "0"]);
    assert!(!none.contains("RTT|") && !none.contains("RTH|"), "{none}");
    assert_eq!(rtd_lines(&none), rtd_lines(&out), "same data lines");
}

#[test]
fn histogram_counts_add_up_to_the_statistics() {
    let out = synthetic_latency(4, &["-T", "4", "-p", "500", "-h", "-H", "40", "-B", "2000"]);
    let seconds = rtd_lines(&out).len() as u64;
    for kind in ["min", "avg", "max"] {
        let in_buckets: u64 = hsd(&out, kind).iter().map(|&(_, c)| c).sum();
        let (samples, average, stddev) = hss(&out, kind);
        assert_eq!(
            in_buckets + hso_total(&out, kind),
            samples,
            "{kind}: every sample is in a bucket or on an HSO line\n{out}"
        );
        assert!(stddev >= 0.0 && average > 0.0, "{kind}");
        let buckets = hsd(&out, kind);
        assert!(
            buckets.windows(2).all(|w| w[0].0 < w[1].0),
            "{kind} in order"
        );
        assert!(buckets.iter().all(|&(b, _)| (-40..40).contains(&b)));
        if kind != "avg" {
            assert_eq!(samples, seconds, "one {kind} per second");
        }
    }
    // The synthetic source has wake-ups later than 80 us.
    assert!(hso_total(&out, "avg") > 0, "{out}");
    // All samples: those of the complete seconds and of the partial last one.
    let (avg_samples, _, _) = hss(&out, "avg");
    assert!(avg_samples >= seconds * 2000, "{avg_samples}");
}

#[test]
fn gnuplot_file_is_framed_and_matches_the_histogram() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lat.dat");
    let out = synthetic_latency(
        5,
        &["-T", "2", "-p", "1000", "-h", "-g", path.to_str().unwrap()],
    );
    let data = std::fs::read_to_string(&path).unwrap();
    let points: Vec<(f64, u64)> = data
        .lines()
        .map(|l| {
            let (x, y) = l.split_once(' ').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    assert!(points.len() >= 3, "{data}");
    assert_eq!(points.first().unwrap().1, 1);
    assert_eq!(points.last().unwrap().1, 1);
    assert!(points.windows(2).all(|w| w[0].0 < w[1].0), "x increases");
    let inner = &points[1..points.len() - 1];
    let buckets = hsd(&out, "avg");
    assert_eq!(
        inner.len() as i64,
        buckets.last().unwrap().0 - buckets[0].0 + 1
    );
    let counted: u64 = inner.iter().map(|&(_, y)| y - 1).sum();
    assert_eq!(counted, buckets.iter().map(|&(_, c)| c).sum::<u64>());
    for &(bucket, count) in &buckets {
        let centre = bucket as f64 + 0.5;
        assert!(
            inner.contains(&(centre, count + 1)),
            "bucket {bucket} at x = {centre}"
        );
    }
}

#[test]
fn xenomai_only_modes_are_one_line_and_exit_2() {
    for args in [&["-t", "1"][..], &["-t", "2"], &["-D", "0"], &["-b"]] {
        let r = run(&mut latency(args));
        r.expect_code(2);
        assert_eq!(r.stdout, "");
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{}", r.describe());
        assert!(
            lines[0].contains("needs the Xenomai kernel"),
            "{}",
            lines[0]
        );
    }
    for args in [&["-p", "0"][..], &["-P", "100"], &["-t", "7"], &["-H", "x"]] {
        let r = run(&mut latency(args));
        r.expect_code(2);
        assert_eq!(r.stderr_lines().len(), 1, "{}", r.describe());
    }
}

#[test]
fn help_and_symlink() {
    let r = run(&mut latency(["--help"]));
    r.expect_code(0);
    assert!(r.stdout.contains("-t 1 and -t 2"), "{}", r.stdout);
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("latency");
    std::os::unix::fs::symlink(rtlat_path(), &link).unwrap();
    let r = run(Command::new(&link).args(["--synthetic", "1", "-T", "1", "-p", "1000"]));
    r.expect_code(0);
    assert_eq!(rtd_lines(&r.stdout).len(), 1, "{}", r.describe());
}

// ---------------------------------------------------------------------------
// Real runs (root)

#[test]
fn real_run_has_xenomais_shape_and_invariants() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("lat.dat");
    let r = run_with_timeout(
        latency([
            "-T",
            "2",
            "-p",
            "1000",
            "-c",
            &lease.list(),
            "-h",
            "-s",
            "-g",
            plot.to_str().unwrap(),
        ])
        .stdin(std::process::Stdio::null()),
        Duration::from_secs(15),
    );
    r.expect_code(0);
    check_invariants(&r.stdout, 2);
    let shapes: Vec<String> = r
        .stdout
        .lines()
        .filter(|l| !l.starts_with("HSD|") && !l.starts_with("HSO|"))
        .map(shape)
        .collect();
    let expected_start = [
        "== Sampling period:N us",
        "== Test mode: periodic user-mode task",
        "== All results in microseconds",
        "warming up...",
    ];
    assert_eq!(&shapes[..4], expected_start, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("(periodic user-mode task, 1000 us period, priority 99)")
    );
    let (_, _, _, _, durations) = rts_line(&r.stdout);
    assert_eq!(durations, "00:00:02/00:00:02");
    let (samples, _, _) = hss(&r.stdout, "avg");
    // 1000 per second; a missed period is an overrun, not a sample.
    assert!((1500..=2100).contains(&samples), "{samples}");
    assert!(Path::new(&plot).exists());
}

#[test]
fn sigint_still_prints_the_summary() {
    require_root!();
    let lease = CpuLease::one();
    let child = spawn(&mut latency(["-p", "1000", "-s", "-c", &lease.list()]));
    // A second measured after the warm-up: the summary has samples.
    child.wait_for_stdout(Duration::from_secs(10), "the first RTD line", |out| {
        out.contains("\nRTD|")
    });
    child.signal("INT");
    let r = child.wait(Duration::from_secs(10));
    r.expect_code(0);
    let seconds = rtd_lines(&r.stdout).len();
    assert!((1..=3).contains(&seconds), "{}", r.describe());
    let (_, _, _, _, durations) = rts_line(&r.stdout);
    let actual = format!("00:00:{seconds:02}");
    assert_eq!(
        durations,
        format!("{actual}/{actual}"),
        "no -T: requested = actual"
    );
    assert!(r.stdout.contains("HSS|    avg|"), "{}", r.stdout);
}

#[test]
fn freeze_marks_the_trace_at_new_maxima() {
    require_root!();
    let guard = TraceGuard::acquire();
    let Some(dir) = guard.dir.clone() else {
        skip_note!("SKIPPED (tracefs not mounted): {}", function_name!());
        return;
    };
    let tracer = std::fs::read_to_string(dir.join("current_tracer")).unwrap_or_default();
    if tracer.trim() != "nop" {
        skip_note!(
            "SKIPPED (tracer {:?} active): {}",
            tracer.trim(),
            function_name!()
        );
        return;
    }
    guard.set_tracing_on("1");
    // The trace buffer is global: start from an empty one.
    std::fs::write(dir.join("trace"), "").expect("clearing the trace");
    // The synthetic source (seed 1) has its largest spikes after the
    // warm-up, so a freeze is certain; the trace files are the real ones.
    let r = run(&mut latency([
        "--synthetic",
        "1",
        "-T",
        "3",
        "-p",
        "1000",
        "-f",
    ]));
    r.expect_code(0);
    let has_snapshot = dir.join("snapshot").exists();
    let (file, markers) = if has_snapshot {
        let snap = std::fs::read_to_string(dir.join("snapshot")).unwrap();
        ("snapshot", snap)
    } else {
        assert_eq!(guard.tracing_on().as_deref(), Some("0"), "trace stopped");
        assert!(
            r.stderr.contains("no trace snapshot buffer"),
            "{}",
            r.stderr
        );
        ("trace", std::fs::read_to_string(dir.join("trace")).unwrap())
    };
    let count = markers
        .lines()
        .filter(|l| l.contains("tracing_mark_write: rtlat: new maximum latency"))
        .count();
    assert!(count >= 1, "a marker in {file}:\n{markers}");
    if !has_snapshot {
        assert_eq!(count, 1, "the trace stops at the first one");
    }
}

#[test]
fn a_last_wake_up_late_past_the_end_still_completes_the_last_second() {
    // Seed 2426 wakes up 2.7 ms late for one of the last deadlines of the
    // second second, past the end of the run: that second was measured
    // through, so it gets its RTD line and counts in the RTS line.
    let text = synthetic_latency(2426, &["-T", "2", "-p", "1000"]);
    check_invariants(&text, 2);
    let rts = text.lines().find(|l| l.starts_with("RTS|")).unwrap();
    assert!(rts.ends_with("00:00:02/00:00:02"), "{text}");
    assert!(
        rts.contains("2742.412"),
        "the late wake-up is the maximum: {text}"
    );
}
