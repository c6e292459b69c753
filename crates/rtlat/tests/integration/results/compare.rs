//! `rtlat compare`: the fixtures' comparison through the binary
//! (snapshot), two synthetic cyclictest runs compared, the exit status of
//! `--fail-on-regression`, and bad input (one line naming the file, exit 2).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::cpus::CpuLease;
use crate::support::{
    cyclictest_c, read_json, rtlat, rtlat_cyclictest, rtlat_tool, run, run_with_timeout, synthetic,
};

/// The fixtures of the unit tests: `base.json` and `new.json`.
fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/compare/testdata")
}

fn compare(args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>) -> Command {
    rtlat_tool("compare", args)
}

/// `rtlat cyclictest --synthetic SEED -q -l LOOPS -t THREADS --json FILE`.
fn synthetic_json(dir: &Path, seed: u64, loops: u32, threads: u32) -> PathBuf {
    let path = dir.join(format!("seed{seed}-l{loops}-t{threads}.json"));
    let mut cmd = synthetic(
        seed,
        [
            "-q",
            "-l",
            &loops.to_string(),
            "-t",
            &threads.to_string(),
            "--json",
        ],
    );
    cmd.arg(&path);
    run(&mut cmd).expect_code(0);
    path
}

/// The rows of the table after the line starting with `heading`: (row,
/// BASE, NEW, verdict); the interval of the difference, `[a, b]`, is
/// left out.
fn table(out: &str, heading: &str) -> Vec<(String, String, String, String)> {
    out.lines()
        .skip_while(|l| !l.starts_with(heading))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let verdict = match l.rfind(']') {
                Some(end) => l[end + 1..].trim().to_string(),
                None => words[4..].join(" "),
            };
            (
                words[0].to_string(),
                words[1].to_string(),
                words[2].to_string(),
                verdict,
            )
        })
        .collect()
}

/// `base.json` of the fixtures with thread 0 (and all threads) twice as
/// slow: every latency doubled.
pub(crate) fn twice_as_slow(dir: &Path) -> PathBuf {
    let mut doc = read_json(&testdata().join("base.json"));
    let double = |v: &mut Value| *v = Value::from(v.as_f64().unwrap() * 2.0);
    let t = &mut doc["thread"]["0"];
    for key in ["min_ns", "max_ns"] {
        t[key] = Value::from(t[key].as_i64().unwrap() * 2);
    }
    for (_, v) in t["percentiles"].as_object_mut().unwrap() {
        double(v);
    }
    for bucket in t["distribution"]["buckets"].as_array_mut().unwrap() {
        double(&mut bucket[0]);
        double(&mut bucket[1]);
    }
    for (_, v) in doc["all_threads"].as_object_mut().unwrap() {
        double(v);
    }
    let path = dir.join("slow.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

fn json_micros(v: &serde_json::Value) -> String {
    format!("{:.3}", v.as_f64().expect("a number"))
}

#[test]
fn fixtures_through_the_binary() {
    let mut cmd = compare(["base.json", "new.json"]);
    cmd.current_dir(testdata());
    let r = run(&mut cmd);
    r.expect_code(0);
    assert_eq!(r.stderr, "");
    insta::assert_snapshot!("fixtures", r.stdout);
}

#[test]
fn two_synthetic_runs() {
    let dir = tempfile::tempdir().unwrap();
    let a = synthetic_json(dir.path(), 1, 20_000, 2);
    let b = synthetic_json(dir.path(), 2, 20_000, 2);
    let r = run(&mut compare([&a, &b]));
    r.expect_code(0);
    assert_eq!(r.stderr, "", "{}", r.describe());
    let out = &r.stdout;
    assert!(
        out.lines()
            .nth(1)
            .unwrap()
            .starts_with(&format!("BASE  {}: 2 threads, ", a.display())),
        "{out}"
    );
    assert!(!out.contains("threads differ"), "{out}");

    // Every table shows the files' own figures.
    let (ja, jb) = (read_json(&a), read_json(&b));
    for (heading, pa, pb, t) in [
        (
            "thread 0 (us)",
            &ja["thread"]["0"]["percentiles"],
            &jb["thread"]["0"]["percentiles"],
            Some("0"),
        ),
        (
            "thread 1 (us)",
            &ja["thread"]["1"]["percentiles"],
            &jb["thread"]["1"]["percentiles"],
            Some("1"),
        ),
        (
            "all threads (us)",
            &ja["all_threads"],
            &jb["all_threads"],
            None,
        ),
    ] {
        let rows = table(out, heading);
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            names,
            ["min", "p50", "p99", "p99.9", "floor", "max"],
            "{heading}\n{out}"
        );
        for (row, base, new, verdict) in &rows[1..] {
            if row == "floor" {
                // Made from the windows (the blocks), not a key of the
                // file: shown, and judged like the rest.
                assert!(
                    base.parse::<f64>().is_ok() && new.parse::<f64>().is_ok(),
                    "{out}"
                );
                assert!(
                    ["better", "worse", "noise"].contains(&verdict.as_str()),
                    "{out}"
                );
                continue;
            }
            assert_eq!(base, &json_micros(&pa[row.as_str()]), "{heading} {row}");
            assert_eq!(new, &json_micros(&pb[row.as_str()]), "{heading} {row}");
            assert!(
                ["better", "worse", "noise", "few samples", "info only"]
                    .contains(&verdict.as_str()),
                "{verdict}"
            );
        }
        if let Some(t) = t {
            let min_ns = ja["thread"][t]["min_ns"].as_i64().unwrap();
            assert_eq!(rows[0].1, format!("{}.{:03}", min_ns / 1000, min_ns % 1000));
            let samples = out
                .lines()
                .skip_while(|l| !l.starts_with(heading))
                .nth(1)
                .unwrap();
            let cycles = ja["thread"][t]["cycles"].as_u64().unwrap();
            assert!(
                samples.split_whitespace().nth(1) == Some(&cycles.to_string()),
                "{samples}"
            );
        }
    }
    // One verdict line per row.
    let verdicts: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("verdict"))
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        ["min", "p50", "p99", "p99.9", "floor", "max"],
        "{out}"
    );

    // A run compared with itself is within noise everywhere, so a
    // regression gate passes.
    let r = run(&mut compare([
        a.as_os_str(),
        a.as_os_str(),
        "--fail-on-regression".as_ref(),
    ]));
    r.expect_code(0);
    assert!(
        r.stdout.starts_with("No change beyond noise"),
        "{}",
        r.stdout
    );
    for line in r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("verdict"))
        .skip(1)
    {
        assert!(
            line.ends_with("within noise") || line.ends_with("information only"),
            "{line}\n{}",
            r.stdout
        );
    }
}

