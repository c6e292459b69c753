//! The `rtlat-plot` binary itself (what `rtlat plot` runs), on fixed
//! inputs: PNG output decoded (size, not blank, the series colours), the
//! latency axis shaped by `--xmax` and `--log-x` around a 20 ms spike,
//! the title of mixed inputs, the timeline plot's lines and their
//! colours, and bad values (exit 2, one line, no picture).
//! `data/synthetic.json` is the output of `rtlat cyclictest --synthetic 4
//! -q -l 2000 -t 2 --json=...`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/synthetic.json")
}

/// The fixture with one 20 ms sample added to thread 0, written in `dir`.
fn with_spike(dir: &Path) -> PathBuf {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    let t = &mut doc["thread"]["0"];
    t["distribution"]["buckets"]
        .as_array_mut()
        .unwrap()
        .push(json!([20000.0, 20001.0, 1]));
    t["max_ns"] = json!(20_000_400);
    t["cycles"] = json!(t["cycles"].as_u64().unwrap() + 1);
    let path = dir.join("spike.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// Runs `rtlat-plot ARGS`: (exit status, stdout, stderr).
fn plot(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = Command::new(assert_cmd::cargo::cargo_bin("rtlat-plot"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn plot_ok(args: &[&std::ffi::OsStr]) {
    let (code, stdout, stderr) = plot(args);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (0, "", ""),
        "{args:?}"
    );
}

/// The texts of an SVG.
fn svg_texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or_default().trim().to_string())
        .collect()
}

fn has(texts: &[String], needle: &str) -> bool {
    texts.iter().any(|t| t.contains(needle))
}

/// The numbers among the texts (tick labels).
fn numbers(texts: &[String]) -> Vec<f64> {
    texts.iter().filter_map(|t| t.parse().ok()).collect()
}

#[test]
fn png_has_the_size_asked_and_is_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plot.png");
    plot_ok(&[
        fixture().as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "-s".as_ref(),
        "800x500".as_ref(),
    ]);
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&out).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (800, 500));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let pixels: Vec<[u8; 3]> = buf[..info.buffer_size()]
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let colours: BTreeSet<[u8; 3]> = pixels.iter().copied().collect();
    assert!(colours.len() > 50, "only {} colours", colours.len());
    let ink = pixels.iter().filter(|p| **p != [255, 255, 255]).count();
    assert!(
        ink * 100 > pixels.len() * 2,
        "{ink} of {} pixels not white",
        pixels.len()
    );
    // Both threads' line colours, drawn at full strength somewhere.
    for colour in [[31, 119, 180], [214, 39, 40]] {
        assert!(colours.contains(&colour), "no pixel of colour {colour:?}");
    }
}

#[test]
fn xmax_and_log_x_shape_the_latency_axis() {
    let dir = tempfile::tempdir().unwrap();
    let spike = with_spike(dir.path());
    let svg = dir.path().join("p.svg");
    let draw = |extra: &[&str]| {
        let mut args: Vec<&std::ffi::OsStr> =
            vec![spike.as_os_str(), "-o".as_ref(), svg.as_os_str()];
        args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
        plot_ok(&args);
        svg_texts(&svg)
    };

    // As it is: the axis runs to the spike.
    let texts = draw(&[]);
    let top = numbers(&texts).into_iter().fold(0.0, f64::max);
    assert!(top >= 10000.0, "{texts:?}");
    assert!(!has(&texts, "beyond xmax"), "{texts:?}");

    // --xmax 300: the axis ends there, the spike is counted.
    let texts = draw(&["--xmax", "300"]);
    let ticks = numbers(&texts);
    assert!(
        ticks.iter().all(|t| *t <= 300.0 || *t >= 1000.0),
        "{texts:?}"
    );
    assert!(has(&texts, "CPU") || has(&texts, "thread 0"), "{texts:?}");
    assert!(has(&texts, "1 beyond xmax)"), "{texts:?}");
    assert!(
        has(
            &texts,
            "maximum 20000.4 µs; 1 sample beyond xmax 300 µs not drawn"
        ),
        "{texts:?}"
    );

    // --log-x: decades from 1 µs to past the spike.
    let texts = draw(&["--log-x"]);
    assert!(
        has(&texts, "Latency (µs, log scale), maximum 20000.4 µs"),
        "{texts:?}"
    );
    let ticks: BTreeSet<i64> = numbers(&texts).into_iter().map(|t| t as i64).collect();
    for decade in [1, 10, 100, 1000, 10000] {
        assert!(ticks.contains(&decade), "no {decade} in {texts:?}");
    }
}

