//! `--deepest-idle-state N` (rt-tests 2.8): the idle states deeper than N
//! are disabled on the measured CPUs for the run, through the cpuidle
//! sysfs files, and put back as they were however the run ends: when
//! [`LimitedIdleStates`] is dropped (normal end, a stop signal, an error
//! after they were set: every path out of the run returns through its
//! owner), and by the janitor process after a SIGKILL, to which each
//! file is announced with its previous value before it is written: a run
//! killed at any moment after the first write leaves nothing disabled.
//!
//! One run at a time: the run holds an exclusive `flock` on the cpuidle
//! root (`/sys/devices/system/cpu`) from before its janitor starts, on a
//! descriptor its janitor inherits ([`IdleStateLock`]); a second run is
//! refused with one line (exit 1). Otherwise the first to end would put
//! back the states the other still relies on. The janitor holding the
//! lock too means that a run killed with SIGKILL keeps the lock until
//! its janitor has put the states back and ended.
//!
//! The tests point the run at a tree of their own through the
//! environment variable [`TEST_ROOT_ENV`] (cpuN/cpuidle/stateK/disable
//! files): machines without cpuidle (most VMs) test the same code.

use anyhow::anyhow;
use rtlat_core::janitor::{self, Kept};
use rtlat_sys::cpuidle::{
    self, CpuIdleError, IdleStateLimit as Limit, IdleStatePlan, SavedDisable,
};
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use super::settings::IdleStateLimit;
use crate::rtsetup::io_strerror;
use rtlat_args::stdio::note;

/// The variable that replaces [`cpuidle::CPU_SYSFS`] for the tests.
pub const TEST_ROOT_ENV: &str = "RTLAT_TEST_CPU_SYSFS";

/// Where the CPUs' cpuidle directories are.
fn cpu_sysfs() -> PathBuf {
    std::env::var_os(TEST_ROOT_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(cpuidle::CPU_SYSFS), PathBuf::from)
}

/// The lock one run limiting the idle states holds: an exclusive `flock`
/// on the cpuidle root, on a descriptor without close-on-exec, so that the
/// janitor (started after it, or again after a restart) holds it too.
#[derive(Debug)]
pub struct IdleStateLock {
    root: PathBuf,
    _fd: OwnedFd,
}

impl IdleStateLock {
    /// Takes the lock, or refuses in one line (exit 1) while another run
    /// holds it. Take it before the janitor starts.
    pub fn take() -> anyhow::Result<IdleStateLock> {
        let root = cpu_sysfs();
        match cpuidle::lock_inherited(&root) {
            Ok(Some(fd)) => Ok(IdleStateLock { root, _fd: fd }),
            Ok(None) => Err(anyhow!(
                "--deepest-idle-state: another run limits the idle states now (it holds the \
                 lock on {}); one run at a time",
                root.display()
            )),
            Err(e) => Err(anyhow!(
                "--deepest-idle-state: cannot lock {}: {}",
                root.display(),
                io_strerror(&e)
            )),
        }
    }
}

/// The idle states limited for the run, held for its drop. The fields
/// drop in order: the states are restored first, then the janitor is told
/// to forget them, then the lock is let go.
#[derive(Debug)]
pub struct LimitedIdleStates {
    _limit: Limit,
    _announced: Vec<Kept>,
    _lock: IdleStateLock,
}

impl LimitedIdleStates {
    /// Disables the states `setting` names, each file announced to the
    /// janitor (which must be started first) before it is written; a CPU
    /// without cpuidle states or a file that cannot be read or written is
    /// an error (exit status 1), with nothing left changed.
    pub fn apply(
        setting: &IdleStateLimit,
        lock: IdleStateLock,
    ) -> anyhow::Result<LimitedIdleStates> {
        let plan =
            IdleStatePlan::new(&lock.root, &setting.cpus, setting.deepest).map_err(explain)?;
        let announced = announce_to_janitor(plan.changes());
        let limit = plan.apply().map_err(explain)?;
        Ok(LimitedIdleStates {
            _limit: limit,
            _announced: announced,
            _lock: lock,
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
