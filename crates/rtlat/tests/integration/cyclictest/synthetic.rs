//! `rtlat cyclictest` through the real binary with `--synthetic SEED` (no
//! privilege): deterministic output snapshots (insta) plus invariants, the
//! plain runs first, then the options that add blocks (`--spike`, `-b`,
//! `--smi`, `-v -o`, `-A`, `--secaligned`, `-x`, `-s`) cross-checked against
//! the plain `-v` sample stream of the same seed.

use crate::support::{
    Run, check_histogram_invariants, check_status_invariants, json_thread_ints, parse_histogram,
    parse_status_lines, read_json, run, synthetic,
};

pub(crate) const SEED: u64 = 5;

/// Makes the bytes printable and portable for a snapshot: ESC becomes
/// `^[`, the binary's absolute path (in the JSON `cmdline:`) becomes
/// `rtlat`, our version becomes `[version]`, and the `-v` CPU counts (the synthetic seam does not pin them:
/// they are this machine's) become `[cpus]`.
pub(crate) fn printable(text: &str) -> String {
    let bin = crate::support::rtlat_path();
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

// ---------------------------------------------------------------------------
// Parsers for the extra output blocks (shared with the real-run modules).

/// One `T:%2d Spike:%8ld: TS: %12ld` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spike {
    pub thread: i64,
    pub value: i64,
    pub ts: i64,
}

/// The spike block: the recorded entries and the `spikes = N` count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpikeBlock {
    pub spikes: Vec<Spike>,
    pub count: u64,
}

fn parse_spike_line(line: &str) -> Option<Spike> {
    let rest = line.strip_prefix("T:")?;
    let (thread, rest) = rest.split_once(" Spike:")?;
    let (value, ts) = rest.split_once(": TS: ")?;
    Some(Spike {
        thread: thread.trim().parse().ok()?,
        value: value.trim().parse().ok()?,
        ts: ts.trim().parse().ok()?,
    })
}

/// Finds the spike block (empty line, spike lines, `spikes = N`, empty
/// line) and checks its framing and exact widths; `None` without one.
pub(crate) fn parse_spike_block(text: &str) -> Option<SpikeBlock> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("spikes = "))?;
    let count = lines[at]["spikes = ".len()..]
        .parse()
        .unwrap_or_else(|_| panic!("bad count line {:?}", lines[at]));
    let mut start = at;
    while start > 0 && lines[start - 1].contains(" Spike:") {
        start -= 1;
    }
    assert!(start > 0, "no empty line before the spike block:\n{text}");
    assert_eq!(lines[start - 1], "", "empty line before the spike block");
    assert_eq!(
        lines.get(at + 1),
        Some(&""),
        "empty line after `spikes =`:\n{text}"
    );
    let spikes = lines[start..at]
        .iter()
        .map(|l| {
            let s = parse_spike_line(l).unwrap_or_else(|| panic!("bad spike line {l:?}"));
            assert_eq!(
                *l,
                format!("T:{:2} Spike:{:8}: TS: {:12}", s.thread, s.value, s.ts),
                "spike line format"
            );
            s
        })
        .collect();
    Some(SpikeBlock { spikes, count })
}

/// The `-b` lines at the very end of stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Break {
    pub thread_ids: Vec<i64>,
    pub thread: i64,
    pub value: i64,
}

