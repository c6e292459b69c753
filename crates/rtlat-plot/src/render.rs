//! Drawing: the inputs become a [`Figure`] (plain data: lines, axis
//! ranges, labels; unit-tested; the timeline's is made by
//! [`crate::timeline`]), which plotters draws on an SVG or bitmap
//! backend. The PNG is encoded from the RGB buffer with the `png` crate, and
//! its text is drawn with the bundled DejaVu Sans (no fontconfig, no
//! freetype). Every text of a figure, whatever input or option it comes
//! from, passes through [`displayable`], so that the SVG is well-formed
//! XML and the PNG draws no missing-glyph boxes for control characters.

use std::ops::Range;
use std::sync::OnceLock;

use anyhow::anyhow;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, BoldPoints, Ranged, ValueFormatter};
use plotters::prelude::*;

use super::glyphs::GlyphBitmap;
use super::settings::{Kind, LatencyAxis, OutputFormat, Settings};
use crate::input::{Bucket, Samples, ThreadSamples};
use rtlat_results::Format;
use rtlat_results::samples::plural;

/// The bundled font, registered as `sans-serif` for the bitmap backend.
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
/// The family every text style names (SVG viewers supply their own).
const FAMILY: &str = "sans-serif";
/// The bottom of the sample-count axis: below 1, so single samples show.
pub const COUNT_FLOOR: f64 = 0.5;
/// Titles longer than this list the inputs' names instead.
pub const TITLE_LIMIT: usize = 110;

/// Line colours, one per series in order (then again, darker).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// `c` halfway to white, for a line beside one of colour `c`.
fn faint(c: RGBColor) -> RGBColor {
    let half = |v: u8| v + (255 - v) / 2;
    RGBColor(half(c.0), half(c.1), half(c.2))
}

fn colour(i: usize) -> RGBColor {
    let RGBColor(r, g, b) = PALETTE[i % PALETTE.len()];
    if (i / PALETTE.len()).is_multiple_of(2) {
        RGBColor(r, g, b)
    } else {
        RGBColor(r / 2, g / 2, b / 2)
    }
}

/// One drawn line.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Its legend text.
    pub label: String,
    /// Its points, in drawing order; a point whose y is NaN is a gap (the
    /// line stops before it and starts again after it).
    pub points: Vec<(f64, f64)>,
    /// Its place in [`PALETTE`] (then again, darker).
    pub colour: usize,
    /// Drawn thinner and lighter, beside a main line of the same colour.
    pub faint: bool,
}

impl Line {
    /// A main line of colour `colour`.
    fn new(label: String, points: Vec<(f64, f64)>, colour: usize) -> Line {
        Line {
            label,
            points,
            colour,
            faint: false,
        }
    }
}

/// The axes of a figure.
#[derive(Clone, Debug, PartialEq)]
pub enum Axes {
    /// x: latency µs, linear or log; y: samples, log from [`COUNT_FLOOR`]
    /// to `y_top`.
    Latency {
        /// The latency range.
        x: Range<f64>,
        /// Whether the latency axis is a log scale (`--log-x`).
        log_x: bool,
        /// The top of the count axis.
        y_top: f64,
    },
    /// x: `1 / (1 - p)`, log from 1 (p = 0) to `x_end`; y: latency µs, log.
    Percentile {
        /// The right end, a power of ten.
        x_end: f64,
        /// The latency range.
        y: Range<f64>,
    },
    /// x: wall-clock time, Unix seconds, labelled at `ticks`; y: latency
    /// µs, linear.
    Timeline {
        /// The time range.
        x: Range<f64>,
        /// Where the time axis is labelled, and how.
        ticks: Vec<(f64, String)>,
        /// The latency range.
        y: Range<f64>,
    },
}

/// Everything a picture shows, before any drawing.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The title line.
    pub title: String,
    /// A smaller line under it (the file and command line of one input).
    pub subtitle: Option<String>,
    /// The x axis label.
    pub x_desc: String,
    /// The y axis label.
    pub y_desc: String,
    /// The axes.
    pub axes: Axes,
    /// The lines, in legend order.
    pub lines: Vec<Line>,
}

/// Draws `inputs` as `settings` ask and returns the file's bytes.
pub fn render(inputs: &[Samples], settings: &Settings) -> anyhow::Result<Vec<u8>> {
    let figure = figure(
        inputs,
        settings.kind,
        settings.latency_axis,
        settings.title.as_deref(),
        settings.size.0,
    );
    picture(&figure, settings)
}

