//! Bounded inputs of the results readers and of `audit --root`: values
//! beyond an hour refused in one line by every plot and by compare, counts
//! that would wrap refused, a reader's memory within a small multiple of
//! its input, and CPU lists bounded by the root's possible CPUs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::{Run, audit_check_text, rtlat_tool, spawn};

/// Long enough for a debug build on a busy 2-core machine; a reader that
/// loops over a bucket near `f64::MAX` never ends.
const LIMIT: Duration = Duration::from_secs(60);

fn run(mut cmd: impl std::borrow::BorrowMut<Command>) -> Run {
    spawn(cmd.borrow_mut()).wait(LIMIT)
}

/// An rtlat `--json` result of one thread: `buckets` as its distribution,
/// `max` as its largest percentile, and `cycles`.
fn rtlat_json(buckets: &str, max: &str, cycles: &str) -> String {
    let pct = format!(
        r#"{{"p50": 1.0, "p90": 1.0, "p99": 1.0, "p99.9": 1.0, "p99.99": 1.0,
            "p99.999": 1.0, "max": {max}}}"#
    );
    format!(
        r#"{{"rtlat_version": "0.1.0", "cmdline:": "rtlat cyclictest",
        "thread": {{"0": {{"cycles": {cycles}, "min_ns": 1000, "max_ns": 2000,
          "percentiles": {pct},
          "distribution": {{"unit": "us", "buckets": [{buckets}]}}}}}},
        "all_threads": {pct}}}"#
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Exit 2 and one line naming the file, the value and the range.
fn assert_refused(run: &Run, file: &Path, value: &str) {
    run.expect_code(2);
    let lines = run.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", run.describe());
    let line = lines[0];
    assert!(
        line.contains(&file.display().to_string())
            && line.contains(value)
            && line.contains("outside the accepted range, -3600000000 to 3600000000 us"),
        "{line}"
    );
}

/// Near `f64::MAX`, 1e300 and an hour and a second, in µs: as written,
/// as they read in the refusal, and a bucket from there.
const BEYOND: [(&str, &str, &str); 3] = [
    ("1.7e308", "1.7e308", "[1.7e308, 1.79e308, 1]"),
    ("1e300", "1e300", "[1e300, 2e300, 1]"),
    (
        "3601000000.0",
        "3601000000",
        "[3601000000.0, 3601000001.0, 1]",
    ),
];

#[test]
fn every_plot_refuses_a_latency_beyond_an_hour_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.svg");
    for (value, shown, bucket) in BEYOND {
        let bucket = format!("[1.0, 2.0, 2], {bucket}");
        let json = write(dir.path(), "big.json", &rtlat_json(&bucket, "2.0", "3"));
        for kind in ["latency", "percentile"] {
            let r = run(rtlat_tool("plot", ["--kind", kind])
                .arg(&json)
                .arg("-o")
                .arg(&out));
            assert_refused(&r, &json, shown);
        }
        let line = |max: &str, interval: u32| {
            format!(
                r#"{{"time":{},"elapsed":{},"thread":0,"interval":{interval},"cycles":500,"min":1.0,"avg":2.0,"max":{max},"p99":3.0,"overruns":0}}"#,
                1_763_776_000.5 + f64::from(interval),
                0.5 + f64::from(interval)
            )
        };
        let stats = write(
            dir.path(),
            "stats.jsonl",
            &format!("{}\n{}\n", line(value, 0), line("5.0", 1)),
        );
        let r = run(rtlat_tool("plot", ["--kind", "timeline"])
            .arg(&stats)
            .arg("-o")
            .arg(&out));
        assert_refused(&r, &stats, shown);
    }
}

#[test]
fn compare_refuses_a_latency_beyond_an_hour() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(
        dir.path(),
        "good.json",
        &rtlat_json("[1.0, 2.0, 3]", "2.0", "3"),
    );
    for (value, shown, _) in BEYOND {
        let bad = write(
            dir.path(),
            "bad.json",
            &rtlat_json("[1.0, 2.0, 3]", value, "3"),
        );
        let r = run(rtlat_tool("compare", [&good, &bad]));
        assert_refused(&r, &bad, shown);
    }
    let bucket = write(
        dir.path(),
        "bucket.json",
        &rtlat_json("[1.0, 2.0, 2], [3601000000.0, 3601000001.0, 1]", "2.0", "3"),
    );
    let r = run(rtlat_tool("compare", [&bucket, &good]));
    assert_refused(&r, &bucket, "3601000000");
}

