//! A figure: everything a picture shows, as plain data (its lines, axes
//! and texts), and what every plot kind's figure shares: the titles from
//! the inputs, the legend names, the µs numbers and [`displayable`] text.

use std::ops::Range;

use crate::input::Samples;
use rtlat_results::Format;

/// The bottom of the sample-count axis: below 1, so single samples show.
pub const COUNT_FLOOR: f64 = 0.5;

/// Titles longer than this list the inputs' names instead.
pub const TITLE_LIMIT: usize = 110;

/// One drawn line.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Its legend text.
    pub label: String,
    /// Its points, in drawing order; a point whose y is NaN is a gap (the
    /// line stops before it and starts again after it).
    pub points: Vec<(f64, f64)>,
    /// Its place in [`PALETTE`](super::draw::PALETTE) (then again, darker).
    pub colour: usize,
    /// Drawn thinner and lighter, beside a main line of the same colour.
    pub faint: bool,
}

impl Line {
    /// A main line of colour `colour`.
    pub(super) fn new(label: String, points: Vec<(f64, f64)>, colour: usize) -> Line {
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
pub(super) fn titles(inputs: &[Samples]) -> (String, Option<String>) {
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
pub(super) fn input_labels(inputs: &[Samples]) -> Vec<String> {
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
