//! The `--explain` parts of a document: the `"explain"` array (one
//! [`ExplanationDto`] per explained sample, worst first) and the
//! `"explain_events"` object ([`ExplainEventsDto`]: what the trace reader
//! saw and what it cost). Times `at_ns`, `due_at_ns`, `from_ns` and
//! `to_ns` are ns since the start of the run; the `*_monotonic_ns` ones
//! CLOCK_MONOTONIC.

use serde::Serialize;

/// One explained sample.
#[derive(Clone, Debug, Serialize)]
pub struct ExplanationDto<'a> {
    /// The measuring thread.
    pub thread: usize,
    /// Its CPU, when known.
    pub cpu: Option<usize>,
    /// The sample's latency.
    pub latency_ns: i64,
    /// The wake-up, in ns since the start of the run.
    pub at_ns: i64,
    /// The latency's components, each with its causes.
    pub components: Vec<ComponentDto<'a>>,
    /// Events lost around the sample.
    pub lost_events: u64,
    // Ours, after the keys of the issue.
    /// The thread's id.
    pub tid: i32,
    /// The deadline, CLOCK_MONOTONIC ns.
    pub deadline_monotonic_ns: i64,
    /// The wake-up, CLOCK_MONOTONIC ns.
    pub wake_monotonic_ns: i64,
    /// Events were lost, how many the kernel did not count.
    pub lost_events_uncounted: bool,
    /// The trace window began after the latency did.
    pub window_short: bool,
    /// What the components leave unexplained.
    pub unexplained_ns: i64,
    /// The components add up to the latency.
    pub complete: bool,
    /// Notes on the explanation.
    pub notes: &'a [String],
    /// The deadline, in ns since the start of the run.
    pub due_at_ns: i64,
    /// What the trace window showed, when the latency began before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_window: Option<TraceWindowDto<'a>>,
}

/// The trace window of a latency that began before it.
#[derive(Clone, Debug, Serialize)]
pub struct TraceWindowDto<'a> {
    /// The CPU traced.
    pub cpu: usize,
    /// The window's start, ns since the start of the run.
    pub from_ns: i64,
    /// The switch into the thread (else its clock read), ns since the
    /// start of the run.
    pub to_ns: i64,
    /// What ran in it.
    pub causes: Vec<CauseDto<'a>>,
}

/// One component of a latency (`irq_latency`, `thread_latency`, ...).
#[derive(Clone, Debug, Serialize)]
pub struct ComponentDto<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its time.
    pub ns: i64,
    /// Its causes, largest first.
    pub causes: Vec<CauseDto<'a>>,
}

/// A cause of a component's time.
#[derive(Clone, Debug, Serialize)]
pub struct CauseDto<'a> {
    /// `task`, `irq`, `softirq`, `idle`, ...
    pub kind: &'a str,
    /// What it was (`spin[4242]`, `24 virtio0`, ...).
    pub name: &'a str,
    /// Its time.
    pub ns: i64,
    /// A task's pid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// A task's scheduling policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<&'a str>,
    /// A task's priority.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
}

/// The `"explain_events"` object: what the reader saw and what it cost.
#[derive(Clone, Debug, Serialize)]
pub struct ExplainEventsDto {
    /// Kernel events read.
    pub events: u64,
    /// Events the kernel lost.
    pub lost_events: u64,
    /// It lost more than it counted.
    pub lost_events_uncounted: bool,
    /// Events that could not be decoded.
    pub undecodable: u64,
    /// Samples the measuring threads offered.
    pub samples_offered: u64,
    /// Those explained.
    pub samples_explained: u64,
    /// Those overwritten before the reader took them.
    pub samples_missed: u64,
    /// CPU time the reader used, s (6 decimals).
    pub reader_cpu_s: f64,
    /// How long it ran, s (6 decimals).
    pub reader_wall_s: f64,
    /// The first error reading the trace, if any.
    pub read_error: Option<String>,
}
