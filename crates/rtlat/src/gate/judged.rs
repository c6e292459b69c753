//! The gates judged: what the outputs written once the gates are
//! evaluated (`run::GATE_FORMATS`: the JUnit report) are given. Below
//! both the list and its outputs, so that each imports it and neither
//! the other.

use super::GatePlan;
use super::evaluate::Outcome;

/// The gates judged, as the outputs written after them see them
/// (`run::GATE_FORMATS`).
pub struct Judged<'a> {
    /// The gates asked for (`--junit`'s file among them).
    pub plan: &'a GatePlan,
    /// Each limit's outcome, in the order given.
    pub outcomes: &'a [Outcome],
    /// The tool, the JUnit suite's name.
    pub tool: &'a str,
    /// The run's length.
    pub duration_s: f64,
}