/// Parses the last three lines of `text` as `# Thread Ids:`, `# Break
/// thread:`, `# Break value:` (checking the `%05d` ids); panics otherwise.
pub(crate) fn parse_break(text: &str) -> Break {
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        text.ends_with('\n') && lines.len() >= 3,
        "break lines at the end:\n{text}"
    );
    let tail = &lines[lines.len() - 3..];
    let ids = tail[0]
        .strip_prefix("# Thread Ids:")
        .unwrap_or_else(|| panic!("expected `# Thread Ids:`, got {:?}\n{text}", tail[0]));
    let thread_ids: Vec<i64> = ids
        .split(' ')
        .skip(1)
        .map(|w| {
            assert!(w.len() >= 5, "%05d thread id: {w:?}");
            w.parse().unwrap()
        })
        .collect();
    let field = |line: &str, label: &str| -> i64 {
        line.strip_prefix(label)
            .unwrap_or_else(|| panic!("expected {label:?}, got {line:?}\n{text}"))
            .parse()
            .unwrap_or_else(|_| panic!("bad number in {line:?}"))
    };
    Break {
        thread_ids,
        thread: field(tail[1], "# Break thread: "),
        value: field(tail[2], "# Break value: "),
    }
}

/// One `-v` sample line: `%8d:%8lu:%8ld`, with `--smi` `%8ld` appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sample {
    pub thread: i64,
    pub cycle: i64,
    pub value: i64,
    pub smi: Option<i64>,
}

/// Every `-v` sample line of `text`, in order (lines of other shapes are skipped).
pub(crate) fn parse_samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter_map(|l| {
            let b = l.as_bytes();
            if !((l.len() == 26 || l.len() == 34) && b[8] == b':' && b[17] == b':') {
                return None;
            }
            let num = |s: &str| s.trim().parse::<i64>().ok();
            Some(Sample {
                thread: num(&l[..8])?,
                cycle: num(&l[9..17])?,
                value: num(&l[18..26])?,
                smi: if l.len() == 34 {
                    Some(num(&l[26..])?)
                } else {
                    None
                },
            })
        })
        .collect()
}

/// Runs a synthetic command with `--json=<tmp>`, expects exit 0.
fn synthetic_json(seed: u64, args: &[&str]) -> (Run, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let mut cmd = synthetic(seed, args);
    cmd.arg(format!("--json={}", path.display()));
    let r = run(&mut cmd);
    r.expect_code(0);
    let json = read_json(&path);
    (r, json)
}

/// The plain `-v` sample stream of thread 0 for `-l loops`, single thread.
fn samples_of(seed: u64, loops: &str) -> Vec<Sample> {
    let r = run(&mut synthetic(seed, ["-v", "-l", loops]));
    r.expect_code(0);
    let s = parse_samples(&r.stdout);
    assert_eq!(s.len().to_string(), loops, "-v prints every sample");
    s
}

// ---------------------------------------------------------------------------
// --spike

/// The spike block's own invariants, given each thread's `T:` max.
fn check_spikes(block: &SpikeBlock, trigger: i64, capacity: usize, max: &[i64]) {
    assert!(block.spikes.len() <= capacity, "{block:?}");
    if (block.count as usize) < capacity {
        assert_eq!(
            block.count as usize,
            block.spikes.len(),
            "below capacity every spike is listed"
        );
    } else {
        assert_eq!(block.spikes.len(), capacity, "a full list: {block:?}");
    }
    for s in &block.spikes {
        assert!(s.value > trigger, "spike {s:?} not above trigger {trigger}");
        let t = usize::try_from(s.thread).expect("thread index");
        assert!(t < max.len(), "{s:?}");
        assert!(s.value <= max[t], "{s:?} above the thread's max {}", max[t]);
    }
    for (t, &thread_max) in max.iter().enumerate() {
        let ts: Vec<i64> = block
            .spikes
            .iter()
            .filter(|s| s.thread == t as i64)
            .map(|s| s.ts)
            .collect();
        assert!(
            ts.windows(2).all(|w| w[0] < w[1]),
            "thread {t}: timestamps increase: {ts:?}"
        );
        if (block.count as usize) < capacity && thread_max > trigger {
            assert!(
                block
                    .spikes
                    .iter()
                    .any(|s| s.thread == t as i64 && s.value == thread_max),
                "thread {t}: its max {thread_max} is a spike"
            );
        }
    }
}

