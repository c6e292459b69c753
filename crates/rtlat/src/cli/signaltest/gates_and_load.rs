//! The judgement and the background load of a signaltest run:
//! `--fail-if` (no percentiles: a ring keeps none), the verdict's
//! projection, `--load` (no `--load-schedule`: no per-phase figures).

use rtlat_args::UsageError;
use rtlat_args::values::{OptionName, SystemView};
use rtlat_core::load::schedule::LoadSchedule;

use super::{Raw, shared};
use crate::cli::gates::{self, GateOpt};
use crate::cli::load_options::LoadOpt;
use crate::cli::shared::SharedOpt;
use crate::cli::verdict_options::Asked;
use crate::gate::GatePlan;

/// The gates, the projection and the load, in the order their errors are
/// reported.
pub(super) fn gates_and_load(
    raw: &Raw,
    system: &SystemView,
) -> Result<(Option<GatePlan>, Asked, Option<LoadSchedule>), UsageError> {
    let gates = raw.shared.gates(shared)?;
    let projection = raw.shared.projection(shared)?;
    gates::refuse_percentiles(
        gates.as_ref(),
        shared(SharedOpt::Gate(GateOpt::FailIf)),
        "a signaltest run",
    )?;
    if raw.shared.load.schedule.is_some() {
        return Err(UsageError(format!(
            "{}: a signaltest run keeps no per-phase figures; use {} SPEC for a constant load",
            shared(SharedOpt::Load(LoadOpt::Schedule)).spelling(),
            shared(SharedOpt::Load(LoadOpt::Load)).spelling()
        )));
    }
    let load = raw.shared.load(shared, system)?;
    Ok((gates, projection, load))
}
