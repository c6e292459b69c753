//! Each thread's `"blocks"` in cyclictest's JSON (issue 26): a synthetic
//! run's blocks agree with the thread's totals and distribution and are
//! the same for the same seed; `--stats-interval` sets their length; a
//! real run of 2 s has 20 blocks of 0.1 s; a run stopped by SIGINT keeps
//! them; `rtlat compare` and `rtlat plot` read documents with and without
//! them. `rtlat monitor` exports its projection (refused, for a run of
//! seconds) in metrics that promtool accepts, and a resumed monitor's
//! blocks go on from its checkpoint's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::cpus::CpuLease;
use crate::support::{
    read_json, rtlat_cyclictest, rtlat_tool, run, run_with_timeout, spawn, synthetic,
    wait_for_realtime_threads,
};

/// The ladder of the blocks' counts, ns (`rtlat_stats::blocks::LADDER_NS`).
const LADDER_NS: [i64; 16] = [
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
];

/// A synthetic run's JSON file in `dir`.
fn synthetic_json(dir: &Path, name: &str, seed: u64, args: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut cmd = synthetic(seed, args);
    cmd.arg(format!("--json={}", path.display()));
    run(&mut cmd).expect_code(0);
    path
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap_or_else(|| panic!("an array: {v}"))
        .iter()
        .map(|x| x.as_i64().unwrap_or_else(|| panic!("an integer: {x}")))
        .collect()
}

/// A thread's blocks, checked for shape: (block_s, cycles, max_ns, lost,
/// at_or_above[step][block]).
struct Blocks {
    block_s: f64,
    cycles: Vec<i64>,
    max_ns: Vec<Option<i64>>,
    lost: Vec<i64>,
    at_or_above: Vec<Vec<i64>>,
}

fn blocks_of(thread: &Value) -> Blocks {
    let b = &thread["blocks"];
    assert!(b.is_object(), "a \"blocks\" object: {thread}");
    let cycles = ints(&b["cycles"]);
    let n = cycles.len();
    let max_ns: Vec<Option<i64>> = b["max_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::as_i64)
        .collect();
    assert_eq!(max_ns.len(), n);
    assert_eq!(ints(&b["sum_ns"]).len(), n);
    assert_eq!(ints(&b["ladder_ns"]), LADDER_NS);
    let at_or_above: Vec<Vec<i64>> = b["at_or_above"]
        .as_array()
        .unwrap()
        .iter()
        .map(ints)
        .collect();
    assert_eq!(at_or_above.len(), LADDER_NS.len());
    assert!(at_or_above.iter().all(|column| column.len() == n));
    Blocks {
        block_s: b["block_s"].as_f64().unwrap(),
        cycles,
        max_ns,
        lost: ints(&b["lost"]),
        at_or_above,
    }
}

/// The thread's samples at or above each ladder step, from its
/// `"distribution"` (buckets `[from_us, to_us, count]`, counted at a step
/// when their lower bound is at or above it, as the blocks count them).
fn distribution_at_or_above(thread: &Value) -> Vec<i64> {
    let buckets = thread["distribution"]["buckets"].as_array().unwrap();
    LADDER_NS
        .iter()
        .map(|&step| {
            buckets
                .iter()
                .filter(|b| (b[0].as_f64().unwrap() * 1000.0).round() as i64 >= step)
                .map(|b| b[2].as_i64().unwrap())
                .sum()
        })
        .collect()
}

#[test]
fn a_synthetic_runs_blocks_agree_with_its_totals_and_distribution() {
    let dir = tempfile::tempdir().unwrap();
    // 999 periods of 1 ms: thread 0's run ends on the edge of its tenth
    // block of 100 ms (its first deadline is one period after its start),
    // so every sample is in a block. Thread 1 (1.5 ms) stops with it.
    let args = ["-q", "-l", "999", "-t", "2"];
    let path = synthetic_json(dir.path(), "a.json", 5, &args);
    let json = read_json(&path);
    let t0 = &json["thread"]["0"];
    let b = blocks_of(t0);
    assert_eq!(b.block_s, 0.1);
    assert_eq!(b.cycles.len(), 10);
    assert_eq!(b.cycles.iter().sum::<i64>(), t0["cycles"].as_i64().unwrap());
    assert_eq!(
        b.max_ns.iter().flatten().max().copied(),
        t0["max_ns"].as_i64(),
        "the blocks' largest maximum is the thread's"
    );
    assert!(b.lost.iter().all(|&l| l == 0));
    let sums: Vec<i64> = b.at_or_above.iter().map(|c| c.iter().sum()).collect();
    assert_eq!(sums, distribution_at_or_above(t0), "ladder counts");
    for (i, &max) in b.max_ns.iter().enumerate() {
        for (j, &step) in LADDER_NS.iter().enumerate() {
            let count = b.at_or_above[j][i];
            // A block counts samples at a step exactly when its exact
            // maximum reaches it, never more than it has.
            assert_eq!(
                count > 0,
                max.is_some_and(|m| m >= step),
                "block {i} step {j}"
            );
            assert!(count <= b.cycles[i]);
        }
    }
    // Thread 1's blocks are within its totals.
    let t1 = &json["thread"]["1"];
    let b1 = blocks_of(t1);
    assert_eq!(b1.block_s, 0.1);
    assert!(b1.cycles.iter().sum::<i64>() <= t1["cycles"].as_i64().unwrap());
    assert!(
        b1.max_ns
            .iter()
            .flatten()
            .all(|&m| m <= t1["max_ns"].as_i64().unwrap())
    );

    // The same seed, the same blocks.
    let again = read_json(&synthetic_json(dir.path(), "b.json", 5, &args));
    for thread in ["0", "1"] {
        assert_eq!(
            json["thread"][thread]["blocks"], again["thread"][thread]["blocks"],
            "thread {thread}"
        );
    }
}

#[test]
fn the_cut_short_last_block_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    // 1050 periods: ten whole blocks, then 51 samples of an eleventh that
    // the run cut short; they are in the thread's totals only.
    let json = read_json(&synthetic_json(
        dir.path(),
        "a.json",
        2,
        &["-q", "-l", "1050"],
    ));
    let t = &json["thread"]["0"];
    let b = blocks_of(t);
    assert_eq!(b.cycles.len(), 10);
    assert_eq!(t["cycles"], 1050);
    // At least the 51 deadlines from 1 s on (more where a late wake-up
    // skipped a period before), less than a block.
    let after = 1050 - b.cycles.iter().sum::<i64>();
    assert!(
        (51..100).contains(&after),
        "{after} samples after the blocks"
    );
}

