//! The worst case over a longer horizon than the run, with its confidence.
//!
//! (API skeleton: the estimator is being written; `project` refuses.)

use serde::Serialize;

use crate::blocks::BlockSeries;

/// The horizons projected when none is asked: 1 hour and 24 hours.
pub const DEFAULT_HORIZONS_S: [f64; 2] = [3_600.0, 86_400.0];

/// The confidence of every interval: 95 %.
pub const CONFIDENCE: f64 = 0.95;

/// What to project.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// Horizons, s, shortest first.
    pub horizons_s: Vec<f64>,
    /// `--deadline`: the latency whose exceedance rate is estimated.
    pub deadline_ns: Option<i64>,
}

impl Default for Request {
    fn default() -> Request {
        Request {
            horizons_s: DEFAULT_HORIZONS_S.to_vec(),
            deadline_ns: None,
        }
    }
}

/// A projection, or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum Projection {
    /// The data support a projection.
    Projected(Projected),
    /// They do not.
    Refused(Refusal),
}

/// A value with its interval at [`CONFIDENCE`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The point estimate.
    pub value: f64,
    /// The interval's lower end.
    pub lower: f64,
    /// Its upper end (may be `f64::INFINITY`: serialized as `null`).
    #[serde(serialize_with = "finite_or_null")]
    pub upper: f64,
}

fn finite_or_null<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        s.serialize_none()
    }
}

/// The maximum over one horizon.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HorizonLevel {
    /// The horizon, s.
    pub horizon_s: f64,
    /// The level the maximum over the horizon stays below with
    /// probability 1/2 (its median), ns, with its interval.
    pub max_ns: Estimate,
}

/// How often a deadline is exceeded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exceedance {
    /// The deadline, ns.
    pub deadline_ns: i64,
    /// Exceedances per hour (blocks whose maximum is above it), with its
    /// interval.
    pub per_hour: Estimate,
    /// Mean time between exceedances, s (1 / rate); `None` at rate 0.
    pub mean_time_between_s: Option<f64>,
    /// Blocks of the run whose maximum was above it.
    pub observed_blocks: u64,
}

/// A projection the data support.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Projected {
    /// How it was made, in a sentence (method, fit, interval).
    pub method: String,
    /// Length of the blocks whose maxima were fitted, s.
    pub block_s: f64,
    /// How many blocks were fitted.
    pub blocks: usize,
    /// The fitted distribution's location, scale (ns) and shape.
    pub location_ns: f64,
    pub scale_ns: f64,
    pub shape: f64,
    /// The maximum over each horizon asked.
    pub levels: Vec<HorizonLevel>,
    /// The deadline's exceedance rate, when one was given.
    pub deadline: Option<Exceedance>,
}

/// Why the data support no projection.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Refusal {
    /// Stable identifier: `too_few_blocks`, `trending`, `heavy_tail`,
    /// `poor_fit`, `no_fit`, `horizon_too_far`.
    pub id: &'static str,
    /// Why, in a sentence.
    pub reason: String,
    /// What to do, in a sentence.
    pub advice: String,
    /// How much longer the run must be, s, when more time would help.
    pub more_s: Option<f64>,
}

/// Projects `series` (block maxima) as `request` asks.
pub fn project(series: &BlockSeries, request: &Request) -> Projection {
    let _ = (series, request);
    Projection::Refused(Refusal {
        id: "no_fit",
        reason: "the projection is not implemented yet".into(),
        advice: String::new(),
        more_s: None,
    })
}

/// How long a run must be for `horizon_s` to be projected.
pub fn needed_duration_s(horizon_s: f64) -> f64 {
    horizon_s.max(0.0)
}
