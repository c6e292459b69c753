//! `rtlat plot --kind timeline`: a real short run's `--stats-file` drawn as
//! SVG (a maximum and a p99 step line per thread, each thread's largest
//! maximum in the legend, times of day on the axis) and PNG; a monitor
//! checkpoint's `"timeline"` (`testdata/checkpoint.json`, two days of
//! hourly intervals, one without samples) with dates on the axis, and a
//! real two-second monitor's (root); a stats
//! file cut short while written; bad input (exit 2, one stderr line naming
//! the file and the line, no picture). Times are shown in UTC (`TZ=UTC`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::plot::{Svg, bad, check_png, plot, read_svg, us_label};
use crate::support::cpus::CpuLease;
use crate::support::{rtlat_cyclictest, run, run_with_timeout};

/// The checkpoint-shaped fixture.
fn checkpoint() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/results/testdata/checkpoint.json")
}

/// `rtlat plot -k timeline ARGS` with times in UTC; exit 0, nothing on
/// stdout; returns stderr.
fn timeline_ok(dir: &Path, args: &[&str]) -> String {
    let mut cmd = plot(["-k", "timeline"]);
    cmd.args(args).current_dir(dir).env("TZ", "UTC");
    let r = run_with_timeout(&mut cmd, Duration::from_secs(30));
    r.expect_code(0);
    assert_eq!(r.stdout, "", "{}", r.describe());
    r.stderr
}

/// The lines of a stats file, parsed.
fn stats_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The series of `svg` drawn in `stroke`.
fn drawn_in<'a>(svg: &'a Svg, stroke: &str) -> Vec<&'a Vec<(f64, f64)>> {
    svg.series
        .iter()
        .zip(&svg.strokes)
        .filter(|(_, s)| s.eq_ignore_ascii_case(stroke))
        .map(|(points, _)| points)
        .collect()
}

/// The points of every polyline of `svg` drawn in `stroke`, however few
/// (`Svg::series` keeps those of 4 points or more).
fn polylines_in(svg: &str, stroke: &str) -> Vec<Vec<(f64, f64)>> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| {
            n.has_tag_name("polyline")
                && n.attribute("stroke")
                    .is_some_and(|s| s.eq_ignore_ascii_case(stroke))
        })
        .map(|n| {
            n.attribute("points")
                .unwrap_or_default()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect::<Vec<(f64, f64)>>()
        })
        .filter(|points| !points.is_empty())
        .collect()
}

/// The first two palette colours and their faint versions (p99).
const MAX_0: &str = "#1F77B4";
const P99_0: &str = "#8FBBD9";
const MAX_1: &str = "#D62728";
const P99_1: &str = "#EA9393";

#[test]
fn a_real_runs_stats_file_has_a_max_and_a_p99_line_per_thread() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stats = d.join("stats.jsonl");
    // Policy other: no privilege needed; 1 s in intervals of 0.1 s.
    let mut cmd = rtlat_cyclictest(["-q", "-t", "2", "-i", "1000", "-D", "1"]);
    cmd.args(["--stats-interval", "0.1", "--stats-file"])
        .arg(&stats);
    run_with_timeout(&mut cmd, Duration::from_secs(10)).expect_code(0);
    let lines = stats_lines(&stats);
    assert!(lines.len() >= 18, "{lines:#?}");

    assert_eq!(timeline_ok(d, &["stats.jsonl", "-o", "t.svg"]), "");
    let svg = read_svg(&d.join("t.svg"));
    // One max and one p99 polyline per thread, a step over each line's
    // interval: two points a line (no interval without samples here).
    for (thread, (max, p99)) in [(MAX_0, P99_0), (MAX_1, P99_1)].into_iter().enumerate() {
        let mine: Vec<&Value> = lines.iter().filter(|l| l["thread"] == thread).collect();
        let (maxes, p99s) = (drawn_in(&svg, max), drawn_in(&svg, p99));
        assert_eq!(
            (maxes.len(), p99s.len()),
            (1, 1),
            "thread {thread}: {svg:#?}"
        );
        assert_eq!(maxes[0].len(), 2 * mine.len(), "thread {thread}");
        assert_eq!(p99s[0].len(), 2 * mine.len(), "thread {thread}");
        // Time runs left to right; the p99 is never above the max (SVG's
        // y grows downwards).
        for pair in maxes[0].windows(2) {
            assert!(pair[0].0 <= pair[1].0, "{pair:?}");
        }
        for (m, p) in maxes[0].iter().zip(p99s[0].iter()) {
            assert_eq!(m.0, p.0);
            assert!(p.1 >= m.1, "p99 {p:?} above max {m:?}");
        }
        let largest = mine
            .iter()
            .map(|l| l["max"].as_f64().unwrap())
            .fold(f64::MIN, f64::max);
        let legend = format!(
            "thread {thread} max (largest {} µs, interval ending ",
            us_label(largest)
        );
        assert!(svg.has_text(&legend), "{legend:?} in {:#?}", svg.texts);
        assert!(
            svg.has_text(&format!("thread {thread} p99")),
            "{:#?}",
            svg.texts
        );
    }
    assert!(
        svg.has_text("Latency over time: stats.jsonl"),
        "{:#?}",
        svg.texts
    );
    assert!(
        svg.has_text("maximum and p99 of each 0.1 s interval"),
        "{:#?}",
        svg.texts
    );
    // The axis: the run's date and times of day in UTC.
    let first = lines[0]["time"].as_f64().unwrap();
    let date = run(std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d", "-d"])
        .arg(format!("@{}", first as i64)))
    .stdout;
    assert!(
        svg.has_text(&format!("Time (UTC), {}", date.trim())),
        "{date:?} in {:#?}",
        svg.texts
    );
    let overall = lines
        .iter()
        .filter_map(|l| l["max"].as_f64())
        .fold(f64::MIN, f64::max);
    assert!(
        svg.has_text(&format!("Latency (µs), maximum {} µs", us_label(overall))),
        "{:#?}",
        svg.texts
    );
    // Times of day (hh:mm:ss, tenths on a span this short).
    let clock_ticks = svg
        .texts
        .iter()
        .filter(|t| t.len() >= 8 && t.as_bytes()[2] == b':' && t.as_bytes()[5] == b':')
        .count();
    assert!(clock_ticks >= 1, "{:#?}", svg.texts);

    // PNG, from standard input.
    let mut cmd = plot(["-k", "timeline", "-", "-o", "t.png", "-s", "800x500"]);
    cmd.current_dir(d)
        .stdin(std::fs::File::open(&stats).unwrap());
    let r = run_with_timeout(&mut cmd, Duration::from_secs(30));
    r.expect_code(0);
    check_png(&d.join("t.png"), (800, 500));
}