/// Draws `figure` in the format and size `settings` ask and returns the
/// file's bytes.
pub fn picture(figure: &Figure, settings: &Settings) -> anyhow::Result<Vec<u8>> {
    let (w, h) = settings.size;
    let err = |e: String| anyhow!("drawing the plot: {e}");
    // Both backends lay text out with the font's metrics.
    register_font()?;
    match settings.format {
        OutputFormat::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
                draw(&root, figure, false).map_err(|e| err(e.to_string()))?;
                root.present().map_err(|e| err(e.to_string()))?;
            }
            Ok(svg.into_bytes())
        }
        OutputFormat::Png => {
            let mut rgb = vec![0u8; w as usize * h as usize * 3];
            {
                let backend = GlyphBitmap::new(BitMapBackend::with_buffer(&mut rgb, (w, h)), FONT)
                    .ok_or_else(|| anyhow!("the bundled font cannot be read"))?;
                let root = backend.into_drawing_area();
                draw(&root, figure, true).map_err(|e| err(e.to_string()))?;
                root.present().map_err(|e| err(e.to_string()))?;
            }
            encode_png(&rgb, w, h)
        }
    }
}

/// Registers the bundled font once.
fn register_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err(anyhow!("the bundled font cannot be read"))
    }
}

fn encode_png(rgb: &[u8], w: u32, h: u32) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| anyhow!("encoding the PNG: {e}"))?;
        writer
            .write_image_data(rgb)
            .map_err(|e| anyhow!("encoding the PNG: {e}"))?;
        writer
            .finish()
            .map_err(|e| anyhow!("encoding the PNG: {e}"))?;
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Figures

/// The figure of `kind` for `inputs`, titled `title` or after the inputs,
/// a latency plot's latency axis as `axis` says. `width` is the picture's
/// width in pixels (bucket steps are drawn at least two pixels wide).
pub fn figure(
    inputs: &[Samples],
    kind: Kind,
    axis: LatencyAxis,
    title: Option<&str>,
    width: u32,
) -> Figure {
    let (auto_title, subtitle) = titles(inputs);
    let title = title.map_or(auto_title, str::to_string);
    let max = inputs
        .iter()
        .filter_map(Samples::max_us)
        .max_by(f64::total_cmp);
    let latency_desc = match max {
        Some(m) => format!("Latency (µs), maximum {} µs", format_us(m)),
        None => "Latency (µs)".to_string(),
    };
    let figure = match kind {
        Kind::Latency => {
            let (axes, lines, beyond) = latency_lines(inputs, width, axis);
            let mut x_desc = latency_desc;
            if axis.log {
                x_desc = x_desc.replacen("(µs)", "(µs, log scale)", 1);
            }
            if let Some(xmax) = axis.xmax_us.filter(|_| beyond > 0) {
                x_desc.push_str(&format!(
                    "; {} beyond xmax {} µs not drawn",
                    plural(beyond, "sample"),
                    format_us(xmax)
                ));
            }
            Figure {
                title,
                subtitle,
                x_desc,
                y_desc: "Number of samples".to_string(),
                axes,
                lines,
            }
        }
        Kind::Percentile => {
            let (axes, lines) = percentile_lines(inputs);
            Figure {
                title,
                subtitle,
                x_desc: "Percentile of the samples".to_string(),
                y_desc: latency_desc,
                axes,
                lines,
            }
        }
        Kind::Timeline => unreachable!("the timeline plot is drawn from timelines"),
    };
    figure.displayable()
}

impl Figure {
    /// The figure with every text [`displayable`].
    pub fn displayable(self) -> Figure {
        Figure {
            title: displayable(&self.title),
            subtitle: self.subtitle.as_deref().map(displayable),
            x_desc: displayable(&self.x_desc),
            y_desc: displayable(&self.y_desc),
            axes: self.axes,
            lines: self
                .lines
                .into_iter()
                .map(|line| Line {
                    label: displayable(&line.label),
                    ..line
                })
                .collect(),
        }
    }
}

