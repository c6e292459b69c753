//! Why was a sample late: the worst latencies explained from kernel trace
//! events (`--explain`).
//!
//! The reader thread hands binary trace pages to an [`Explainer`]; it
//! decodes them ([`events`]), keeps a short window of each CPU's events
//! ([`window`]), attributes the latency of candidate samples to what ran
//! between the timer's expiry and the thread's wake-up ([`attribute`]), and
//! follows every wake-up of the measured threads to record their IRQ and
//! thread latencies ([`latencies`]). Pure analysis: no file, no thread.

pub mod attribute;
pub mod events;
pub mod latencies;
pub mod window;

#[cfg(test)]
mod scenario;

pub use attribute::{
    Attribution, Cause, CauseKind, Component, ComponentName, ExplainContext, Explanation,
    SUM_TOLERANCE_NS, Sample, explain, explain_final,
};
pub use events::{
    Comm, DecoderError, EventDecoder, EventKind, IrqNames, KernelEvent, PageItem, Vector,
};
pub use latencies::{ThreadLatencies, WakeupTracker};
pub use window::{CpuWindows, LostCount, WindowTotals};
