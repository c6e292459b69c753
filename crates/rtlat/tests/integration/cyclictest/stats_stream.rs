//! `--stats-interval SECONDS --stats-file FILE`: one JSON line per thread and interval, written while the run goes on; synthetic runs snapshot-tested, real runs (root) checked for invariants against the `--json` summary, the file read while the run goes on, bad input, SIGINT.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::cyclictest::wait_for_measuring_threads;
use crate::support::cpus::CpuLease;
use crate::support::{
    Run, is_root, proc_stat, read_json, rtlat, rtlat_cyclictest, rtlat_path, run, run_with_timeout,
    spawn, synthetic, wait_for_realtime_threads, wait_until,
};

/// One line of the stats file.
#[derive(Debug, Clone, PartialEq)]
struct Line {
    time: f64,
    elapsed: f64,
    thread: u64,
    interval: u64,
    cycles: u64,
    min: Option<f64>,
    avg: Option<f64>,
    max: Option<f64>,
    p99: Option<f64>,
    overruns: u64,
    partial: bool,
}

const KEYS: [&str; 10] = [
    "time", "elapsed", "thread", "interval", "cycles", "min", "avg", "max", "p99", "overruns",
];

fn parse_line(text: &str) -> Line {
    let v: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not a JSON line {text:?}: {e}"));
    let obj = v.as_object().expect("an object per line");
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.retain(|k| *k != "partial");
    let mut want = KEYS.to_vec();
    want.sort_unstable();
    keys.sort_unstable();
    assert_eq!(keys, want, "{text}");
    if let Some(p) = obj.get("partial") {
        assert_eq!(
            p,
            &Value::Bool(true),
            "partial is only written as true: {text}"
        );
    }
    let num = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {text}"));
    let int = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {text}"));
    Line {
        time: num("time"),
        elapsed: num("elapsed"),
        thread: int("thread"),
        interval: int("interval"),
        cycles: int("cycles"),
        min: v["min"].as_f64(),
        avg: v["avg"].as_f64(),
        max: v["max"].as_f64(),
        p99: v["p99"].as_f64(),
        overruns: int("overruns"),
        partial: obj.contains_key("partial"),
    }
}

fn read_lines(path: &Path) -> Vec<Line> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "whole lines: {text:?}"
    );
    text.lines().map(parse_line).collect()
}

/// The whole lines of the stats file so far, read while the run writes
/// it (a line being written is left out; no file yet: none).
fn lines_so_far(path: &Path) -> Vec<Line> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let whole = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
    whole.lines().map(parse_line).collect()
}

/// Whether process `pid` still runs (it is neither gone nor a zombie).
fn still_running(pid: u32) -> bool {
    proc_stat(Path::new(&format!("/proc/{pid}/stat")))
        .is_some_and(|(_, fields)| fields.first().map(String::as_str) != Some("Z"))
}

/// µs with 3 decimals back to whole ns.
fn ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}

/// The lines of each thread, in file order.
fn per_thread(lines: &[Line], threads: usize) -> Vec<Vec<&Line>> {
    let mut out = vec![Vec::new(); threads];
    for l in lines {
        assert!((l.thread as usize) < threads, "{l:?}");
        out[l.thread as usize].push(l);
    }
    out
}

