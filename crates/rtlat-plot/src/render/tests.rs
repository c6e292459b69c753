//! The figures of the latency and percentile plots, and their pictures.

use super::draw::{FONT, count_label, latency_label, log_ticks, percent_label};
use super::figure::*;
use super::latency::{clip_at, on_columns, on_log_columns, step_points};
use super::percentile::{merge_threads, percentile_points};
use super::*;
use crate::input::{Bucket, ThreadSamples};
use rtlat_results::Format;

fn b(from: f64, to: f64, count: u64) -> Bucket {
    Bucket { from, to, count }
}

fn thread(
    index: usize,
    cpu: Option<u32>,
    buckets: Vec<Bucket>,
    max: f64,
    over: u64,
) -> ThreadSamples {
    ThreadSamples {
        index,
        cpu,
        buckets,
        min_us: None,
        max_us: Some(max),
        overflows: over,
    }
}

fn input(stem: &str, threads: Vec<ThreadSamples>) -> Samples {
    Samples {
        name: format!("dir/{stem}.json"),
        stem: stem.to_string(),
        format: Format::RtlatJson,
        tool: Some("cyclictest".into()),
        host: Some("box".into()),
        kernel: Some("6.1.0-rt".into()),
        environment: None,
        date: Some("Sun, 22 Nov 2026 01:44:57 +0000".into()),
        cmdline: Some("rtlat cyclictest -q -h 100".into()),
        threads,
    }
}

#[test]
fn every_text_of_a_figure_is_displayable() {
    assert_eq!(
        displayable("a\tb\nc\rd\u{0}e\u{1b}[2Af\u{7f}g\u{85}h\u{fffe}<&>\"'é"),
        "a b c d\u{fffd}e\u{fffd}[2Af\u{fffd}g\u{fffd}h\u{fffd}<&>\"'é"
    );
    assert_eq!(
        displayable("a\u{202e}b\u{2066}c\u{2069}d\u{200f}e\u{061c}µs"),
        "a\u{fffd}b\u{fffd}c\u{fffd}d\u{fffd}e\u{fffd}µs"
    );
    let mut one = input(
        "ru\u{1}n",
        vec![thread(0, Some(0), vec![b(2.0, 3.0, 5)], 2.0, 0)],
    );
    one.host = Some("bo\u{7}x".into());
    one.cmdline = Some("rtlat\u{0} -q".into());
    one.name = "dir/ru\u{1}n.json".into();
    let two = input(
        "b\u{2}",
        vec![thread(0, None, vec![b(1.0, 2.0, 3)], 1.0, 0)],
    );
    for kind in [Kind::Latency, Kind::Percentile] {
        for (inputs, title) in [
            (vec![one.clone()], Some("t\u{3}itle")),
            (vec![one.clone()], None),
            (vec![one.clone(), two.clone()], None),
        ] {
            let f = figure(&inputs, kind, LatencyAxis::default(), title, 1000);
            let texts = [&f.title, &f.x_desc, &f.y_desc]
                .into_iter()
                .chain(&f.subtitle)
                .chain(f.lines.iter().map(|l| &l.label));
            for text in texts {
                assert!(!text.chars().any(char::is_control), "{text:?}");
            }
        }
    }
    // The replacement character is in the bundled font.
    use ab_glyph::Font;
    let font = ab_glyph::FontRef::try_from_slice(FONT).unwrap();
    assert_ne!(font.glyph_id('\u{fffd}').0, 0);
}

#[test]
fn steps_follow_each_bucket_and_drop_to_the_floor_between() {
    let buckets = [b(2.0, 3.0, 5), b(3.0, 4.0, 7), b(9.0, 13.0, 1)];
    let points = step_points(&buckets, 0.8);
    assert_eq!(
        points,
        vec![
            (2.0, 0.8),
            (2.0, 5.0),
            (3.0, 5.0),
            (3.0, 7.0),
            (4.0, 7.0),
            (4.0, 0.8),
            (9.0, 0.8),
            (9.0, 1.0),
            (13.0, 1.0),
            (13.0, 0.8),
        ]
    );
    assert!(step_points(&[], 0.8).is_empty());
}

