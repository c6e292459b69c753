//! What `rtlat plot` is asked to draw, validated.

use std::path::{Path, PathBuf};

use rtlat_results::file::StdinOr;

/// The default picture size, pixels.
pub const DEFAULT_SIZE: (u32, u32) = (1000, 600);
/// The smallest side, pixels: room for the axes and a legend.
pub const MIN_SIDE: u32 = 200;
/// The largest side, pixels (an 8000x8000 PNG is 192 MB of RGB in memory).
pub const MAX_SIDE: u32 = 8000;

/// Which picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Samples against latency, one step line per thread (OSADL style).
    Latency,
    /// Latency against percentile, one line per input.
    Percentile,
    /// Each interval's maximum and p99 against the time of day, two lines
    /// per thread (OSADL's long-term plots), from `--stats-file` lines or
    /// a monitor checkpoint.
    Timeline,
}

impl Kind {
    /// Its `-k` value.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Latency => "latency",
            Kind::Percentile => "percentile",
            Kind::Timeline => "timeline",
        }
    }
}

/// The picture's file format, from the output file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// Scalable vector graphics, text left to the viewer's sans-serif.
    Svg,
    /// PNG, 8-bit RGB, text drawn with the bundled font.
    Png,
}

impl OutputFormat {
    /// `.svg` or `.png`, in any case; `None` for anything else.
    pub fn from_path(path: &Path) -> Option<OutputFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "svg" => Some(OutputFormat::Svg),
            "png" => Some(OutputFormat::Png),
            _ => None,
        }
    }
}

/// The largest `--xmax`, µs (1000 s).
pub const MAX_XMAX_US: f64 = 1e9;

/// The latency axis of the latency plot.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LatencyAxis {
    /// `--xmax`: the axis ends there, µs; the samples beyond are counted in
    /// the legend and the axis label, not drawn.
    pub xmax_us: Option<f64>,
    /// `--log-x`: a log scale.
    pub log: bool,
}

/// The validated `rtlat plot` command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The results to draw, in command-line order.
    pub inputs: Vec<StdinOr>,
    /// The picture to write.
    pub output: PathBuf,
    /// Its format.
    pub format: OutputFormat,
    /// What to draw.
    pub kind: Kind,
    /// The latency axis (latency plot only).
    pub latency_axis: LatencyAxis,
    /// Width and height in pixels.
    pub size: (u32, u32),
    /// `-T`: replaces the title made from the inputs.
    pub title: Option<String>,
}
