//! `--explain` for a latency run: the measured CPUs are the thread's, or
//! every CPU this process may use when it is not pinned.

use rtlat_args::UsageError;
use rtlat_args::values::SystemView;

use super::Raw;
use super::flags::name;
use crate::cli::explain::{ExplainIds, ExplainObstacles, explain_plan};
use crate::explain::ExplainPlan;

/// The explanation asked for, if any; `cpu` is `-c`.
pub(super) fn explanation(
    raw: &Raw,
    cpu: Option<usize>,
    system: &SystemView,
) -> Result<Option<ExplainPlan>, UsageError> {
    let measured_cpus = match cpu {
        Some(cpu) => vec![cpu],
        None => {
            let mut all = system.allowed_cpus.clone();
            all.sort_unstable();
            all.dedup();
            all
        }
    };
    explain_plan(
        ExplainIds::named(name),
        &raw.explain,
        ExplainObstacles {
            synthetic: raw.shared.synthetic.is_some(),
            other_clock: None,
        },
        measured_cpus,
    )
}