#[test]
fn narrow_buckets_are_drawn_on_columns() {
    let buckets = [b(2.0, 3.0, 5), b(3.0, 4.0, 7), b(9.0, 13.0, 1)];
    assert_eq!(on_columns(&buckets, 0.0, 1.0), buckets.to_vec());
    // Columns 2 wide: [2,4) takes the larger count, the wide bucket
    // covers its two columns, a lone bucket keeps one.
    assert_eq!(
        on_columns(&buckets, 0.0, 2.0),
        vec![
            b(2.0, 4.0, 7),
            b(8.0, 10.0, 1),
            b(10.0, 12.0, 1),
            b(12.0, 14.0, 1)
        ]
    );
    assert_eq!(
        on_columns(&[b(1001.0, 1002.0, 1)], 0.0, 10.0),
        vec![b(1000.0, 1010.0, 1)]
    );
}

#[test]
fn threads_merge_by_bucket() {
    let merged = merge_threads(&[
        thread(0, None, vec![b(1.0, 2.0, 1), b(5.0, 6.0, 2)], 5.0, 0),
        thread(1, None, vec![b(1.0, 2.0, 3), b(3.0, 4.0, 1)], 3.0, 0),
    ]);
    assert_eq!(merged, vec![b(1.0, 2.0, 4), b(3.0, 4.0, 1), b(5.0, 6.0, 2)]);
}

#[test]
fn percentile_curve_from_buckets() {
    // 10 samples: 5 in [1,2), 4 in [2,3), 1 in [10,11) with max 10.
    let points = percentile_points(
        &[b(1.0, 2.0, 5), b(2.0, 3.0, 4), b(10.0, 11.0, 1)],
        0,
        Some(10.0),
    );
    assert_eq!(
        points,
        vec![(1.0, 1.0), (2.0, 2.0), (10.0, 3.0), (10.0, 10.0)]
    );
    // The median (x = 2) is at 2 µs, 90 % (x = 10) at 3 µs, the last
    // sample at 1 - p = 1/10 and the maximum.
}

#[test]
fn percentile_curve_places_overflows_up_to_the_maximum() {
    let points = percentile_points(&[b(0.0, 1.0, 8)], 2, Some(50.0));
    assert_eq!(points, vec![(1.0, 0.0), (5.0, 1.0), (10.0, 50.0)]);
    assert!(percentile_points(&[], 0, None).is_empty());
}

#[test]
fn labels() {
    assert_eq!(percent_label(1.0), "0 %");
    assert_eq!(percent_label(2.0), "50 %");
    assert_eq!(percent_label(10.0), "90 %");
    assert_eq!(percent_label(100.0), "99 %");
    assert_eq!(percent_label(1000.0), "99.9 %");
    assert_eq!(percent_label(1e6), "99.9999 %");
    assert_eq!(format_us(123.0), "123");
    assert_eq!(format_us(2908.406), "2908.4");
    assert_eq!(format_us(1147.96), "1148");
    assert_eq!(format_us(-3.25), "-3.2");
    assert_eq!(count_label(0.8), "0.8");
    assert_eq!(count_label(1000.0), "1000");
    assert_eq!(count_label(1e7), "1e7");
    assert_eq!(latency_label(0.5), "0.5");
    assert_eq!(latency_label(20.0), "20");
}

#[test]
fn log_ticks_have_enough_labels() {
    assert_eq!(
        log_ticks(&(0.8..10000.0)),
        vec![1.0, 10.0, 100.0, 1000.0, 10000.0]
    );
    assert_eq!(
        log_ticks(&(0.8..100.0)),
        vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
    );
    assert_eq!(log_ticks(&(12.0..40.0)), vec![20.0, 30.0, 40.0]);
}

