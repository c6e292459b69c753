//! CPU idle states through the cpuidle sysfs files
//! (`/sys/devices/system/cpu/cpuN/cpuidle/stateK/disable`), without
//! libcpupower: disabling the states deeper than a limit on some CPUs for
//! the length of a run, and putting every `disable` file back as it was.
//!
//! Two steps, so that a process that outlives a killed run can be told
//! what to put back before anything is changed:
//! - [`IdleStatePlan::new`] checks every CPU and reads the `disable` file
//!   of every state whose index is above the limit; the files not yet
//!   disabled, with their contents, are [`IdleStatePlan::changes`].
//! - [`IdleStatePlan::apply`] writes `1` to each and returns an
//!   [`IdleStateLimit`]; dropping it (or [`IdleStateLimit::restore`])
//!   writes the previous contents back.

use std::io;
use std::path::{Path, PathBuf};

/// Where the CPUs' sysfs directories are.
pub const CPU_SYSFS: &str = "/sys/devices/system/cpu";

/// What can go wrong limiting the idle states.
#[derive(Debug, thiserror::Error)]
pub enum CpuIdleError {
    /// The CPU has no cpuidle directory or no idle state in it.
    #[error("CPU {cpu} has no cpuidle states ({dir}): the kernel has no cpuidle driver for it")]
    NoStates {
        /// The CPU.
        cpu: usize,
        /// The directory looked at.
        dir: PathBuf,
    },
    /// A `disable` file could not be read or written.
    #[error("cannot {action} {path}: {source}", path = .path.display())]
    File {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// One `disable` file and what it held before the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedDisable {
    /// The `disable` file.
    pub path: PathBuf,
    /// Its previous content, trimmed (`0` or `1`).
    pub previous: String,
}

/// Idle states disabled for a run; dropping it restores them.
#[derive(Debug)]
#[must_use = "dropping it restores the idle states at once"]
pub struct IdleStateLimit {
    saved: Vec<SavedDisable>,
}

impl IdleStateLimit {
    /// Writes every saved value back (once); returns the first failure,
    /// having tried every file.
    pub fn restore(&mut self) -> Result<(), CpuIdleError> {
        let mut first_error = None;
        for saved in std::mem::take(&mut self.saved).into_iter().rev() {
            if let Err(e) = write_disable(&saved.path, &saved.previous)
                && first_error.is_none()
            {
                first_error = Some(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for IdleStateLimit {
    fn drop(&mut self) {
        let _ = self.restore();
    }
}

/// The idle state directories (`stateK`) of `cpu` under `root` (normally
/// [`CPU_SYSFS`]), by index; empty when it has none.
pub fn idle_states(root: &Path, cpu: usize) -> Vec<(u32, PathBuf)> {
    let dir = root.join(format!("cpu{cpu}/cpuidle"));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut states: Vec<(u32, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name();
            let index = name.to_str()?.strip_prefix("state")?.parse().ok()?;
            Some((index, e.path()))
        })
        .collect();
    states.sort();
    states
}

/// The `disable` files a limit would change, read but not yet written.
#[derive(Debug)]
#[must_use = "nothing is changed until it is applied"]
pub struct IdleStatePlan {
    changes: Vec<SavedDisable>,
}

impl IdleStatePlan {
    /// Plans to disable, on each of `cpus`, every idle state whose index
    /// is above `deepest` (`-1`: all of them), under `root` (normally
    /// [`CPU_SYSFS`]). Every CPU is checked for idle states and every
    /// file read; nothing is written.
    pub fn new(root: &Path, cpus: &[usize], deepest: i32) -> Result<IdleStatePlan, CpuIdleError> {
        let mut per_cpu = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let states = idle_states(root, cpu);
            if states.is_empty() {
                return Err(CpuIdleError::NoStates {
                    cpu,
                    dir: root.join(format!("cpu{cpu}/cpuidle")),
                });
            }
            per_cpu.push(states);
        }
        let mut changes = Vec::new();
        for (index, dir) in per_cpu.into_iter().flatten() {
            if i64::from(index) <= i64::from(deepest) {
                continue;
            }
            let path = dir.join("disable");
            let previous = std::fs::read_to_string(&path)
                .map_err(|source| CpuIdleError::File {
                    action: "read",
                    path: path.clone(),
                    source,
                })?
                .trim()
                .to_owned();
            if previous != "1" {
                changes.push(SavedDisable { path, previous });
            }
        }
        Ok(IdleStatePlan { changes })
    }

    /// The files to disable, with their contents now, in the order
    /// [`IdleStatePlan::apply`] writes them.
    pub fn changes(&self) -> &[SavedDisable] {
        &self.changes
    }

    /// Disables the planned states. On a write failure, what was already
    /// changed is put back before the error is returned.
    pub fn apply(self) -> Result<IdleStateLimit, CpuIdleError> {
        let mut limit = IdleStateLimit {
            saved: Vec::with_capacity(self.changes.len()),
        };
        for change in self.changes {
            write_disable(&change.path, "1")?;
            limit.saved.push(change);
        }
        Ok(limit)
    }
}

/// Takes an exclusive `flock` on the directory `root` (normally
/// [`CPU_SYSFS`]) without waiting: `Ok(None)` while another open file
/// holds it. The descriptor is opened WITHOUT close-on-exec, so that a
/// helper process started afterwards (a janitor) holds the lock with it,
/// until both have let it go.
pub fn lock_inherited(root: &Path) -> io::Result<Option<std::os::fd::OwnedFd>> {
    use rustix::fs::{FlockOperation, Mode, OFlags, flock, open};
    let fd = open(root, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())?;
    match flock(&fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(fd)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Writes `value` to a `disable` file.
pub fn write_disable(path: &Path, value: &str) -> Result<(), CpuIdleError> {
    std::fs::write(path, value).map_err(|source| CpuIdleError::File {
        action: "write",
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sysfs tree with `states` idle states on each of `cpus` CPUs, all
    /// enabled but state 2 of CPU 0.
    fn tree(cpus: usize, states: u32) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for cpu in 0..cpus {
            for k in 0..states {
                let dir = root.path().join(format!("cpu{cpu}/cpuidle/state{k}"));
                std::fs::create_dir_all(&dir).unwrap();
                let disabled = cpu == 0 && k == 2;
                std::fs::write(dir.join("disable"), if disabled { "1\n" } else { "0\n" }).unwrap();
            }
        }
        root
    }

    fn disabled(root: &Path, cpu: usize, state: u32) -> bool {
        let path = root.join(format!("cpu{cpu}/cpuidle/state{state}/disable"));
        std::fs::read_to_string(path).unwrap().trim() == "1"
    }

    #[test]
    fn states_above_the_limit_are_disabled_on_the_cpus_given_and_restored() {
        let root = tree(3, 4);
        let r = root.path();
        let plan = IdleStatePlan::new(r, &[0, 2], 1).unwrap();
        // CPU 0's state 2 was disabled already: not planned, so not
        // enabled at the end.
        let planned: Vec<(PathBuf, &str)> = plan
            .changes()
            .iter()
            .map(|c| {
                (
                    c.path.strip_prefix(r).unwrap().to_owned(),
                    c.previous.as_str(),
                )
            })
            .collect();
        let expected: Vec<(PathBuf, &str)> = [
            "cpu0/cpuidle/state3",
            "cpu2/cpuidle/state2",
            "cpu2/cpuidle/state3",
        ]
        .into_iter()
        .map(|dir| (Path::new(dir).join("disable"), "0"))
        .collect();
        assert_eq!(planned, expected);
        assert!(
            [(0, 3), (2, 2), (2, 3)]
                .iter()
                .all(|&(cpu, k)| !disabled(r, cpu, k)),
            "a plan writes nothing"
        );
        let mut limit = plan.apply().unwrap();
        for cpu in [0, 2] {
            assert!(!disabled(r, cpu, 0) && !disabled(r, cpu, 1));
            assert!(disabled(r, cpu, 2) && disabled(r, cpu, 3));
        }
        assert!((0..4).all(|k| !disabled(r, 1, k)), "CPU 1 untouched");
        limit.restore().unwrap();
        assert!(disabled(r, 0, 2));
        for (cpu, k) in [(0, 3), (2, 2), (2, 3)] {
            assert!(!disabled(r, cpu, k), "cpu{cpu} state{k}");
        }
    }

    #[test]
    fn minus_one_disables_every_state_and_dropping_restores() {
        let root = tree(2, 2);
        let r = root.path();
        let limit = IdleStatePlan::new(r, &[0, 1], -1).unwrap().apply().unwrap();
        assert!((0..2).all(|cpu| (0..2).all(|k| disabled(r, cpu, k))));
        drop(limit);
        assert!((0..2).all(|cpu| (0..2).all(|k| !disabled(r, cpu, k))));
    }

    #[test]
    fn a_cpu_without_states_is_refused_before_anything_is_written() {
        let root = tree(1, 2);
        let r = root.path();
        let err = IdleStatePlan::new(r, &[0, 5], -1).unwrap_err();
        assert!(
            matches!(err, CpuIdleError::NoStates { cpu: 5, .. }),
            "{err}"
        );
        assert!(!disabled(r, 0, 0) && !disabled(r, 0, 1));
    }

    #[test]
    fn a_failed_write_puts_back_what_was_changed() {
        let root = tree(2, 2);
        let r = root.path();
        let plan = IdleStatePlan::new(r, &[0, 1], 0).unwrap();
        // Once planned, CPU 1's state 1 can no longer be written: its
        // `disable` is now a directory.
        let blocked = r.join("cpu1/cpuidle/state1/disable");
        std::fs::remove_file(&blocked).unwrap();
        std::fs::create_dir(&blocked).unwrap();
        let err = plan.apply().unwrap_err();
        assert!(
            matches!(&err, CpuIdleError::File { action: "write", path, .. } if *path == blocked),
            "{err}"
        );
        assert!(!disabled(r, 0, 1), "CPU 0's state 1 was put back");
    }

    #[test]
    fn a_file_that_cannot_be_read_is_refused_by_the_plan() {
        let root = tree(2, 2);
        let r = root.path();
        let unreadable = r.join("cpu1/cpuidle/state1/disable");
        std::fs::remove_file(&unreadable).unwrap();
        std::fs::create_dir(&unreadable).unwrap();
        let err = IdleStatePlan::new(r, &[0, 1], 0).unwrap_err();
        assert!(
            matches!(&err, CpuIdleError::File { action: "read", path, .. } if *path == unreadable),
            "{err}"
        );
        assert!(!disabled(r, 0, 1), "nothing written");
    }
}