#[test]
fn spike_block_one_thread() {
    let r = checked_run(
        SEED,
        &["--spike", "60", "--spike-nodes", "4", "-q", "-l", "1000"],
    );
    let block = parse_spike_block(&r.stdout).expect("spike block");
    let lines = parse_status_lines(&r.stdout);
    check_spikes(&block, 60, 4, &[lines[0].max]);
    // Placement: after the T: lines, the block ends the output.
    assert!(r.stdout.ends_with("\n\n"), "{}", r.stdout);
    insta::assert_snapshot!("spike_block_one_thread", printable(&r.stdout));
}

/// The spike list holds the first N spikes; `spikes =` counts them all.
#[test]
fn spike_list_capacity_and_count() {
    let all = checked_run(SEED, &["--spike", "20", "-q", "-l", "1000"]);
    let all = parse_spike_block(&all.stdout).expect("spike block");
    assert!(all.count > 4, "seed {SEED} has more than 4 spikes above 20");
    // `--spike-nodes` is honoured in any position (C: only after --spike).
    for args in [
        &["--spike", "20", "--spike-nodes", "4", "-q", "-l", "1000"][..],
        &["--spike-nodes", "4", "--spike", "20", "-q", "-l", "1000"],
    ] {
        let r = checked_run(SEED, args);
        let capped = parse_spike_block(&r.stdout).expect("spike block");
        assert_eq!(
            capped.count, all.count,
            "{args:?}: count includes the unlisted"
        );
        assert_eq!(capped.spikes, all.spikes[..4], "{args:?}: the first 4");
    }
}

/// Each spike is one `-v` sample above the trigger, in order; its TS is the
/// wake-up time: deadline (on the interval grid) + latency.
#[test]
fn spikes_are_the_samples_above_the_trigger() {
    let r = checked_run(SEED, &["--spike", "25", "-q", "-l", "1000"]);
    let block = parse_spike_block(&r.stdout).expect("spike block");
    let above: Vec<Sample> = samples_of(SEED, "1000")
        .into_iter()
        .filter(|s| s.value > 25)
        .collect();
    assert_eq!(block.count as usize, above.len());
    assert_eq!(
        block.spikes.iter().map(|s| s.value).collect::<Vec<_>>(),
        above.iter().map(|s| s.value).collect::<Vec<_>>()
    );
    let base: Vec<i64> = block
        .spikes
        .iter()
        .zip(&above)
        .map(|(s, v)| s.ts - s.value - (v.cycle + 1) * 1000)
        .collect();
    assert!(
        base.windows(2).all(|w| w[0] == w[1]),
        "TS - latency - (cycle+1)*interval is the start time: {base:?}"
    );
}

#[test]
fn no_spike_no_block() {
    let r = checked_run(SEED, &["--spike", "100000", "-q", "-l", "200"]);
    assert!(parse_spike_block(&r.stdout).is_none(), "{}", r.stdout);
    assert!(!r.stdout.contains("Spike"), "{}", r.stdout);
}

#[test]
fn spike_invariants_two_threads() {
    for seed in [SEED, 7, 11] {
        let r = run(&mut synthetic(
            seed,
            ["--spike", "60", "-t", "2", "-q", "-l", "2000"],
        ));
        r.expect_code(0);
        let block = parse_spike_block(&r.stdout).expect("spike block");
        let max: Vec<i64> = parse_status_lines(&r.stdout)
            .iter()
            .map(|l| l.max)
            .collect();
        check_spikes(&block, 60, 1024, &max);
        let capped = run(&mut synthetic(
            seed,
            [
                "--spike",
                "60",
                "--spike-nodes",
                "4",
                "-t",
                "2",
                "-q",
                "-l",
                "2000",
            ],
        ));
        capped.expect_code(0);
        let capped = parse_spike_block(&capped.stdout).expect("spike block");
        assert_eq!(capped.count, block.count, "seed {seed}");
        check_spikes(&capped, 60, 4, &max);
    }
}