#[test]
fn stats_interval_sets_the_block_length() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("s.jsonl");
    let stats = stats.to_str().unwrap();
    let json = read_json(&synthetic_json(
        dir.path(),
        "a.json",
        3,
        &[
            "-q",
            "-l",
            "1999",
            "--stats-interval",
            "0.5",
            "--stats-file",
            stats,
        ],
    ));
    let t = &json["thread"]["0"];
    let b = blocks_of(t);
    assert_eq!((b.block_s, b.cycles.len()), (0.5, 4));
    assert_eq!(b.cycles.iter().sum::<i64>(), 1999);
    // The --stats-file lines are those of the same intervals.
    let lines: Vec<Value> = std::fs::read_to_string(stats)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let line_cycles: Vec<i64> = lines
        .iter()
        .map(|l| l["cycles"].as_i64().unwrap())
        .collect();
    assert_eq!(line_cycles, b.cycles);
}

/// A real run of `args` pinned to `lease`, its JSON in `dir`.
fn real_run_json(lease: &CpuLease, dir: &Path, args: &[&str]) -> (PathBuf, std::process::Command) {
    let path = dir.join("real.json");
    let mut cmd = rtlat_cyclictest(["-q", "-m", "-p", "80", "-i", "1000", "-a", &lease.list()]);
    cmd.args(args).arg(format!("--json={}", path.display()));
    (path, cmd)
}