/// The invariants every stats file holds against the run's `--json`: per
/// thread the cycles add up to the thread's cycles, the smallest min and
/// the largest max are the thread's `min_ns`/`max_ns`, the overruns add up,
/// intervals strictly increase with their ends, only the last line may be
/// partial, and each line's figures are consistent. `contiguous`: every
/// interval number from 0 on must be there (a period far below the
/// interval).
fn check_against_json(lines: &[Line], json: &Value, contiguous: bool) {
    let threads = json["num_threads"].as_u64().unwrap() as usize;
    for (i, mine) in per_thread(lines, threads).into_iter().enumerate() {
        let t = &json["thread"][i.to_string()];
        let context = format!("thread {i}: {mine:#?}\n{t}");
        assert!(!mine.is_empty(), "no line for thread {i}");
        let cycles: u64 = mine.iter().map(|l| l.cycles).sum();
        assert_eq!(cycles, t["cycles"].as_u64().unwrap(), "cycles\n{context}");
        let overruns: u64 = mine.iter().map(|l| l.overruns).sum();
        assert_eq!(
            overruns,
            t["overruns"].as_u64().unwrap(),
            "overruns\n{context}"
        );
        let min = mine.iter().filter_map(|l| l.min).map(ns).min().unwrap();
        let max = mine.iter().filter_map(|l| l.max).map(ns).max().unwrap();
        assert_eq!(min, t["min_ns"].as_i64().unwrap(), "min\n{context}");
        assert_eq!(max, t["max_ns"].as_i64().unwrap(), "max\n{context}");
        for pair in mine.windows(2) {
            assert!(pair[0].interval < pair[1].interval, "order\n{context}");
            assert!(pair[0].elapsed <= pair[1].elapsed, "elapsed\n{context}");
            assert!(pair[0].time <= pair[1].time, "time\n{context}");
            assert!(!pair[0].partial, "only the last may be partial\n{context}");
        }
        if contiguous {
            for (k, l) in mine.iter().enumerate() {
                assert_eq!(l.interval, k as u64, "no interval missing\n{context}");
            }
        }
        for l in &mine {
            match (l.min, l.avg, l.max, l.p99) {
                (Some(min), Some(avg), Some(max), Some(p99)) => {
                    assert!(l.cycles > 0, "{l:?}");
                    assert!(min <= avg && avg <= max, "min <= avg <= max: {l:?}");
                    assert!(min <= p99 && p99 <= max, "min <= p99 <= max: {l:?}");
                }
                (None, None, None, None) => assert_eq!(l.cycles, 0, "{l:?}"),
                _ => panic!("min, avg, max, p99 all or none: {l:?}"),
            }
            assert!(l.elapsed > 0.0, "{l:?}");
        }
    }
}

/// A temporary directory with the stats file and JSON paths in it.
struct Files {
    _dir: tempfile::TempDir,
    stats: PathBuf,
    json: PathBuf,
}

fn files() -> Files {
    let dir = tempfile::tempdir().unwrap();
    Files {
        stats: dir.path().join("stats.jsonl"),
        json: dir.path().join("run.json"),
        _dir: dir,
    }
}

impl Files {
    /// `--stats-interval SECONDS --stats-file F --json J`.
    fn args(&self, seconds: &str) -> Vec<String> {
        vec![
            "--stats-interval".into(),
            seconds.into(),
            "--stats-file".into(),
            self.stats.display().to_string(),
            format!("--json={}", self.json.display()),
        ]
    }
}

fn synthetic_run(seed: u64, args: &[&str], seconds: &str) -> (Files, Run) {
    let f = files();
    let mut cmd = synthetic(seed, args);
    cmd.args(f.args(seconds));
    let r = run(&mut cmd);
    r.expect_code(0);
    assert_eq!(r.stderr, "", "{}", r.describe());
    (f, r)
}

#[test]
fn synthetic_two_threads_snapshot() {
    let args = ["-q", "-t", "2", "-l", "1500"];
    let (f, _) = synthetic_run(7, &args, "0.5");
    let text = std::fs::read_to_string(&f.stats).unwrap();
    insta::assert_snapshot!("synthetic_two_threads", text);
    let lines = read_lines(&f.stats);
    check_against_json(&lines, &read_json(&f.json), true);
    // Synthetic times are counted from the Unix epoch: time == elapsed,
    // and each complete interval ends on a multiple of 0.5 s.
    for l in &lines {
        assert!((l.time - l.elapsed).abs() < 0.001, "{l:?}");
        if !l.partial {
            assert_eq!(l.elapsed, (l.interval + 1) as f64 * 0.5, "{l:?}");
        }
    }
    // Thread 0 stops at its 1500th deadline (1.5 s), the first of
    // interval 3: cut short. Thread 1's 333rd deadline (1.4985 s) was the
    // last of interval 2: whole.
    let last_of = |thread| lines.iter().rfind(|l| l.thread == thread).unwrap();
    assert!(last_of(0).partial, "{:?}", last_of(0));
    assert!(!last_of(1).partial, "{:?}", last_of(1));
    // Drained once, at the end: each thread's lines share the p99 of its
    // whole run, which --json gives, each kept within its line's min and
    // max.
    let json = read_json(&f.json);
    for l in &lines {
        let whole = json["thread"][l.thread.to_string()]["percentiles"]["p99"]
            .as_f64()
            .unwrap();
        let expected = whole.clamp(l.min.unwrap(), l.max.unwrap());
        assert_eq!(l.p99, Some(expected), "{l:?}");
    }
    // The same seed writes the same file.
    let (again, _) = synthetic_run(7, &args, "0.5");
    assert_eq!(std::fs::read_to_string(&again.stats).unwrap(), text);
}

