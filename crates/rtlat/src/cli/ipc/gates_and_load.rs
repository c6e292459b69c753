//! The judgement and the background load of an ipc run: `--fail-if`,
//! the verdict's projection, `--load` and `--load-schedule`, with what a
//! fork-mode (`-f`) or synthetic run refuses.

use rtlat_args::UsageError;
use rtlat_args::values::{OptionName, SystemView};
use rtlat_core::load::LoadSchedule;

use super::flags::name;
use super::raw::Raw;
use crate::cli::gates;
use crate::cli::verdict_options::Asked;
use crate::gate::GatePlan;

/// The gates, the projection and the load, in the order their errors are
/// reported; `fork` is fork mode.
pub(super) fn gates_and_load(
    raw: &Raw,
    fork: bool,
    system: &SystemView,
) -> Result<(Option<GatePlan>, Asked, Option<LoadSchedule>), UsageError> {
    let gates = raw.shared.gates(name)?;
    let projection = raw.shared.projection(name)?;
    if fork {
        gates::refuse_percentiles(gates.as_ref(), name("fail-if"), "a fork-mode run (-f)")?;
    }
    if raw.shared.load.schedule.is_some() && (fork || raw.shared.synthetic.is_some()) {
        let mode = if fork {
            format!("a fork-mode run ({})", name("fork").spelling())
        } else {
            format!("a {} run", name("synthetic").spelling())
        };
        return Err(UsageError(format!(
            "{}: {mode} keeps no per-phase figures; use {} SPEC for a constant load",
            name("load-schedule").spelling(),
            name("load").spelling()
        )));
    }
    let load = raw.shared.load(name, system)?;
    Ok((gates, projection, load))
}
