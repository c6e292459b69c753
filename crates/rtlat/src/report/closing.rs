//! The lines a cyclic tool (cyclictest, latency, signaltest) ends its
//! output with, in this order: the load's rates (`--load`), the
//! explanations (`--explain`, with its `--explain-trace` file), the verdict
//! (`--verdict`), the time of each thread's maximum (`--verdict`,
//! cyclictest's `--percentiles`).

use rtlat_core::report::RunReport;

use super::json::Extras;
use super::load::write_load;
use super::max_time::write_max_times;
use super::verdict::text::{Style, stdout_width};
use crate::explain::ExplainPlan;
use crate::output::Stdout;

/// Writes the closing lines to `out`: the verdict's with `verdict` (in its
/// style), the
/// times of the maxima with `max_times` (when `extras` has the run's
/// timeline). An `--explain-trace` file that cannot be written is the
/// error returned; the lines are written either way.
pub fn write_closing_lines(
    out: &mut Stdout,
    report: &RunReport,
    extras: &Extras<'_, '_>,
    explain: Option<&ExplainPlan>,
    verdict: Option<Style>,
    max_times: bool,
) -> anyhow::Result<()> {
    if let Some(load) = extras.load {
        out.emit(|w| write_load(w, load, &report.threads));
    }
    let explained = match extras.explain {
        Some(outcome) => crate::explain::write_outputs(outcome, explain, out),
        None => Ok(()),
    };
    if let Some(style) = verdict {
        out.emit(|w| {
            extras
                .verdict
                .write_text(w, report, "Thread", style, stdout_width())
        });
    }
    if let (true, Some(timeline)) = (max_times, &extras.timeline) {
        out.emit(|w| write_max_times(w, report, timeline));
    }
    explained
}
