//! The smoke set: every tool runs for real, writes its result and is
//! stopped by a signal, as a terminal or a script stops it; `rtlat
//! compare` reads what cyclictest wrote. `.ci/run` runs this set
//! (`smoke::`) under qemu-user for aarch64, whose whole suite is left to
//! `ci/cross all` (CONTRIBUTING.md, "What CI runs"); natively it runs with the rest
//! of the suite.
//!
//! Each measuring run is pinned to a leased CPU, and is stopped once its
//! live display shows samples (the sign that it measures, at whatever
//! speed the emulator gives), never after a fixed time.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::cpus::CpuLease;
use crate::support::{Run, read_json, rtlat_tool, run, spawn};

/// How long a tool may take to show its first samples: a safety net
/// (wider under emulation), not a measure.
const FIRST_SAMPLES_WITHIN: Duration = Duration::from_secs(20);

/// Runs `rtlat TOOL ARGS --json=DIR/TOOL.json`, waits until its standard
/// output satisfies `measures`, stops it with `signal`, and returns the
/// run (exit status 0 checked) and its JSON document.
fn stopped_by(
    signal: &str,
    tool: &str,
    args: &[String],
    dir: &Path,
    measures: impl FnMut(&str) -> bool,
) -> (Run, Value) {
    let json = dir.join(format!("{tool}.json"));
    let mut cmd = rtlat_tool(tool, args);
    cmd.arg(format!("--json={}", json.display()));
    let running = spawn(&mut cmd);
    running.wait_for_stdout(
        FIRST_SAMPLES_WITHIN,
        "samples on the live display",
        measures,
    );
    running.signal(signal);
    let r = running.wait(Duration::from_secs(10));
    r.expect_code(0);
    let doc = read_json(&json);
    (r, doc)
}

/// Whether a `T:` line (cyclictest, signaltest) shows `C:` above 10.
fn status_line_counts(text: &str) -> bool {
    text.lines()
        .filter_map(|l| l.find("T: 0 ").map(|at| &l[at..]))
        .filter_map(|l| crate::support::int_after(l, " C:"))
        .any(|cycles| cycles > 10)
}

/// The cyclictest keys every measuring tool's document has.
fn check_result(tool: &str, doc: &Value) {
    for key in [
        "cmdline:",
        "rt_test_version:",
        "start_time",
        "end_time",
        "thread",
    ] {
        assert!(doc.get(key).is_some(), "{tool}: no {key:?} in {doc}");
    }
    assert!(
        doc["thread"]
            .as_object()
            .is_some_and(|threads| !threads.is_empty()),
        "{tool}: no thread in {doc}"
    );
    assert_eq!(doc["return_code"], 0, "{tool}");
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn cyclictest_stops_on_sigint_with_its_json_then_compare_reads_it() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let run_args = args(&[
        "-m",
        "-p",
        "80",
        "-i",
        "1000",
        "-h",
        "200",
        "-a",
        &lease.list(),
    ]);
    let (_, doc) = stopped_by(
        "INT",
        "cyclictest",
        &run_args,
        dir.path(),
        status_line_counts,
    );
    check_result("cyclictest", &doc);
    let cycles = doc["thread"]["0"]["cycles"].as_u64().unwrap();
    assert!(cycles > 10, "{cycles} cycles");
    drop(lease);
    // `rtlat compare` reads it (against itself: the same run). `rtlat
    // plot` is left out: its own binary and the plotting crates, built
    // for this set alone, would double its build under emulation.
    let result = dir.path().join("cyclictest.json");
    let compared = run(&mut rtlat_tool("compare", [&result, &result]));
    compared.expect_code(0);
    assert!(
        compared.stdout.contains("max") && compared.stdout.contains("p99"),
        "{}",
        compared.describe()
    );
}

#[test]
fn each_ipc_tool_stops_on_sigterm_with_its_json() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    for tool in ["svsematest", "pmqtest", "ptsematest", "sigwaittest"] {
        // `--affinity=CPU` in one word: `-a 0` in two is `-a` alone (pair
        // i on the i-th CPU), as in C.
        let run_args = args(&[
            "-p",
            "80",
            "-i",
            "1000",
            &format!("--affinity={}", lease.cpu()),
        ]);
        // The pair's line: `#1 -> #0, Min ..., Cur ..., Avg ..., Max ...`;
        // its header line counts the cycles: `..., Cycles N`.
        let (_, doc) = stopped_by("TERM", tool, &run_args, dir.path(), |text| {
            text.lines()
                .filter_map(|l| crate::support::int_after(l, "Cycles "))
                .any(|cycles| cycles > 10)
        });
        check_result(tool, &doc);
        let samples = doc["thread"]["0"]["receiver"]["samples"].as_u64().unwrap();
        assert!(samples > 0, "{tool}: {samples} samples");
    }
}

#[test]
fn signaltest_stops_on_sighup_with_its_json() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let run_args = args(&["-p", "80", &format!("--affinity={}", lease.list())]);
    let (_, doc) = stopped_by(
        "HUP",
        "signaltest",
        &run_args,
        dir.path(),
        status_line_counts,
    );
    check_result("signaltest", &doc);
    assert!(doc["thread"]["0"]["cycles"].as_u64().unwrap() > 0);
}

