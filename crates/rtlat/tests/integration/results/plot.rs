//! `rtlat plot`: SVG output parsed as XML (one step line per thread or
//! curve per input, the axis labels with the maximum, the legend), PNG
//! output decoded (size as asked, not blank, the series colours drawn),
//! inputs from rtlat's JSON, from the C tool's JSON and `-h` text (root:
//! a real `/usr/bin/cyclictest` run), and bad input: exit 2, one stderr
//! line naming the file, no picture left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{
    Run, cyclictest_c, listing, parse_histogram, read_json, rtlat, rtlat_tool, run,
    run_with_timeout, synthetic,
};

/// `rtlat plot ARGS...`.
pub(super) fn plot(args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>) -> Command {
    rtlat_tool("plot", args)
}

/// Runs `rtlat plot ARGS` and expects exit 0 with nothing on stdout or
/// stderr.
fn plot_ok(args: &[&Path]) {
    let r = run_with_timeout(&mut plot(args), Duration::from_secs(30));
    r.expect_code(0);
    assert_eq!(r.stdout, "", "{}", r.describe());
    assert_eq!(r.stderr, "", "{}", r.describe());
}

/// A synthetic `rtlat cyclictest ... --json` file in `dir`.
fn rtlat_json(dir: &Path, name: &str, seed: u64, args: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut cmd = synthetic(seed, args);
    cmd.arg(format!("--json={}", path.display()));
    run(&mut cmd).expect_code(0);
    path
}

/// What an SVG shows: its data lines (polylines of 4 points or more; axes,
/// ticks and legend swatches are 2-point lines or rectangles) and its text.
#[derive(Debug)]
pub(super) struct Svg {
    pub(super) size: (String, String),
    pub(super) series: Vec<Vec<(f64, f64)>>,
    /// The stroke colour of each of `series`.
    pub(super) strokes: Vec<String>,
    pub(super) texts: Vec<String>,
    /// Where each of `texts` stands: x, y and its `text-anchor`.
    pub(super) places: Vec<(f64, f64, String)>,
}

impl Svg {
    pub(super) fn has_text(&self, needle: &str) -> bool {
        self.texts.iter().any(|t| t.contains(needle))
    }
}

pub(super) fn read_svg(path: &Path) -> Svg {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text)
        .unwrap_or_else(|e| panic!("{} is not XML: {e}", path.display()));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let mut series = Vec::new();
    let mut strokes = Vec::new();
    let mut texts = Vec::new();
    let mut places = Vec::new();
    for node in root.descendants() {
        match node.tag_name().name() {
            "polyline" => {
                let points: Vec<(f64, f64)> = node
                    .attribute("points")
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect();
                if points.len() >= 4 {
                    series.push(points);
                    strokes.push(node.attribute("stroke").unwrap_or_default().to_string());
                }
            }
            "text" => {
                texts.push(
                    node.children()
                        .filter_map(|n| n.text())
                        .collect::<String>()
                        .trim()
                        .to_string(),
                );
                let at = |a: &str| node.attribute(a).and_then(|v| v.parse().ok());
                places.push((
                    at("x").unwrap_or(f64::NAN),
                    at("y").unwrap_or(f64::NAN),
                    node.attribute("text-anchor")
                        .unwrap_or_default()
                        .to_string(),
                ));
            }
            _ => {}
        }
    }
    Svg {
        size: (
            root.attribute("width").unwrap().to_string(),
            root.attribute("height").unwrap().to_string(),
        ),
        series,
        strokes,
        texts,
        places,
    }
}

/// Checks a PNG is `w`x`h` 8-bit RGB, from its header. (That the picture
/// is drawn, its pixels and colours, is tested in the rtlat-plot package,
/// which alone depends on the PNG crate.)
pub(super) fn check_png(path: &Path, (w, h): (u32, u32)) {
    let bytes = std::fs::read(path).unwrap();
    assert!(
        bytes.len() > 33,
        "{}: {} bytes",
        path.display(),
        bytes.len()
    );
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
    assert_eq!(&bytes[12..16], b"IHDR", "{}", path.display());
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (w, h), "{}", path.display());
    // Bit depth 8, colour type 2 (RGB).
    assert_eq!((bytes[24], bytes[25]), (8, 2), "{}", path.display());
}

