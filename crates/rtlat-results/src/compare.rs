//! `rtlat compare --json`: the comparison of two runs as one document
//! ([`CompareDocument`]), the text's content for programs. What each key
//! means is said where the binary fills them (`compare/json.rs`).

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

/// The document's top level, in the order written.
#[derive(Clone, Debug, Serialize)]
pub struct CompareDocument<'a> {
    pub rtlat_version: &'static str,
    pub base: RunDto<'a>,
    pub new: RunDto<'a>,
    pub noise_percent: f64,
    pub only_base: &'a [usize],
    pub only_new: &'a [usize],
    pub environment_recorded: Recorded,
    pub environment_changes: Option<Vec<FactChangeDto<'a>>>,
    pub method: MethodDto,
    pub headline: String,
    pub subjects: Vec<SubjectDto<'a>>,
    pub verdicts: RowVerdicts,
    pub any_worse: bool,
}

/// How the rows were judged.
#[derive(Clone, Debug, Serialize)]
pub struct MethodDto {
    pub confidence: f64,
    pub correction: &'static str,
    pub judged_rows: usize,
    pub row_confidence: f64,
    pub z: f64,
    pub percentiles: &'static str,
    pub min_blocks: usize,
    pub maxima: &'static str,
    pub threshold: &'static str,
    pub floor: &'static str,
    /// Above this share of stolen time, a run's rows of samples are not
    /// judged.
    pub host_stalls_steal: f64,
    /// Each run's, `null` when it does not record it.
    pub steal_share: Sides<Option<f64>>,
    /// Whether the rows of samples were left unjudged for it.
    pub host_stalls: bool,
}

/// One of the two runs: its file, threads and samples.
#[derive(Clone, Debug, Serialize)]
pub struct RunDto<'a> {
    pub file: &'a str,
    pub threads: usize,
    pub samples: u64,
    /// How the figures were made when not by rtlat (C's histogram).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<&'static str>,
}

/// Which runs record an environment.
#[derive(Clone, Debug, Serialize)]
pub struct Recorded {
    pub base: bool,
    pub new: bool,
}

/// A fact of the environment that differs between the runs.
#[derive(Clone, Debug, Serialize)]
pub struct FactChangeDto<'a> {
    pub key: &'static str,
    pub base: &'a Value,
    pub new: &'a Value,
}

/// A thread (or all threads) compared, row by row.
#[derive(Clone, Debug, Serialize)]
pub struct SubjectDto<'a> {
    pub name: &'a str,
    pub base_samples: u64,
    pub new_samples: u64,
    pub rows: Vec<RowDto>,
}

/// NEW minus BASE, µs, with its interval (`null`: unbounded).
#[derive(Clone, Debug, Serialize)]
pub struct DifferenceDto {
    pub value: Option<f64>,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    /// The practical threshold at these values.
    pub noise: Option<f64>,
}

/// A figure of each run.
#[derive(Clone, Debug, Serialize)]
pub struct Sides<T> {
    pub base: T,
    pub new: T,
}

/// The dispersion a run's interval was widened by.
#[derive(Clone, Debug, Serialize)]
pub struct SpreadDto {
    /// This run's own D, at least 1.
    pub d: f64,
    /// The D the interval used: the larger of both runs'.
    pub d_used: f64,
    pub effective_n: f64,
    /// `independent` (no blocks), `measured`, `predicted` (from the
    /// run's tenths: `blocks` is their number), `no_step` (no ladder step
    /// inside the distribution).
    pub how: &'static str,
    pub blocks: Option<usize>,
    pub ladder_ns: Option<i64>,
    /// The point estimate (`d` is its upper 95 % bound, at least 1).
    pub raw: Option<f64>,
}

/// A max row judged by the projections: each run's projected maximum
/// over the horizon, ns.
#[derive(Clone, Debug, Serialize)]
pub struct ProjectionDto {
    pub horizon_s: f64,
    pub base: rtlat_stats::projection::Estimate,
    pub new: rtlat_stats::projection::Estimate,
}

/// One row (`min`, `p50`, ..., `max`, `floor`) of a subject.
#[derive(Clone, Debug, Serialize)]
pub struct RowDto {
    pub row: &'static str,
    pub base_us: Option<f64>,
    pub new_us: Option<f64>,
    pub change_percent: Option<f64>,
    pub verdict: &'static str,
    pub judged: bool,
    pub base_interval_us: Option<[f64; 2]>,
    pub new_interval_us: Option<[f64; 2]>,
    pub difference_us: Option<DifferenceDto>,
    pub dispersion: Option<Sides<SpreadDto>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projection: Option<ProjectionDto>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor: Option<FloorDto>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// How a floor row was judged: each side's segments, the ratio and its
/// interval.
#[derive(Clone, Debug, Serialize)]
pub struct FloorDto {
    pub window_s: f64,
    pub base_segments_us: Vec<f64>,
    pub new_segments_us: Vec<f64>,
    pub ratio: f64,
    pub ratio_interval: [f64; 2],
    pub sigma_log: f64,
    pub df: usize,
    pub t: f64,
}

/// `{"min": "within noise", ...}`: the verdict line of each row, in the
/// rows' order.
#[derive(Clone, Debug, Default)]
pub struct RowVerdicts(pub Vec<(&'static str, String)>);

impl Serialize for RowVerdicts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (row, verdict) in &self.0 {
            map.serialize_entry(row, verdict)?;
        }
        map.end()
    }
}
