//! The members of a document after the envelope: cyclictest's and
//! signaltest's ([`ThreadMembers`]), and those every tool's document ends
//! with, after its `"thread"` object ([`TrailingMembers`]); the envelope
//! then ends with the environment, the audit and the verdict.

use serde::Serialize;

use crate::document::Percentiles;
use crate::explain::{ExplainEventsDto, ExplanationDto};
use crate::load::{LoadDto, PhaseDto};

/// `all_threads` (all threads' percentiles together), `load` and
/// `phases`, `explain` and `explain_events`, each left out when it does
/// not apply.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TrailingMembers<'m> {
    /// Every sample's percentiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_threads: Option<Percentiles>,
    /// `--load`, `--load-schedule`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadDto<'m>>,
    /// `--load-schedule` with phases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<Vec<PhaseDto<'m>>>,
    /// `--explain`: the explained samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Vec<ExplanationDto<'m>>>,
    /// `--explain`: what the reader saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain_events: Option<ExplainEventsDto>,
}

/// cyclictest's (and signaltest's and latency's) members after the
/// envelope; `T` writes the `"thread"` object, `"0": {..}, "1": {..}` in
/// thread order, each thread's object made as it is written.
#[derive(Clone, Debug, Serialize)]
pub struct ThreadMembers<'m, T> {
    /// Measuring threads.
    pub num_threads: usize,
    /// 1 when the figures are ns (`-N`).
    pub resolution_in_ns: u8,
    /// cyclictest: how each thread waited (`--wait`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_method: Option<&'static str>,
    /// cyclictest: how each latency was measured (`--measure`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure_method: Option<&'static str>,
    /// The threads.
    pub thread: T,
    /// All threads' percentiles, the load, `--explain`.
    #[serde(flatten)]
    pub trailing: TrailingMembers<'m>,
}
