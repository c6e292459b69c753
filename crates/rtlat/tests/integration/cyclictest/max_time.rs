//! When each thread's maximum was taken: one `# Thread N: max ... at ...`
//! line per thread with `--percentiles` or `--verdict`, none without; the
//! JSON's `max_time` the same time. A synthetic run's times are exact (its
//! clock starts at the Unix epoch); a real run's lie within the run.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support::cpus::CpuLease;
use crate::support::{
    check_max_time_line, max_time_lines, read_json, rtlat_cyclictest, run, run_with_timeout,
    synthetic,
};

/// The `-v` samples of a run: (thread, cycle, value), in the order shown.
fn verbose_samples(stdout: &str) -> Vec<(usize, u64, i64)> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut fields = l.split(':').map(|f| f.trim());
            let sample = (
                fields.next()?.parse().ok()?,
                fields.next()?.parse().ok()?,
                fields.next()?.parse().ok()?,
            );
            fields.next().is_none().then_some(sample)
        })
        .collect()
}

fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

#[test]
fn a_synthetic_runs_maximum_is_at_its_first_largest_samples_deadline() {
    // -N: each -v value is the sample in ns, the one whose time is kept.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let r = run(&mut synthetic(
        5,
        [
            "-N",
            "-v",
            "-l",
            "300",
            "-i",
            "1000",
            "-t",
            "2",
            "--percentiles",
            &format!("--json={}", json.display()),
        ],
    ));
    r.expect_code(0);
    let doc = read_json(&json);
    let samples = verbose_samples(&r.stdout);
    let mut expected = Vec::new();
    for thread in 0..2 {
        let t = &doc["thread"][thread.to_string()];
        assert_eq!(t["overruns"], 0, "every cycle has its own deadline");
        let interval_us = t["interval_us"].as_i64().unwrap();
        let mine = samples.iter().filter(|s| s.0 == thread);
        let max = mine.clone().map(|s| s.2).max().unwrap();
        let first = mine.clone().find(|s| s.2 == max).unwrap().1 as i64;
        assert_eq!(t["max_ns"], max);
        // The synthetic clock starts at the Unix epoch; the first deadline
        // is one interval later.
        let deadline_us = (first + 1) * interval_us;
        assert_eq!(
            t["max_time"].as_f64().unwrap(),
            deadline_us as f64 / 1e6,
            "{t}"
        );
        // -N: the sample in ns; the wake-up is the deadline plus it.
        let woke_us = (deadline_us * 1000 + max) / 1000;
        expected.push(format!(
            "# Thread {thread}: max {:.3} us, due 0.{deadline_us:06} s into the run, \
             woke 0.{woke_us:06} s; due at 1970-01-01 00:00:00.{:03} UTC",
            max as f64 / 1000.0,
            deadline_us / 1000
        ));
    }
    // Wrapped to 80 columns: joined back.
    let joined = crate::support::joined_thread_lines(&r.stdout);
    let tail: Vec<&str> = joined.iter().rev().take(2).map(String::as_str).collect();
    let expected: Vec<&str> = expected.iter().rev().map(String::as_str).collect();
    assert_eq!(tail, expected, "the last lines\n{}", r.stdout);
}

#[test]
fn with_verdict_or_percentiles_only() {
    let args = ["-q", "-l", "200", "-i", "1000", "-t", "2"];
    let plain = run(&mut synthetic(3, args));
    plain.expect_code(0);
    assert!(max_time_lines(&plain.stdout).is_empty(), "{}", plain.stdout);
    assert!(!plain.stdout.contains("into the run"), "{}", plain.stdout);
    for option in ["--verdict", "--percentiles"] {
        let with = run(synthetic(3, args).arg(option));
        with.expect_code(0);
        assert!(with.stdout.starts_with(&plain.stdout), "{}", with.stdout);
        let threads: Vec<usize> = max_time_lines(&with.stdout)
            .iter()
            .map(|l| l.thread)
            .collect();
        assert_eq!(threads, [0, 1], "{option}:\n{}", with.stdout);
    }
    // Both: the lines once.
    let both = run(synthetic(3, args).args(["--verdict", "--percentiles"]));
    assert_eq!(max_time_lines(&both.stdout).len(), 2, "{}", both.stdout);
}

