//! Whole runs through the real binary with `--synthetic SEED`: deterministic output snapshots (insta) plus invariants, no privilege needed.

use crate::util::{
    Run, check_histogram_invariants, check_status_invariants, json_thread_ints, parse_histogram,
    parse_status_lines, read_json, run, synthetic,
};

pub(crate) const SEED: u64 = 5;

/// Makes the bytes printable and portable for a snapshot: ESC becomes
/// `^[`, the binary's absolute path (in the JSON `cmdline:`) becomes
/// `rtlat`, our version becomes `[version]`, and the `-v` CPU counts (the synthetic seam does not pin them:
/// they are this machine's) become `[cpus]`.
pub(crate) fn printable(text: &str) -> String {
    let bin = crate::util::rtlat_path();
    let text = text
        .replace('\x1b', "^[")
        .replace(bin.to_str().unwrap(), "rtlat")
        .replace(
            &format!("\"rtlat_version\": \"{}\"", env!("CARGO_PKG_VERSION")),
            "\"rtlat_version\": \"[version]\"",
        );
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        match ["Max CPUs = ", "Online CPUs = "]
            .iter()
            .find(|p| line.starts_with(*p))
        {
            Some(p) => {
                out.push_str(p);
                out.push_str("[cpus]\n");
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Runs `rtlat cyclictest --synthetic SEED ARGS`, expects exit 0 and checks
/// the invariants. Unless ARGS already write JSON, runs it a second time
/// with `--json=<tmp>`: stdout must be byte-identical (determinism), and the
/// JSON cycles/min/max must agree with the `T:` lines and the histogram.
pub(crate) fn checked_run(seed: u64, args: &[&str]) -> Run {
    let r = run(&mut synthetic(seed, args));
    r.expect_code(0);
    if args.iter().any(|a| a.starts_with("--json")) {
        check_invariants(&r.stdout, None);
        return r;
    }
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("run.json");
    let mut with_json: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    with_json.push(format!("--json={}", json_path.display()));
    let again = run(&mut synthetic(seed, &with_json));
    again.expect_code(0);
    assert_eq!(
        r.stdout, again.stdout,
        "same seed, same options (+ --json=FILE) must give the same stdout"
    );
    let json = read_json(&json_path);
    check_invariants(&r.stdout, Some(&json));
    r
}

fn check_invariants(stdout: &str, json: Option<&serde_json::Value>) {
    let lines = parse_status_lines(stdout);
    check_status_invariants(&lines);
    let Some(json) = json else {
        if let Some(h) = parse_histogram(stdout) {
            check_histogram_invariants(&h, None);
        }
        return;
    };
    let threads = json["num_threads"].as_u64().unwrap() as usize;
    let cycles = json_thread_ints(json, "cycles");
    let min = json_thread_ints(json, "min");
    let max = json_thread_ints(json, "max");
    assert_eq!(cycles.len(), threads);
    if !lines.is_empty() {
        // The last frame (live mode prints several).
        let last = &lines[lines.len() - threads..];
        for (i, l) in last.iter().enumerate() {
            assert_eq!(l.index, i as i64);
            assert_eq!(l.tid, 1000 + i as i64, "synthetic tids are pinned");
            assert_eq!(l.cycles, cycles[i], "thread {i}: T: C vs JSON cycles");
            assert_eq!(l.min, min[i], "thread {i}: T: Min vs JSON min");
            assert_eq!(l.max, max[i], "thread {i}: T: Max vs JSON max");
            let avg = json["thread"][i.to_string()]["avg"].as_f64().unwrap();
            assert!(
                (avg - l.avg as f64).abs() < 1.01,
                "thread {i}: T: Avg {} vs JSON avg {avg}",
                l.avg
            );
        }
    }
    if let Some(h) = parse_histogram(stdout) {
        let cycles: Vec<u64> = cycles.iter().map(|&c| c as u64).collect();
        check_histogram_invariants(&h, Some(&cycles));
        assert_eq!(h.min, min, "histogram Min vs JSON min");
        assert_eq!(h.max, max, "histogram Max vs JSON max");
    }
}

#[test]
fn quiet_two_threads() {
    let r = checked_run(SEED, &["-q", "-l", "1000", "-t", "2"]);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].cycles, 1000, "-l counts thread 0's loops");
    assert_eq!((lines[0].interval, lines[1].interval), (1000, 1500));
    assert!(lines[1].cycles < 1000);
    insta::assert_snapshot!("quiet_two_threads", printable(&r.stdout));
}

#[test]
fn quiet_histogram() {
    let r = checked_run(SEED, &["-q", "-l", "500", "-h", "40"]);
    assert!(
        parse_status_lines(&r.stdout).is_empty(),
        "-q -h prints no T: lines"
    );
    let h = parse_histogram(&r.stdout).expect("histogram block");
    assert_eq!((h.threads(), h.buckets()), (1, 40));
    assert_eq!(h.total[0] + h.overflows[0], 500);
    insta::assert_snapshot!("quiet_histogram", printable(&r.stdout));
}

#[test]
fn quiet_histofall_three_threads() {
    let r = checked_run(SEED, &["-q", "-H", "30", "-t", "3", "-l", "300"]);
    let h = parse_histogram(&r.stdout).expect("histogram block");
    assert_eq!((h.threads(), h.buckets()), (3, 30));
    assert!(
        h.bucket_sums.is_some(),
        "-H with 3 threads has a sum column"
    );
    assert!(h.total_sum.is_some() && h.overflows_sum.is_some() && h.max_all.is_some());
    // The first thread to complete its 300 samples ends the run (all three
    // share one interval under -H; one that skipped a deadline is behind).
    let samples: Vec<u64> = (0..3).map(|t| h.total[t] + h.overflows[t]).collect();
    assert_eq!(samples.iter().max(), Some(&300), "{samples:?}");
    assert!(samples.iter().all(|&n| n >= 295), "{samples:?}");
    insta::assert_snapshot!("quiet_histofall_three_threads", printable(&r.stdout));
}

#[test]
fn live_two_threads() {
    let r = checked_run(SEED, &["-l", "200", "-t", "2"]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "# /dev/cpu_dma_latency set to 0us");
    assert_eq!(
        lines[1].trim_start_matches("\x1b[4A"),
        "policy: other/other: loadavg: 0.00 0.00 0.00 1/100 1000          "
    );
    let last = parse_status_lines(&r.stdout);
    assert_eq!(last[last.len() - 2].cycles, 200);
    insta::assert_snapshot!("live_two_threads", printable(&r.stdout));
}

#[test]
fn verbose_two_threads() {
    let r = checked_run(SEED, &["-v", "-l", "20", "-t", "2"]);
    // Sample lines: `%8d:%8lu:%8ld`, cycle numbers consecutive from 0 per thread.
    let mut next = [0u64; 2];
    for line in r
        .stdout
        .lines()
        .filter(|l| l.len() == 26 && l.as_bytes()[8] == b':')
    {
        let f: Vec<&str> = line.split(':').collect();
        assert_eq!(f.len(), 3, "{line:?}");
        let t: usize = f[0].trim().parse().unwrap();
        let cycle: u64 = f[1].trim().parse().unwrap();
        let _lat: i64 = f[2].trim().parse().unwrap();
        assert_eq!(cycle, next[t], "thread {t} cycle numbers in {line:?}");
        next[t] += 1;
    }
    assert_eq!(next[0], 20, "thread 0 prints all its 20 samples");
    assert!(next[1] > 0 && next[1] < 20);
    insta::assert_snapshot!("verbose_two_threads", printable(&r.stdout));
}

#[test]
fn quiet_nanoseconds() {
    let r = checked_run(SEED, &["-N", "-q", "-l", "100"]);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].interval, 1000, "I: stays in µs with -N");
    insta::assert_snapshot!("quiet_nanoseconds", printable(&r.stdout));
}