/// A latency as the plot labels it: one decimal, none when it is 0.
pub(super) fn us_label(us: f64) -> String {
    let text = format!("{us:.1}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_string)
}

#[test]
fn latency_svg_has_a_step_line_per_thread_and_the_maximum() {
    let dir = tempfile::tempdir().unwrap();
    let json = rtlat_json(dir.path(), "run.json", 7, &["-q", "-l", "5000", "-t", "2"]);
    let doc = read_json(&json);
    let max_ns = (0..2)
        .map(|t| doc["thread"][t.to_string()]["max_ns"].as_i64().unwrap())
        .max()
        .unwrap();
    let out = dir.path().join("plot.svg");
    plot_ok(&[&json, Path::new("-o"), &out]);
    assert_eq!(listing(dir.path()), vec!["plot.svg", "run.json"]);

    let svg = read_svg(&out);
    assert_eq!(svg.size, ("1000".into(), "600".into()));
    assert_eq!(svg.series.len(), 2, "{:?}", svg.texts);
    let maximum = format!(
        "Latency (µs), maximum {} µs",
        us_label(max_ns as f64 / 1000.0)
    );
    assert!(svg.has_text(&maximum), "no {maximum:?} in {:?}", svg.texts);
    assert!(svg.has_text("Number of samples"), "{:?}", svg.texts);
    assert!(svg.has_text("synthetic · kernel"), "title: {:?}", svg.texts);
    // Not pinned: "thread n", each with its maximum.
    for t in 0..2 {
        let max = doc["thread"][t.to_string()]["max_ns"].as_f64().unwrap() / 1000.0;
        let label = format!("thread {t} (max {} µs)", us_label(max));
        assert!(svg.has_text(&label), "no {label:?} in {:?}", svg.texts);
    }
    // Steps: every segment is horizontal or vertical, x never goes back.
    for line in &svg.series {
        for w in line.windows(2) {
            assert!(w[0].0 == w[1].0 || w[0].1 == w[1].1, "{w:?}");
            assert!(w[0].0 <= w[1].0, "{w:?}");
        }
    }
}

/// The IPC tools' JSON: a line per pair, from its receiver's samples.
#[test]
fn plots_an_ipc_tools_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ipc.json");
    let mut cmd = rtlat();
    cmd.args([
        "ptsematest",
        "--synthetic",
        "3",
        "-q",
        "-l",
        "300",
        "-t",
        "2",
    ])
    .arg(format!("--json={}", json.display()));
    run(&mut cmd).expect_code(0);
    let doc = read_json(&json);
    let out = dir.path().join("ipc.svg");
    plot_ok(&[&json, Path::new("-o"), &out]);
    let svg = read_svg(&out);
    assert_eq!(svg.series.len(), 2, "{:?}", svg.texts);
    let max = (0..2)
        .map(|t| {
            doc["thread"][t.to_string()]["receiver"]["max_ns"]
                .as_f64()
                .unwrap()
        })
        .fold(0.0, f64::max)
        / 1000.0;
    let maximum = format!("maximum {} µs", us_label(max));
    assert!(svg.has_text(&maximum), "no {maximum:?} in {:?}", svg.texts);
    assert!(svg.has_text("ptsematest"), "title: {:?}", svg.texts);
}

#[test]
fn several_inputs_prefix_the_file_stem() {
    let dir = tempfile::tempdir().unwrap();
    let a = rtlat_json(
        dir.path(),
        "before.json",
        1,
        &["-q", "-l", "2000", "-t", "2", "-a"],
    );
    let b = rtlat_json(
        dir.path(),
        "after.json",
        2,
        &["-q", "-l", "2000", "-t", "1"],
    );
    let out = dir.path().join("both.svg");
    plot_ok(&[
        &a,
        &b,
        Path::new("--output"),
        &out,
        Path::new("--size=1200x700"),
    ]);
    let svg = read_svg(&out);
    assert_eq!(svg.size, ("1200".into(), "700".into()));
    assert_eq!(svg.series.len(), 3, "{:?}", svg.texts);
    // Pinned with -a: "CPU n".
    assert!(svg.has_text("before CPU "), "{:?}", svg.texts);
    assert!(svg.has_text("after thread 0"), "{:?}", svg.texts);
    assert!(svg.has_text("Latency (µs), maximum "), "{:?}", svg.texts);
}