#[test]
fn counts_that_would_wrap_are_refused_and_the_largest_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.svg");
    let max = u64::MAX.to_string();
    // One bucket of 2^64 - 1 and one more sample: the thread's total
    // would wrap to 0.
    let over = write(
        dir.path(),
        "over.json",
        &rtlat_json(&format!("[1.0, 2.0, {max}], [3.0, 4.0, 1]"), "3.0", &max),
    );
    for kind in ["latency", "percentile"] {
        let r = run(rtlat_tool("plot", ["--kind", kind])
            .arg(&over)
            .arg("-o")
            .arg(&out));
        r.expect_code(2);
        assert!(
            r.stderr
                .contains("the counts add up to more than 18446744073709551615"),
            "{}",
            r.describe()
        );
    }
    // Two threads of 2^63 samples each: all threads' would wrap.
    let half = (1_u64 << 63).to_string();
    let thread = |cpu: u32| {
        format!(
            r#""{cpu}": {{"cycles": {half}, "min_ns": 1000, "max_ns": 2000,
              "percentiles": {{"p50": 1.0, "p90": 1.0, "p99": 1.0, "p99.9": 1.0,
              "p99.99": 1.0, "p99.999": 1.0, "max": 2.0}},
              "distribution": {{"unit": "us", "buckets": [[1.0, 2.0, {half}]]}}}}"#
        )
    };
    let pct = r#"{"p50": 1.0, "p90": 1.0, "p99": 1.0, "p99.9": 1.0, "p99.99": 1.0,
        "p99.999": 1.0, "max": 2.0}"#;
    let two = write(
        dir.path(),
        "two.json",
        &format!(
            r#"{{"rtlat_version": "0.1.0", "thread": {{{}, {}}}, "all_threads": {pct}}}"#,
            thread(0),
            thread(1)
        ),
    );
    let r = run(rtlat_tool("compare", [&two, &two]));
    r.expect_code(2);
    assert!(
        r.stderr
            .starts_with(&format!("rtlat compare: {}: all threads", two.display()))
            && r.stderr
                .contains("add up to more than 18446744073709551615"),
        "{}",
        r.describe()
    );
    let r = run(rtlat_tool("plot", ["--kind", "latency"])
        .arg(&two)
        .arg("-o")
        .arg(&out));
    r.expect_code(2);
    // 2^64 - 1 samples alone are read as they are: no wrap, no refusal.
    let most = write(
        dir.path(),
        "most.json",
        &rtlat_json(&format!("[1.0, 2.0, {max}]"), "2.0", &max),
    );
    let r = run(rtlat_tool("compare", [&most, &most]));
    r.expect_code(0);
    assert!(r.stdout.contains(&max), "{}", r.describe());
    run(rtlat_tool("plot", ["--kind", "percentile"])
        .arg(&most)
        .arg("-o")
        .arg(&out))
    .expect_code(0);
}