#[test]
fn synthetic_intervals_without_samples_are_lines_with_zero_cycles() {
    // A period of 0.7 s in intervals of 0.5 s: deadlines at 0.7, 1.4, 2.1
    // and 2.8 s fall in intervals 1, 2, 4 and 5; 0 and 3 have no sample.
    let (f, _) = synthetic_run(3, &["-q", "-i", "700000", "-l", "4"], "0.5");
    let text = std::fs::read_to_string(&f.stats).unwrap();
    insta::assert_snapshot!("synthetic_gaps", text);
    let lines = read_lines(&f.stats);
    check_against_json(&lines, &read_json(&f.json), true);
    let cycles: Vec<u64> = lines.iter().map(|l| l.cycles).collect();
    assert_eq!(cycles, [0, 1, 1, 0, 1, 1]);
    for l in lines.iter().filter(|l| l.cycles == 0) {
        assert_eq!(
            (l.min, l.avg, l.max, l.p99, l.overruns),
            (None, None, None, None, 0)
        );
    }
}

#[test]
fn synthetic_nanosecond_runs_have_the_same_lines() {
    // -N changes the C-compatible unit, not the ns figures of the lines.
    let (us, _) = synthetic_run(9, &["-q", "-l", "1200"], "0.25");
    let (ns_run, _) = synthetic_run(9, &["-q", "-N", "-l", "1200"], "0.25");
    let a = std::fs::read_to_string(&us.stats).unwrap();
    assert_eq!(a, std::fs::read_to_string(&ns_run.stats).unwrap());
    check_against_json(&read_lines(&ns_run.stats), &read_json(&ns_run.json), true);
}

