//! The judgement and the background load of a signaltest run:
//! `--fail-if` (no percentiles: a ring keeps none), the verdict's
//! projection, `--load` (no `--load-schedule`: no per-phase figures).

use rtlat_args::UsageError;
use rtlat_args::values::{OptionName, SystemView};
use rtlat_core::load::LoadSchedule;

use super::flags::name;
use super::raw::Raw;
use crate::cli::gates;
use crate::cli::verdict_options::Asked;
use crate::gate::GatePlan;

/// The gates, the projection and the load, in the order their errors are
/// reported.
pub(super) fn gates_and_load(
    raw: &Raw,
    system: &SystemView,
) -> Result<(Option<GatePlan>, Asked, Option<LoadSchedule>), UsageError> {
    let gates = raw.shared.gates(name)?;
    let projection = raw.shared.projection(name)?;
    gates::refuse_percentiles(gates.as_ref(), name("fail-if"), "a signaltest run")?;
    if raw.shared.load.schedule.is_some() {
        return Err(UsageError(format!(
            "{}: a signaltest run keeps no per-phase figures; use {} SPEC for a constant load",
            name("load-schedule").spelling(),
            name("load").spelling()
        )));
    }
    let load = raw.shared.load(name, system)?;
    Ok((gates, projection, load))
}