#[test]
fn short_and_long_runs_and_thread_counts() {
    let dir = tempfile::tempdir().unwrap();
    let short = synthetic_json(dir.path(), 3, 500, 1);
    let long = synthetic_json(dir.path(), 4, 20_000, 2);
    let r = run(&mut compare([&short, &long]));
    r.expect_code(0);
    let out = &r.stdout;
    assert!(
        out.contains(
            "threads differ: thread 1 only in NEW, not compared; \"all threads\" takes every\n  \
             thread of each run\n"
        ),
        "{out}"
    );
    assert!(!out.contains("thread 1 (us)"), "{out}");
    // 500 samples are too few for p99 and p99.9.
    for heading in ["thread 0 (us)", "all threads (us)"] {
        for (row, _, _, verdict) in table(out, heading) {
            if row == "p99" || row == "p99.9" {
                assert_eq!(verdict, "few samples", "{heading} {row}\n{out}");
            }
        }
    }
}

#[test]
fn fail_on_regression_exits_3_after_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let base = testdata().join("base.json");
    let slow = twice_as_slow(dir.path());
    let plain = run(&mut compare([&base, &slow]));
    plain.expect_code(0);
    assert_eq!(plain.stderr, "");
    assert!(
        plain
            .stdout
            .starts_with("Worse: thread 0 p50 +100.0% (95% family-wise)\n"),
        "{}",
        plain.stdout
    );

    let gated = run(&mut compare([
        base.as_os_str(),
        slow.as_os_str(),
        "--fail-on-regression".as_ref(),
    ]));
    gated.expect_code(3);
    assert_eq!(gated.stdout, plain.stdout, "the same output first");
    assert_eq!(
        gated.stderr_lines(),
        ["rtlat compare: --fail-on-regression: p50 worse: thread 0 +100.0%"]
    );

    // The other way round it is better: the gate passes.
    let reverse = run(&mut compare([
        slow.as_os_str(),
        base.as_os_str(),
        "--fail-on-regression".as_ref(),
    ]));
    reverse.expect_code(0);
    assert!(reverse.stdout.starts_with("Better: thread 0 p50 -50.0%"));

    // The fixtures differ in their maxima by up to +137.5 % and in p99
    // by +13.8 %: one sample, and a percentile whose interval spans a
    // gap of the distribution. Before issue 26 both failed the gate.
    let new = testdata().join("new.json");
    let r = run(&mut compare([
        base.as_os_str(),
        new.as_os_str(),
        "--fail-on-regression".as_ref(),
    ]));
    r.expect_code(0);

    // A margin of 150 % takes in even the +100 %.
    let loose = run(&mut compare([
        base.as_os_str(),
        slow.as_os_str(),
        "--fail-on-regression".as_ref(),
        "--noise".as_ref(),
        "150".as_ref(),
    ]));
    loose.expect_code(0);
}