#[test]
fn a_real_run_of_two_seconds_has_twenty_blocks() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let (path, mut cmd) = real_run_json(&lease, dir.path(), &["-D", "2"]);
    run_with_timeout(&mut cmd, Duration::from_secs(10)).expect_code(0);
    let json = read_json(&path);
    let t = &json["thread"]["0"];
    let b = blocks_of(t);
    assert_eq!(b.block_s, 0.1);
    // 20 blocks of 0.1 s; the last may be cut short by the end of the run.
    assert!(
        (19..=20).contains(&b.cycles.len()),
        "{} blocks",
        b.cycles.len()
    );
    assert!(
        b.lost.iter().all(|&l| l == 0),
        "no interval lost: {:?}",
        b.lost
    );
    let cycles = t["cycles"].as_i64().unwrap();
    let in_blocks: i64 = b.cycles.iter().sum();
    assert!(
        in_blocks <= cycles && in_blocks >= cycles - 200,
        "{in_blocks} of {cycles} samples in blocks"
    );
    let max_ns = t["max_ns"].as_i64().unwrap();
    assert!(b.max_ns.iter().flatten().all(|&m| m <= max_ns));
    assert!(b.cycles.iter().all(|&c| c > 0), "{:?}", b.cycles);
}

#[test]
fn a_run_stopped_by_sigint_keeps_its_blocks() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let (path, mut cmd) = real_run_json(&lease, dir.path(), &[]);
    let child = spawn(&mut cmd);
    wait_for_realtime_threads(child.pid(), 1);
    // The duration is the point: a few blocks of 0.1 s before the stop.
    std::thread::sleep(Duration::from_millis(700));
    child.signal("INT");
    let r = child.wait(Duration::from_secs(5));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let json = read_json(&path);
    let t = &json["thread"]["0"];
    let b = blocks_of(t);
    assert!(b.cycles.len() >= 3, "{} blocks", b.cycles.len());
    assert!(b.cycles.iter().sum::<i64>() <= t["cycles"].as_i64().unwrap());
}

#[test]
fn documents_with_and_without_blocks_are_read_by_compare_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let with = synthetic_json(dir.path(), "with.json", 4, &["-q", "-l", "2000"]);
    let mut json = read_json(&with);
    json["thread"]["0"]
        .as_object_mut()
        .unwrap()
        .remove("blocks")
        .expect("blocks written");
    let without = dir.path().join("without.json");
    std::fs::write(&without, serde_json::to_string(&json).unwrap()).unwrap();
    for (a, b) in [(&with, &without), (&without, &with), (&with, &with)] {
        let r = run(&mut rtlat_tool("compare", [a, b]));
        r.expect_code(0);
    }
    let svg = dir.path().join("p.svg");
    let mut cmd = rtlat_tool("plot", [&with, &without]);
    cmd.arg("-o").arg(&svg);
    run_with_timeout(&mut cmd, Duration::from_secs(60)).expect_code(0);
    assert!(svg.exists());
}

/// `rtlat monitor` pinned to `lease` (one thread), serving on any free
/// port, then `args`.
fn monitor(lease: &CpuLease, args: &[&str]) -> std::process::Command {
    let mut cmd = crate::support::rtlat();
    cmd.args([
        "monitor",
        "-a",
        &lease.list(),
        "-t",
        "1",
        "--listen",
        "127.0.0.1:0",
    ])
    .args(args);
    cmd
}

/// The value of the one sample of `name` whose labels start `labels`
/// (`{reason="` ...) in the metrics `text`.
fn metric<'t>(text: &'t str, name_and_labels: &str) -> Option<&'t str> {
    text.lines()
        .find(|l| l.starts_with(name_and_labels))
        .and_then(|l| l.rsplit_once(' '))
        .map(|(_, v)| v)
}

#[test]
fn the_monitor_exports_its_projection_and_promtool_accepts_it() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let textfile = dir.path().join("rtlat.prom");
    let mut cmd = monitor(
        &lease,
        &["-D", "3", "--textfile", textfile.to_str().unwrap()],
    );
    run_with_timeout(&mut cmd, Duration::from_secs(20)).expect_code(0);
    let text = std::fs::read_to_string(&textfile).unwrap();
    // Three blocks of a second are far too few to project from: refused,
    // with the reason, and no projected value.
    assert_eq!(
        metric(&text, "rtlat_projection_refused{reason=\""),
        Some("1.0"),
        "{text}"
    );
    assert!(
        !text.contains("rtlat_projection_refused{reason=\"none\"}"),
        "{text}"
    );
    let blocks: f64 = metric(&text, "rtlat_projection_blocks ")
        .unwrap()
        .parse()
        .unwrap();
    assert!((2.0..=3.0).contains(&blocks), "{text}");
    assert_eq!(
        metric(&text, "rtlat_projection_block_seconds "),
        Some("1.0")
    );
    assert!(!text.contains("rtlat_projected_max"), "{text}");
    match promtool(&text) {
        Some((clean, said)) => assert!(clean, "promtool check metrics: {said}"),
        None => skip_note!(
            "SKIPPED promtool check (promtool not installed): {}",
            function_name!()
        ),
    }
}