/// `cmd` run under `prlimit --as=BYTES`; `None` without prlimit.
fn under_prlimit(bytes: u64, cmd: &Command) -> Option<Command> {
    let prlimit = ["/usr/bin/prlimit", "/bin/prlimit"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let mut limited = Command::new(prlimit);
    limited
        .arg(format!("--as={bytes}"))
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(std::process::Stdio::null());
    Some(limited)
}

#[test]
fn a_reader_takes_a_small_multiple_of_its_input() {
    // A 25 MB result of 8 threads' distributions, one bucket a line as
    // rtlat writes them.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(r#"{"rtlat_version": "0.1.0", "thread": {"#);
    let pct = r#"{"p50": 1.0, "p90": 2.0, "p99": 3.0, "p99.9": 4.0, "p99.99": 5.0,
        "p99.999": 6.0, "max": 9.0}"#;
    let per_thread = 25_000_000 / 8 / 28;
    for t in 0..8 {
        let buckets: Vec<String> = (0..per_thread)
            .map(|b| format!("\n            [{b}.0, {}.0, 1]", b + 1))
            .collect();
        text += &format!(
            r#"{}"{t}": {{"cycles": {per_thread}, "min_ns": 0, "max_ns": 9000,
              "percentiles": {pct},
              "distribution": {{"unit": "us", "buckets": [{}]}}}}"#,
            if t == 0 { "" } else { "," },
            buckets.join(",")
        );
    }
    text += &format!(r#"}}, "all_threads": {pct}}}"#);
    let size = text.len() as u64;
    assert!(size > 24_000_000, "{size}");
    let input = write(dir.path(), "big.json", &text);
    drop(text);
    // The binaries' own address space (a few tens of MiB, debug build)
    // and 5 times the input: `main` before the readers were typed needed
    // some 200 MiB here.
    let limit = (40 << 20) + 5 * size;
    let out = dir.path().join("out.svg");
    let mut plot = rtlat_tool("plot", ["--kind", "latency"]);
    plot.arg(&input).arg("-o").arg(&out);
    let compare = rtlat_tool("compare", [&input, &input]);
    for cmd in [plot, compare] {
        let Some(mut limited) = under_prlimit(limit, &cmd) else {
            skip_note!("SKIPPED (needs prlimit): {}", function_name!());
            return;
        };
        let r = run(&mut limited);
        assert_eq!(
            r.code(),
            Some(0),
            "within {} MiB for {size} bytes of input: {}",
            limit >> 20,
            r.describe()
        );
    }
}

/// A root whose possible CPUs are 0-1 and whose command line is
/// `cmdline`.
fn root_with(cmdline: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let cpu = root.path().join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::create_dir_all(root.path().join("proc")).unwrap();
    for name in ["possible", "present", "online"] {
        std::fs::write(cpu.join(name), "0-1\n").unwrap();
    }
    std::fs::write(root.path().join("proc/cmdline"), cmdline).unwrap();
    root
}

#[test]
fn audit_bounds_a_huge_isolcpus_list_by_the_possible_cpus() {
    // 1 MiB of `0-65535`: `main` expanded each range, some 137 GB.
    let list = vec!["0-65535"; 1 << 17].join(",");
    let root = root_with(&format!("quiet isolcpus={list} ro\n"));
    let audit = rtlat_tool("audit", ["--root"]);
    let mut audit = audit;
    audit.arg(root.path());
    let r = match under_prlimit(1 << 30, &audit) {
        Some(mut limited) => run(&mut limited),
        None => {
            skip_note!("prlimit is not installed: run without a memory limit");
            run(&mut audit)
        }
    };
    r.expect_code(0);
    let line = audit_check_text(&r.stdout, "isolation.isolcpus")
        .unwrap_or_else(|| panic!("{}", r.describe()));
    assert!(
        line.contains("names CPUs beyond the possible 0-1: 2-65535"),
        "{line}"
    );
    assert!(line.len() < 1000, "{line}");

    let root = root_with("isolcpus=1,5-9,100 quiet\n");
    let mut audit = rtlat_tool("audit", ["--root"]);
    let r = run(audit.arg(root.path()));
    r.expect_code(0);
    let line = audit_check_text(&r.stdout, "isolation.isolcpus")
        .unwrap_or_else(|| panic!("{}", r.describe()));
    assert!(
        line.contains("isolcpus=1,5-9,100 (isolated: unreadable); measured "),
        "{line}"
    );
    assert!(
        line.contains("names CPUs beyond the possible 0-1: 5-9,100"),
        "{line}"
    );
}

#[test]
fn audit_with_cpus_does_not_wait_on_a_fifo_in_the_root() {
    // `--cpus` reads the tree's present CPUs and its own allowed ones
    // (`proc/self/status`): FIFOs there blocked `main` forever.
    let root = root_with("quiet\n");
    std::fs::create_dir_all(root.path().join("proc/self")).unwrap();
    for fifo in ["proc/self/status", "sys/devices/system/cpu/present"] {
        let path = root.path().join(fifo);
        let _ = std::fs::remove_file(&path);
        rtlat_sys::fifo::make_fifo(&path).expect("mkfifo");
    }
    let mut audit = rtlat_tool("audit", ["--cpus", "0", "--root"]);
    let r = spawn(audit.arg(root.path())).wait(Duration::from_secs(30));
    r.expect_code(0);
}
