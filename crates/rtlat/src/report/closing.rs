//! The lines a cyclic tool (cyclictest, latency, signaltest) ends its
//! output with, in this order: the load's rates (`--load`), the
//! explanations (`--explain`, with its `--explain-trace` file), the verdict
//! (`--verdict`), the time of each thread's maximum (`--verdict`,
//! cyclictest's `--percentiles`).
//!
//! Every one of them is for a person: each line is wrapped to the width
//! of [`rtlat_args::columns`] (80 when stdout is not a terminal), a `#`
//! on every continuation line.

use rtlat_args::columns::{self, Stream};
use rtlat_core::report::RunReport;

use super::json::Extras;
use super::load::write_load;
use super::max_time::write_max_times;
use super::sample_time::SampleInstants;
use super::verdict::text::Style;
use crate::explain::ExplainPlan;
use crate::output::Stdout;

/// Writes the closing lines to `out`: the verdict's with `verdict` (in its
/// style), the
/// times of the maxima with `max_times`, what the kept time of a maximum
/// is (when `extras` has the run's timeline). An `--explain-trace` file that cannot be written is the
/// error returned; the lines are written either way.
pub fn write_closing_lines(
    out: &mut Stdout,
    report: &RunReport,
    extras: &Extras<'_, '_>,
    explain: Option<&ExplainPlan>,
    verdict: Option<Style>,
    max_times: Option<SampleInstants>,
) -> anyhow::Result<()> {
    let width = columns::width(Stream::Stdout);
    if let Some(load) = extras.load {
        out.emit(|w| columns::write_wrapped(w, width, |b| write_load(b, load, &report.threads)));
    }
    let explained = match extras.explain {
        Some(outcome) => crate::explain::write_outputs(outcome, explain, out),
        None => Ok(()),
    };
    if let Some(style) = verdict {
        out.emit(|w| {
            super::verdict::text::write(extras.verdict, w, report, "Thread", style, width)
        });
    }
    if let (Some(instants), Some(timeline)) = (max_times, &extras.timeline) {
        out.emit(|w| {
            columns::write_wrapped(w, width, |b| write_max_times(b, report, timeline, instants))
        });
    }
    explained
}