/// The pixels of the PNG at `path`.
fn png_colours(path: &Path) -> BTreeSet<[u8; 3]> {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf[..info.buffer_size()]
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect()
}

/// The polylines of an SVG with their stroke colours.
fn svg_polylines(path: &Path) -> Vec<(String, Vec<(f64, f64)>)> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .map(|n| {
            let points = n
                .attribute("points")
                .unwrap_or_default()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            (
                n.attribute("stroke").unwrap_or_default().to_uppercase(),
                points,
            )
        })
        .collect()
}

/// The SVG's width, from its `viewBox` (or `width`).
fn svg_width(path: &Path) -> f64 {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let root = doc.root_element();
    match root.attribute("viewBox") {
        Some(v) => v.split_whitespace().nth(2).unwrap().parse().unwrap(),
        None => root.attribute("width").unwrap().parse().unwrap(),
    }
}

#[test]
fn a_short_monitor_runs_timeline_is_a_line_from_its_first_interval() {
    // What a minute of `rtlat monitor` (5-minute intervals) leaves in its
    // checkpoint: one partial interval per thread. It was drawn as one dot
    // per thread at the interval's end.
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<Value> = (0..2)
        .map(|t| {
            json!({"time": 1_795_615_260.0, "elapsed": 60.0, "thread": t, "interval": 0,
                   "cycles": 60000, "min": 2.0, "avg": 5.0, "max": 40.0 + f64::from(t),
                   "p99": 9.0, "overruns": 0, "partial": true})
        })
        .collect();
    let input = dir.path().join("m.json");
    std::fs::write(&input, json!({ "timeline": entries }).to_string()).unwrap();
    let out = dir.path().join("m.svg");
    plot_ok(&[
        "-k".as_ref(),
        "timeline".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains("<circle"), "a dot drawn: {text}");
    let width = svg_width(&out);
    let lines = svg_polylines(&out);
    // Each thread's max (the palette's first two colours): a step over
    // the whole minute, most of the plotting area wide.
    for colour in ["#1F77B4", "#D62728"] {
        let drawn: Vec<&Vec<(f64, f64)>> = lines
            .iter()
            .filter(|(stroke, points)| stroke == colour && !points.is_empty())
            .map(|(_, points)| points)
            .collect();
        assert_eq!(drawn.len(), 1, "{colour}: {lines:?}");
        let points = drawn[0];
        assert_eq!(points.len(), 2, "{colour}: {points:?}");
        assert_eq!(points[0].1, points[1].1, "{points:?}");
        assert!(
            points[1].0 - points[0].0 > 0.6 * width,
            "{colour}: {points:?} in {width}"
        );
    }
    let texts = svg_texts(&out);
    assert!(
        has(
            &texts,
            "maximum and p99 of each interval: 1 interval, 2 threads"
        ),
        "{texts:#?}"
    );
}

/// The horizontal extent of each unrotated text of an SVG, from the
/// bundled font's advances at its `font-size` and its `text-anchor`:
/// (text, left, right).
fn text_extents(path: &Path) -> Vec<(String, f64, f64)> {
    use ab_glyph::{Font, FontRef};
    let font_bytes =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/DejaVuSans.ttf")).unwrap();
    let font = FontRef::try_from_slice(&font_bytes).unwrap();
    let em = font.units_per_em().unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text") && n.attribute("transform").is_none())
        .map(|n| {
            let content = n.text().unwrap_or_default().trim().to_string();
            let size: f64 = n.attribute("font-size").unwrap().parse().unwrap();
            let advance: f32 = content
                .chars()
                .map(|c| font.h_advance_unscaled(font.glyph_id(c)))
                .sum();
            let w = f64::from(advance / em) * size;
            let x: f64 = n.attribute("x").unwrap().parse().unwrap();
            let left = match n.attribute("text-anchor") {
                Some("middle") => x - w / 2.0,
                Some("end") => x - w,
                _ => x,
            };
            (content, left, left + w)
        })
        .collect()
}

#[test]
fn percentile_labels_fit_in_the_picture() {
    // A million samples a thread: the percentile axis ends at 99.9999 %,
    // a label centred on the plot's right edge (it was cut off there).
    let dir = tempfile::tempdir().unwrap();
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    for t in ["0", "1"] {
        let thread = &mut doc["thread"][t];
        for bucket in thread["distribution"]["buckets"].as_array_mut().unwrap() {
            bucket[2] = json!(bucket[2].as_u64().unwrap() * 500);
        }
        thread["cycles"] = json!(thread["cycles"].as_u64().unwrap() * 500);
    }
    let input = dir.path().join("million.json");
    std::fs::write(&input, doc.to_string()).unwrap();
    for size in ["1000x600", "500x300", "2000x1200"] {
        let out = dir.path().join(format!("p{size}.svg"));
        plot_ok(&[
            "-k".as_ref(),
            "percentile".as_ref(),
            "-s".as_ref(),
            size.as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        let width = svg_width(&out);
        let extents = text_extents(&out);
        assert!(
            extents.iter().any(|e| e.0 == "99.9999 %"),
            "{size}: {extents:#?}"
        );
        for (text, left, right) in &extents {
            assert!(
                *left >= 0.0 && *right <= width,
                "{size}: {text:?} spans {left:.1} to {right:.1}, outside 0 to {width}"
            );
        }
    }
}

#[test]
fn timeline_png_draws_each_threads_max_and_p99() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.jsonl");
    let lines: String = (0..40)
        .flat_map(|k| {
            (0..2).map(move |t| {
                format!(
                    "{{\"time\":{},\"elapsed\":{},\"thread\":{t},\"interval\":{k},\
                     \"cycles\":100,\"min\":2.0,\"avg\":5.0,\"max\":{},\"p99\":{},\
                     \"overruns\":0}}\n",
                    1_795_615_200.0 + 0.5 * f64::from(k + 1),
                    0.5 * f64::from(k + 1),
                    40 + (k * 7 + t * 13) % 30,
                    12 + (k + t) % 5,
                )
            })
        })
        .collect();
    std::fs::write(&stats, lines).unwrap();
    let out = dir.path().join("t.png");
    plot_ok(&[
        "-k".as_ref(),
        "timeline".as_ref(),
        stats.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    let colours = png_colours(&out);
    // Both threads' max lines and their fainter p99 lines.
    for colour in [
        [31, 119, 180],
        [143, 187, 217],
        [214, 39, 40],
        [234, 147, 147],
    ] {
        assert!(colours.contains(&colour), "no pixel of colour {colour:?}");
    }
}

#[test]
fn mixed_inputs_name_their_origins_in_the_title() {
    let dir = tempfile::tempdir().unwrap();
    let hist = dir.path().join("hist.txt");
    std::fs::write(
        &hist,
        "# Histogram\n000003 000010\n000004 000002\n# Min Latencies: 00003\n\
         # Avg Latencies: 00003\n# Max Latencies: 00004\n# Histogram Overflows: 00000\n",
    )
    .unwrap();
    let svg = dir.path().join("m.svg");
    plot_ok(&[
        fixture().as_os_str(),
        hist.as_os_str(),
        "-o".as_ref(),
        svg.as_os_str(),
    ]);
    let texts = svg_texts(&svg);
    assert_eq!(
        texts[0], "cyclictest (rtlat) vs hist (-h histogram)",
        "{texts:?}"
    );
}

#[test]
fn bad_values_are_one_line_exit_2_and_no_picture() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("bad.svg");
    let input = fixture();
    for (extra, message) in [
        (
            vec!["--xmax", "0"],
            "rtlat plot: --xmax: invalid value '0': expected a latency in us above 0, at most \
             1000000000 (e.g. 500)\n",
        ),
        (
            vec!["--xmax", "fast"],
            "rtlat plot: --xmax: invalid value 'fast': expected a latency in us above 0, at \
             most 1000000000 (e.g. 500)\n",
        ),
        (
            vec!["--log-x", "-k", "percentile"],
            "rtlat plot: --log-x: applies to the latency plot (-k latency), not to -k \
             percentile\n",
        ),
    ] {
        let mut args: Vec<&std::ffi::OsStr> =
            vec![input.as_os_str(), "-o".as_ref(), svg.as_os_str()];
        args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
        let (code, stdout, stderr) = plot(&args);
        assert_eq!(
            (code, stdout.as_str(), stderr.as_str()),
            (2, "", message),
            "{extra:?}"
        );
        assert!(!svg.exists());
    }
}