#[test]
fn latency_figure_of_two_inputs() {
    let a = input(
        "a",
        vec![
            thread(
                0,
                Some(0),
                vec![b(2.0, 3.0, 500), b(40.0, 41.0, 1)],
                40.0,
                0,
            ),
            thread(1, None, vec![b(3.0, 4.0, 90)], 123.0, 7),
        ],
    );
    let mut c = input("c", vec![thread(0, Some(1), vec![b(1.0, 2.0, 3)], 1.0, 0)]);
    c.host = Some("other".into());
    let f = figure(
        &[a.clone(), c],
        Kind::Latency,
        LatencyAxis::default(),
        None,
        1000,
    );
    assert_eq!(f.title, "box · kernel 6.1.0-rt / other · kernel 6.1.0-rt");
    assert_eq!(f.subtitle, None);
    assert_eq!(f.x_desc, "Latency (µs), maximum 123 µs");
    let labels: Vec<&str> = f.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        vec![
            "a CPU 0 (max 40 µs)",
            "a thread 1 (max 123 µs, 7 overflows)",
            "c CPU 1 (max 1 µs)"
        ]
    );
    let Axes::Latency { x, log_x, y_top } = f.axes else {
        panic!("{:?}", f.axes)
    };
    assert_eq!(x.start, 0.0);
    assert!(!log_x);
    assert!(x.end >= 41.0, "{x:?}");
    assert_eq!(y_top, 1000.0);

    let one = figure(
        &[a],
        Kind::Latency,
        LatencyAxis::default(),
        Some("mine"),
        1000,
    );
    assert_eq!(one.title, "mine");
    assert_eq!(
        one.subtitle.as_deref(),
        Some("dir/a.json: rtlat cyclictest -q -h 100")
    );
    assert_eq!(one.lines[0].label, "CPU 0 (max 40 µs)");
}

#[test]
fn the_environment_summary_takes_the_kernels_place_in_the_title() {
    let mut a = input("a", vec![thread(0, Some(0), vec![b(2.0, 3.0, 5)], 2.0, 0)]);
    a.environment = Some("kernel 6.1.0-rt, PREEMPT_RT, Xeon E-2278G".into());
    let f = figure(
        std::slice::from_ref(&a),
        Kind::Latency,
        LatencyAxis::default(),
        None,
        1000,
    );
    assert_eq!(
        f.title,
        "box · kernel 6.1.0-rt, PREEMPT_RT, Xeon E-2278G · Sun, 22 Nov 2026 01:44:57 +0000"
    );
    // Beside an input without one, each says what it has.
    let mut c = input("c", vec![thread(0, Some(1), vec![b(1.0, 2.0, 3)], 1.0, 0)]);
    c.host = Some("other".into());
    let f = figure(
        &[a, c],
        Kind::Percentile,
        LatencyAxis::default(),
        None,
        1000,
    );
    assert_eq!(
        f.title,
        "box · kernel 6.1.0-rt, PREEMPT_RT, Xeon E-2278G / other · kernel 6.1.0-rt"
    );
}

#[test]
fn percentile_figure_has_one_line_per_input() {
    let a = input(
        "run",
        vec![
            thread(0, Some(0), vec![b(2.0, 3.0, 60)], 2.0, 0),
            thread(1, Some(1), vec![b(2.0, 3.0, 30), b(9.0, 10.0, 10)], 9.0, 0),
        ],
    );
    let mut other = input("run", vec![thread(0, None, vec![b(0.0, 1.0, 5)], 0.0, 0)]);
    other.name = "elsewhere/run.json".into();
    let f = figure(
        &[a, other],
        Kind::Percentile,
        LatencyAxis::default(),
        None,
        1000,
    );
    assert_eq!(f.lines.len(), 2);
    assert_eq!(f.lines[0].label, "dir/run.json (100 samples, max 9 µs)");
    assert_eq!(f.lines[1].label, "elsewhere/run.json (5 samples, max 0 µs)");
    assert_eq!(f.y_desc, "Latency (µs), maximum 9 µs");
    let Axes::Percentile { x_end, y } = &f.axes else {
        panic!("{:?}", f.axes)
    };
    assert_eq!(*x_end, 100.0);
    assert!(y.start > 0.0 && y.start < 2.0, "{y:?}");
    // Zero latencies sit on the bottom of the log axis.
    assert!(f.lines[1].points.iter().all(|p| p.1 >= y.start));
}