#[test]
fn percentile_svg_has_a_curve_per_input() {
    let dir = tempfile::tempdir().unwrap();
    let a = rtlat_json(dir.path(), "a.json", 3, &["-q", "-l", "20000", "-t", "2"]);
    let b = rtlat_json(dir.path(), "b.json", 4, &["-q", "-l", "20000", "-t", "2"]);
    let out = dir.path().join("p.svg");
    plot_ok(&[
        &a,
        &b,
        Path::new("-k"),
        Path::new("percentile"),
        Path::new("-o"),
        &out,
    ]);
    let svg = read_svg(&out);
    assert_eq!(svg.series.len(), 2, "{:?}", svg.texts);
    for label in ["50 %", "90 %", "99 %", "99.9 %", "99.99 %", "Percentile"] {
        assert!(
            svg.texts.iter().any(|t| t == label || t.starts_with(label)),
            "no {label:?}"
        );
    }
    assert!(svg.has_text("Latency (µs), maximum "), "{:?}", svg.texts);
    // The two threads together: 20000 + 13334 samples (the second thread's
    // interval is 1.5 times the first's).
    let doc = read_json(&a);
    let cycles: u64 = (0..2)
        .map(|t| doc["thread"][t.to_string()]["cycles"].as_u64().unwrap())
        .sum();
    assert!(
        svg.has_text(&format!("a ({cycles} samples, max ")),
        "{:?}",
        svg.texts
    );
    // Latency goes up (SVG y down) along each curve.
    for line in &svg.series {
        for w in line.windows(2) {
            assert!(w[0].0 <= w[1].0 && w[0].1 >= w[1].1, "{w:?}");
        }
    }
}

#[test]
fn png_has_the_size_asked_and_is_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let json = rtlat_json(dir.path(), "run.json", 5, &["-q", "-l", "5000", "-t", "2"]);
    let out = dir.path().join("plot.png");
    plot_ok(&[
        &json,
        Path::new("-o"),
        &out,
        Path::new("-s"),
        Path::new("800x500"),
    ]);
    check_png(&out, (800, 500));
    let pct = dir.path().join("pct.PNG");
    plot_ok(&[&json, Path::new("-kpercentile"), Path::new("-o"), &pct]);
    check_png(&pct, (1000, 600));
    assert_eq!(listing(dir.path()), vec!["pct.PNG", "plot.png", "run.json"]);
}

#[test]
fn our_histogram_text_from_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&mut synthetic(
        9,
        ["-q", "-l", "3000", "-t", "2", "-h", "60"],
    ));
    r.expect_code(0);
    let hist = parse_histogram(&r.stdout).expect("histogram block");
    let text = dir.path().join("hist.txt");
    std::fs::write(&text, &r.stdout).unwrap();
    let out = dir.path().join("h.svg");
    let mut cmd = plot(["-".as_ref(), "-o".as_ref(), out.as_os_str()]);
    cmd.stdin(Stdio::from(std::fs::File::open(&text).unwrap()));
    let r = run_with_timeout(&mut cmd, Duration::from_secs(30));
    r.expect_code(0);
    let svg = read_svg(&out);
    let with_samples = hist.total.iter().filter(|t| **t > 0).count();
    assert_eq!(svg.series.len(), with_samples, "{:?}", svg.texts);
    let max = hist.max.iter().max().unwrap();
    assert!(
        svg.has_text(&format!("maximum {max} µs")),
        "{:?}",
        svg.texts
    );
    assert!(
        svg.has_text("stdin"),
        "title names the input: {:?}",
        svg.texts
    );
}

/// `/usr/bin/cyclictest ARGS` in `dir` (bounded by `-l`), exit 0.
fn c_run(dir: &Path, args: &[&str]) -> Run {
    let r = run_with_timeout(
        cyclictest_c().args(args).current_dir(dir),
        Duration::from_secs(30),
    );
    r.expect_code(0);
    r
}

