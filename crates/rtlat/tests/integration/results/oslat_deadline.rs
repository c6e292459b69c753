//! oslat's and cyclicdeadline's results beyond C's: `--hgrm` (read as
//! HdrHistogram's percentile text, its total count and maximum against
//! the JSON), oslat's `--verdict`, and `rtlat plot` of their JSON and of
//! the C tools' (the drawn buckets read back from the SVG, against the
//! JSON). Root: real runs, oslat on one leased CPU (2 s each: a 1 s
//! pre-heat, then 1 s), cyclicdeadline on the whole machine (1 s each).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::plot::{read_svg, us_label};
use super::verdict::short_verdict;
use crate::support::cpus::CpuLease;
use crate::support::{Run, read_json, rtlat_tool, run_with_timeout};

const C_OSLAT: &str = "/usr/bin/oslat";
const C_CYCLICDEADLINE: &str = "/usr/bin/cyclicdeadline";
/// The safety net of a run of a second or two.
const NET: Duration = Duration::from_secs(15);

/// Returns from the test, saying so, without the C program `$path`.
macro_rules! require_c {
    ($path:expr) => {
        if !Path::new($path).is_file() {
            skip_note!("SKIPPED (needs {}): {}", $path, function_name!());
            return;
        }
    };
}

/// What an `.hgrm` file says, read strictly as HdrHistogram's
/// `outputPercentileDistribution` writes it: the column header, a blank
/// line, rows of value, percentile, total count and 1/(1-percentile)
/// (none on the 100 % row), all rising, then the `#[...]` footer.
struct Hgrm {
    /// The footer's `Max`, as written (µs, 3 decimals).
    max: String,
    /// The footer's `Total count`.
    total: u64,
}

fn read_hgrm(path: &Path) -> Hgrm {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"],
        "{text}"
    );
    assert_eq!(lines.next(), Some(""), "{text}");
    let mut rows: Vec<(f64, f64, u64)> = Vec::new();
    let mut footer = BTreeMap::new();
    for line in lines {
        if let Some(inside) = line.strip_prefix("#[") {
            let inside = inside.strip_suffix(']').expect(line);
            for pair in inside.split(", ") {
                let (key, value) = pair.split_once('=').expect(line);
                footer.insert(key.trim().to_owned(), value.trim().to_owned());
            }
            continue;
        }
        assert!(footer.is_empty(), "a row after the footer: {line:?}");
        let f: Vec<&str> = line.split_whitespace().collect();
        let number = |i: usize| -> f64 { f[i].parse().expect(line) };
        let (value, percentile) = (number(0), number(1));
        let count: u64 = f[2].parse().expect(line);
        match f.len() {
            4 => {
                let inverse = number(3);
                let want = 1.0 / (1.0 - percentile);
                assert!((inverse - want).abs() <= 0.01 * want, "{line:?}");
            }
            3 => assert_eq!(
                percentile, 1.0,
                "only the 100 % row has 3 columns: {line:?}"
            ),
            _ => panic!("not a row: {line:?}"),
        }
        rows.push((value, percentile, count));
    }
    assert!(rows.len() >= 2, "{text}");
    assert_eq!(rows[0].1, 0.0, "{text}");
    for w in rows.windows(2) {
        assert!(
            w[0].0 <= w[1].0 && w[0].1 <= w[1].1 && w[0].2 <= w[1].2,
            "{w:?}"
        );
    }
    let keys: Vec<&str> = footer.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "Buckets",
            "Max",
            "Mean",
            "StdDeviation",
            "SubBuckets",
            "Total count"
        ],
        "{text}"
    );
    for key in ["Mean", "StdDeviation", "Max"] {
        let v: f64 = footer[key].parse().expect(key);
        assert!(v.is_finite() && v >= 0.0, "{key}: {text}");
    }
    let total: u64 = footer["Total count"].parse().unwrap();
    let last = rows.last().unwrap();
    assert_eq!((last.1, last.2), (1.0, total), "{text}");
    Hgrm {
        max: footer["Max"].clone(),
        total,
    }
}

/// The JSON's exact maximum as the `.hgrm` footer writes it.
fn max_text(max_ns: i64) -> String {
    format!("{:.3}", max_ns as f64 / 1000.0)
}