/// The brief's two-thread spike snapshot. The order of the list follows
/// the real scheduling of the synthetic threads, so the output (and, with a
/// small `--spike-nodes`, which spikes are listed) changes from run to run.
#[test]
fn spike_block_two_threads() {
    let args = [
        "--spike",
        "60",
        "--spike-nodes",
        "4",
        "-t",
        "2",
        "-q",
        "-l",
        "2000",
    ];
    let first = run(&mut synthetic(SEED, args));
    first.expect_code(0);
    for _ in 0..10 {
        let again = run(&mut synthetic(SEED, args));
        assert_eq!(first.stdout, again.stdout, "same seed, same output");
    }
    let block = parse_spike_block(&first.stdout).expect("spike block");
    assert!(
        block.spikes.windows(2).all(|w| w[0].ts < w[1].ts),
        "the list holds the first spikes in (virtual) time: {block:?}"
    );
    insta::assert_snapshot!("spike_block_two_threads", printable(&first.stdout));
}

// ---------------------------------------------------------------------------
// -b

#[test]
fn breaktrace_one_thread() {
    let r = checked_run(SEED, &["-b", "150", "-q", "-l", "100000"]);
    let b = parse_break(&r.stdout);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 1);
    assert_eq!(b.thread_ids, [1000], "synthetic tids are 1000 + index");
    assert_eq!(b.thread, 1000);
    assert!(b.value > 150, "{b:?}");
    assert_eq!(
        b.value, lines[0].max,
        "the break sample is the thread's max"
    );
    assert_eq!(b.value, lines[0].act, "and its last one");
    assert!(lines[0].cycles < 100_000, "the run stopped early");
    // The break is the first sample above the threshold.
    let samples =
        parse_samples(&run(&mut synthetic(SEED, ["-v", "-b", "150", "-l", "100000"])).stdout);
    assert_eq!(samples.len() as i64, lines[0].cycles);
    let (last, before) = samples.split_last().unwrap();
    assert_eq!(last.value, b.value);
    assert!(before.iter().all(|s| s.value <= 150));
    insta::assert_snapshot!("breaktrace_one_thread", printable(&r.stdout));
}

#[test]
fn breaktrace_without_a_break() {
    let r = checked_run(SEED, &["-b", "100000", "-q", "-l", "300", "-t", "2"]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines.last(),
        Some(&"# Thread Ids: 01000 01001"),
        "only the ids when nothing broke:\n{}",
        r.stdout
    );
    assert!(!r.stdout.contains("# Break"));
    assert_eq!(parse_status_lines(&r.stdout)[0].cycles, 300);
}

/// With two threads, which thread breaks first (and where the other one
/// stops) follows the real scheduling of the synthetic threads instead of
/// virtual time.
#[test]
fn breaktrace_two_threads_is_deterministic() {
    let args = ["-b", "150", "-t", "2", "-q", "-l", "100000"];
    let first = run(&mut synthetic(SEED, args));
    first.expect_code(0);
    for _ in 0..10 {
        let again = run(&mut synthetic(SEED, args));
        assert_eq!(first.stdout, again.stdout, "same seed, same output");
    }
    let b = parse_break(&first.stdout);
    let lines = parse_status_lines(&first.stdout);
    let t = (b.thread - 1000) as usize;
    assert_eq!(b.value, lines[t].max);
}

// ---------------------------------------------------------------------------
// --smi (synthetic counter)

