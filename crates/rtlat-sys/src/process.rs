//! Child processes that cannot outlive their run.
//!
//! rtlat's helper processes (the sides of a fork-mode IPC pair, the `fork`
//! load's helpers, the janitor) are this very binary, re-executed. They are
//! started with `posix_spawn` ([`Spawn`]), which glibc implements with
//! `clone(CLONE_VM | CLONE_VFORK)`: the parent's pages are shared until the
//! exec, never copied or write-protected. `std::process::Command` does the
//! same until it is given a `pre_exec` hook; then it forks, and every page
//! of the (memory-locked) measuring process is write-protected until it is
//! written again. Measured from a process with 64 MiB locked: after a
//! fork-and-exec spawn writing that memory took 16384 page faults and 16 ms
//! (none and 0.3 ms after `posix_spawn`), and the spawn itself 5-6 ms
//! (0.3-0.9 ms). A load helper starts while latencies are measured, so
//! nothing runs between fork and exec here. Instead:
//!
//! - the child starts with the stop signals ([`STOP_SIGNALS`]: what a
//!   terminal sends, and SIGTERM) blocked from its first instruction
//!   ([`Spawn::block_stop_signals`]): a Ctrl-C to the process group never
//!   kills a helper half-way; its parent ends it;
//! - the child's first act is [`die_with_parent`]: it asks for SIGKILL when
//!   its parent dies, then checks that its parent is still the process that
//!   started it (whose pid is passed down). Had that process died before,
//!   the child would already have been given to another parent (init or a
//!   subreaper, so `getppid() == 1` proves nothing) and never receive the
//!   signal: it must exit at once. Either way no helper outlives its parent.
//!
//! The death signal is tied to the *thread* that spawned the child: a
//! helper must be spawned by a thread that lives as long as the helper
//! should.
#![allow(unsafe_code)]

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;

use crate::Errno;
use crate::poll::Watched;

/// The signals that stop a run and that helpers never act on: SIGINT,
/// SIGQUIT and SIGHUP (what a terminal sends to its foreground process
/// group) and SIGTERM (what `kill` and service managers send).
pub const STOP_SIGNALS: [i32; 4] = [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP, libc::SIGTERM];

/// Where a standard stream of a spawned child goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stdio {
    /// The parent's own.
    Inherit,
    /// `/dev/null`.
    Null,
    /// A new pipe whose other end the parent keeps.
    Piped,
}

/// A process to start with `posix_spawn`: program, arguments, additions to
/// the environment, standard input and output (standard error is always
/// the parent's), signals blocked from the start, process group.
#[derive(Debug)]
pub struct Spawn {
    program: OsString,
    argv: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    stdin: Stdio,
    stdout: Stdio,
    blocked: Vec<i32>,
    own_group: bool,
}