#[test]
fn a_checkpoints_timeline_plots_with_dates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fixture = checkpoint();
    assert_eq!(
        timeline_ok(d, &[fixture.to_str().unwrap(), "-o", "c.svg"]),
        ""
    );
    let svg = read_svg(&d.join("c.svg"));
    // Thread 1 took no sample in one interval: its lines have a gap there.
    assert_eq!(drawn_in(&svg, MAX_0).len(), 1, "{svg:#?}");
    assert_eq!(drawn_in(&svg, P99_0).len(), 1, "{svg:#?}");
    assert_eq!(drawn_in(&svg, MAX_1).len(), 2, "{svg:#?}");
    assert_eq!(drawn_in(&svg, P99_1).len(), 2, "{svg:#?}");
    assert_eq!(drawn_in(&svg, MAX_0)[0].len(), 2 * 48);
    assert_eq!(
        drawn_in(&svg, MAX_1).iter().map(|s| s.len()).sum::<usize>(),
        2 * 47
    );
    for needle in [
        // From the first interval's start.
        "Time (UTC), 2026-11-24 06:00:00 to 2026-11-26 06:00:00",
        "Latency (µs), maximum 412.5 µs",
        "thread 0 max (largest 412.5 µs, interval ending 2026-11-25 13:00:00)",
        "thread 1 p99",
        "maximum and p99 of each 1 h interval: 48 intervals, 2 threads",
        // Dates beside the times of day over two days.
        "11-25 00:00",
    ] {
        assert!(svg.has_text(needle), "{needle:?} in {:#?}", svg.texts);
    }
}

#[test]
fn a_real_monitor_checkpoint_plots() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Two seconds: one (partial) minute of the timeline per thread; both
    // threads on the leased CPU.
    let cpu = lease.list();
    let mut cmd = crate::support::rtlat_tool(
        "monitor",
        [
            "-D",
            "2",
            "-a",
            &cpu,
            "-t",
            "2",
            "--textfile=m.prom",
            "--checkpoint=m.json",
        ],
    );
    cmd.current_dir(d);
    run_with_timeout(&mut cmd, Duration::from_secs(15)).expect_code(0);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("m.json")).unwrap()).unwrap();
    let entries = doc["timeline"].as_array().unwrap();
    assert!(!entries.is_empty(), "{doc}");
    assert_eq!(timeline_ok(d, &["m.json", "-o", "m.svg"]), "");
    let svg = read_svg(&d.join("m.svg"));
    // Two seconds of 5-minute intervals: each thread's one, partial,
    // interval is a line over the run (it was a dot at its end).
    let text = std::fs::read_to_string(d.join("m.svg")).unwrap();
    assert!(!text.contains("<circle"), "a dot drawn: {text}");
    for (thread, stroke) in [MAX_0, MAX_1].into_iter().enumerate() {
        let lines = polylines_in(&text, stroke);
        assert_eq!(lines.len(), 1, "thread {thread}: {text}");
        let [from, to] = lines[0][..] else {
            panic!("thread {thread}: {:?}", lines[0]);
        };
        assert!(to.0 - from.0 > 300.0 && from.1 == to.1, "{from:?} {to:?}");
    }
    assert!(
        svg.has_text("of each interval: 1 interval, 2 threads"),
        "{:#?}",
        svg.texts
    );
    for thread in 0..2 {
        let largest = entries
            .iter()
            .filter(|e| e["thread"] == thread)
            .filter_map(|e| e["max"].as_f64())
            .fold(f64::MIN, f64::max);
        let legend = format!(
            "thread {thread} max (largest {} µs, interval ending ",
            us_label(largest)
        );
        assert!(svg.has_text(&legend), "{legend:?} in {:#?}", svg.texts);
    }
}

