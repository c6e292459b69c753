//! The document of the IPC tools (`rtlat pmqtest`, `ptsematest`,
//! `sigwaittest`, `svsematest --json`): after the envelope, the
//! `"thread"` object holds one [`PairDto`] per pair, a `sender` and a
//! `receiver` (whose latencies are the pair's), rt-tests 2.4's keys
//! first, then rtlat's.

use serde::Serialize;

use crate::document::{Distribution, Disturbances, Histogram, Percentiles};
use crate::load::Numbered;
use crate::members::TrailingMembers;

/// The members after the envelope.
#[derive(Clone, Debug, Serialize)]
pub struct IpcMembers<'m> {
    /// Pairs.
    pub num_threads: usize,
    /// 1 when the figures are ns.
    pub resolution_in_ns: u8,
    /// Each pair, by its number.
    pub thread: Numbered<PairDto>,
    /// All receivers' percentiles, the load and its phases (receivers as
    /// threads), `--explain`.
    #[serde(flatten)]
    pub trailing: TrailingMembers<'m>,
}

/// One pair.
#[derive(Clone, Debug, Serialize)]
pub struct PairDto {
    /// The sending side.
    pub sender: SenderDto,
    /// The receiving side, which holds the latencies.
    pub receiver: ReceiverDto,
}

/// A pair's sending side.
#[derive(Clone, Debug, Serialize)]
pub struct SenderDto {
    /// Its CPU, -1 when unknown.
    pub cpu: i64,
    /// Its real-time priority.
    pub priority: u8,
    /// Messages sent.
    pub samples: u64,
    /// The pair's interval, µs.
    pub interval: i64,
    // Ours.
    /// Its thread (or process) id.
    pub tid: i32,
}

/// A pair's receiving side.
#[derive(Clone, Debug, Serialize)]
pub struct ReceiverDto {
    /// Its CPU, -1 when unknown.
    pub cpu: i64,
    /// Its real-time priority.
    pub priority: u8,
    /// pmqtest: receives that timed out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeoutcount: Option<u64>,
    /// The smallest latency, `null` without samples.
    pub min: Option<i64>,
    /// `%.2f` of the average, `null` without samples.
    pub avg: Option<f64>,
    /// The largest latency, `null` without samples.
    pub max: Option<i64>,
    // Ours.
    /// Samples taken.
    pub samples: u64,
    /// The smallest, ns.
    pub min_ns: Option<i64>,
    /// The largest, ns.
    pub max_ns: Option<i64>,
    /// The mean, ns (1 decimal).
    pub mean_ns: Option<f64>,
    /// Its thread (or process) id.
    pub tid: i32,
    /// The pair's interval, µs.
    pub interval_us: i64,
    /// The non-zero buckets of `--histogram`; `{}` without.
    pub histogram: Histogram,
    /// What disturbed it (real runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbances: Option<Disturbances>,
    /// Its percentiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentiles: Option<Percentiles>,
    /// Every sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
}