#[test]
fn real_run_lines_match_the_json() {
    skip_if_emulated!(
        "each interval's cycle count follows the period, which emulated sleeps do not keep"
    );
    require_root!();
    let lease = CpuLease::one();
    let f = files();
    let mut cmd = rtlat_cyclictest([
        "-q",
        "-m",
        "-p",
        "80",
        "-i",
        "1000",
        "-t",
        "2",
        "-D",
        "2",
        "-a",
        &lease.list(),
    ]);
    cmd.args(f.args("0.5"));
    let r = run_with_timeout(&mut cmd, Duration::from_secs(10));
    r.expect_code(0);
    let lines = read_lines(&f.stats);
    let json = read_json(&f.json);
    check_against_json(&lines, &json, true);
    for mine in per_thread(&lines, 2) {
        // 0.5, 1.0, 1.5, 2.0 s, maybe a partial one right at the end.
        assert!((4..=5).contains(&mine.len()), "{mine:#?}");
        // Elapsed from the run's start (thread 0's): another thread starts
        // a few microseconds later.
        for l in mine.iter().filter(|l| !l.partial) {
            let expected = (l.interval + 1) as f64 * 0.5;
            assert!((l.elapsed - expected).abs() < 0.001, "{l:?}");
        }
        // Wall-clock times half a second apart, within a few ms.
        for pair in mine.windows(2).filter(|p| !p[1].partial) {
            let step = pair[1].time - pair[0].time;
            assert!((step - 0.5).abs() < 0.01, "{pair:?}");
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let last = lines.iter().map(|l| l.time).fold(0.0, f64::max);
    assert!(
        last <= now && now - last < 10.0,
        "times are the wall clock: {last} vs {now}"
    );
}

#[test]
fn the_file_grows_while_the_run_goes_on() {
    // Policy other: no privilege needed.
    let f = files();
    let mut cmd = rtlat_cyclictest(["-q", "-i", "1000", "-D", "3"]);
    cmd.args(f.args("0.5"));
    let child = spawn(&mut cmd);
    // The first line is due half a second into the 3 s run; the run must
    // still be going on when it has come.
    let came = wait_until(Duration::from_secs(3), || {
        !lines_so_far(&f.stats).is_empty()
    });
    let early = lines_so_far(&f.stats);
    let running = still_running(child.pid());
    let r = child.wait(Duration::from_secs(10));
    r.expect_code(0);
    assert!(
        came && running,
        "no line while the run went on (a line: {came}, running then: {running})\n{}",
        r.describe()
    );
    let all = read_lines(&f.stats);
    assert!(all.len() >= 6, "{all:#?}");
    assert!(
        early.len() < all.len(),
        "no line came after the first ones: {early:#?}"
    );
    assert_eq!(all[..early.len()], early[..], "lines are only appended");
    check_against_json(&all, &read_json(&f.json), true);
}

#[test]
fn sigint_writes_the_last_lines_and_the_json() {
    require_root!();
    let lease = CpuLease::one();
    let f = files();
    let mut cmd = rtlat_cyclictest(["-q", "-p", "80", "-i", "1000", "-a", &lease.list()]);
    cmd.args(f.args("0.25"));
    let child = spawn(&mut cmd);
    wait_for_realtime_threads(child.pid(), 1);
    // Stopped once the line of the run's first second is written (the
    // file is drained while the run goes on), in the interval after it.
    assert!(
        wait_until(Duration::from_secs(5), || {
            lines_so_far(&f.stats).iter().any(|l| l.elapsed >= 1.0)
        }),
        "no line of the first second: {:#?}",
        lines_so_far(&f.stats)
    );
    child.signal("INT");
    let r = child.wait(Duration::from_secs(3));
    r.expect_code(0);
    let json = read_json(&f.json);
    let lines = read_lines(&f.stats);
    check_against_json(&lines, &json, true);
    // The lines go on to the stop, after 1 s: the interval cut by SIGINT is
    // there, partial (unless the signal came before its first sample, a 1
    // ms window).
    assert!(lines.len() >= 4, "{lines:#?}");
    let last = lines.last().unwrap();
    assert!(last.elapsed >= 1.0, "{last:?}");
    assert!(
        last.partial || last.elapsed == (last.interval + 1) as f64 * 0.25,
        "{last:?}"
    );
    // A summary line on stdout too.
    assert!(r.stdout.contains("T: 0 "), "{}", r.describe());
}

#[test]
fn intervals_the_writer_missed_are_reported_once() {
    // An endless synthetic run takes its samples as fast as it can and is
    // written at the end: with one sample per 10 ms interval, it has
    // sealed far more intervals after 0.5 s than its ring keeps (16384).
    // It keeps a CPU busy: the leased one.
    let lease = CpuLease::one();
    let f = files();
    let mut cmd = lease.pinned(rtlat_path().to_str().unwrap());
    cmd.args(["cyclictest", "--synthetic", "1", "-q", "-i", "10000"]);
    cmd.args(f.args("0.01"));
    let child = spawn(&mut cmd);
    wait_for_measuring_threads(child.pid(), 1);
    // The duration is the point: the run samples for a while.
    std::thread::sleep(Duration::from_millis(500));
    child.signal("INT");
    // A safety net, not a timing check: the end places every interval
    // sampled on the run's blocks (about a million virtual ones by now,
    // 2.5 s of CPU in a release build: `cyclictest::blocks::place_counts`),
    // so a debug build on a busy machine took 5 s and more.
    let r = child.wait(Duration::from_secs(60));
    r.expect_code(0);
    let warnings: Vec<&str> = r.stderr_lines();
    assert_eq!(warnings.len(), 1, "{}", r.describe());
    assert!(
        warnings[0].starts_with("rtlat cyclictest: --stats-file: ")
            && warnings[0].contains(" intervals were overwritten before they could be written"),
        "{}",
        r.describe()
    );
    let lines = read_lines(&f.stats);
    assert_eq!(lines.len(), 16_384, "the ring's worth");
    let json = read_json(&f.json);
    assert!(
        lines.iter().map(|l| l.cycles).sum::<u64>()
            < json["thread"]["0"]["cycles"].as_u64().unwrap()
    );
    // In order; a number skipped by a late wake-up gets no empty line
    // here, as it cannot be told from a lost one.
    for pair in lines.windows(2) {
        assert!(pair[0].interval < pair[1].interval, "{pair:?}");
    }
    assert!(lines.iter().all(|l| l.cycles > 0));
    // One deadline per interval, and it was sampled: the last interval is
    // whole, not cut.
    assert!(!lines.last().unwrap().partial, "{:?}", lines.last());
}

/// `rtlat cyclictest ARGS` in an empty directory: exit `code` within 2 s,
/// nothing on stdout, exactly one stderr line containing every needle, no
/// file left in the directory.
fn refused(args: &[&str], code: i32, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let r = run_with_timeout(
        rtlat().arg("cyclictest").args(args).current_dir(dir.path()),
        Duration::from_secs(2),
    );
    let context = format!("rtlat cyclictest {}\n{}", args.join(" "), r.describe());
    assert_eq!(r.code(), Some(code), "exit status\n{context}");
    assert_eq!(r.stdout, "", "stdout\n{context}");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "exactly one stderr line\n{context}");
    for needle in needles {
        assert!(
            lines[0].contains(needle),
            "stderr names {needle:?}\n{context}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "files created: {left:?}\n{context}");
}

#[test]
fn bad_intervals_are_usage_errors() {
    for bad in ["0", "abc", "0.001", "-1", "1e2", "86401"] {
        refused(
            &[
                "-l",
                "10",
                "--stats-interval",
                bad,
                "--stats-file",
                "s.jsonl",
            ],
            2,
            &["--stats-interval", &format!("'{bad}'"), "0.01 to 86400"],
        );
    }
}

#[test]
fn one_option_without_the_other_is_a_usage_error() {
    refused(
        &["-l", "10", "--stats-file", "s.jsonl"],
        2,
        &["--stats-file needs --stats-interval"],
    );
    refused(
        &["-l", "10", "--stats-interval", "1"],
        2,
        &["--stats-interval needs --stats-file"],
    );
}

#[test]
fn a_missing_directory_is_a_usage_error() {
    refused(
        &[
            "-l",
            "10",
            "--stats-interval",
            "1",
            "--stats-file",
            "/nonexistent/s.jsonl",
        ],
        2,
        &["--stats-file", "/nonexistent/s.jsonl", "does not exist"],
    );
}

#[test]
fn an_unwritable_file_stops_the_run_before_it_starts() {
    // Root may write anywhere but not create files in sysfs; anyone else
    // cannot write in a read-only directory. Found before the run, like a
    // missing directory: a usage error.
    let dir = tempfile::tempdir().unwrap();
    let (path, why) = if is_root() {
        (
            PathBuf::from("/sys/rtlat-stats-test.jsonl"),
            "rtlat creates no file under /dev, /proc or /sys",
        )
    } else {
        use std::os::unix::fs::PermissionsExt;
        let ro = dir.path().join("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        (ro.join("s.jsonl"), "Permission denied")
    };
    let path = path.display().to_string();
    refused(
        &[
            "--synthetic",
            "1",
            "-l",
            "10",
            "--stats-interval",
            "1",
            "--stats-file",
            &path,
        ],
        2,
        &["--stats-file", &format!("cannot write '{path}'"), why],
    );
}

#[test]
fn the_file_is_made_with_the_usual_create_mode() {
    use std::os::unix::fs::PermissionsExt;
    let (f, _) = synthetic_run(1, &["-q", "-l", "10"], "1");
    let mode = std::fs::metadata(&f.stats).unwrap().permissions().mode();
    // 0666 less the umask (which the run inherits from this process).
    assert_eq!(mode & 0o7777, 0o666 & !umask(), "{mode:o}");
}

/// This process's umask, from /proc/self/status.
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
}