#[test]
fn a_stats_file_being_written_is_drawn_up_to_its_last_whole_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = std::fs::read_to_string(checkpoint()).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let items = doc["timeline"].as_array().unwrap();
    let mut stream: String = items[..10].iter().map(|l| format!("{l}\n")).collect();
    stream.push_str(&items[10].to_string()[..40]);
    std::fs::write(d.join("growing.jsonl"), stream).unwrap();
    let stderr = timeline_ok(d, &["growing.jsonl", "-o", "g.svg"]);
    assert_eq!(
        stderr,
        "rtlat plot: growing.jsonl: line 11 is cut short (the file is being written?): \
         not drawn\n"
    );
    let svg = read_svg(&d.join("g.svg"));
    assert_eq!(drawn_in(&svg, MAX_0)[0].len(), 2 * 5);
    assert!(
        svg.has_text("1 last line cut short not drawn"),
        "{:#?}",
        svg.texts
    );
}

#[test]
fn bad_input_is_one_line_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = r#"{"time":1795503600.0,"elapsed":0.1,"thread":0,"interval":0,"cycles":100,"min":1.5,"avg":3.25,"max":9.0,"p99":8.0,"overruns":0}"#;
    let write = |name: &str, text: String| std::fs::write(d.join(name), text).unwrap();
    write("text.jsonl", format!("{good}\nT: 0 ( 123) P:99\n{good}\n"));
    write(
        "no-max.jsonl",
        format!("{good}\n{good}\n{}\n", good.replace(r#""max":9.0,"#, "")),
    );
    write("empty.jsonl", String::new());
    write("blank.jsonl", "\n \n".to_string());
    write("run.json", "{\n  \"thread\": {}\n}\n".to_string());
    write("empty-timeline.json", "{\"timeline\": []}\n".to_string());
    write("cut-only.jsonl", good[..30].to_string());
    write("good.jsonl", format!("{good}\n"));
    write("old.svg", "the previous picture".to_string());
    for (args, needle) in [
        (
            vec!["text.jsonl"],
            "rtlat plot: text.jsonl: line 2, column 1: not JSON (expected value)",
        ),
        (
            vec!["no-max.jsonl"],
            "rtlat plot: no-max.jsonl: line 3, column ",
        ),
        (
            vec!["no-max.jsonl"],
            "not a --stats-file line (missing field `max`)",
        ),
        (
            vec!["empty.jsonl"],
            "rtlat plot: empty.jsonl: empty: no lines; expected cyclictest --stats-file \
             lines or a JSON document with a \"timeline\" array",
        ),
        (vec!["blank.jsonl"], "blank.jsonl: empty: no lines"),
        (
            vec!["run.json"],
            "run.json: a JSON document without a \"timeline\" array",
        ),
        (
            vec!["empty-timeline.json"],
            "empty-timeline.json: its \"timeline\" array is empty",
        ),
        (
            vec!["cut-only.jsonl"],
            "cut-only.jsonl: no whole line: line 1 is cut short",
        ),
        (
            vec!["missing.jsonl"],
            "missing.jsonl: cannot read: No such file",
        ),
        // A good input does not rescue a bad one.
        (vec!["good.jsonl", "text.jsonl"], "text.jsonl: line 2"),
    ] {
        let mut all = vec!["-k", "timeline"];
        all.extend(args.iter().copied());
        all.extend(["-o", "old.svg"]);
        let r = bad(d, &all);
        assert!(
            r.stderr.contains(needle),
            "{args:?}: {needle:?}\n{}",
            r.describe()
        );
    }
    assert_eq!(
        std::fs::read(d.join("old.svg")).unwrap(),
        b"the previous picture"
    );
}

#[test]
fn help_lists_the_timeline() {
    let r = run(&mut plot(["--help"]));
    r.expect_code(0);
    for needle in [
        "latency, percentile or timeline",
        "  timeline    ",
        "--stats-file",
    ] {
        assert!(r.stdout.contains(needle), "{needle:?} in\n{}", r.stdout);
    }
}