#[test]
fn plots_the_c_tools_histogram_text_and_json() {
    require_root!();
    require_c_cyclictest!();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let r = c_run(
        dir.path(),
        &[
            "-q",
            "-l",
            "1000",
            "-i",
            "1000",
            "-t",
            "2",
            "-h",
            "100",
            &format!("--json={}", json.display()),
        ],
    );
    let text = dir.path().join("c-stdout.txt");
    std::fs::write(&text, &r.stdout).unwrap();
    let hist = parse_histogram(&r.stdout).expect("histogram block");
    let doc = read_json(&json);

    // The -h text: a line per thread with in-range samples, the maximum
    // of `# Max Latencies:` in the axis label.
    let out = dir.path().join("text.svg");
    plot_ok(&[&text, Path::new("-o"), &out]);
    let svg = read_svg(&out);
    let with_samples = hist.total.iter().filter(|t| **t > 0).count();
    assert_eq!(svg.series.len(), with_samples, "{:?}", svg.texts);
    let max = hist.max.iter().max().unwrap();
    assert!(
        svg.has_text(&format!("Latency (µs), maximum {max} µs")),
        "{:?}",
        svg.texts
    );
    let png = dir.path().join("text.png");
    plot_ok(&[&text, Path::new("-o"), &png]);
    if with_samples > 0 {
        check_png(&png, (1000, 600));
    }

    // The JSON: the same, titled with host and kernel, "CPU n" (2.4 pins).
    let out = dir.path().join("json.svg");
    plot_ok(&[&json, Path::new("-o"), &out]);
    let svg = read_svg(&out);
    let threads = doc["thread"].as_object().unwrap();
    let with_histogram = threads
        .values()
        .filter(|t| !t["histogram"].as_object().unwrap().is_empty())
        .count();
    assert_eq!(svg.series.len(), with_histogram, "{:?}", svg.texts);
    let json_max = threads
        .values()
        .map(|t| t["max"].as_i64().unwrap())
        .max()
        .unwrap();
    assert!(
        svg.has_text(&format!("maximum {json_max} µs")),
        "{:?}",
        svg.texts
    );
    let host = doc["sysinfo"]["nodename"].as_str().unwrap();
    let kernel = doc["sysinfo"]["release"].as_str().unwrap();
    assert!(
        svg.has_text(&format!("{host} · kernel {kernel} · ")),
        "{:?}",
        svg.texts
    );
    if with_histogram > 0 {
        assert!(svg.has_text("CPU "), "{:?}", svg.texts);
    }
    let png = dir.path().join("json.png");
    plot_ok(&[&json, Path::new("-o"), &png]);
    if with_histogram > 0 {
        check_png(&png, (1000, 600));
    }

    // Both at once, as percentile curves.
    let out = dir.path().join("both.png");
    plot_ok(&[
        &text,
        &json,
        Path::new("-k"),
        Path::new("percentile"),
        Path::new("-o"),
        &out,
    ]);
    check_png(&out, (1000, 600));
}

#[test]
fn c_json_without_histogram_asks_for_h() {
    require_root!();
    require_c_cyclictest!();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("noh.json");
    c_run(
        dir.path(),
        &[
            "-q",
            "-l",
            "100",
            "-i",
            "1000",
            "-t",
            "1",
            &format!("--json={}", json.display()),
        ],
    );
    let r = bad(dir.path(), &[json.to_str().unwrap(), "-o", "x.png"]);
    assert!(
        r.stderr.contains("noh.json: no histogram data"),
        "{}",
        r.describe()
    );
    assert!(r.stderr.contains("-h US"), "{}", r.describe());
}

/// Runs `rtlat plot ARGS` in `dir` and checks a usage error: exit 2, one
/// stderr line, nothing on stdout, no file added to or changed in `dir`.
pub(super) fn bad(dir: &Path, args: &[&str]) -> Run {
    let before: Vec<(String, Vec<u8>)> = listing(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap_or_default();
            (n, bytes)
        })
        .collect();
    let r = run_with_timeout(plot(args).current_dir(dir), Duration::from_secs(30));
    let context = format!("rtlat plot {}\n{}", args.join(" "), r.describe());
    assert_eq!(r.code(), Some(2), "exit status\n{context}");
    assert_eq!(r.stdout, "", "stdout\n{context}");
    assert_eq!(r.stderr_lines().len(), 1, "one stderr line\n{context}");
    assert!(r.stderr.starts_with("rtlat plot: "), "{context}");
    let after: Vec<(String, Vec<u8>)> = listing(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap_or_default();
            (n, bytes)
        })
        .collect();
    assert_eq!(before, after, "files added or changed\n{context}");
    r
}