/// A body of samples around 10 µs and one spike at 20 ms.
fn spiky() -> Samples {
    input(
        "spiky",
        vec![thread(
            0,
            Some(0),
            vec![
                b(0.0, 1.0, 2),
                b(9.0, 10.0, 900),
                b(12.0, 13.0, 90),
                b(20000.0, 20001.0, 1),
            ],
            20000.5,
            1,
        )],
    )
}

#[test]
fn xmax_ends_the_axis_and_counts_what_is_beyond() {
    let axis = LatencyAxis {
        xmax_us: Some(100.0),
        log: false,
    };
    let f = figure(&[spiky()], Kind::Latency, axis, None, 1000);
    let Axes::Latency { x, log_x, .. } = &f.axes else {
        panic!("{:?}", f.axes)
    };
    assert_eq!((x.clone(), *log_x), (0.0..100.0, false));
    assert_eq!(
        f.lines[0].label,
        "CPU 0 (max 20000.5 µs, 1 overflow, 1 beyond xmax)"
    );
    assert_eq!(
        f.x_desc,
        "Latency (µs), maximum 20000.5 µs; 1 sample beyond xmax 100 µs not drawn"
    );
    assert!(f.lines[0].points.iter().all(|p| p.0 <= 100.0), "{f:?}");
    // Nothing beyond: nothing said.
    let wide = LatencyAxis {
        xmax_us: Some(30000.0),
        log: false,
    };
    let f = figure(&[spiky()], Kind::Latency, wide, None, 1000);
    assert_eq!(f.lines[0].label, "CPU 0 (max 20000.5 µs, 1 overflow)");
    assert_eq!(f.x_desc, "Latency (µs), maximum 20000.5 µs");
}

#[test]
fn clipping_at_xmax() {
    let buckets = [
        b(1.0, 2.0, 5),
        b(8.0, 12.0, 3),
        b(10.0, 11.0, 2),
        b(50.0, 51.0, 1),
    ];
    assert_eq!(clip_at(&buckets, None), (buckets.to_vec(), 0));
    assert_eq!(
        clip_at(&buckets, Some(10.0)),
        (vec![b(1.0, 2.0, 5), b(8.0, 10.0, 3)], 3)
    );
    assert_eq!(clip_at(&buckets, Some(0.5)), (vec![], 11));
}

#[test]
fn log_x_spreads_the_body_and_keeps_the_spike() {
    let axis = LatencyAxis {
        xmax_us: None,
        log: true,
    };
    let f = figure(&[spiky()], Kind::Latency, axis, None, 1000);
    let Axes::Latency { x, log_x, .. } = &f.axes else {
        panic!("{:?}", f.axes)
    };
    assert!(*log_x);
    // From below the first positive bound (the [0, 1) bucket's 1) to
    // above the spike.
    assert_eq!(x.start, 0.8);
    assert!(x.end > 20001.0, "{x:?}");
    assert_eq!(f.x_desc, "Latency (µs, log scale), maximum 20000.5 µs");
    let points = &f.lines[0].points;
    assert!(points.iter().all(|p| p.0 >= x.start), "{points:?}");
    // The body's buckets stay apart: 9-10 and 12-13 µs are each drawn
    // at their own place, the spike too.
    for at in [9.0, 12.0, 20000.0] {
        assert!(
            points
                .iter()
                .any(|p| (p.0 - at).abs() < at * 0.01 && p.1 > 0.5),
            "no step at {at}: {points:?}"
        );
    }
    // Both options together: a log axis up to --xmax.
    let both = LatencyAxis {
        xmax_us: Some(1000.0),
        log: true,
    };
    let f = figure(&[spiky()], Kind::Latency, both, None, 1000);
    let Axes::Latency { x, .. } = &f.axes else {
        panic!("{:?}", f.axes)
    };
    assert_eq!(x.clone(), 0.8..1000.0);
    assert!(f.lines[0].label.ends_with("1 beyond xmax)"));
}

