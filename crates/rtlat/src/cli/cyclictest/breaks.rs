//! What a late wake-up sets off: the break (`-b`, with `--tracemark`) and
//! the spike list (`--spike`, `--spike-nodes`), and the warnings for an
//! option given without the one it acts with.

use rtlat_core::{BreakPlan, SpikePlan};

use super::flags::name;
use super::raw::{DEFAULT_SPIKE_NODES, MAX_SPIKE_NODES, Raw};
use rtlat_args::UsageError;
use rtlat_args::values::{OptionName, int_in, int_in_or};

/// `-b US` (`unit`: the latencies', microseconds or nanoseconds).
pub(super) fn breaktrace(raw: &Raw, unit: &str) -> Result<Option<BreakPlan>, UsageError> {
    match &raw.breaktrace {
        Some(text) => Ok(Some(BreakPlan {
            threshold: int_in(
                name("breaktrace"),
                text,
                1..=i64::from(i32::MAX),
                &format!("a latency threshold in {unit}"),
            )?,
        })),
        None => Ok(None),
    }
}

/// `--spike US` and `--spike-nodes N`.
pub(super) fn spikes(raw: &Raw, unit: &str) -> Result<Option<SpikePlan>, UsageError> {
    let capacity = int_in_or(
        name("spike-nodes"),
        raw.spike_nodes.as_deref(),
        1..=MAX_SPIKE_NODES,
        "a number of spikes to keep",
        DEFAULT_SPIKE_NODES as i64,
    )? as usize;
    match &raw.spike {
        Some(text) => Ok(Some(SpikePlan {
            trigger: int_in(
                name("spike"),
                text,
                1..=i64::from(i32::MAX),
                &format!("a latency trigger in {unit}"),
            )?,
            capacity,
        })),
        None => Ok(None),
    }
}

/// `WARN: X has no effect without Y` for each option given without its
/// partner: `--tracemark` without `-b`, `--spike-nodes` without
/// `--spike`, `--dbg_cyclictest` without `-R`.
pub(super) fn lone_option_warnings(raw: &Raw, breaks: bool, spikes: bool) -> Vec<String> {
    [
        (raw.tracemark && !breaks, "tracemark", "breaktrace"),
        (raw.spike_nodes.is_some() && !spikes, "spike-nodes", "spike"),
        (
            raw.dbg_cyclictest && !raw.check_resolution,
            "dbg_cyclictest",
            "resolution",
        ),
    ]
    .into_iter()
    .filter(|(lone, _, _)| *lone)
    .map(|(_, option, partner)| {
        format!(
            "WARN: {} has no effect without {}",
            name(option).spelling(),
            name(partner).spelling()
        )
    })
    .collect()
}