/// `promtool check metrics` on `text`; `None` when promtool is missing.
fn promtool(text: &str) -> Option<(bool, String)> {
    use std::io::Write as _;
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success() && said.trim().is_empty(), said))
}

#[test]
fn a_resumed_monitor_goes_on_from_its_checkpoints_blocks() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let cp = dir.path().join("cp.json");
    let cp_text = cp.to_str().unwrap();
    let mut first = monitor(&lease, &["-D", "3", "--checkpoint", cp_text]);
    run_with_timeout(&mut first, Duration::from_secs(20)).expect_code(0);
    let before = read_json(&cp);
    let b1 = blocks_of(&before["thread"]["0"]);
    assert_eq!(b1.block_s, 1.0);
    assert!(b1.cycles.len() >= 2, "{} blocks", b1.cycles.len());

    let json = dir.path().join("after.json");
    let json_arg = format!("--json={}", json.display());
    let mut second = monitor(
        &lease,
        &["-D", "3", "--checkpoint", cp_text, "--resume", &json_arg],
    );
    run_with_timeout(&mut second, Duration::from_secs(20)).expect_code(0);
    let after = read_json(&json);
    let b2 = blocks_of(&after["thread"]["0"]);
    let n = b1.cycles.len();
    assert!(
        b2.cycles.len() >= n + 2,
        "{n} blocks, then {}",
        b2.cycles.len()
    );
    assert_eq!(
        b2.cycles[..n],
        b1.cycles[..],
        "the checkpoint's blocks first"
    );
    assert_eq!(b2.max_ns[..n], b1.max_ns[..]);
    let column = |b: &Blocks, j: usize| b.at_or_above[j][..n].to_vec();
    assert_eq!(column(&b2, 0), column(&b1, 0));

    // Blocks that cannot go on in this run's seconds: refused, the file
    // left as it is.
    let mut broken = read_json(&cp);
    broken["thread"]["0"]["blocks"]["block_s"] = serde_json::json!(0.3);
    let text = serde_json::to_string_pretty(&broken).unwrap();
    std::fs::write(&cp, &text).unwrap();
    let mut third = monitor(&lease, &["-D", "3", "--checkpoint", cp_text, "--resume"]);
    let r = run_with_timeout(&mut third, Duration::from_secs(20));
    assert_eq!(r.code(), Some(2), "{}", r.describe());
    assert!(
        r.stderr
            .contains("do not go on in this run's intervals of 1 s"),
        "{}",
        r.describe()
    );
    assert_eq!(std::fs::read_to_string(&cp).unwrap(), text);
}

#[test]
fn latency_writes_its_seconds_as_blocks_every_one_of_a_synthetic_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latency.json");
    let mut cmd = rtlat_tool(
        "latency",
        ["--synthetic", "1", "-q", "-T", "100", "-p", "1000"],
    );
    cmd.arg(format!("--json={}", path.display()));
    run_with_timeout(&mut cmd, Duration::from_secs(60)).expect_code(0);
    let json = read_json(&path);
    let t = &json["thread"]["0"];
    let b = blocks_of(t);
    // A synthetic run's seconds come faster than any reader: its ring
    // holds them all (it held 64 before, and lost the rest).
    assert_eq!((b.block_s, b.cycles.len()), (1.0, 100));
    assert!(b.lost.iter().all(|&l| l == 0), "{:?}", b.lost);
    // The samples after the last whole second are in the totals only.
    let after = t["cycles"].as_i64().unwrap() - b.cycles.iter().sum::<i64>();
    assert!(
        (0..1000).contains(&after),
        "{after} samples after the blocks"
    );
}