impl Spawn {
    /// Runs `program` with `argv0` as its `argv[0]`; standard streams
    /// inherited, no signal blocked, the parent's process group.
    pub fn new(program: &Path, argv0: &OsStr) -> Spawn {
        Spawn {
            program: program.as_os_str().to_owned(),
            argv: vec![argv0.to_owned()],
            env: Vec::new(),
            stdin: Stdio::Inherit,
            stdout: Stdio::Inherit,
            blocked: Vec::new(),
            own_group: false,
        }
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Spawn {
        self.argv.push(arg.as_ref().to_owned());
        self
    }

    /// Sets an environment variable of the child (the rest of the
    /// environment is the parent's).
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Spawn {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Where standard input comes from.
    pub fn stdin(&mut self, stdin: Stdio) -> &mut Spawn {
        self.stdin = stdin;
        self
    }

    /// Where standard output goes.
    pub fn stdout(&mut self, stdout: Stdio) -> &mut Spawn {
        self.stdout = stdout;
        self
    }

    /// Starts the child with [`STOP_SIGNALS`] blocked (the rest of its
    /// signal mask empty).
    pub fn block_stop_signals(&mut self) -> &mut Spawn {
        self.blocked = STOP_SIGNALS.to_vec();
        self
    }

    /// Starts the child in a process group of its own: a signal sent to the
    /// parent's group (`kill -KILL -PGID`) does not reach it.
    pub fn own_process_group(&mut self) -> &mut Spawn {
        self.own_group = true;
        self
    }

    /// The environment the child gets: the parent's, with this spawn's
    /// variables replacing any of the same name.
    fn environment(&self) -> Vec<CString> {
        let mut out = Vec::new();
        let mut entry = |key: &OsStr, value: &OsStr| {
            let mut bytes = key.as_bytes().to_vec();
            bytes.push(b'=');
            bytes.extend_from_slice(value.as_bytes());
            // An entry with a NUL byte cannot be passed; none can exist.
            if let Ok(c) = CString::new(bytes) {
                out.push(c);
            }
        };
        for (key, value) in std::env::vars_os() {
            if !self.env.iter().any(|(k, _)| *k == key) {
                entry(&key, &value);
            }
        }
        for (key, value) in &self.env {
            entry(key, value);
        }
        out
    }

    /// Starts the child. Fails with the error of the exec itself (a missing
    /// program, say), not only of the spawn.
    pub fn spawn(&self) -> io::Result<ChildProcess> {
        let invalid = || io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in an argument");
        let c_string = |s: &OsStr| CString::new(s.as_bytes()).map_err(|_| invalid());
        let program = c_string(&self.program)?;
        let argv = self
            .argv
            .iter()
            .map(|a| c_string(a))
            .collect::<io::Result<Vec<CString>>>()?;
        let envp = self.environment();
        let mut argv_ptrs: Vec<*mut libc::c_char> =
            argv.iter().map(|c| c.as_ptr().cast_mut()).collect();
        argv_ptrs.push(std::ptr::null_mut());
        let mut envp_ptrs: Vec<*mut libc::c_char> =
            envp.iter().map(|c| c.as_ptr().cast_mut()).collect();
        envp_ptrs.push(std::ptr::null_mut());

        let mut actions = FileActions::new()?;
        let stdin_pipe = actions.stream(0, self.stdin)?;
        let stdout_pipe = actions.stream(1, self.stdout)?;
        let attributes = SpawnAttributes::new(&self.blocked, self.own_group)?;

        let mut pid: libc::pid_t = 0;
        // SAFETY: every pointer is valid for the call: `program` and the
        // strings behind `argv_ptrs` and `envp_ptrs` (both NULL-terminated
        // arrays) live until the end of this function, and `actions` and
        // `attributes` are initialised objects owned by their wrappers.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                program.as_ptr(),
                actions.as_ptr(),
                attributes.as_ptr(),
                argv_ptrs.as_ptr(),
                envp_ptrs.as_ptr(),
            )
        };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        // The child's ends (dropped here) are now the child's only.
        Ok(ChildProcess {
            pid,
            status: None,
            stdin: stdin_pipe.map(|(ours, _)| File::from(ours)),
            stdout: stdout_pipe.map(|(ours, _)| File::from(ours)),
        })
    }
}

/// A pipe, both ends close-on-exec: (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a live array of two ints for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both are fresh descriptors nobody else
    // owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// `posix_spawn_file_actions_t`, destroyed when dropped.
struct FileActions(Box<libc::posix_spawn_file_actions_t>);

impl FileActions {
    fn new() -> io::Result<FileActions> {
        // SAFETY: an all-zero value is a valid place for init to write to.
        let mut actions =
            Box::new(unsafe { std::mem::zeroed::<libc::posix_spawn_file_actions_t>() });
        // SAFETY: `actions` is a live, writable object.
        check(unsafe { libc::posix_spawn_file_actions_init(&mut *actions) })?;
        Ok(FileActions(actions))
    }

    fn open(
        &mut self,
        fd: libc::c_int,
        path: &std::ffi::CStr,
        flags: libc::c_int,
    ) -> io::Result<()> {
        // SAFETY: the object is initialised; glibc copies the path.
        check(unsafe {
            libc::posix_spawn_file_actions_addopen(&mut *self.0, fd, path.as_ptr(), flags, 0)
        })
    }

    /// Makes `from` the child's `to` (dup2 clears close-on-exec on `to`).
    fn dup2(&mut self, from: &OwnedFd, to: libc::c_int) -> io::Result<()> {
        // SAFETY: the object is initialised; the descriptor stays open
        // until the spawn is over (its owner outlives the call).
        check(unsafe { libc::posix_spawn_file_actions_adddup2(&mut *self.0, from.as_raw_fd(), to) })
    }

