//! rtlat's helper processes: the binary re-executed to do one job for the
//! process that started it: the `fork` load's helper, the janitor and the
//! user's workload (`--load-command`). The load and the janitor module
//! start their helpers through this one, which uses neither: what each
//! role does ([`HelperRole::run`]) is dispatched from the crate root,
//! above them all.
//!
//! A helper is reached only on purpose: its `argv[0]` is the role's own
//! name (`rtlat-fork-helper`, `rtlat-janitor`, `rtlat-workload`,
//! `rtlat-hackbench-helper`) AND the
//! environment variable [`PARENT_ENV`] holds the pid of the process that
//! started it. Either
//! alone, a variable left in a shell's environment or a binary renamed, is
//! ignored: the command runs as usual. The pid is the one the helper
//! checks its parent against ([`rtlat_sys::process::die_with_parent`]).
//!
//! (The fork-mode sides of the IPC tools keep the C tools' contract, the
//! tool's name and `-fr<N>` / `-fs<N>`, and check the same variable.)

use std::ffi::OsStr;
use std::path::Path;

use rtlat_sys::process::{Spawn, Stdio};

/// The variable that holds the pid of the process that started a helper.
pub const PARENT_ENV: &str = "RTLAT_HELPER_PARENT";

/// A job the binary does for the process that started it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelperRole {
    /// Forks and reaps children for one `fork` load worker.
    ForkLoad,
    /// Removes a run's named objects if the run dies first.
    Janitor,
    /// Becomes the user's workload (`/bin/sh -c COMMAND`) once told to.
    Workload,
    /// Runs hackbench rounds for one `hackbench` load worker.
    HackbenchLoad,
}

impl HelperRole {
    /// The `argv[0]` (and process name) of the role.
    pub const fn argv0(self) -> &'static str {
        match self {
            HelperRole::ForkLoad => "rtlat-fork-helper",
            HelperRole::Janitor => "rtlat-janitor",
            HelperRole::Workload => "rtlat-workload",
            HelperRole::HackbenchLoad => "rtlat-hackbench-helper",
        }
    }

    /// The role this process was started for and the parent pid passed
    /// down, when `argv0` is a role's name and `parent` (the value of
    /// [`PARENT_ENV`]) a pid; `None` for any other invocation.
    pub fn of_invocation(argv0: &OsStr, parent: Option<&OsStr>) -> Option<(HelperRole, i32)> {
        let role = [
            HelperRole::ForkLoad,
            HelperRole::Janitor,
            HelperRole::Workload,
            HelperRole::HackbenchLoad,
        ]
        .into_iter()
        .find(|r| argv0 == r.argv0())?;
        let parent = parent?.to_str()?.parse::<i32>().ok().filter(|&p| p > 0)?;
        Some((role, parent))
    }

    /// A spawn of `program` (the rtlat binary) in this role: its `argv[0]`,
    /// a child of this run ([`spawn_child`]), its input a pipe from us.
    pub(crate) fn spawn(self, program: &Path) -> Spawn {
        let mut spawn = spawn_child(program, OsStr::new(self.argv0()));
        spawn.stdin(Stdio::Piped);
        spawn
    }
}

/// A spawn of `program` as `argv0`, a process of this run: told its parent
/// ([`PARENT_ENV`], which it checks with
/// [`rtlat_sys::process::die_with_parent`]) and started with the stop
/// signals blocked, so that only its parent ends it. The helper roles and
/// the IPC tools' fork-mode sides start this way.
pub fn spawn_child(program: &Path, argv0: &OsStr) -> Spawn {
    let mut spawn = Spawn::new(program, argv0);
    spawn
        .env(PARENT_ENV, rtlat_sys::system::current_pid().to_string())
        .block_stop_signals();
    spawn
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_needs_its_name_and_a_parent_pid() {
        let role = |argv0: &str, parent: Option<&str>| {
            HelperRole::of_invocation(OsStr::new(argv0), parent.map(OsStr::new))
        };
        assert_eq!(
            role("rtlat-janitor", Some("42")),
            Some((HelperRole::Janitor, 42))
        );
        assert_eq!(
            role("rtlat-fork-helper", Some("7")),
            Some((HelperRole::ForkLoad, 7))
        );
        // A stray variable, a renamed binary, a bad value: no helper.
        assert_eq!(role("rtlat", Some("42")), None);
        assert_eq!(role("cyclictest", Some("42")), None);
        assert_eq!(role("/usr/bin/rtlat-janitor", Some("42")), None);
        assert_eq!(role("rtlat-janitor", None), None);
        assert_eq!(
            role("rtlat-janitor", Some("1")),
            Some((HelperRole::Janitor, 1))
        );
        assert_eq!(role("rtlat-janitor", Some("0")), None);
        assert_eq!(role("rtlat-janitor", Some("-5")), None);
        assert_eq!(role("rtlat-fork-helper", Some("yes")), None);
    }
}