#[test]
fn smi_column_and_histogram_line() {
    let r = checked_run(SEED, &["--smi", "-a", "0", "-q", "-l", "1000", "-h", "10"]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let n = lines.len();
    assert_eq!(
        lines[n - 1],
        "",
        "the histogram's final empty line stays last"
    );
    let smis = lines[n - 2]
        .strip_prefix("# SMIs:")
        .unwrap_or_else(|| panic!("`# SMIs:` before the final empty line:\n{}", r.stdout));
    assert_eq!(smis.len(), 6, "` %05lu` for one thread: {smis:?}");
    let (_, json) = synthetic_json(SEED, &["--smi", "-a", "0", "-q", "-l", "1000", "-h", "10"]);
    assert_eq!(
        json_thread_ints(&json, "smi_count"),
        [smis.trim().parse::<i64>().unwrap()]
    );
    insta::assert_snapshot!("smi_column_and_histogram_line", printable(&r.stdout));
}

#[test]
fn smi_counts_agree_everywhere() {
    let args = ["--smi", "-a", "0", "-q", "-l", "1000", "-t", "2"];
    let (r, json) = synthetic_json(SEED, &args);
    let smi = json_thread_ints(&json, "smi_count");
    assert!(smi[0] > 0, "the fake counter counts: {smi:?}");
    let t_lines: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with("T:")).collect();
    for (i, l) in t_lines.iter().enumerate() {
        let (head, tail) = l.split_once(" SMI:").expect("SMI column");
        assert!(crate::support::parse_status_line(head).is_some(), "{l:?}");
        assert_eq!(tail.len(), 8, "SMI:%8ld in {l:?}");
        assert_eq!(tail.trim().parse::<i64>().unwrap(), smi[i], "{l:?}");
    }
    // -v: the per-sample SMI deltas add up to the count.
    let v = run(&mut synthetic(
        SEED,
        ["--smi", "-a", "0", "-v", "-l", "1000"],
    ));
    v.expect_code(0);
    let samples = parse_samples(&v.stdout);
    assert_eq!(samples.len(), 1000);
    let sum: i64 = samples.iter().map(|s| s.smi.expect("SMI column")).sum();
    let (_, one) = synthetic_json(SEED, &["--smi", "-a", "0", "-q", "-l", "1000"]);
    assert_eq!(sum, json_thread_ints(&one, "smi_count")[0]);
    // Without --smi: no SMI anywhere.
    let (plain, pj) = synthetic_json(SEED, &["-q", "-l", "100"]);
    assert!(!plain.stdout.contains("SMI"));
    assert!(pj["thread"]["0"].get("smi_count").is_none());
}

#[test]
fn smi_verbose_lines() {
    let r = checked_run(SEED, &["-v", "--smi", "-a", "0", "-l", "20"]);
    let samples = parse_samples(&r.stdout);
    assert_eq!(samples.len(), 20);
    assert!(samples.iter().all(|s| s.smi.is_some()), "%8ld SMI appended");
    insta::assert_snapshot!("smi_verbose_lines", printable(&r.stdout));
}

// ---------------------------------------------------------------------------
// -v -o RED

#[test]
fn oscope_reduces_verbose_lines() {
    let r = checked_run(SEED, &["-v", "-o", "10", "-l", "100"]);
    let reduced = parse_samples(&r.stdout);
    assert_eq!(reduced.len(), 10, "one line per 10 samples");
    let all = samples_of(SEED, "100");
    for (k, s) in reduced.iter().enumerate() {
        let block = &all[k * 10..k * 10 + 10];
        let max = block.iter().map(|b| b.value).max().unwrap();
        assert_eq!(s.value, max, "block {k}: its max");
        let first = block.iter().find(|b| b.value == max).unwrap();
        assert_eq!(s.cycle, first.cycle, "block {k}: the cycle of its max");
    }
    insta::assert_snapshot!("oscope_reduces_verbose_lines", printable(&r.stdout));
}

#[test]
fn oscope_drops_an_incomplete_last_block() {
    let r = checked_run(SEED, &["-v", "-o", "7", "-l", "100"]);
    let reduced = parse_samples(&r.stdout);
    assert_eq!(reduced.len(), 14, "100 / 7 complete blocks");
    for (k, s) in reduced.iter().enumerate() {
        assert!((7 * k as i64..7 * k as i64 + 7).contains(&s.cycle), "{s:?}");
    }
}

// ---------------------------------------------------------------------------
// -A, --secaligned, -x, -s