    /// Sets up the child's standard input (`fd` 0) or output (1) as `how`
    /// says. For a pipe, returns (the parent's end, the child's end), the
    /// latter to be kept open until the spawn is over.
    fn stream(&mut self, fd: libc::c_int, how: Stdio) -> io::Result<Option<(OwnedFd, OwnedFd)>> {
        let input = fd == 0;
        match how {
            Stdio::Inherit => Ok(None),
            Stdio::Null => {
                let flags = if input {
                    libc::O_RDONLY
                } else {
                    libc::O_WRONLY
                };
                self.open(fd, c"/dev/null", flags).map(|()| None)
            }
            Stdio::Piped => {
                let (read, write) = pipe()?;
                let (ours, theirs) = if input { (write, read) } else { (read, write) };
                self.dup2(&theirs, fd)?;
                Ok(Some((ours, theirs)))
            }
        }
    }

    fn as_ptr(&self) -> *const libc::posix_spawn_file_actions_t {
        &*self.0
    }
}

impl Drop for FileActions {
    fn drop(&mut self) {
        // SAFETY: initialised by `new`, destroyed only here.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut *self.0) };
    }
}

/// `posix_spawnattr_t`, destroyed when dropped.
struct SpawnAttributes(Box<libc::posix_spawnattr_t>);

impl SpawnAttributes {
    /// The child's signal mask is `blocked` (nothing else), SIGPIPE is back
    /// to its default action (Rust ignores it; a child would inherit that),
    /// and with `own_group` the child leads a new process group.
    fn new(blocked: &[i32], own_group: bool) -> io::Result<SpawnAttributes> {
        // SAFETY: an all-zero value is a valid place for init to write to.
        let mut attr = Box::new(unsafe { std::mem::zeroed::<libc::posix_spawnattr_t>() });
        // SAFETY: `attr` is a live, writable object.
        check(unsafe { libc::posix_spawnattr_init(&mut *attr) })?;
        let mut this = SpawnAttributes(attr);
        let mask = signal_set(blocked);
        let default = signal_set(&[libc::SIGPIPE]);
        let mut flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
        if own_group {
            flags |= libc::POSIX_SPAWN_SETPGROUP;
            // SAFETY: the object is initialised; 0 means "the child's pid".
            check(unsafe { libc::posix_spawnattr_setpgroup(&mut *this.0, 0) })?;
        }
        // SAFETY: the object is initialised and the sets are initialised
        // sigset_t values (glibc copies them).
        unsafe {
            check(libc::posix_spawnattr_setsigmask(&mut *this.0, &mask))?;
            check(libc::posix_spawnattr_setsigdefault(&mut *this.0, &default))?;
            check(libc::posix_spawnattr_setflags(
                &mut *this.0,
                flags as libc::c_short,
            ))?;
        }
        Ok(this)
    }

    fn as_ptr(&self) -> *const libc::posix_spawnattr_t {
        &*self.0
    }
}

impl Drop for SpawnAttributes {
    fn drop(&mut self) {
        // SAFETY: initialised by `new`, destroyed only here.
        unsafe { libc::posix_spawnattr_destroy(&mut *self.0) };
    }
}

fn signal_set(signals: &[i32]) -> libc::sigset_t {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given.
    unsafe { libc::sigemptyset(set.as_mut_ptr()) };
    // SAFETY: initialised by sigemptyset just above.
    let mut set = unsafe { set.assume_init() };
    for &sig in signals {
        // SAFETY: `set` is an initialised sigset_t.
        unsafe { libc::sigaddset(&mut set, sig) };
    }
    set
}

/// A child started by [`Spawn::spawn`], with the parent's ends of its
/// pipes. Like `std::process::Child`, dropping it neither kills nor waits
/// for it.
#[derive(Debug)]
pub struct ChildProcess {
    pid: i32,
    status: Option<ExitStatus>,
    /// The write end of the child's standard input, if piped.
    pub stdin: Option<File>,
    /// The read end of the child's standard output, if piped.
    pub stdout: Option<File>,
}

impl ChildProcess {
    /// The child's process id.
    pub fn id(&self) -> i32 {
        self.pid
    }