/// `text` as a picture can show it. plotters' SVG backend escapes `<`,
/// `>`, `&`, `"` and `'` but writes every other character as it is, and
/// XML 1.0 forbids the C0 control characters but tab, line feed and
/// carriage return, even written as character references, and U+FFFE and
/// U+FFFF: one of them in a host name or title made the file unreadable.
/// Tab, line feed and carriage return become spaces (a title or label is
/// one line); every other control character (C0, DEL, C1) and U+FFFE and
/// U+FFFF become U+FFFD, the replacement character, which the bundled
/// font draws. So do the bidi controls (U+061C, U+200E, U+200F, U+202A to
/// U+202E, U+2066 to U+2069): a browser showing the SVG honours them, and
/// a label could show its characters in another order than they are.
pub fn displayable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => ' ',
            c if c.is_control() || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            '\u{061c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// The title (host, kernel, start time of each input; its name when none
/// is known) and, for one input, a subtitle with its name and command line.
/// Where an input records its environment, the kernel is its summary
/// (kernel release, preemption model, CPU model). Inputs of different
/// tools or programs are named in the title instead ([`origins`]), the
/// machines under it.
fn titles(inputs: &[Samples]) -> (String, Option<String>) {
    // Host, kernel and date of each input; without the dates, then without
    // the kernels, when that is too long; else the inputs' names.
    let describe = |input: &Samples, level: usize| {
        let parts: Vec<String> = [
            input.host.clone(),
            input
                .environment
                .clone()
                .or_else(|| input.kernel.as_ref().map(|k| format!("kernel {k}"))),
            input.date.clone(),
        ]
        .into_iter()
        .take(3 - level)
        .flatten()
        .collect();
        if parts.is_empty() {
            input.name.clone()
        } else {
            parts.join(" · ")
        }
    };
    let mut title = None;
    for level in 0..3 {
        let mut descs: Vec<String> = Vec::new();
        for input in inputs {
            let desc = describe(input, level);
            if !descs.contains(&desc) {
                descs.push(desc);
            }
        }
        let joined = descs.join(" / ");
        if joined.chars().count() <= TITLE_LIMIT {
            title = Some(joined);
            break;
        }
    }
    if let Some(origins) = origins(inputs) {
        return (clip(&origins, TITLE_LIMIT), title);
    }
    let title = title.unwrap_or_else(|| {
        let listed = format!("{} runs: {}", inputs.len(), input_labels(inputs).join(", "));
        if listed.chars().count() <= TITLE_LIMIT {
            listed
        } else {
            format!("{} runs", inputs.len())
        }
    });
    let subtitle = match inputs {
        [one] if one.host.is_some() || one.kernel.is_some() || one.date.is_some() => {
            Some(match &one.cmdline {
                Some(cmd) => clip(&format!("{}: {cmd}", one.name), 2 * TITLE_LIMIT),
                None => one.name.clone(),
            })
        }
        [one] => one.cmdline.as_ref().map(|cmd| clip(cmd, 2 * TITLE_LIMIT)),
        _ => None,
    };
    (title, subtitle)
}