#[test]
fn a_real_runs_maxima_lie_within_the_run() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let before = SystemTime::now();
    let r = run_with_timeout(
        &mut rtlat_cyclictest([
            "-l",
            "300",
            "-i",
            "1000",
            "-q",
            "-t",
            "2",
            "-p",
            "80",
            "-a",
            &lease.list(),
            "--percentiles",
            &format!("--json={}", json.display()),
        ]),
        Duration::from_secs(10),
    );
    let after = SystemTime::now();
    r.expect_code(0);
    let doc = read_json(&json);
    let lines = max_time_lines(&r.stdout);
    let threads: Vec<usize> = lines.iter().map(|l| l.thread).collect();
    assert_eq!(threads, [0, 1], "{}", r.stdout);
    let (from, to) = (unix_ms(before), unix_ms(after));
    let whole_run_us = after.duration_since(before).unwrap().as_micros() as i64;
    for line in &lines {
        assert!(!line.signal, "{line:?}");
        assert!(
            (from..=to).contains(&line.unix_ms),
            "{line:?} not within {from}..={to} ms\n{}",
            r.stdout
        );
        assert!(
            line.instants_us.1 <= whole_run_us,
            "{line:?} not within the run's {whole_run_us} us\n{}",
            r.stdout
        );
        let t = &doc["thread"][line.thread.to_string()];
        check_max_time_line(line, t);
        let max_time_ms = t["max_time"].as_f64().unwrap() * 1000.0;
        assert!(
            (from as f64..=to as f64 + 1.0).contains(&max_time_ms),
            "{t}"
        );
    }
}

#[test]
fn the_maximum_falls_in_the_stats_file_interval_that_holds_it() {
    // The time of a maximum is its deadline, and an interval holds the
    // samples of its deadlines: the interval whose max is the thread's
    // ends less than one interval after it (its time is the interval's
    // end, ms; max_time is µs).
    let dir = tempfile::tempdir().unwrap();
    let (stats, json) = (dir.path().join("s.jsonl"), dir.path().join("run.json"));
    let r = run(&mut synthetic(
        9,
        [
            "-q",
            "-l",
            "2000",
            "-t",
            "2",
            "--stats-interval",
            "0.1",
            "--stats-file",
            stats.to_str().unwrap(),
            &format!("--json={}", json.display()),
        ],
    ));
    r.expect_code(0);
    let doc = read_json(&json);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&stats)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for thread in 0..2u64 {
        let t = &doc["thread"][thread.to_string()];
        let max_ns = t["max_ns"].as_i64().unwrap();
        let holder = lines
            .iter()
            .filter(|l| l["thread"] == thread)
            .find(|l| {
                l["max"]
                    .as_f64()
                    .is_some_and(|m| (m * 1000.0).round() as i64 == max_ns)
            })
            .unwrap_or_else(|| panic!("no interval with the maximum of {t}"));
        let end = holder["time"].as_f64().unwrap();
        let at = t["max_time"].as_f64().unwrap();
        assert!(
            end - 0.1 - 0.0005 <= at && at <= end + 0.0005,
            "max_time {at} outside the interval ending at {end}: {holder}"
        );
    }
}

#[test]
fn a_monitor_shows_the_time_of_its_maxima_over_a_resume() {
    // The checkpoint keeps each thread's maximum with its time; after
    // --resume the larger maximum keeps its own.
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let (json, checkpoint) = (dir.path().join("run.json"), dir.path().join("state.json"));
    let monitor = |extra: &[&str]| {
        // Its one FIFO thread on the leased CPU; its metrics on any free
        // port (the default one may be another test's).
        let mut args = vec![
            "monitor".to_owned(),
            "-l".into(),
            "300".into(),
            "-t".into(),
            "1".into(),
            "-a".into(),
            lease.list(),
            "--listen=127.0.0.1:0".into(),
            "--percentiles".into(),
            format!("--checkpoint={}", checkpoint.display()),
            format!("--json={}", json.display()),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let before = now_s();
        let r = run_with_timeout(crate::support::rtlat().args(&args), Duration::from_secs(10));
        r.expect_code(0);
        (r, before, now_s())
    };
    let (r, before, after) = monitor(&[]);
    assert_eq!(max_time_lines(&r.stdout).len(), 1, "{}", r.stdout);
    let first = read_json(&json);
    let first_time = first["thread"]["0"]["max_time"].as_f64().expect("a time");
    assert!(
        before <= first_time && first_time <= after,
        "{first_time} not in {before}..{after}"
    );
    assert_eq!(
        first["monitor"]["threads"][0]["max_time"],
        first["thread"]["0"]["max_time"]
    );
    let (r, _, _) = monitor(&["--resume"]);
    assert_eq!(max_time_lines(&r.stdout).len(), 1, "{}", r.stdout);
    let second = read_json(&json);
    let t = &second["thread"]["0"];
    let (first_max, second_max) = (
        first["thread"]["0"]["max_ns"].as_i64(),
        t["max_ns"].as_i64(),
    );
    assert!(second_max >= first_max);
    let time = t["max_time"].as_f64().expect("a time");
    if second_max == first_max {
        // The checkpoint's maximum stands, with its time (to the µs).
        assert!((time - first_time).abs() < 2e-6, "{time} vs {first_time}");
    } else {
        assert!(time > first_time, "{time} after {first_time}");
    }
}

fn now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}
