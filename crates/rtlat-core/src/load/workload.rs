//! The user's own workload (`--load-command 'make -j8'`): a shell command
//! that runs beside a measurement, in a process group of its own, ended
//! by the run with everything it started, and never outliving the run.
//!
//! How it starts, so that no moment leaves a process the run does not
//! answer for ("announce, then change", as in [`crate::janitor`]):
//! 1. the rtlat binary is spawned as `rtlat-workload`
//!    ([`HelperRole::Workload`]) in a process group of its own, with the
//!    stop signals blocked and a parent death signal: it runs nothing
//!    yet, it waits for a word on its standard input;
//! 2. the run announces the group to the janitor
//!    ([`crate::janitor::keep_process_group`]: the leader's pid and start
//!    time);
//! 3. the run writes the word: the command and where its output goes.
//!    The helper then unblocks every signal (the mask survives exec) and
//!    becomes `/bin/sh -c COMMAND` (the same process, the group's leader;
//!    the death signal stays). Killed before step 3, the run leaves a helper that reads
//!    the end of its input and exits without running anything.
//!
//! At the end ([`Workload::end`]) the group gets SIGTERM, then SIGKILL
//! after the grace, the janitor forgets it and the leader is reaped, in
//! that order (until it is reaped, the group's id cannot be another's).
//! Killed by SIGKILL, the run leaves the janitor to end the group; the
//! shell itself dies with the run (its death signal).
//!
//! The death signal is tied to the thread that spawned the helper: start
//! a workload from a thread that lives as long as the workload should.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use rtlat_sys::Errno;
use rtlat_sys::process::{ChildProcess, Stdio};
use rtlat_sys::signals::{SIGKILL, SIGTERM, signal_process_group};

use crate::helper::HelperRole;
use crate::janitor::{self, Kept};

/// The longest command or log path the word carries.
const MAX_FIELD: usize = 64 * 1024;

/// A workload that runs.
#[derive(Debug)]
pub struct Workload {
    child: ChildProcess,
    kept: Kept,
}

/// How a workload ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadEnd {
    /// It ended on its own, before the run ended it: its shell's status.
    Exited(ExitStatus),
    /// The run ended it (SIGTERM, SIGKILL if needed).
    EndedByRun {
        /// SIGKILL was needed: the group outlived the grace.
        killed: bool,
    },
}

