//! Drawing: the inputs become a [`Figure`] (plain data: lines, axis
//! ranges, labels; unit-tested; the timeline's is made by
//! [`crate::timeline`]), which plotters draws on an SVG or bitmap
//! backend. The PNG is encoded from the RGB buffer with the `png` crate, and
//! its text is drawn with the bundled DejaVu Sans (no fontconfig, no
//! freetype). Every text of a figure, whatever input or option it comes
//! from, passes through [`displayable`](figure::displayable), so that the
//! SVG is well-formed XML and the PNG draws no missing-glyph boxes for
//! control characters.
//!
//! This file makes the figure of a plot kind and draws it ([`render`]):
//! `figure` is the figure and what every kind shares (titles, legend
//! names, displayable text), `latency` and `percentile` make the lines and
//! axes of their plot kind, `draw` turns a figure into the picture's
//! bytes.

use crate::input::Samples;
use rtlat_plot::settings::{Kind, LatencyAxis, Settings};
use rtlat_results::samples::plural;

mod draw;
mod figure;
mod latency;
mod percentile;
#[cfg(test)]
mod tests;

pub use draw::picture;
pub use figure::{Axes, Figure, Line, TITLE_LIMIT, clip, format_us, legend_names};

use figure::titles;
use latency::latency_lines;
use percentile::percentile_lines;

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
