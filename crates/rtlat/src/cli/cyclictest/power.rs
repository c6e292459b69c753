//! Power management for the run: what `/dev/cpu_dma_latency` holds
//! (`--latency`, or left alone with `--laptop`, `--default-system`), or
//! the idle states `--deepest-idle-state` disables instead.

use super::flags::name;
use super::raw::{MAX_INTERVAL_US, Raw};
use crate::cyclictest::settings::{DmaLatency, IdleStateLimit};
use rtlat_args::UsageError;
use rtlat_args::values::{int_in, int_in_or};

/// `/dev/cpu_dma_latency`'s value and the idle-state limit on
/// `measured_cpus`.
pub(super) fn power(
    raw: &Raw,
    measured_cpus: &[usize],
) -> Result<(DmaLatency, Option<IdleStateLimit>), UsageError> {
    let latency = int_in_or(
        name("latency"),
        raw.latency.as_deref(),
        0..=MAX_INTERVAL_US,
        "a /dev/cpu_dma_latency value in microseconds",
        0,
    )?;
    let deepest_idle_state = match &raw.deepest_idle_state {
        Some(text) => Some(IdleStateLimit {
            deepest: i32::try_from(int_in(
                name("deepest-idle-state"),
                text,
                -1..=i64::from(i32::MAX),
                "the deepest idle state left enabled (-1: none)",
            )?)
            .unwrap_or(i32::MAX),
            cpus: measured_cpus.to_vec(),
        }),
        None => None,
    };
    let dma_latency = if raw.laptop {
        DmaLatency::SkipLaptop
    } else if raw.default_system {
        DmaLatency::SkipDefaultSystem
    } else if deepest_idle_state.is_some() {
        DmaLatency::SkipDeepestIdleState
    } else {
        DmaLatency::Set(i32::try_from(latency).unwrap_or(i32::MAX))
    };
    Ok((dma_latency, deepest_idle_state))
}