#[test]
fn latency_stops_on_sigint_with_its_json() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let run_args = args(&["-p", "1000", "-P", "80", "-c", &lease.list()]);
    // An RTD line comes at the end of each second after the warm-up.
    let (r, doc) = stopped_by("INT", "latency", &run_args, dir.path(), |text| {
        text.lines().any(|l| l.starts_with("RTD|"))
    });
    check_result("latency", &doc);
    assert!(r.stdout.contains("\nRTS|"), "the summary: {}", r.stdout);
}

#[test]
fn monitor_stops_on_sigterm_with_its_json_and_checkpoint() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("checkpoint.json");
    let textfile = dir.path().join("rtlat.prom");
    let json = dir.path().join("monitor.json");
    let mut cmd = rtlat_tool(
        "monitor",
        [
            "-p",
            "80",
            "-t",
            "1",
            "-a",
            &lease.list(),
            "--listen",
            "127.0.0.1:0",
            &format!("--textfile={}", textfile.display()),
            &format!("--checkpoint={}", checkpoint.display()),
            &format!("--json={}", json.display()),
        ],
    );
    let running = spawn(&mut cmd);
    running.wait_for_stderr(FIRST_SAMPLES_WITHIN, "the address served", |text| {
        text.contains("serving metrics on http://127.0.0.1:")
    });
    // The metrics it publishes every second: the sign that it measures.
    assert!(
        crate::support::wait_until(FIRST_SAMPLES_WITHIN, || textfile.is_file()),
        "no metrics written to {}",
        textfile.display()
    );
    running.signal("TERM");
    let r = running.wait(Duration::from_secs(10));
    r.expect_code(0);
    check_result("monitor", &read_json(&json));
    assert!(read_json(&checkpoint).is_object(), "the last checkpoint");
    assert!(
        r.stdout.contains("\nT: 0 ("),
        "the summary: {}",
        r.describe()
    );
}

#[test]
fn load_stops_on_sigint_with_its_rates() {
    let lease = CpuLease::one();
    let running = spawn(&mut rtlat_tool(
        "load",
        ["cpu:1,timers:1", "--cpus", &lease.list()],
    ));
    // The sign that it works: its workers' threads exist (the main
    // thread, and one per worker).
    let pid = running.pid();
    assert!(
        crate::support::wait_until(FIRST_SAMPLES_WITHIN, || {
            std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |t| t.count()) > 2
        }),
        "no worker started"
    );
    running.signal("INT");
    let r = running.wait(Duration::from_secs(10));
    r.expect_code(0);
    for kind in ["cpu", "timers"] {
        assert!(
            r.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{kind}: ")) && l.ends_with("(1 worker)")),
            "{kind}: {}",
            r.describe()
        );
    }
}

#[test]
fn hackbench_stops_on_sigterm_with_its_time() {
    // hackbench writes no document: its result is the Time line. Stopped
    // once every forked task exists (two groups of 2 + 2) and messages
    // flow, which they do only after the start (and its timer): the
    // tasks have written 100 messages of 100 bytes between them (an
    // emulated start takes long after the tasks exist).
    let lease = CpuLease::one();
    let mut cmd = lease.pinned(crate::support::rtlat_path().to_str().unwrap());
    cmd.args(["hackbench", "-g", "2", "-f", "2", "-l", "1000000000"]);
    let running = spawn(&mut cmd);
    let pid = running.pid();
    let tasks = || -> Vec<String> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).map_or_else(
            |_| Vec::new(),
            |c| c.split_whitespace().map(str::to_owned).collect(),
        )
    };
    let written = |task: &str| -> u64 {
        std::fs::read_to_string(format!("/proc/{task}/io"))
            .ok()
            .and_then(|io| {
                io.lines()
                    .find_map(|l| l.strip_prefix("wchar:"))
                    .and_then(|n| n.trim().parse().ok())
            })
            .unwrap_or(0)
    };
    assert!(
        crate::support::wait_until(FIRST_SAMPLES_WITHIN, || {
            let tasks = tasks();
            tasks.len() >= 8 && tasks.iter().map(|t| written(t)).sum::<u64>() >= 10_000
        }),
        "not every task started, or no message passed"
    );
    running.signal("TERM");
    let r = running.wait(Duration::from_secs(10));
    r.expect_code(0);
    let last = r.stdout.lines().last().unwrap_or_default();
    assert!(last.starts_with("Time: "), "{}", r.describe());
    assert!(
        r.stdout
            .contains("signaling 8 worker threads to terminate\n"),
        "{}",
        r.describe()
    );
}

#[test]
fn audit_writes_its_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("audit.json");
    let r = run(&mut rtlat_tool("audit", ["--json", json.to_str().unwrap()]));
    assert!(
        matches!(r.code(), Some(0 | 3)),
        "the audit ran: {}",
        r.describe()
    );
    assert!(read_json(&json).is_object());
}

#[test]
fn oslat_stops_on_sigterm_with_its_json_then_compare_reads_it() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    // The counter it reads is the target's (rdtsc, cntvct_el0): this is
    // where the emulated targets run it.
    let run_args = args(&["-c", &lease.list(), "-D", "600"]);
    let (r, doc) = stopped_by("TERM", "oslat", &run_args, dir.path(), |text| {
        text.contains("Test starts...")
    });
    check_result("oslat", &doc);
    assert!(r.stdout.contains("     Maximum:\t "), "{}", r.describe());
    assert!(doc["thread"]["0"]["loops"].as_u64().unwrap() > 0);
    drop(lease);
    let result = dir.path().join("oslat.json");
    run(&mut rtlat_tool("compare", [&result, &result])).expect_code(0);
}