/// A real A/A pair: two short runs of one thread on a leased CPU, back to
/// back, compared with `--fail-on-regression`: the gate passes. Before
/// issue 26 the maximum alone failed it far more often than not on this
/// VM (one sample of a heavy tail); the runs write the blocks and the
/// steal share compare judges with, and the extremes are never judged
/// sample against sample.
#[test]
fn a_real_run_against_its_twin_passes_the_gate() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let measure = |name: &str| {
        let path = dir.path().join(name);
        // The duration is the point: 3 s of 200 us cycles, 15 000
        // samples, enough for p99.9 to be judged.
        let mut cmd = rtlat_cyclictest([
            "-q",
            "-m",
            "-p",
            "80",
            "-i",
            "200",
            "-D",
            "3",
            "-a",
            &lease.list(),
            "-t",
            "1",
        ]);
        cmd.arg(format!("--json={}", path.display()));
        run_with_timeout(&mut cmd, Duration::from_secs(30)).expect_code(0);
        path
    };
    let (a, b) = (measure("a.json"), measure("b.json"));
    let r = run(&mut compare([
        a.as_os_str(),
        b.as_os_str(),
        "--fail-on-regression".as_ref(),
    ]));
    // The gate passes: twins differ by their host's drift and stalls,
    // which the intervals, the floor's test and the host-stall rule take
    // in (BENCHMARKS.md, "compare: A/A false alarms and A/B detections").
    r.expect_code(0);
    let first = r.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("No change beyond noise") || first.starts_with("Better: "),
        "{}",
        r.describe()
    );
    let max = r.stdout.lines().rfind(|l| l.starts_with("  max    "));
    assert!(
        matches!(
            max,
            Some(
                "  max    information only"
                    | "  max    within noise"
                    | "  max    not judged; host stalls: thread 0, all threads"
            )
        ),
        "{}",
        r.describe()
    );
    // 3 s are 30 windows of 100 ms: too few for a floor, and said so.
    assert!(
        r.stdout
            .contains("floor: not judged (30 windows of 0.1 s, and a floor needs 50)"),
        "{}",
        r.describe()
    );
    // The runs' blocks give compare the dispersion of their late samples,
    // and their verdicts the share of time the host took.
    for path in [&a, &b] {
        let doc = read_json(path);
        let threads = doc["thread"].as_object().expect("threads");
        assert!(threads.values().all(|t| t.get("blocks").is_some()), "{doc}");
        let share = doc["verdict"]["steal_share"].as_f64();
        assert!(share.is_some_and(|s| (0.0..=1.0).contains(&s)), "{doc}");
    }
}

#[test]
fn bad_input_is_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = testdata().join("base.json");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let text = write("run.txt", "T: 0 ( 1000) P: 0 I:1000 C:   1000 Min: 1\n");
    let c_json = write(
        "c.json",
        "{\n  \"file_version\": 1,\n  \"rt_test_version:\": \"2.40\",\n  \"thread\": {}\n}\n",
    );
    let ipc_json = {
        let mut cmd = rtlat();
        let path = dir.path().join("ipc.json");
        cmd.args([
            "svsematest",
            "--synthetic",
            "1",
            "-q",
            "-l",
            "50",
            "-t",
            "1",
            "--json",
        ])
        .arg(&path);
        run(&mut cmd).expect_code(0);
        path
    };
    let missing = dir.path().join("missing.json");
    let cases: Vec<(Vec<&std::ffi::OsStr>, String)> = vec![
        (
            vec![missing.as_os_str(), good.as_os_str()],
            format!(
                "{}: cannot read: No such file or directory",
                missing.display()
            ),
        ),
        (
            vec![good.as_os_str(), text.as_os_str()],
            format!(
                "{}: not valid JSON (expected value at line 1 column 1)",
                text.display()
            ),
        ),
        (
            vec![c_json.as_os_str(), good.as_os_str()],
            format!(
                "{}: written by the C rt-tests tools (no \"rtlat_version\"), and no threads in \
                 the \"thread\" object",
                c_json.display()
            ),
        ),
        (
            vec![good.as_os_str(), "a".as_ref(), "b".as_ref()],
            "unexpected argument 'b': compare takes two files".into(),
        ),
        (
            vec![good.as_os_str()],
            "expected two files, BASE and NEW".into(),
        ),
        (
            vec![
                "--noise".as_ref(),
                "x".as_ref(),
                good.as_os_str(),
                good.as_os_str(),
            ],
            "--noise: invalid value 'x'".into(),
        ),
    ];
    // The IPC tools' JSON: refused for want of percentiles until they
    // write them, compared once they do.
    let ipc = run(&mut compare([&ipc_json, &ipc_json]));
    if ipc.code() == Some(2) {
        assert!(
            ipc.stderr.starts_with(&format!(
                "rtlat compare: {}: thread 0: no \"percentiles\"",
                ipc_json.display()
            )),
            "{}",
            ipc.describe()
        );
    } else {
        ipc.expect_code(0);
    }
    for (args, expected) in cases {
        let r = run(&mut compare(&args));
        r.expect_code(2);
        assert_eq!(r.stdout, "", "{args:?}");
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{}", r.describe());
        let expected = format!("rtlat compare: {expected}");
        assert!(
            lines[0].starts_with(&expected),
            "{args:?}\n got {}\nwant {expected}",
            lines[0]
        );
    }
}