impl Workload {
    /// Starts `command` with `/bin/sh -c`, `program` being the rtlat
    /// binary; its standard output and error go to `log` (appended to,
    /// made if needed) or, without one, to /dev/null; its input is
    /// /dev/null.
    pub fn start(program: &Path, command: &str, log: Option<&Path>) -> io::Result<Workload> {
        if command.len() > MAX_FIELD || log.is_some_and(|l| l.as_os_str().len() > MAX_FIELD) {
            return Err(Errno::TOOBIG.into());
        }
        let mut child = HelperRole::Workload
            .spawn(program)
            .stdout(Stdio::Null)
            .own_process_group()
            .spawn()?;
        let kept = match janitor::keep_process_group(child.id()) {
            Ok(kept) => kept,
            Err(e) => {
                // Nothing ran: end the helper before it is told anything.
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let mut word = Vec::new();
        field(&mut word, command.as_bytes());
        field(
            &mut word,
            log.map(|l| l.as_os_str().as_bytes()).unwrap_or_default(),
        );
        let mut input = child.stdin.take().expect("a piped input");
        if let Err(e) = input.write_all(&word) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        Ok(Workload { child, kept })
    }

    /// The group's id (its leader's pid).
    pub fn pgid(&self) -> i32 {
        self.child.id()
    }

    /// The shell's status if it has ended on its own.
    pub fn try_status(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Ends the group: SIGTERM, then SIGKILL if some of it is left after
    /// `grace`; then the janitor forgets it and the shell is reaped. A
    /// shell that had ended on its own gives its status (the rest of its
    /// group, if any, is ended all the same).
    pub fn end(self, grace: Duration) -> io::Result<WorkloadEnd> {
        self.end_unless(grace, || false)
    }

    /// [`Workload::end`], whose grace ends early, in SIGKILL, once `cut`
    /// says so (asked every few milliseconds: a second Ctrl-C).
    pub fn end_unless(
        mut self,
        grace: Duration,
        mut cut: impl FnMut() -> bool,
    ) -> io::Result<WorkloadEnd> {
        let pgid = self.pgid();
        let before = self.child.try_wait()?;
        let mut killed = false;
        if signal_process_group(pgid, SIGTERM).is_ok() {
            let give_up = Instant::now() + grace;
            while group_alive(pgid, &mut self.child) && Instant::now() < give_up && !cut() {
                std::thread::sleep(Duration::from_millis(5));
            }
            if group_alive(pgid, &mut self.child) {
                killed = signal_process_group(pgid, SIGKILL).is_ok();
            }
        }
        // Forgotten before the leader is reaped: until then its pid and
        // the group's id are still ours.
        self.kept.release();
        self.child.wait()?;
        Ok(match before {
            Some(status) => WorkloadEnd::Exited(status),
            None => WorkloadEnd::EndedByRun { killed },
        })
    }
}

/// Whether a process of group `pgid` other than a reaped or dead leader
/// still runs (`leader` is reaped here if it has ended).
fn group_alive(pgid: i32, leader: &mut ChildProcess) -> bool {
    let _ = leader.try_wait();
    rtlat_sys::process::group_members(pgid)
        .into_iter()
        .any(|pid| pid != pgid || !matches!(leader.try_wait(), Ok(Some(_))))
}

/// `bytes` with its length before it (4 bytes, little-endian).
fn field(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The word the helper waits for: the command and the log path (empty:
/// none); `None` at the end of the input before a whole word.
fn read_word(input: &mut impl Read) -> Option<(OsString, Option<PathBuf>)> {
    let mut read_field = || {
        let mut len = [0u8; 4];
        input.read_exact(&mut len).ok()?;
        let len = u32::from_le_bytes(len) as usize;
        if len > MAX_FIELD {
            return None;
        }
        let mut bytes = vec![0u8; len];
        input.read_exact(&mut bytes).ok()?;
        Some(bytes)
    };
    let command = OsString::from_vec(read_field()?);
    let log = read_field()?;
    let log = (!log.is_empty()).then(|| PathBuf::from(OsString::from_vec(log)));
    Some((command, log))
}

/// The workload helper ([`HelperRole::Workload`]) of the run `parent`:
/// waits for the word, then becomes `/bin/sh -c COMMAND`. Returns only
/// on a failure: 127 (nothing ran), or 126 when the shell cannot be run.
pub(crate) fn helper_main(parent: i32) -> u8 {
    use std::os::unix::process::CommandExt;
    if rtlat_sys::process::die_with_parent(parent).is_err() {
        return 127;
    }
    let Some((command, log)) = read_word(&mut io::stdin().lock()) else {
        return 127;
    };
    let mut shell = std::process::Command::new("/bin/sh");
    shell
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null());
    match log {
        Some(path) => {
            let opened = File::options().create(true).append(true).open(&path);
            let Ok(out) = opened.and_then(|out| Ok((out.try_clone()?, out))) else {
                eprintln!("rtlat-workload: cannot write '{}'", path.display());
                return 127;
            };
            shell.stdout(out.0).stderr(out.1);
        }
        None => {
            shell
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
        }
    }
    if rtlat_sys::signals::unblock_all().is_err() {
        return 127;
    }
    let error = shell.exec();
    eprintln!("rtlat-workload: cannot run /bin/sh: {error}");
    126
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_survives_the_pipe_and_a_cut_one_is_refused() {
        let mut word = Vec::new();
        field(&mut word, b"make -j8 'a b'");
        field(&mut word, b"/tmp/out/load-command.log");
        assert_eq!(
            read_word(&mut &word[..]),
            Some((
                OsString::from("make -j8 'a b'"),
                Some(PathBuf::from("/tmp/out/load-command.log"))
            ))
        );
        let mut no_log = Vec::new();
        field(&mut no_log, b"true");
        field(&mut no_log, b"");
        assert_eq!(
            read_word(&mut &no_log[..]),
            Some((OsString::from("true"), None))
        );
        for cut in 0..word.len() {
            assert_eq!(read_word(&mut &word[..cut]), None, "cut at {cut}");
        }
    }
}
