//! When an ipc run ends and what it counts in: `-l`, `-D`, `--nsecs`,
//! `-b`, and pmqtest's time-outs `-T` and `-f`.

use rtlat_args::UsageError;
use rtlat_args::options::Name;
use rtlat_args::values::{OptionName, int_in};
use rtlat_core::ipc::MqTimeouts;
use rtlat_core::{Nanos, Resolution};

use super::flags::name;
use super::raw::{MAX_US, Raw};

/// The limits of a run and the unit of its figures.
pub(super) struct Stopping {
    /// `-l`: hand-offs per side.
    pub loops: Option<u64>,
    /// `-D`.
    pub duration: Option<Nanos>,
    /// `--nsecs` or not.
    pub resolution: Resolution,
    /// The unit's name, for the messages about values in it.
    pub unit: String,
    /// `-b`, in `unit`.
    pub breaktrace: Option<i64>,
    /// pmqtest's `-T` and `-f`.
    pub mq_timeouts: Option<MqTimeouts>,
}

/// Reads the limits in the order their errors are reported.
pub(super) fn stopping(raw: &Raw) -> Result<Stopping, UsageError> {
    let stop = raw.shared.stop(name)?;
    let (resolution, unit) = rtlat_args::values::resolution(raw.nsecs, "--nsecs");
    let breaktrace = match &raw.breaktrace {
        Some(text) => Some(int_in(
            name("breaktrace"),
            text,
            1..=MAX_US,
            &format!("a latency threshold in {unit}"),
        )?),
        None => None,
    };
    Ok(Stopping {
        loops: stop.loops,
        duration: stop.duration,
        resolution,
        unit,
        breaktrace,
        mq_timeouts: mq_timeouts(raw)?,
    })
}

/// pmqtest's `-T` (the receiver's time-out) and `-f` (the sender's delay,
/// only with `-T`), in whole seconds.
fn mq_timeouts(raw: &Raw) -> Result<Option<MqTimeouts>, UsageError> {
    let seconds = |id: Name, text: &str| -> Result<Nanos, UsageError> {
        Ok(Nanos::from_secs(int_in(
            id,
            text,
            1..=MAX_US,
            "a time-out in whole seconds",
        )?))
    };
    match (&raw.timeout, &raw.force_timeout) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(UsageError(format!(
            "{} needs {}",
            name("forcetimeout").spelling(),
            name("timeout").spelling()
        ))),
        (Some(t), force) => Ok(Some(MqTimeouts {
            receive: seconds(name("timeout"), t)?,
            force_send_delay: match force {
                Some(f) => Some(seconds(name("forcetimeout"), f)?),
                None => None,
            },
        })),
    }
}
