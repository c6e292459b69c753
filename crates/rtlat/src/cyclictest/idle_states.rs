//! `--deepest-idle-state N` (rt-tests 2.8): the idle states deeper than N
//! are disabled on the measured CPUs for the run, through the cpuidle
//! sysfs files, and put back as they were however the run ends: when
//! [`LimitedIdleStates`] is dropped (normal end, a stop signal, an error
//! after they were set: every path out of the run returns through its
//! owner), and by the janitor process after a SIGKILL, to which each
//! file is announced with its previous value before it is written: a run
//! killed at any moment after the first write leaves nothing disabled.

use anyhow::anyhow;
use rtlat_core::janitor::{self, Kept};
use rtlat_sys::cpuidle::{
    self, CpuIdleError, IdleStateLimit as Limit, IdleStatePlan, SavedDisable,
};
use std::path::Path;

use super::settings::IdleStateLimit;
use crate::rtsetup::io_strerror;
use rtlat_args::stdio::note;

/// The idle states limited for the run, held for its drop. The fields
/// drop in order: the states are restored first, then the janitor is told
/// to forget them.
#[derive(Debug)]
pub struct LimitedIdleStates {
    _limit: Limit,
    _announced: Vec<Kept>,
}

impl LimitedIdleStates {
    /// Disables the states `setting` names, each file announced to the
    /// janitor (which must be started first) before it is written; a CPU
    /// without cpuidle states or a file that cannot be read or written is
    /// an error (exit status 1), with nothing left changed.
    pub fn apply(setting: &IdleStateLimit) -> anyhow::Result<LimitedIdleStates> {
        let plan = IdleStatePlan::new(
            Path::new(cpuidle::CPU_SYSFS),
            &setting.cpus,
            setting.deepest,
        )
        .map_err(explain)?;
        let announced = announce_to_janitor(plan.changes());
        let limit = plan.apply().map_err(explain)?;
        Ok(LimitedIdleStates {
            _limit: limit,
            _announced: announced,
        })
    }
}

/// The error of `--deepest-idle-state` in the words of a user.
fn explain(e: CpuIdleError) -> anyhow::Error {
    match e {
        CpuIdleError::NoStates { cpu, dir } => anyhow!(
            "--deepest-idle-state: CPU {cpu} has no idle states to limit ({} is missing or \
             empty: no cpuidle driver)",
            dir.display()
        ),
        CpuIdleError::File {
            action,
            path,
            source,
        } => anyhow!(
            "--deepest-idle-state: cannot {action} {}: {}",
            path.display(),
            io_strerror(&source)
        ),
    }
}

/// Tells the janitor each file about to be changed and its present
/// value, so that it is put back even if this process is killed.
fn announce_to_janitor(changes: &[SavedDisable]) -> Vec<Kept> {
    let mut announced = Vec::with_capacity(changes.len());
    for change in changes {
        match janitor::keep_setting(&change.path, change.previous.as_bytes()) {
            Ok(kept) => announced.push(kept),
            Err(e) => note!(
                "WARN: cannot hand {} to rtlat's janitor ({e}): if this run is killed, it \
                 stays changed",
                change.path.display()
            ),
        }
    }
    announced
}