#[test]
fn aligned_two_threads() {
    let r = checked_run(SEED, &["-A", "100", "-q", "-l", "100", "-t", "2"]);
    assert_eq!(parse_status_lines(&r.stdout)[0].cycles, 100);
    insta::assert_snapshot!("aligned_two_threads", printable(&r.stdout));
}

#[test]
fn secaligned_two_threads() {
    let r = checked_run(SEED, &["--secaligned", "-q", "-l", "100", "-t", "2"]);
    assert_eq!(parse_status_lines(&r.stdout)[0].cycles, 100);
    insta::assert_snapshot!("secaligned_two_threads", printable(&r.stdout));
}

#[test]
fn posix_timers() {
    let r = checked_run(SEED, &["-x", "-q", "-l", "100"]);
    assert_eq!(parse_status_lines(&r.stdout)[0].cycles, 100);
    insta::assert_snapshot!("posix_timers", printable(&r.stdout));
}

/// `-l N` counts samples. Synthetic runs stop at a virtual-time horizon of
/// N × interval instead, so relative sleeps (`-s`, `-r`: every period is
/// interval + latency) and skipped periods (a latency above the interval)
/// end the run before N samples: `-s -q -l 100` reports `C: 98`.
#[test]
fn loops_count_samples_in_every_mode() {
    for args in [
        &["-s", "-q", "-l", "100"][..],
        &["-r", "-q", "-l", "100"],
        &["-x", "-r", "-q", "-l", "100"],
        &["-q", "-l", "2000"],
    ] {
        let r = run(&mut synthetic(SEED, args));
        r.expect_code(0);
        let lines = parse_status_lines(&r.stdout);
        let want: i64 = args.last().unwrap().parse().unwrap();
        assert_eq!(lines[0].cycles, want, "{args:?}\n{}", r.stdout);
    }
}

#[test]
fn nanosleep() {
    let r = checked_run(SEED, &["-s", "-q", "-l", "100"]);
    assert_eq!(parse_status_lines(&r.stdout)[0].cycles, 100);
    insta::assert_snapshot!("nanosleep", printable(&r.stdout));
}

/// For each spike, its deadline (`TS - latency`, µs) modulo `interval`:
/// where on the interval grid the thread's deadlines lie.
pub(crate) fn deadline_phases(block: &SpikeBlock, interval: i64) -> Vec<(i64, i64)> {
    block
        .spikes
        .iter()
        .map(|s| (s.thread, (s.ts - s.value).rem_euclid(interval)))
        .collect()
}

/// `-A 100`: thread 1's deadlines are 100 µs after thread 0's (same
/// interval with `-d 0`); `--secaligned 250`: every deadline is 250 µs past
/// a whole millisecond (the start is a whole second + 250 µs).
#[test]
fn alignment_moves_the_deadlines() {
    // Not `checked_run`: the two-thread spike order is not deterministic
    // (see `spike_block_two_threads`), the phases are.
    let r = run(&mut synthetic(
        SEED,
        [
            "-A", "100", "-d", "0", "-t", "2", "--spike", "1", "-q", "-l", "50",
        ],
    ));
    r.expect_code(0);
    let phases = deadline_phases(&parse_spike_block(&r.stdout).unwrap(), 1000);
    for t in 0..2 {
        assert!(phases.iter().any(|p| p.0 == t), "thread {t} has spikes");
    }
    for (t, phase) in &phases {
        assert_eq!(*phase, *t * 100, "thread {t}: {phases:?}");
    }
    let r = checked_run(
        SEED,
        &["--secaligned", "250", "--spike", "1", "-q", "-l", "50"],
    );
    let phases = deadline_phases(&parse_spike_block(&r.stdout).unwrap(), 1_000_000);
    assert!(!phases.is_empty());
    for (_, phase) in &phases {
        assert_eq!(phase % 1000, 250, "{phases:?}");
    }
}