#[test]
fn log_columns_keep_narrow_buckets_visible() {
    // 1 µs at 10 µs is 0.04 decades: on columns of 0.1 decade it is
    // drawn one column wide; [0, 1) from the axis' start at 0.5 spans
    // 0.3 decades, four columns.
    let drawn = on_log_columns(&[b(0.0, 1.0, 3), b(10.0, 11.0, 4)], 0.5, 0.1);
    assert_eq!(drawn.len(), 5, "{drawn:?}");
    assert!((drawn[0].from - 0.5).abs() < 1e-9, "{drawn:?}");
    assert!(drawn.iter().all(|b| b.to > b.from));
    let last = drawn.last().unwrap();
    assert!(
        last.from <= 10.0 && last.to >= 11.0 && last.count == 4,
        "{drawn:?}"
    );
}

#[test]
fn mixed_inputs_are_named_in_the_title() {
    let rtlat = input("r", vec![thread(0, Some(0), vec![b(2.0, 3.0, 5)], 2.0, 0)]);
    let mut c = rtlat.clone();
    c.stem = "c".into();
    c.format = Format::CJson;
    let mut text = rtlat.clone();
    text.stem = "hist".into();
    text.format = Format::HistogramText;
    text.tool = None;
    let mut ipc = rtlat.clone();
    ipc.tool = Some("ptsematest".into());
    let title = |inputs: &[Samples]| {
        figure(inputs, Kind::Percentile, LatencyAxis::default(), None, 1000).title
    };
    assert_eq!(
        title(&[rtlat.clone(), c.clone()]),
        "cyclictest (rtlat) vs cyclictest (rt-tests)"
    );
    assert_eq!(
        title(&[rtlat.clone(), text.clone(), rtlat.clone()]),
        "cyclictest (rtlat) vs hist (-h histogram)"
    );
    assert_eq!(
        title(&[rtlat.clone(), ipc]),
        "cyclictest (rtlat) vs ptsematest (rtlat)"
    );
    // The machines go under it.
    let f = figure(
        &[rtlat.clone(), c],
        Kind::Latency,
        LatencyAxis::default(),
        None,
        1000,
    );
    assert_eq!(
        f.subtitle.as_deref(),
        Some("box · kernel 6.1.0-rt · Sun, 22 Nov 2026 01:44:57 +0000")
    );
    // Runs of one tool and program: the machines are the title.
    assert_eq!(
        title(&[rtlat.clone(), rtlat]),
        "box · kernel 6.1.0-rt · Sun, 22 Nov 2026 01:44:57 +0000"
    );
}

#[test]
fn one_overflow_is_singular() {
    let one = input("o", vec![thread(0, None, vec![b(2.0, 3.0, 5)], 90.0, 1)]);
    let f = figure(
        std::slice::from_ref(&one),
        Kind::Latency,
        LatencyAxis::default(),
        None,
        1000,
    );
    assert_eq!(f.lines[0].label, "thread 0 (max 90 µs, 1 overflow)");
    let f = figure(&[one], Kind::Percentile, LatencyAxis::default(), None, 1000);
    assert_eq!(f.lines[0].label, "o (6 samples, max 90 µs, 1 overflow)");
}