/// What a latency plot draws for its one thread, read back from the SVG
/// through its axes' labels: each horizontal step (µs from, µs to, samples,
/// the samples of a log axis read back from whole pixels) and its legend.
struct Drawn {
    steps: Vec<(f64, f64, f64)>,
    texts: Vec<String>,
}

fn read_plot(path: &Path) -> Drawn {
    let svg = read_svg(path);
    assert_eq!(svg.series.len(), 1, "one thread, one line: {:?}", svg.texts);
    // The count axis (labels right-aligned beside it, log scale) and the
    // latency axis (labels centred below it, linear).
    let mut counts = Vec::new();
    let mut latencies = Vec::new();
    for (text, (x, y, anchor)) in svg.texts.iter().zip(&svg.places) {
        match (text.parse::<f64>(), anchor.as_str()) {
            (Ok(v), "end") => counts.push((v, *y)),
            (Ok(v), "middle") => latencies.push((v, *x)),
            _ => {}
        }
    }
    let (c0, c1) = (counts[0], counts[counts.len() - 1]);
    let (l0, l1) = (latencies[0], latencies[latencies.len() - 1]);
    let count_at = |y: f64| {
        let decades = (c0.1 - y) / (c0.1 - c1.1) * (c1.0.log10() - c0.0.log10());
        10f64.powf(c0.0.log10() + decades)
    };
    let us_at = |x: f64| l0.0 + (x - l0.1) / (l1.1 - l0.1) * (l1.0 - l0.0);
    let line = &svg.series[0];
    // The line starts on the floor (below 1 sample); a step on it is none.
    let floor = line[0].1;
    let steps = line
        .windows(2)
        .filter(|w| w[0].1 == w[1].1 && w[0].1 != floor && w[0].0 < w[1].0)
        .map(|w| (us_at(w[0].0), us_at(w[1].0), count_at(w[0].1)))
        .collect();
    Drawn {
        steps,
        texts: svg.texts,
    }
}

impl Drawn {
    /// Checks the steps are `width` µs buckets from 0 (several of one
    /// height drawn as one) and returns the samples they stand for.
    fn samples_in_buckets_of(&self, width: f64) -> f64 {
        let first = self.steps.first().expect("a step");
        assert!(
            first.0.abs() < 0.1 * width,
            "the first bucket starts at 0: {first:?}"
        );
        let mut samples = 0.0;
        for &(from, to, count) in &self.steps {
            let buckets = (to - from) / width;
            assert!(
                (buckets - buckets.round()).abs() < 0.1 && buckets.round() >= 1.0,
                "a step of {from}..{to} us is not {width} us buckets"
            );
            samples += count * buckets.round();
        }
        samples
    }

    /// The count drawn over each whole µs, steps being 1 µs buckets
    /// (several of one height drawn as one).
    fn counts_per_us(&self) -> BTreeMap<u64, f64> {
        let mut counts = BTreeMap::new();
        for &(from, to, count) in &self.steps {
            let (first, end) = (from.round(), to.round());
            assert!(
                (from - first).abs() < 0.25 && (to - end).abs() < 0.25 && end > first,
                "a step of {from}..{to} µs is not whole µs"
            );
            for us in first as u64..end as u64 {
                counts.insert(us, count);
            }
        }
        counts
    }

    fn legend(&self, want: &str) {
        assert!(
            self.texts.iter().any(|t| t == want),
            "no {want:?} in {:?}",
            self.texts
        );
    }
}

/// `within` of `want` (a fraction): the counts of a log axis read back
/// from whole pixels.
fn close(got: f64, want: f64, within: f64) -> bool {
    (got - want).abs() <= within * want
}