    fn reap(&mut self, options: rustix::process::WaitOptions) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let pid = rustix::process::Pid::from_raw(self.pid).ok_or(Errno::SRCH)?;
        loop {
            match rustix::process::waitpid(Some(pid), options) {
                Ok(Some((_, status))) => {
                    self.status = Some(ExitStatus::from_raw(status.as_raw()));
                    return Ok(self.status);
                }
                Ok(None) => return Ok(None),
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The exit status if the child has ended (reaping it), else `None`.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.reap(rustix::process::WaitOptions::NOHANG)
    }

    /// Waits for the child to end and reaps it.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        self.reap(rustix::process::WaitOptions::empty())?
            .ok_or_else(|| io::Error::other("waitpid returned no status"))
    }

    /// Sends `signal` to the child, unless it has been reaped already (its
    /// pid may belong to another process by then).
    pub fn signal(&self, signal: i32) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        crate::signals::signal_process(self.pid, signal).map_err(io::Error::from)
    }

    /// Kills the child (SIGKILL), unless it has been reaped already.
    pub fn kill(&self) -> io::Result<()> {
        self.signal(libc::SIGKILL)
    }
}

/// The processes of group `pgid` that still run (zombies left out), from
/// `/proc/<pid>/stat` (field 3, the state; field 5, the group).
pub fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let Some(close) = stat.rfind(')') else {
                return false;
            };
            let mut fields = stat[close + 1..].split_whitespace();
            let state = fields.next();
            let group = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
            state != Some("Z") && group == Some(pgid)
        })
        .collect()
}

/// What [`wait_for_reader_gone`] saw first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipeWatch {
    /// Every read end of the pipe is closed: its reader has died.
    ReaderGone,
    /// The stop pipe became readable or its write end was closed.
    Stopped,
}

/// Blocks until the pipe whose WRITE end is `pipe` has no reader left
/// (`POLLERR`: the process reading it has died), or until `stop` (a read
/// end) becomes readable or hangs up. Costs nothing while it waits: one
/// `poll` with no timeout; interrupted by a signal, it waits again.
pub fn wait_for_reader_gone(pipe: BorrowedFd<'_>, stop: BorrowedFd<'_>) -> io::Result<PipeWatch> {
    let mut list = [Watched::errors_only(&pipe), Watched::readable(&stop)];
    loop {
        // No timeout: 0 ready is an interrupted wait, waited again.
        crate::poll::poll(&mut list, None)?;
        if list[1].ready() {
            return Ok(PipeWatch::Stopped);
        }
        if list[0].ready() {
            return Ok(PipeWatch::ReaderGone);
        }
    }
}

/// Why a helper process must not go on: its parent is not the process that
/// started it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParentCheck {
    /// The parent death signal could not be set.
    #[error("cannot set the parent death signal: {0}")]
    DeathSignal(Errno),
    /// The parent is another process: the one that started this process has
    /// died (this one was given to init or a subreaper), or this process
    /// was not started by rtlat at all.
    #[error("the parent process is {actual}, not {expected}")]
    OtherParent {
        /// The pid the starter passed down.
        expected: i32,
        /// The current parent's pid (0 when there is none).
        actual: i32,
    },
}

/// Makes the calling process die (SIGKILL) when its parent ends, then
/// checks that its parent is `expected_parent`. In this order there is no
/// gap: a parent that dies after the first step kills us, one that died
/// before is no longer our parent.
pub fn die_with_parent(expected_parent: i32) -> Result<(), ParentCheck> {
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(ParentCheck::DeathSignal)?;
    let actual = parent_pid();
    if actual == expected_parent {
        Ok(())
    } else {
        Err(ParentCheck::OtherParent {
            expected: expected_parent,
            actual,
        })
    }
}

/// Makes the calling process a child subreaper: its descendants whose
/// parent dies are given to it rather than to init, so that it can reap
/// them and know them gone (ssdd's tracees, whose tracer it killed).
pub fn become_subreaper() -> Result<(), Errno> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
}