/// The C cyclictest's own JSON: refused by name without a histogram;
/// with `-h`, compared from its buckets and said to be known to the whole
/// µs (in the text and the JSON).
#[test]
fn c_cyclictest_json_needs_a_histogram() {
    require_root!();
    require_c_cyclictest!();
    let dir = tempfile::tempdir().unwrap();
    let c_json = |name: &str, h: &[&str]| {
        let path = dir.path().join(name);
        let mut cmd = cyclictest_c();
        cmd.args(["-q", "-l", "300", "-i", "200", "-t", "1"])
            .args(h)
            .arg(format!("--json={}", path.display()));
        run_with_timeout(&mut cmd, Duration::from_secs(10)).expect_code(0);
        path
    };
    let plain = c_json("c.json", &[]);
    let r = run(&mut compare([&plain, &testdata().join("base.json")]));
    r.expect_code(2);
    assert_eq!(
        r.stderr,
        format!(
            "rtlat compare: {}: written by the C rt-tests tools (no \"rtlat_version\") without \
             a histogram (thread 0 has none): it has no percentiles; run cyclictest with -h US \
             (e.g. -h 1000); compare takes the JSON files of 'rtlat cyclictest --json'\n",
            plain.display()
        )
    );

    let hist = c_json("h.json", &["-h", "20000"]);
    let base = testdata().join("base.json");
    let out = dir.path().join("cmp.json");
    let r = run(compare([&hist, &base]).arg("--json").arg(&out));
    r.expect_code(0);
    // Each file's line, wrapped to 80 columns (its continuation lines
    // indented), put back together.
    let lines: Vec<&str> = r.stdout.lines().collect();
    let entry = |tag: &str| -> String {
        let at = lines.iter().position(|l| l.starts_with(tag)).expect(tag);
        let rest = lines[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("      "));
        std::iter::once(lines[at])
            .chain(rest.copied())
            .flat_map(str::split_whitespace)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        entry("BASE "),
        format!(
            "BASE {}: 1 thread, 300 samples (rt-tests cyclictest: percentiles from its -h \
             histogram, to the whole us)",
            hist.display()
        ),
        "{}",
        r.describe()
    );
    assert!(lines[1].chars().count() <= 80, "{}", r.describe());
    assert!(entry("NEW ").ends_with(" samples"), "{}", r.describe());
    let doc = read_json(&out);
    assert_eq!(
        doc["base"]["resolution"],
        "rt-tests cyclictest: percentiles from its -h histogram, to the whole us"
    );
    assert!(doc["new"].get("resolution").is_none(), "{doc}");
    // Its figures are whole µs.
    let c: Value = read_json(&hist);
    let p50 = &doc["subjects"][0]["rows"][1];
    assert_eq!(p50["row"], "p50");
    let base_us = p50["base_us"].as_f64().unwrap();
    assert_eq!(base_us.fract(), 0.0, "{p50}");
    assert!(
        base_us >= c["thread"]["0"]["min"].as_f64().unwrap(),
        "{p50}"
    );
}

#[test]
fn help_and_top_level_listing() {
    let r = run(&mut compare(["--help"]));
    r.expect_code(0);
    assert!(
        r.stdout
            .starts_with("rtlat compare: compare two runs' latencies\n")
    );
    assert!(
        r.stdout
            .contains("|NEW - BASE| > max(NOISE % of BASE, 2 buckets)")
    );
    let top = run(rtlat().arg("--help"));
    assert!(
        top.stdout
            .contains("\n  compare      compare two runs' latencies")
    );
}