#[test]
fn json_to_stdout_with_histogram() {
    let r = checked_run(SEED, &["--json=-", "-q", "-l", "100", "-h", "20"]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let open = lines.iter().position(|l| *l == "{").expect("JSON start");
    let close = lines.iter().position(|l| *l == "}").expect("JSON end");
    let json: serde_json::Value =
        serde_json::from_str(&lines[open..=close].join("\n")).expect("valid JSON");
    assert!(
        lines[close + 1..].contains(&"# Histogram"),
        "JSON comes before the histogram block"
    );
    assert_eq!(json["rt_test_version:"], "2.40");
    assert_eq!(json["return_code"], 0);
    assert_eq!(json["num_threads"], 1);
    assert_eq!(json["resolution_in_ns"], 0);
    assert_eq!(json["start_time"], "Thu, 01 Jan 1970 00:00:00 +0000");
    let t0 = &json["thread"]["0"];
    assert_eq!(t0["cycles"], 100);
    assert_eq!(t0["cpu"], -1, "not pinned without -a");
    assert_eq!(t0["tid"], 1000);
    // JSON histogram = the block's non-empty buckets.
    let h = parse_histogram(&r.stdout).unwrap();
    check_histogram_invariants(&h, Some(&[100]));
    let from_block: Vec<(String, u64)> = h
        .counts
        .iter()
        .enumerate()
        .filter(|(_, row)| row[0] > 0)
        .map(|(b, row)| (b.to_string(), row[0]))
        .collect();
    let from_json: Vec<(String, u64)> = t0["histogram"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    let mut from_json_sorted = from_json.clone();
    from_json_sorted.sort_by_key(|(k, _)| k.parse::<u64>().unwrap());
    assert_eq!(from_json_sorted, from_block);
    assert_eq!(t0["min"].as_i64().unwrap(), h.min[0]);
    assert_eq!(t0["max"].as_i64().unwrap(), h.max[0]);
    insta::assert_snapshot!("json_to_stdout_with_histogram", printable(&r.stdout));
}

#[test]
fn duration_in_virtual_time() {
    let r = checked_run(SEED, &["-q", "-D", "1", "-i", "1000", "-t", "2"]);
    assert!(
        r.elapsed.as_secs_f64() < 1.0,
        "synthetic time does not sleep: took {:?}",
        r.elapsed
    );
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 2);
    assert!(
        (990..=1001).contains(&lines[0].cycles),
        "about 1000 samples of 1 ms in 1 s: {:?}",
        lines[0]
    );
    assert!((660..=668).contains(&lines[1].cycles), "{:?}", lines[1]);
    insta::assert_snapshot!("duration_in_virtual_time", printable(&r.stdout));
}

#[test]
fn same_seed_same_output() {
    for args in [
        &["-q", "-l", "1000", "-t", "2"][..],
        &["-q", "-H", "30", "-t", "3", "-l", "300"],
        &["-v", "-l", "20", "-t", "2"],
    ] {
        let a = run(&mut synthetic(42, args));
        let b = run(&mut synthetic(42, args));
        a.expect_code(0);
        b.expect_code(0);
        assert_eq!(a.stdout, b.stdout, "{args:?}");
        assert_eq!(a.stderr, b.stderr, "{args:?}");
    }
}

fn outputs_for_seeds(seeds: &[u64]) -> Vec<String> {
    let args = ["-q", "-l", "1000", "-t", "2"];
    seeds
        .iter()
        .map(|&seed| checked_run(seed, &args).stdout)
        .collect()
}

#[test]
fn different_seeds_differ() {
    let seeds = [0, 2, 4, 10, 1000];
    let outputs = outputs_for_seeds(&seeds);
    for i in 0..seeds.len() {
        for j in i + 1..seeds.len() {
            assert_ne!(
                outputs[i], outputs[j],
                "seeds {} and {}",
                seeds[i], seeds[j]
            );
        }
    }
}

#[test]
fn seeds_differing_in_the_lowest_bit_differ() {
    for pair in [[2, 3], [4, 5], [0, 1]] {
        let outputs = outputs_for_seeds(&pair);
        assert_ne!(outputs[0], outputs[1], "seeds {pair:?}");
    }
}

#[test]
fn invariants_hold_over_many_seeds() {
    for seed in 0..20 {
        checked_run(seed, &["-q", "-h", "25", "-t", "2", "-l", "400"]);
        checked_run(seed, &["-q", "-N", "-t", "3", "-l", "200"]);
    }
}