/// What wrote each input, when they differ: `cyclictest (rtlat) vs
/// cyclictest (rt-tests)`, each origin once, in input order; a histogram
/// block (whose writer it does not say) and a result without a command
/// line are named by their file. `None` for one input, or inputs all of
/// one tool and program.
fn origins(inputs: &[Samples]) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for input in inputs {
        let name = match (&input.tool, input.format) {
            (_, Format::HistogramText) => format!("{} (-h histogram)", input.stem),
            (Some(tool), format) => format!("{tool} ({})", format.writer()),
            (None, format) => format!("{} ({})", input.stem, format.writer()),
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    (names.len() > 1).then(|| names.join(" vs "))
}

/// `text` cut after `limit` characters, `...` marking the cut.
pub fn clip(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

/// How legends name each input: its file stem, or its name where two
/// stems are the same.
fn input_labels(inputs: &[Samples]) -> Vec<String> {
    let named: Vec<(&str, &str)> = inputs
        .iter()
        .map(|i| (i.stem.as_str(), i.name.as_str()))
        .collect();
    legend_names(&named)
}

/// How legends name inputs given as (stem, name): the stem, or the name
/// where two stems are the same.
pub fn legend_names(inputs: &[(&str, &str)]) -> Vec<String> {
    inputs
        .iter()
        .map(|&(stem, name)| {
            let clash = inputs.iter().filter(|o| o.0 == stem).count() > 1;
            if clash { name } else { stem }.to_string()
        })
        .collect()
}

/// A latency in µs for labels: one decimal, none when it is 0.
pub fn format_us(us: f64) -> String {
    let text = format!("{us:.1}");
    match text.strip_suffix(".0") {
        Some(whole) => whole.to_string(),
        None => text,
    }
}

/// A thread's legend: its name (after `prefix`), maximum, overflows and
/// the samples `beyond` `--xmax`.
fn thread_label(prefix: Option<&str>, t: &ThreadSamples, beyond: u64) -> String {
    let mut label = match prefix {
        Some(p) => format!("{p} {}", t.name()),
        None => t.name(),
    };
    let mut details = Vec::new();
    if let Some(max) = t.max_us {
        details.push(format!("max {} µs", format_us(max)));
    }
    if t.overflows > 0 {
        details.push(plural(t.overflows, "overflow"));
    }
    if beyond > 0 {
        details.push(format!("{beyond} beyond xmax"));
    }
    if !details.is_empty() {
        label.push_str(&format!(" ({})", details.join(", ")));
    }
    label
}

/// One step line per thread of every input, on a latency axis as `axis`
/// says; also the samples beyond `--xmax`, not drawn, of all threads.
fn latency_lines(inputs: &[Samples], width: u32, axis: LatencyAxis) -> (Axes, Vec<Line>, u64) {
    let prefixes = input_labels(inputs);
    let several = inputs.len() > 1;
    // Each thread's buckets up to --xmax, and how many samples are beyond.
    let shown: Vec<Vec<(Vec<Bucket>, u64)>> = inputs
        .iter()
        .map(|i| {
            i.threads
                .iter()
                .map(|t| clip_at(&t.buckets, axis.xmax_us))
                .collect()
        })
        .collect();
    let (mut lo, mut hi, mut top) = (0.0_f64, f64::MIN, 1_u64);
    let mut lowest_positive = f64::MAX;
    for (buckets, _) in shown.iter().flatten() {
        if let (Some(first), Some(last)) = (buckets.first(), buckets.last()) {
            lo = lo.min(first.from);
            hi = hi.max(last.to);
            top = top.max(buckets.iter().map(|b| b.count).max().unwrap_or(1));
        }
        if let Some(b) = buckets.iter().find(|b| b.to > 0.0) {
            lowest_positive = lowest_positive.min(if b.from > 0.0 { b.from } else { b.to });
        }
    }
    let (x, column) = if axis.log {
        // From a little below the lowest positive latency (0 and below
        // drawn there) to a quarter above the highest, or --xmax.
        let start = if lowest_positive < f64::MAX {
            lowest_positive * 0.8
        } else {
            1.0
        };
        let end = axis.xmax_us.unwrap_or((hi * 1.25).max(start * 10.0));
        let x = start..end.max(start * 10.0);
        // Two pixels of the plotting area, in decades.
        let column = (x.end.log10() - x.start.log10()) * 2.0 / (f64::from(width) * 0.85);
        (x, column)
    } else {
        let hi = hi.max(lo + 10.0);
        let x = match axis.xmax_us {
            Some(xmax) => lo..xmax,
            None => lo..hi + (hi - lo) * 0.02,
        };
        // Two pixels of the plotting area (about 85 % of the picture).
        let column = (x.end - x.start) * 2.0 / (f64::from(width) * 0.85);
        (x, column)
    };
    let mut lines = Vec::new();
    let mut beyond_all = 0;
    for ((input, prefix), threads) in inputs.iter().zip(&prefixes).zip(&shown) {
        for (t, (buckets, beyond)) in input.threads.iter().zip(threads) {
            if t.buckets.is_empty() {
                continue;
            }
            beyond_all += beyond;
            let drawn = if axis.log {
                on_log_columns(buckets, x.start, column)
            } else {
                on_columns(buckets, x.start, column)
            };
            lines.push(Line::new(
                thread_label(several.then_some(prefix.as_str()), t, *beyond),
                step_points(&drawn, COUNT_FLOOR),
                lines.len(),
            ));
        }
    }
    // A whole decade above the highest count leaves room for the legend.
    let y_top = 10_f64.powf((top as f64 * 2.0).log10().ceil()).max(10.0);
    let axes = Axes::Latency {
        x,
        log_x: axis.log,
        y_top,
    };
    (axes, lines, beyond_all)
}

/// `buckets` (sorted) up to `xmax`: those from `xmax` up left out and
/// their samples counted; one across `xmax` ends there (its samples drawn:
/// where in it they lie is not known). All of them without `xmax`.
pub fn clip_at(buckets: &[Bucket], xmax: Option<f64>) -> (Vec<Bucket>, u64) {
    let Some(xmax) = xmax else {
        return (buckets.to_vec(), 0);
    };
    let mut shown = Vec::with_capacity(buckets.len());
    let mut beyond = 0;
    for b in buckets {
        if b.from >= xmax {
            beyond += b.count;
        } else {
            shown.push(Bucket {
                to: b.to.min(xmax),
                ..*b
            });
        }
    }
    (shown, beyond)
}

/// [`on_columns`] on a log axis starting at `start` (> 0), `column`
/// decades wide: the bounds at or below `start` are drawn at `start`.
pub fn on_log_columns(buckets: &[Bucket], start: f64, column: f64) -> Vec<Bucket> {
    let log = |v: f64| v.max(start).log10();
    let in_decades: Vec<Bucket> = buckets
        .iter()
        .filter(|b| b.to > start)
        .map(|b| Bucket {
            from: log(b.from),
            to: log(b.to),
            count: b.count,
        })
        .collect();
    on_columns(&in_decades, start.log10(), column)
        .into_iter()
        .map(|b| Bucket {
            from: 10_f64.powf(b.from),
            to: 10_f64.powf(b.to),
            count: b.count,
        })
        .collect()
}

/// The outline of `buckets` (sorted, not overlapping): up at each
/// bucket's lower bound, across at its count, down to `floor` at its upper
/// bound unless the next bucket starts there.
pub fn step_points(buckets: &[Bucket], floor: f64) -> Vec<(f64, f64)> {
    let mut points = Vec::with_capacity(buckets.len() * 2 + 2);
    let mut prev_to: Option<f64> = None;
    for b in buckets {
        let count = b.count as f64;
        match prev_to {
            Some(to) if to == b.from => {}
            Some(to) => {
                points.push((to, floor));
                points.push((b.from, floor));
            }
            None => points.push((b.from, floor)),
        }
        points.push((b.from, count));
        points.push((b.to, count));
        prev_to = Some(b.to);
    }
    if let Some(to) = prev_to {
        points.push((to, floor));
    }
    // Drop the corner points of equal neighbouring counts.
    points.dedup();
    points
}

/// `buckets` as drawn on columns `column` wide from `origin`: unchanged
/// when every bucket is at least a column wide; otherwise each column
/// touched by a bucket takes the largest count among them. A lone 1 µs
/// bucket on a 5000 µs axis thus stays visible, a column wide, instead of
/// a zero-width spike that a bitmap does not show.
pub fn on_columns(buckets: &[Bucket], origin: f64, column: f64) -> Vec<Bucket> {
    if column <= 0.0 || buckets.iter().all(|b| b.to - b.from >= column) {
        return buckets.to_vec();
    }
    let mut columns: std::collections::BTreeMap<i64, u64> = std::collections::BTreeMap::new();
    for b in buckets {
        let first = ((b.from - origin) / column).floor() as i64;
        let last = (((b.to - origin) / column).ceil() as i64 - 1).max(first);
        for k in first..=last {
            let c = columns.entry(k).or_insert(0);
            *c = (*c).max(b.count);
        }
    }
    columns
        .into_iter()
        .map(|(k, count)| Bucket {
            from: origin + k as f64 * column,
            to: origin + (k + 1) as f64 * column,
            count,
        })
        .collect()
}

/// The buckets of all `threads` together, lowest first; buckets with the
/// same bounds are added up.
pub fn merge_threads(threads: &[ThreadSamples]) -> Vec<Bucket> {
    let mut all: Vec<Bucket> = threads.iter().flat_map(|t| t.buckets.clone()).collect();
    all.sort_by(|a, b| a.from.total_cmp(&b.from).then(a.to.total_cmp(&b.to)));
    let mut merged: Vec<Bucket> = Vec::with_capacity(all.len());
    for b in all {
        match merged.last_mut() {
            Some(last) if last.from == b.from && last.to == b.to => last.count += b.count,
            _ => merged.push(b),
        }
    }
    merged
}

/// The latency against `1 / (1 - p)` curve of `buckets` (sorted) plus
/// `overflows` samples above them (placed between the top bucket and
/// `max`), interpolating linearly within each bucket. The last sample
/// stands at `1 - p = 1 / N`. Latencies never go down along the curve and
/// never exceed `max`.
pub fn percentile_points(buckets: &[Bucket], overflows: u64, max: Option<f64>) -> Vec<(f64, f64)> {
    let mut pieces = buckets.to_vec();
    if overflows > 0
        && let Some(top) = pieces.last().map(|b| b.to)
    {
        pieces.push(Bucket {
            from: top,
            to: max.filter(|m| *m > top).unwrap_or(top),
            count: overflows,
        });
    }
    let total: u64 = pieces.iter().map(|b| b.count).sum();
    if total == 0 {
        return Vec::new();
    }
    let n = total as f64;
    let mut points = Vec::with_capacity(pieces.len() * 2);
    let mut below = 0_u64;
    let mut level = f64::MIN;
    for b in &pieces {
        let x0 = n / (total - below) as f64;
        below += b.count;
        let x1 = n / (total - below).max(1) as f64;
        let y0 = b.from.max(level);
        let mut y1 = b.to;
        if let Some(m) = max
            && m >= y0
        {
            y1 = y1.min(m);
        }
        let y1 = y1.max(y0);
        level = y1;
        points.push((x0, y0));
        points.push((x1, y1));
    }
    points.dedup();
    points
}

/// One curve per input, all its threads together.
fn percentile_lines(inputs: &[Samples]) -> (Axes, Vec<Line>) {
    let labels = input_labels(inputs);
    let mut lines = Vec::new();
    let mut most = 1_u64;
    for (input, label) in inputs.iter().zip(labels) {
        let buckets = merge_threads(&input.threads);
        let overflows: u64 = input.threads.iter().map(|t| t.overflows).sum();
        let samples = buckets.iter().map(|b| b.count).sum::<u64>() + overflows;
        most = most.max(samples);
        let mut details = vec![format!("{samples} samples")];
        if let Some(max) = input.max_us() {
            details.push(format!("max {} µs", format_us(max)));
        }
        if overflows > 0 {
            details.push(plural(overflows, "overflow"));
        }
        lines.push(Line::new(
            format!("{label} ({})", details.join(", ")),
            percentile_points(&buckets, overflows, input.max_us()),
            lines.len(),
        ));
    }
    let positive = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .filter(|y| *y > 0.0);
    let y_lo = positive.clone().min_by(f64::total_cmp).unwrap_or(1.0) * 0.8;
    let y_hi = positive
        .max_by(f64::total_cmp)
        .unwrap_or(1.0)
        .max(y_lo * 2.0)
        * 1.25;
    for line in &mut lines {
        for p in &mut line.points {
            p.1 = p.1.max(y_lo);
        }
    }
    let x_end = 10_f64.powf((most as f64).log10().ceil()).max(100.0);
    (
        Axes::Percentile {
            x_end,
            y: y_lo..y_hi,
        },
        lines,
    )
}

/// Tick values for a log axis over `range`: the decades, with 2 and 5
/// (then every digit) in between when the range has few decades.
pub fn log_ticks(range: &Range<f64>) -> Vec<f64> {
    let (lo, hi) = (range.start, range.end);
    let in_range = |v: &f64| *v >= lo * 0.999_999 && *v <= hi * 1.000_001;
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    for steps in [
        &[1.0][..],
        &[1.0, 2.0, 5.0],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ] {
        let ticks: Vec<f64> = (first..=last)
            .flat_map(|e| steps.iter().map(move |s| s * 10_f64.powi(e)))
            .filter(in_range)
            .collect();
        if ticks.len() >= 4 {
            return ticks;
        }
    }
    (first..=last)
        .flat_map(|e| (1..10).map(move |s| f64::from(s) * 10_f64.powi(e)))
        .filter(in_range)
        .collect()
}

/// The percentile `p = 1 - 1/x` as a label: `0 %`, `50 %`, `90 %`, `99.9 %`.
pub fn percent_label(x: f64) -> String {
    let percent = 100.0 - 100.0 / x;
    let decimals = (x.log10().round() as i32 - 2).max(0) as usize;
    format!("{percent:.decimals$} %")
}

/// A count on the log axis: whole numbers, powers of ten past a million.
fn count_label(v: f64) -> String {
    if v < 1.0 {
        format!("{v}")
    } else if v < 1e6 {
        format!("{v:.0}")
    } else {
        format!("1e{:.0}", v.log10())
    }
}

/// A latency on the log axis.
fn latency_label(v: f64) -> String {
    if v >= 1.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_string()
    }
}

// ---------------------------------------------------------------------------
// Drawing

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Draws `figure` on `root`, a bitmap when `bitmap`.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    figure: &Figure,
    bitmap: bool,
) -> DrawResult<DB> {
    let (w, h) = root.dim_in_pixel();
    let scale = (f64::from(w) / 1000.0)
        .min(f64::from(h) / 600.0)
        .clamp(0.45, 4.0);
    let px = |size: f64| (size * scale).round().max(8.0);
    root.fill(&WHITE)?;
    let top = px(6.0) as i32;
    let mut area = root
        .margin(top, 0, 0, 0)
        .titled(&figure.title, (FAMILY, px(22.0)))?;
    if let Some(sub) = &figure.subtitle {
        area = area.titled(
            sub,
            (FAMILY, px(13.0)).into_font().color(&RGBColor(80, 80, 80)),
        )?;
    }
    let style = Style {
        label: px(14.0),
        desc: px(16.0),
        legend: px(14.0),
        segments: bitmap && matches!(figure.axes, Axes::Timeline { .. }),
        line_width: (2.0 * scale).round().max(1.0) as u32,
        margin: px(15.0) as u32,
        x_area: px(55.0) as u32,
        y_area: px(80.0) as u32,
    };
    match &figure.axes {
        Axes::Latency { x, log_x, y_top } => {
            let y = COUNT_FLOOR..*y_top;
            if *log_x {
                let x_spec = x.clone().log_scale().with_key_points(log_ticks(x));
                latency_chart(&area, figure, &style, x_spec, y)
            } else {
                latency_chart(&area, figure, &style, x.clone(), y)
            }
        }
        Axes::Percentile { x_end, y } => {
            let mut x_ticks = vec![1.0];
            let mut t = 2.0;
            while t <= *x_end * 1.000_001 {
                x_ticks.push(t);
                t = if t == 2.0 { 10.0 } else { t * 10.0 };
            }
            let x_spec = (1.0..*x_end).log_scale().with_key_points(x_ticks);
            let y_spec = y.clone().log_scale().with_key_points(log_ticks(y));
            chart(
                &area,
                figure,
                &style,
                x_spec,
                y_spec,
                &|v: &f64| percent_label(*v),
                &|v: &f64| latency_label(*v),
            )
        }
        Axes::Timeline { x, ticks, y } => {
            let x_spec = TimeAxis {
                linear: x.clone().into(),
                ticks: ticks.iter().map(|t| t.0).collect(),
            };
            // plotters asks for the label of each key point.
            let x_fmt = |v: &f64| {
                ticks
                    .iter()
                    .min_by(|a, b| (a.0 - v).abs().total_cmp(&(b.0 - v).abs()))
                    .map_or_else(String::new, |t| t.1.clone())
            };
            chart(
                &area,
                figure,
                &style,
                x_spec,
                y.clone(),
                &x_fmt,
                &|v: &f64| format_us(*v),
            )
        }
    }
}