/// An oslat document's one thread: its `"histogram"` as (label, count),
/// and what the plot should draw of it: the samples in its buckets and
/// its overflows (the last bucket's, when the maximum is beyond it).
fn oslat_histogram(t: &Value, max_beyond: impl Fn(f64) -> bool) -> (f64, u64) {
    let labels: Vec<(f64, u64)> = t["histogram"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
        .collect();
    let total: u64 = labels.iter().map(|l| l.1).sum();
    let &(last, in_last) = labels.iter().max_by(|a, b| a.0.total_cmp(&b.0)).unwrap();
    let overflows = if max_beyond(last) { in_last } else { 0 };
    ((total - overflows) as f64, overflows)
}

/// A thread's `"distribution"` of 1 µs buckets below `xmax` µs, as
/// (µs, count), and the samples from `xmax` up.
fn distribution_below(t: &Value, xmax: u64) -> (BTreeMap<u64, u64>, u64) {
    let mut below = BTreeMap::new();
    let mut beyond = 0;
    for b in t["distribution"]["buckets"].as_array().unwrap() {
        let (from, to, count) = (
            b[0].as_f64().unwrap(),
            b[1].as_f64().unwrap(),
            b[2].as_u64().unwrap(),
        );
        if from >= xmax as f64 {
            beyond += count;
        } else {
            assert!(
                from >= 0.0 && from.fract() == 0.0 && to == from + 1.0,
                "whole 1 µs buckets below {xmax} µs: {b}"
            );
            below.insert(from as u64, count);
        }
    }
    (below, beyond)
}

fn overflow_words(n: u64) -> String {
    match n {
        0 => String::new(),
        1 => ", 1 overflow".to_owned(),
        n => format!(", {n} overflows"),
    }
}

/// `rtlat TOOL ARGS` of one thread with `--json`, `--hgrm` and
/// `--hgrm-per-thread` into `dir` (`ours.json`, `ours.hgrm`,
/// `ours.0.hgrm`): its run and JSON, each `.hgrm` checked against the
/// JSON (its total count the thread's samples, its maximum the exact one).
fn run_with_hgrm(dir: &Path, tool: &str, args: &[&str]) -> (Run, Value) {
    let at = |name: &str| dir.join(name);
    let mut cmd = rtlat_tool(tool, args);
    cmd.arg(format!("--json={}", at("ours.json").display()))
        .arg(format!("--hgrm={}", at("ours.hgrm").display()))
        .arg("--hgrm-per-thread");
    let r = run_with_timeout(&mut cmd, NET);
    r.expect_code(0);
    let doc = read_json(&at("ours.json"));
    let t = &doc["thread"]["0"];
    let (cycles, max_ns) = (t["cycles"].as_u64().unwrap(), t["max_ns"].as_i64().unwrap());
    for file in ["ours.hgrm", "ours.0.hgrm"] {
        let h = read_hgrm(&at(file));
        assert_eq!((h.total, h.max), (cycles, max_text(max_ns)), "{file}");
    }
    (r, doc)
}

/// The C `program` with `args` and `--json=JSON`, which must succeed.
fn run_c(program: &str, args: &[&str], json: &Path) {
    let mut cmd = Command::new(program);
    cmd.args(args).arg(format!("--json={}", json.display()));
    run_with_timeout(&mut cmd, NET).expect_code(0);
}

fn plot(json: &Path, svg: &Path) -> Run {
    run_with_timeout(
        &mut rtlat_tool("plot", [json.as_os_str(), "-o".as_ref(), svg.as_os_str()]),
        NET,
    )
}

#[test]
fn oslat_hgrm_verdict_and_plots_of_ours_and_cs() {
    require_root!();
    require_c!(C_OSLAT);
    let lease = CpuLease::one();
    let cpu = lease.list();
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    // rt-tests 2.5's -W 2000 and -b 8: 2 µs buckets, the last from 14 µs.
    let args = [
        "-c",
        &cpu,
        "-D",
        "1",
        "-q",
        "-W",
        "2000",
        "-b",
        "8",
        "--verdict",
    ];
    let (r, doc) = run_with_hgrm(dir.path(), "oslat", &args);
    let t = &doc["thread"]["0"];
    let max_ns = t["max_ns"].as_i64().unwrap();
    // The verdict's lines, and the JSON's verdict says the same.
    short_verdict(&r.stdout, &doc["verdict"]);

    // Ours drawn: 2 µs buckets from 0, the last one's samples overflows
    // when the exact maximum reaches its top.
    let max_us = max_ns as f64 / 1000.0;
    check_oslat_plot(dir.path(), "ours", &cpu, 2.0, max_us, |top| max_us >= top);

    // C's (2.4: 1 µs buckets, its maximum the label of its bucket).
    run_c(C_OSLAT, &["-c", &cpu, "-D", "1", "-q"], &at("c.json"));
    let max = read_json(&at("c.json"))["thread"]["0"]["max"]
        .as_f64()
        .unwrap();
    check_oslat_plot(dir.path(), "c", &cpu, 1.0, max, |top| max > top);
}

/// Plots `dir/NAME.json`, an oslat result of one thread on `cpu`, and
/// checks the picture: `width` µs buckets from 0 with the histogram's
/// samples but the overflows (the last bucket's, when `beyond` its top
/// label), the maximum `max_us` and the overflows in the legend.
fn check_oslat_plot(
    dir: &Path,
    name: &str,
    cpu: &str,
    width: f64,
    max_us: f64,
    beyond: impl Fn(f64) -> bool,
) {
    let (json, svg) = (
        dir.join(format!("{name}.json")),
        dir.join(format!("{name}.svg")),
    );
    plot(&json, &svg).expect_code(0);
    let drawn = read_plot(&svg);
    let (in_buckets, overflows) = oslat_histogram(&read_json(&json)["thread"]["0"], beyond);
    assert!(
        close(drawn.samples_in_buckets_of(width), in_buckets, 0.05),
        "{name}: {:?} against {in_buckets}",
        drawn.steps
    );
    drawn.legend(&format!(
        "CPU {cpu} (max {} µs{})",
        us_label(max_us),
        overflow_words(overflows)
    ));
}

#[test]
fn cyclicdeadline_hgrm_and_plots_of_ours_and_cs() {
    require_root!();
    require_c!(C_CYCLICDEADLINE);
    let _lease = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let args = ["-i", "10000", "-D", "1", "-q"];
    let (r, doc) = run_with_hgrm(dir.path(), "cyclicdeadline", &args);
    assert!(!r.stdout.contains("# Verdict"), "{}", r.stdout);
    let t = &doc["thread"]["0"];
    let (cycles, max_ns) = (t["cycles"].as_u64().unwrap(), t["max_ns"].as_i64().unwrap());

    // Ours drawn from its distribution, the axis cut at 400 µs so that
    // every 1 µs bucket is wider than the plot's two-pixel columns (a
    // wider axis draws each column at the largest count among its
    // buckets, which no reading of the picture can add up), on a picture
    // 4000 pixels wide so that a µs is 8 of them (SVG coordinates are
    // whole pixels): each µs's count read back from the steps (several
    // of one height drawn as one), the samples from 400 µs up counted in
    // the legend.
    const XMAX: u64 = 400;
    let svg = at("ours.svg");
    let xmax = XMAX.to_string();
    let mut cmd = rtlat_tool("plot", [at("ours.json").as_os_str(), "-o".as_ref()]);
    cmd.arg(&svg).args(["--xmax", &xmax, "--size", "4000x600"]);
    run_with_timeout(&mut cmd, NET).expect_code(0);
    let drawn = read_plot(&svg);
    assert_eq!(t["distribution"]["unit"], "us");
    let (want, beyond) = distribution_below(t, XMAX);
    let got = drawn.counts_per_us();
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "the drawn µs against the distribution's: {:?}",
        drawn.steps
    );
    for (us, &count) in &want {
        assert!(
            close(got[us], count as f64, 0.05),
            "{us} µs: drawn {} against {count}: {:?}",
            got[us],
            drawn.steps
        );
    }
    assert_eq!(
        want.values().sum::<u64>() + beyond,
        cycles,
        "the distribution holds every sample"
    );
    let beyond = match beyond {
        0 => String::new(),
        n => format!(", {n} beyond xmax"),
    };
    let max_us = max_ns as f64 / 1000.0;
    drawn.legend(&format!("thread 0 (max {} µs{beyond})", us_label(max_us)));

    // C's 2.4 JSON has no histogram: one line says so, no picture.
    run_c(
        C_CYCLICDEADLINE,
        &["-i", "10000", "-D", "1", "-q"],
        &at("c.json"),
    );
    let refused = plot(&at("c.json"), &at("c.svg"));
    refused.expect_code(2);
    assert_eq!(refused.stderr.lines().count(), 1, "{}", refused.describe());
    assert!(
        refused
            .stderr
            .contains("no histogram data: rt-tests cyclicdeadline's"),
        "{}",
        refused.describe()
    );
    assert!(!at("c.svg").exists());
}