#[test]
fn bad_input_is_one_line_and_leaves_no_picture() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = rtlat_json(d, "good.json", 1, &["-q", "-l", "500"]);
    let good = good.to_str().unwrap();
    std::fs::write(d.join("broken.json"), "{\"thread\": {\"0\": ").unwrap();
    std::fs::write(d.join("notes.txt"), "T: 0 ( 123) P:99 I:1000 C: 5 Min: 1\n").unwrap();
    std::fs::write(d.join("empty.txt"), "").unwrap();
    std::fs::write(d.join("array.json"), "[1, 2]").unwrap();
    std::fs::write(
        d.join("c-noh.json"),
        r#"{"file_version": 1, "rt_test_version:": "2.40", "thread": {"0": {"histogram": {      },
            "cycles": 100, "min": 3, "max": 20, "avg": 5.00, "cpu": 0, "node": 0}}}"#,
    )
    .unwrap();
    std::fs::write(
        d.join("overflowed.txt"),
        "# Histogram\n000000 000000\n# Total: 000000000\n# Min Latencies: 00040\n\
         # Avg Latencies: 00050\n# Max Latencies: 00090\n# Histogram Overflows: 00010\n",
    )
    .unwrap();
    std::fs::write(d.join("old.png"), "the previous picture").unwrap();

    for (args, needle) in [
        (
            vec!["missing.json", "-o", "x.svg"],
            "missing.json: cannot read: No such file or directory",
        ),
        (
            vec!["broken.json", "-o", "x.svg"],
            "broken.json: cut short: the JSON ends before it is complete (EOF while parsing",
        ),
        (
            vec!["array.json", "-o", "x.svg"],
            "array.json: JSON, but not an object",
        ),
        (
            vec!["notes.txt", "-o", "x.svg"],
            "notes.txt: neither JSON nor cyclictest histogram output",
        ),
        (vec!["empty.txt", "-o", "x.svg"], "empty.txt: empty file"),
        (
            vec!["c-noh.json", "-o", "x.png"],
            "c-noh.json: no histogram data",
        ),
        (
            vec!["overflowed.txt", "-o", "x.png"],
            "overflowed.txt: every sample is beyond the histogram",
        ),
        (vec![".", "-o", "x.svg"], ".: cannot read"),
        // A good input does not rescue a bad one, nor is the old picture touched.
        (
            vec![good, "broken.json", "-o", "old.png"],
            "broken.json: cut short",
        ),
        (
            vec![good, "-o", "x.jpg"],
            "-o/--output: invalid value 'x.jpg': expected a file name ending in .svg or .png",
        ),
        (vec![good], "no output file: give -o OUT.svg or -o OUT.png"),
        (vec!["-o", "x.svg"], "no input file"),
        (
            vec![good, "-o", "no/such/dir/x.svg"],
            "directory 'no/such/dir' does not exist",
        ),
        (
            vec![good, "-o", "x.svg", "-k", "pie"],
            "-k/--kind: invalid value 'pie'",
        ),
        (
            vec![good, "-o", "x.svg", "-s", "10x10"],
            "-s/--size: invalid value '10x10'",
        ),
        (
            vec![good, "old.png", "-o", "./old.png"],
            "-o/--output: './old.png' is also an input",
        ),
    ] {
        let r = bad(d, &args);
        assert!(
            r.stderr.contains(needle),
            "{args:?}: {needle:?}\n{}",
            r.describe()
        );
    }
    assert_eq!(
        std::fs::read(d.join("old.png")).unwrap(),
        b"the previous picture"
    );
    let r = bad(d, &["c-noh.json", "-o", "x.png"]);
    assert!(r.stderr.contains("-h US"), "{}", r.describe());
}

#[test]
fn output_that_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let good = rtlat_json(dir.path(), "good.json", 1, &["-q", "-l", "500"]);
    // A directory is refused up front, as a usage error.
    let out = dir.path().join("taken.svg");
    std::fs::create_dir(&out).unwrap();
    let r = run_with_timeout(
        &mut plot([good.as_os_str(), "-o".as_ref(), out.as_os_str()]),
        Duration::from_secs(30),
    );
    assert_eq!(r.code(), Some(2), "{}", r.describe());
    assert!(r.stderr.contains("it is a directory"), "{}", r.describe());
    assert_eq!(listing(dir.path()), vec!["good.json", "taken.svg"]);
    // A directory where no file can be made (even by root): refused up
    // front too, before any input is read, exit 2, one line.
    let r = run_with_timeout(
        &mut plot([
            good.as_os_str(),
            "-o".as_ref(),
            "/proc/self/plot.svg".as_ref(),
        ]),
        Duration::from_secs(30),
    );
    assert_eq!(r.code(), Some(2), "{}", r.describe());
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.describe());
    assert!(
        r.stderr
            .starts_with("rtlat plot: -o/--output: cannot write '/proc/self/plot.svg': "),
        "{}",
        r.describe()
    );
}