/// The parent's process id (0 when the process has none).
pub fn parent_pid() -> i32 {
    rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_whose_reader_is_gone_wakes_the_watch_and_so_does_stop() {
        use std::os::fd::AsFd;
        let (reader, writer) = io::pipe().unwrap();
        let (stop_reader, stop_writer) = io::pipe().unwrap();
        let watcher = std::thread::spawn(move || {
            wait_for_reader_gone(writer.as_fd(), stop_reader.as_fd()).unwrap()
        });
        drop(reader);
        assert_eq!(watcher.join().unwrap(), PipeWatch::ReaderGone);
        drop(stop_writer);
        let (_reader, writer) = io::pipe().unwrap();
        let (stop_reader, stop_writer) = io::pipe().unwrap();
        let watcher = std::thread::spawn(move || {
            wait_for_reader_gone(writer.as_fd(), stop_reader.as_fd()).unwrap()
        });
        drop(stop_writer);
        assert_eq!(watcher.join().unwrap(), PipeWatch::Stopped);
    }
    use std::io::{Read, Write};

    /// `sh -c SCRIPT` with its output piped.
    fn shell(script: &str) -> Spawn {
        let mut spawn = Spawn::new(Path::new("/bin/sh"), OsStr::new("sh"));
        spawn.arg("-c").arg(script).stdout(Stdio::Piped);
        spawn
    }

    /// All the child's output.
    fn output_of(child: &mut ChildProcess) -> String {
        let mut out = String::new();
        let mut pipe = child.stdout.take().unwrap();
        pipe.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn a_child_gets_its_arguments_environment_and_pipes() {
        let mut child = shell("read line; echo \"$0 $line $RTLAT_SPAWN_TEST\"")
            .env("RTLAT_SPAWN_TEST", "set")
            .stdin(Stdio::Piped)
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(b"hello\n").unwrap();
        assert_eq!(output_of(&mut child), "sh hello set\n");
        assert!(child.wait().unwrap().success());
        // Reaped once; asking again gives the same status, killing is a no-op.
        assert!(child.try_wait().unwrap().unwrap().success());
        child.kill().unwrap();
    }

    #[test]
    fn stop_signals_are_blocked_from_the_start_and_the_group_is_its_own() {
        // cat reads its own status (a shell would show the mask it uses
        // while it waits for its children).
        let mut cat = Spawn::new(Path::new("/bin/cat"), OsStr::new("cat"));
        let mut child = cat
            .arg("/proc/self/status")
            .arg("/proc/self/stat")
            .stdout(Stdio::Piped)
            .block_stop_signals()
            .own_process_group()
            .spawn()
            .unwrap();
        let out = output_of(&mut child);
        assert!(child.wait().unwrap().success());
        let blocked = out
            .lines()
            .find_map(|l| l.strip_prefix("SigBlk:"))
            .unwrap()
            .trim();
        let blocked = u64::from_str_radix(blocked, 16).unwrap();
        let want = STOP_SIGNALS.iter().fold(0u64, |m, s| m | 1 << (s - 1));
        assert_eq!(blocked, want, "SigBlk of {out}");
        // The stat line: pid (comm) state ppid pgrp ...
        let stat = out.lines().last().unwrap();
        let after_name = &stat[stat.rfind(')').unwrap() + 1..];
        let group: i32 = after_name
            .split_whitespace()
            .nth(2)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(group, child.id(), "{stat}");
    }

    #[test]
    fn a_missing_program_is_an_error_of_the_spawn() {
        if let Some(emulator) = rtlat_testkit::emulation::emulated() {
            println!(
                "SKIPPED a_missing_program_is_an_error_of_the_spawn (emulated: {emulator}): \
                 qemu-user runs posix_spawn's CLONE_VFORK child as a fork, so a failed \
                 exec shows only in the child's exit status"
            );
            return;
        }
        let e = Spawn::new(Path::new("/nonexistent/rtlat"), OsStr::new("x"))
            .spawn()
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn the_parent_check_names_both_pids() {
        // The test process is not its own parent. (The death signal is set
        // on the short-lived thread only: it ends with the thread.)
        let own = crate::system::current_pid();
        let e = std::thread::spawn(move || die_with_parent(own))
            .join()
            .unwrap()
            .unwrap_err();
        assert_eq!(
            e,
            ParentCheck::OtherParent {
                expected: own,
                actual: parent_pid()
            }
        );
    }
}
