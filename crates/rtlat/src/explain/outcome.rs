//! What explaining a run gave: the explanations, the IRQ and thread
//! latency distributions and what the reader saw, as the outputs (text,
//! JSON, the verdict's worst sample) take it.

use std::time::Duration;

use rtlat_core::{RunReport, WakeupLatencies};
use rtlat_explain::ExplainReport;
use rtlat_results::verdict::{WorstCause, WorstSample};

/// The outcome of explaining a run.
#[derive(Debug)]
pub struct ExplainOutcome {
    /// The explanations and the IRQ and thread latency distributions.
    pub report: ExplainReport,
    /// Candidates the reader could not read before they were overwritten.
    pub candidates_missed: u64,
    /// CPU time the reader used.
    pub reader_cpu: Duration,
    /// How long the reader ran.
    pub reader_wall: Duration,
    /// Read errors of the trace files, if any (the first one).
    pub read_error: Option<String>,
    /// The recorded CPUs.
    pub cpus: Vec<usize>,
    /// CLOCK_MONOTONIC ns at the start of the run (for "s into the run"),
    /// the start of the run's [`Timeline`](crate::report::run_clock::Timeline).
    pub run_start_ns: i64,
}

impl ExplainOutcome {
    /// Puts each thread's IRQ and thread latency distributions into its
    /// report.
    pub fn attach_latencies(&self, report: &mut RunReport) {
        for latencies in &self.report.latencies {
            if let Some(thread) = report.threads.get_mut(latencies.thread) {
                thread.wakeup_latencies = Some(WakeupLatencies {
                    irq_latency: latencies.irq_latency.clone(),
                    thread_latency: latencies.thread_latency.clone(),
                    switch_traced: latencies.wakeups,
                    switch_not_traced: latencies.untraced_switches,
                });
            }
        }
    }

    /// The worst explained sample, its dominant stage and cause (see
    /// [`rtlat_explain::Explanation::dominant_cause`]), for the verdict.
    pub fn worst_sample(&self) -> Option<WorstSample> {
        // The explanations come worst first.
        let worst = self.report.explanations.first()?;
        let dominant = worst.dominant_cause()?;
        Some(WorstSample {
            thread: worst.thread,
            latency_ns: worst.latency_ns,
            component: dominant.stage,
            component_ns: dominant.ns,
            cause: dominant.cause.map(|c| WorstCause {
                kind: c.kind.as_str(),
                name: c.name.clone(),
                ns: c.ns,
            }),
            due_at_ns: worst.deadline_ns - self.run_start_ns,
            at_ns: worst.wake_ns - self.run_start_ns,
            window_ns: dominant.window_ns,
        })
    }
}