#[test]
fn help_and_the_tool_list() {
    let r = run(&mut plot(["--help"]));
    r.expect_code(0);
    assert!(r.stdout.starts_with("rtlat plot: "), "{}", r.stdout);
    for needle in [
        "Usage: rtlat plot INPUT... -o OUT.svg|OUT.png",
        "--kind",
        "percentile",
        "--size",
    ] {
        assert!(r.stdout.contains(needle), "{needle:?} in\n{}", r.stdout);
    }
    let r = run(rtlat().arg("--help"));
    r.expect_code(0);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("plot ")),
        "{}",
        r.stdout
    );
}

/// An evaluation's report.json is its phases, for every kind of plot:
/// one line per phase (per phase and CPU on the latency plot), each
/// named after its phase; on standard input, or with a phase file
/// missing, one line and exit 2. The evaluation's loads reach every CPU:
/// it leases them all.
#[test]
fn an_evaluation_report_plots_its_phases() {
    require_root!();
    let dir = tempfile::tempdir().unwrap();
    let eval = dir.path().join("eval");
    {
        let _all = crate::support::cpus::CpuLease::all();
        let r = run_with_timeout(
            rtlat()
                .args(["evaluate", "-q", "--no-explain", "--load", "cpu", "-D", "2"])
                .args(["-a", "1", "-o"])
                .arg(&eval),
            Duration::from_secs(60),
        );
        r.expect_code(0);
    }
    let report = eval.join("report.json");
    let phases = ["idle", "cpu"];
    for (kind, per_phase) in [
        ("latency", "CPU 1 (max "),
        ("percentile", " samples, max "),
        ("timeline", " thread 0 max (largest "),
    ] {
        let out = dir.path().join(format!("{kind}.svg"));
        plot_ok(&[
            &report,
            Path::new("-k"),
            Path::new(kind),
            Path::new("-o"),
            &out,
        ]);
        let svg = read_svg(&out);
        for phase in phases {
            let label = format!("{phase} ");
            assert!(
                svg.texts
                    .iter()
                    .any(|t| t.starts_with(&label) && t.contains(per_phase)),
                "{kind}: no legend for {phase}: {:?}",
                svg.texts
            );
        }
        // A line each (one thread a phase); the timeline's p99 lines
        // beside its maxima may be too short to count as series.
        if kind == "timeline" {
            assert!(svg.series.len() >= phases.len(), "{:?}", svg.texts);
            let title = &svg.texts[0];
            assert!(title.starts_with("Latency over time: "), "{title}");
            for phase in phases {
                let named = eval.join(phase).display().to_string();
                assert!(title.contains(&named), "{title}");
            }
        } else {
            assert_eq!(svg.series.len(), phases.len(), "{kind}: {:?}", svg.texts);
        }
    }

    // Standard input has no directory to find the phases in.
    let out = dir.path().join("stdin.svg");
    let mut cmd = plot(["-".as_ref(), "-o".as_ref(), out.as_os_str()]);
    cmd.stdin(Stdio::from(std::fs::File::open(&report).unwrap()));
    let r = run_with_timeout(&mut cmd, Duration::from_secs(30));
    r.expect_code(2);
    assert_eq!(
        r.stderr,
        "rtlat plot: stdin: an evaluation report names its phases' files relative to its \
         directory, which standard input has not: give the report's path\n"
    );
    assert!(!out.exists());

    // A phase file missing: named, with its phase and the report.
    std::fs::remove_file(eval.join("cpu.json")).unwrap();
    let r = run_with_timeout(
        &mut plot([report.as_os_str(), "-o".as_ref(), out.as_os_str()]),
        Duration::from_secs(30),
    );
    r.expect_code(2);
    assert_eq!(
        r.stderr,
        format!(
            "rtlat plot: {}: phase \"cpu\": {}: cannot read: No such file or directory\n",
            report.display(),
            eval.join("cpu.json").display()
        )
    );
    assert!(!out.exists());
}
