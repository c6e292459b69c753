//! `--deepest-idle-state N` (rt-tests 2.8): the idle states deeper than N
//! are disabled on the measured CPUs for the run, through the cpuidle
//! sysfs files, and put back as they were however the run ends: when
//! [`LimitedIdleStates`] is dropped (normal end, a stop signal, an error
//! after they were set: every path out of the run returns through its
//! owner), and by the janitor process after a SIGKILL, to which each
//! changed file is announced with its previous value.

use anyhow::anyhow;
use rtlat_core::janitor::{self, Kept};
use rtlat_sys::cpuidle::{self, CpuIdleError, IdleStateLimit as Limit};
use std::path::Path;

use super::settings::IdleStateLimit;
use crate::rtsetup::io_strerror;
use rtlat_args::stdio::note;

/// The idle states limited for the run. The fields drop in order: the
/// states are restored first, then the janitor is told to forget them.
#[derive(Debug)]
pub struct LimitedIdleStates {
    limit: Limit,
    announced: Vec<Kept>,
}

impl LimitedIdleStates {
    /// Disables the states `setting` names; a CPU without cpuidle states
    /// or a file that cannot be written is an error (exit status 1), with
    /// nothing left changed.
    pub fn apply(setting: &IdleStateLimit) -> anyhow::Result<LimitedIdleStates> {
        let limit = cpuidle::limit_idle_states(
            Path::new(cpuidle::CPU_SYSFS),
            &setting.cpus,
            setting.deepest,
        )
        .map_err(|e| match e {
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
        })?;
        Ok(LimitedIdleStates {
            limit,
            announced: Vec::new(),
        })
    }

    /// Tells the janitor (once it runs) each changed file and its previous
    /// value, so that they are restored even if this process is killed.
    pub fn announce_to_janitor(&mut self) {
        for saved in self.limit.saved() {
            match janitor::keep_setting(&saved.path, saved.previous.as_bytes()) {
                Ok(kept) => self.announced.push(kept),
                Err(e) => note!(
                    "WARN: cannot hand {} to rtlat's janitor ({e}): if this run is killed, it \
                     stays changed",
                    saved.path.display()
                ),
            }
        }
    }
}
