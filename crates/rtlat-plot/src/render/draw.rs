//! Drawing a [`Figure`] with plotters, on the SVG backend or on a bitmap
//! encoded as PNG with the bundled font: the palette, the axes of each
//! kind with their ticks and labels, the lines and the legend.

use std::ops::Range;
use std::sync::OnceLock;

use anyhow::anyhow;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, BoldPoints, Ranged, ValueFormatter};
use plotters::prelude::*;

use crate::glyphs::GlyphBitmap;
use rtlat_plot::settings::{OutputFormat, Settings};

use super::figure::{Axes, COUNT_FLOOR, Figure, format_us};

/// The bundled font, registered as `sans-serif` for the bitmap backend.
pub(super) const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// The family every text style names (SVG viewers supply their own).
const FAMILY: &str = "sans-serif";

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
pub(super) fn count_label(v: f64) -> String {
    if v < 1.0 {
        format!("{v}")
    } else if v < 1e6 {
        format!("{v:.0}")
    } else {
        format!("1e{:.0}", v.log10())
    }
}

/// A latency on the log axis.
pub(super) fn latency_label(v: f64) -> String {
    if v >= 1.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_string()
    }
}

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