/// A linear axis labelled at given points: the timeline's time axis
/// (plotters' own key points on a linear axis take no formatter of ours).
struct TimeAxis {
    linear: plotters::coord::types::RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for TimeAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear.map(value, limit)
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> Range<f64> {
        self.linear.range()
    }
}

/// The latency plot's chart: latency on `x` (linear or log), samples on a
/// log axis over `y`.
fn latency_chart<DB, X>(
    area: &DrawingArea<DB, Shift>,
    figure: &Figure,
    style: &Style,
    x: X,
    y: Range<f64>,
) -> DrawResult<DB>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let y_spec = y.clone().log_scale().with_key_points(log_ticks(&y));
    chart(
        area,
        figure,
        style,
        x,
        y_spec,
        &|v: &f64| latency_label(*v),
        &|v: &f64| count_label(*v),
    )
}

/// The most tick labels an axis gets (plotters' default, named: the
/// labels' room is measured on as many).
const LABELS: usize = 11;

/// Text sizes and spacing, pixels, and how lines are drawn.
struct Style {
    /// Each segment of a line drawn apart: the bitmap backend fills a
    /// thick line as one polygon, in which the up and down strokes of a
    /// spike a pixel apart cancel out and the join of an acute angle
    /// reaches far past its point (the timeline's spikes).
    segments: bool,
    label: f64,
    desc: f64,
    legend: f64,
    line_width: u32,
    margin: u32,
    x_area: u32,
    y_area: u32,
}

fn chart<DB, X, Y>(
    area: &DrawingArea<DB, Shift>,
    figure: &Figure,
    style: &Style,
    x: X,
    y: Y,
    x_fmt: &dyn Fn(&f64) -> String,
    y_fmt: &dyn Fn(&f64) -> String,
) -> DrawResult<DB>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let (x, y): (X::CoordDescType, Y::CoordDescType) = (x.into(), y.into());
    // Room for the tick labels, from the widest of each axis rather than
    // a fixed size: an x label is centred on its tick, so the last one
    // reaches past the plotting area by half its width ("99.9999 %" at
    // the end of the percentile axis); the y labels stand beside the
    // axis's description.
    let font: TextStyle = (FAMILY, style.label).into();
    let widest = |labels: Vec<String>| {
        labels
            .iter()
            .filter_map(|l| area.estimate_text_size(l, &font).ok())
            .map(|(w, _)| w)
            .max()
            .unwrap_or(0)
    };
    let x_widest = widest(x.key_points(BoldPoints(LABELS)).iter().map(x_fmt).collect());
    let y_widest = widest(y.key_points(BoldPoints(LABELS)).iter().map(y_fmt).collect());
    let right = (style.margin * 2).max(x_widest / 2 + style.margin);
    let y_area = style
        .y_area
        .max(y_widest + (style.desc + style.label) as u32);
    let mut chart = ChartBuilder::on(area)
        .margin(style.margin)
        .margin_right(right)
        .x_label_area_size(style.x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc(figure.x_desc.as_str())
        .y_desc(figure.y_desc.as_str())
        .label_style((FAMILY, style.label))
        .axis_desc_style((FAMILY, style.desc))
        // Solid greys, not black with opacity: some SVG renderers ignore
        // the opacity attribute.
        .bold_line_style(RGBColor(205, 205, 205))
        .light_line_style(RGBColor(238, 238, 238))
        .x_labels(LABELS)
        .y_labels(LABELS)
        .x_label_formatter(x_fmt)
        .y_label_formatter(y_fmt)
        .draw()?;
    let swatch = (style.legend * 1.3) as i32;
    let thick = (style.line_width as i32 + 1).max(3);
    for line in &figure.lines {
        let (c, width, thick) = match line.faint {
            false => (colour(line.colour), style.line_width, thick),
            true => (
                faint(colour(line.colour)),
                (style.line_width / 2).max(1),
                (thick / 2).max(2),
            ),
        };
        // The legend's entry, a series without elements; then the line,
        // a stretch between gaps at a time.
        chart
            .draw_series(LineSeries::new(
                std::iter::empty::<(f64, f64)>(),
                c.stroke_width(width),
            ))?
            .label(line.label.as_str())
            .legend(move |(x, y)| {
                Rectangle::new(
                    [(x, y - thick / 2), (x + swatch, y + thick / 2)],
                    c.filled(),
                )
            });
        for stretch in line.points.split(|p| p.1.is_nan()) {
            let Some(&point) = stretch.first() else {
                continue;
            };
            if stretch.iter().all(|p| *p == point) {
                // A line of one point draws nothing: a dot instead.
                chart.draw_series(std::iter::once(Circle::new(point, width + 1, c.filled())))?;
            } else if style.segments {
                chart.draw_series(
                    stretch
                        .windows(2)
                        .map(|w| PathElement::new(vec![w[0], w[1]], c.stroke_width(width))),
                )?;
            } else {
                chart.draw_series(LineSeries::new(
                    stretch.iter().copied(),
                    c.stroke_width(width),
                ))?;
            }
        }
    }
    if !figure.lines.is_empty() {
        chart
            .configure_series_labels()
            .position(match figure.axes {
                // Above the tail, where counts are low.
                Axes::Latency { .. } => SeriesLabelPosition::UpperRight,
                // Below the rising curves.
                Axes::Percentile { .. } => SeriesLabelPosition::LowerRight,
                // In the room left above the maxima.
                Axes::Timeline { .. } => SeriesLabelPosition::UpperRight,
            })
            .label_font((FAMILY, style.legend))
            .legend_area_size(swatch + (style.legend * 0.6) as i32)
            .background_style(WHITE)
            .border_style(RGBColor(150, 150, 150))
            .margin(style.margin / 2)
            .draw()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
