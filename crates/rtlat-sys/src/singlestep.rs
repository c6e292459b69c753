//! ssdd's tracer/tracee pairs: a forked tracer that forks a spinning
//! tracee, attaches to it with ptrace and single-steps it N times, checking
//! each stop (the right pid, stopped, by SIGTRAP, with a SIGCHLD), and the
//! parent's wait for the tracers.
//!
//! Everything a forked process runs is here, written for a child of a
//! multithreaded process: raw system calls only, no allocation, no lock,
//! lines formatted on the stack and written with one `write(2)` each.
//! Both children die with their parent (`PR_SET_PDEATHSIG` = SIGKILL,
//! checked against the expected parent after it is set): a killed rtlat
//! takes its tracers with it, a killed tracer its tracee. The tracer
//! kills and reaps its tracee before it exits. The stop signals
//! ([`crate::process::STOP_SIGNALS`]) are blocked in both: a Ctrl-C to
//! the process group stops rtlat, which ends the tracers.
#![allow(unsafe_code)]

use core::fmt::Write as _;

use std::sync::atomic::{AtomicU32, Ordering};

use crate::Errno;
use crate::pi::SharedWords;

/// How long a tracer waits for the SIGCHLD of a stop (as ssdd: 310 ms,
/// in its growing sleeps).
const SIGCHLD_WAIT_NS: i64 = 310_000_000;

/// One tracer's task.
#[derive(Clone, Copy, Debug)]
pub struct TracerPlan {
    /// Its number (`forktest#N`).
    pub id: u32,
    /// The single steps to make.
    pub steps: u32,
    /// No `STARTING`/`EXITING, no error` lines.
    pub quiet: bool,
    /// The pid of the process that forks it (rtlat).
    pub parent: i32,
}

/// Each tracer's tracee, by the tracer's number, in memory shared with
/// the tracers. The kernel writes a tracee's pid in its tracer's word as
/// the tracer forks it (`CLONE_PARENT_SETTID`: before the fork returns,
/// so before the tracer can die or the tracee run); the tracer clears the
/// word once it has reaped its tracee. A tracer that dies first leaves
/// the pid: its tracee, killed by its parent death signal, is the child
/// of a subreaper, which reaps it by that pid ([`Tracees::reap`]) and no
/// other child.
#[derive(Debug)]
pub struct Tracees {
    words: SharedWords,
}

impl Tracees {
    /// The words of `tracers` tracers, all clear.
    pub fn new(tracers: u32) -> Result<Tracees, Errno> {
        Ok(Tracees {
            words: SharedWords::new(tracers as usize)?,
        })
    }

    fn word(&self, id: u32) -> &AtomicU32 {
        &self.words.words()[id as usize]
    }

    /// The pid of tracer `id`'s tracee, while it has one it has not
    /// reaped.
    pub fn tracee(&self, id: u32) -> Option<i32> {
        match self.word(id).load(Ordering::SeqCst) as i32 {
            0 => None,
            pid => Some(pid),
        }
    }

    /// Waits for the tracee tracer `id` left (if any) to end and reaps it:
    /// for a subreaper, once that tracer has ended.
    pub fn reap(&self, id: u32) {
        if let Some(pid) = self.tracee(id) {
            while let Ok(Some((_, WaitState::Stopped(_)))) = wait_child(pid, false) {}
            self.word(id).store(0, Ordering::SeqCst);
        }
    }
}

/// Forks a tracer that runs `plan` and exits 0 when every step was right,
/// 1 (after its `forktest#…: EXITING, ERROR: …` line on stdout) when one
/// was not; its tracee's pid is kept in `tracees`. Returns its pid.
pub fn fork_tracer(plan: TracerPlan, tracees: &Tracees) -> Result<i32, Errno> {
    let word = tracees.word(plan.id);
    // SAFETY: fork has no memory-safety preconditions for the parent; the
    // child runs `tracer` only, which makes raw system calls, formats on
    // its stack and never returns (it ends with _exit), so it touches no
    // lock or heap state another thread held at the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(crate::last_errno());
    }
    if pid == 0 {
        tracer(plan, word);
    }
    Ok(pid)
}

/// How a waited-for child changed (ssdd's `do_wait` states).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitState {
    /// Exited with status 0.
    Exited,
    /// Exited with another status.
    ExitedWithError(i32),
    /// Stopped by the signal.
    Stopped(i32),
    /// Killed by the signal.
    Signaled(i32),
    /// Something else.
    Unknown,
    /// No child left.
    NoChild,
}

impl WaitState {
    /// ssdd's name of the state.
    pub fn name(self) -> &'static str {
        match self {
            WaitState::Exited => "STATE_EXITED",
            WaitState::ExitedWithError(_) => "STATE_EXITED_ERRSTAT",
            WaitState::Stopped(_) => "STATE_STOPPED",
            WaitState::Signaled(_) => "STATE_SIGNALED",
            WaitState::Unknown => "STATE_UNKNOWN",
            WaitState::NoChild => "STATE_ECHILD",
        }
    }

    /// The signal that stopped or killed the child, else -1.
    fn signal(self) -> i32 {
        match self {
            WaitState::Stopped(s) | WaitState::Signaled(s) => s,
            _ => -1,
        }
    }
}

/// Waits for any child (`pid` -1) or one, of any kind (`__WALL`), stopped
/// ones included; `nohang`: do not block (then `Ok(None)` when none has
/// changed). Interrupted waits are retried.
pub fn wait_child(pid: i32, nohang: bool) -> Result<Option<(i32, WaitState)>, Errno> {
    let flags = libc::WUNTRACED | libc::__WALL | if nohang { libc::WNOHANG } else { 0 };
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a live, writable c_int.
        let rc = unsafe { libc::waitpid(pid, &mut status, flags) };
        if rc > 0 {
            return Ok(Some((rc, decode(status))));
        }
        if rc == 0 {
            return Ok(None);
        }
        match crate::last_errno() {
            Errno::INTR => continue,
            Errno::CHILD => return Ok(Some((0, WaitState::NoChild))),
            e => return Err(e),
        }
    }
}

fn decode(status: libc::c_int) -> WaitState {
    if libc::WIFEXITED(status) {
        match libc::WEXITSTATUS(status) {
            0 => WaitState::Exited,
            code => WaitState::ExitedWithError(code),
        }
    } else if libc::WIFSTOPPED(status) {
        WaitState::Stopped(libc::WSTOPSIG(status))
    } else if libc::WIFSIGNALED(status) {
        WaitState::Signaled(libc::WTERMSIG(status))
    } else {
        WaitState::Unknown
    }
}

/// Sends SIGKILL to `pid` (an error, such as a process already gone, is
/// ignored).
pub fn kill_child(pid: i32) {
    // SAFETY: kill has no memory effects.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// A line formatted on the stack (at most 256 bytes; longer text is cut).
struct Line {
    buf: [u8; 256],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            buf: [0; 256],
            len: 0,
        }
    }

    /// Writes the line to stdout in one call, as ssdd's unbuffered
    /// stdout does.
    fn emit(&self) {
        let mut done = 0;
        while done < self.len {
            // SAFETY: the range is inside `buf`, which outlives the call.
            let rc = unsafe {
                libc::write(1, self.buf[done..self.len].as_ptr().cast(), self.len - done)
            };
            if rc <= 0 {
                if rc < 0 && crate::last_errno() == Errno::INTR {
                    continue;
                }
                return;
            }
            done += rc as usize;
        }
    }
}

impl core::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.buf.len() - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Prints one line (the arguments of `write!`) in one write.
macro_rules! say {
    ($($arg:tt)*) => {{
        let mut line = Line::new();
        let _ = writeln!(line, $($arg)*);
        line.emit();
    }};
}

fn exit(code: i32) -> ! {
    // SAFETY: _exit ends the process at once, without atexit handlers or
    // destructors; it never returns.
    unsafe { libc::_exit(code) }
}

fn errno_now() -> i32 {
    crate::last_errno().raw_os_error()
}

/// Dies with the parent, which must be `parent`; exits at once otherwise.
fn die_with(parent: i32) {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number; no memory effects.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    // SAFETY: getppid has no memory effects.
    if rc != 0 || unsafe { libc::getppid() } != parent {
        exit(1);
    }
}

/// Blocks SIGCHLD and the stop signals in the calling process.
fn block_signals() {
    // SAFETY: `set` is initialised by sigemptyset before use, and every
    // call gets valid pointers to it (the old mask is not wanted).
    unsafe {
        let mut set = core::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        for sig in crate::process::STOP_SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, core::ptr::null_mut());
    }
}

/// Whether a SIGCHLD is pending or arrives within [`SIGCHLD_WAIT_NS`];
/// takes it.
fn took_sigchld() -> bool {
    // SAFETY: `set` is initialised by sigemptyset; `timeout` and `set` are
    // live for the call; a null siginfo pointer is allowed.
    unsafe {
        let mut set = core::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: SIGCHLD_WAIT_NS as _,
        };
        loop {
            let rc = libc::sigtimedwait(&set, core::ptr::null_mut(), &timeout);
            if rc == libc::SIGCHLD {
                return true;
            }
            if rc < 0 && crate::last_errno() == Errno::INTR {
                continue;
            }
            return false;
        }
    }
}

fn ptrace(request: libc::c_uint, pid: i32) -> Result<(), i32> {
    // SAFETY: ATTACH and SINGLESTEP take no address and a zero data
    // argument; nothing is read or written through them.
    let rc = unsafe {
        libc::ptrace(
            request as _,
            pid,
            core::ptr::null_mut::<libc::c_void>(),
            core::ptr::null_mut::<libc::c_void>(),
        )
    };
    if rc == -1 { Err(errno_now()) } else { Ok(()) }
}

/// The tracee: dies with its tracer from now on, says so through `ready`
/// (one byte; the tracer attaches only then), and spins until it is
/// killed.
fn tracee(tracer: i32, ready: libc::c_int) -> ! {
    die_with(tracer);
    let byte = 1u8;
    // SAFETY: `byte` is live for the call and one byte long; `ready` is
    // the pipe's write end, owned by this process.
    unsafe {
        libc::write(ready, (&raw const byte).cast(), 1);
        libc::close(ready);
    }
    loop {
        core::hint::spin_loop();
    }
}

/// Waits for the tracee's byte on `ready` (the pipe's read end, closed
/// here): true once it has come, false if the tracee ended first.
fn tracee_ready(ready: libc::c_int) -> bool {
    let mut byte = 0u8;
    let got = loop {
        // SAFETY: `byte` is live and writable for the call, one byte long.
        let rc = unsafe { libc::read(ready, (&raw mut byte).cast(), 1) };
        if rc < 0 && crate::last_errno() == Errno::INTR {
            continue;
        }
        break rc == 1;
    };
    // SAFETY: `ready` is this process's own descriptor, closed once.
    unsafe { libc::close(ready) };
    got
}

/// Forks the tracee: a fork (`clone` with SIGCHLD and no shared memory)
/// that has the kernel write the tracee's pid in `word` before it returns.
fn fork_tracee(word: &AtomicU32) -> i32 {
    let flags = (libc::SIGCHLD | libc::CLONE_PARENT_SETTID) as libc::c_ulong;
    // SAFETY: without CLONE_VM this is a fork: the child gets a copy of the
    // address space and of the stack (a null new stack), and runs `tracee`
    // only, raw calls only. `word` is a live 32-bit word of the shared
    // mapping, where the kernel stores the child's pid. The third argument
    // is the parent's tid pointer on x86_64, arm and aarch64 alike; the
    // other two pointers are null, unused without their flags.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags,
            core::ptr::null_mut::<libc::c_void>(),
            word.as_ptr(),
            core::ptr::null_mut::<libc::c_void>(),
            core::ptr::null_mut::<libc::c_void>(),
        )
    };
    rc as i32
}

/// The tracer's whole life (in the forked child); its tracee's pid is in
/// `word` while the tracee is not reaped.
fn tracer(plan: TracerPlan, word: &AtomicU32) -> ! {
    die_with(plan.parent);
    block_signals();
    // SAFETY: getpid has no memory effects.
    let me = unsafe { libc::getpid() };
    let id = plan.id;
    // The tracee attached to before it has asked to die with the tracer
    // would, if the tracer were killed in that moment, be left stopped by
    // the attach for good: the tracer waits for its word first.
    let mut ready: [libc::c_int; 2] = [-1, -1];
    // SAFETY: `ready` is a live array of two descriptors for pipe2 to fill.
    if unsafe { libc::pipe2(ready.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        say!(
            "forktest#{id}/{me}: EXITING, ERROR: pipe returned errno {}",
            errno_now()
        );
        exit(1);
    }
    let child = fork_tracee(word);
    if child < 0 {
        say!(
            "forktest#{id}/{me}: EXITING, ERROR: fork returned errno {}",
            errno_now()
        );
        exit(1);
    }
    if child == 0 {
        // SAFETY: the read end is this (forked) process's own copy.
        unsafe { libc::close(ready[0]) };
        tracee(me, ready[1]);
    }
    // SAFETY: the write end is this process's own copy, closed once.
    unsafe { libc::close(ready[1]) };
    let fail = |code: i32| -> ! {
        kill_child(child);
        let _ = wait_child(child, false);
        word.store(0, Ordering::SeqCst);
        exit(code)
    };
    if !tracee_ready(ready[0]) {
        say!("forktest#{id}/{me}: EXITING, ERROR: the tracee ended before it was traced");
        fail(1);
    }
    if !plan.quiet {
        say!("forktest#{id}/{me}/{child}: STARTING");
    }
    if let Err(errno) = ptrace(libc::PTRACE_ATTACH as _, child) {
        say!("forktest#{id}/{me}: EXITING, ERROR: attach failed.  errno {errno}");
        fail(1);
    }
    let (pid, state) = match wait_child(-1, false) {
        Ok(Some(got)) => got,
        _ => {
            say!(
                "do_wait/{me}: EXITING, ERROR: waitpid() returned errno {}",
                errno_now()
            );
            fail(1)
        }
    };
    if pid != child {
        say!("forktest#{id}/{me}: EXITING, ERROR: attach: Unexpected wait pid {pid}");
        fail(1);
    }
    if !matches!(state, WaitState::Stopped(_)) {
        say!(
            "forktest#{id}/{me}: EXITING, ERROR: attach: wait on PTRACE_ATTACH returned {} \
             [{}, wanted STATE_STOPPED], signo {}",
            state_number(state),
            state.name(),
            state.signal()
        );
        fail(1);
    }
    if !took_sigchld() {
        say!(
            "forktest#{id}/{me}: EXITING, ERROR: wait on PTRACE_ATTACH saw a SIGCHLD count of 0, \
             should be 1"
        );
        fail(1);
    }
    let mut signo = state.signal();
    for i in 0..plan.steps {
        if let Err(errno) = ptrace(libc::PTRACE_SINGLESTEP as _, child) {
            say!(
                "forktest#{id}/{me}: EXITING, ERROR: PTRACE_SINGLESTEP #{i}: returned status -1, \
                 errno {errno}, signo {signo}"
            );
            fail(1);
        }
        let (pid, state) = match wait_child(-1, false) {
            Ok(Some(got)) => got,
            _ => {
                say!(
                    "do_wait/{me}: EXITING, ERROR: waitpid() returned errno {}",
                    errno_now()
                );
                fail(1)
            }
        };
        signo = state.signal();
        if pid != child {
            say!(
                "forktest#{id}/{me}: EXITING, ERROR: wait on PTRACE_SINGLESTEP #{i}: returned \
                 wrong pid {pid}, expected {child}"
            );
            fail(1);
        }
        if !matches!(state, WaitState::Stopped(_)) {
            say!(
                "forktest#{id}/{me}: EXITING, ERROR: wait on PTRACE_SINGLESTEP #{i}: wanted \
                 STATE_STOPPED, saw {} instead (and saw signo {signo} too)",
                state.name()
            );
            fail(1);
        }
        if signo != libc::SIGTRAP {
            say!(
                "forktest#{id}/{me}: EXITING, ERROR: wait on PTRACE_SINGLESTEP #{i}: returned \
                 signal {signo}, wanted SIGTRAP"
            );
            fail(1);
        }
        if !took_sigchld() {
            say!(
                "forktest#{id}/{me}: EXITING, ERROR: wait on PTRACE_SINGLESTEP #{i}: no SIGCHLD \
                 seen (signal count == 0), signo {signo}"
            );
            fail(1);
        }
    }
    if !plan.quiet {
        say!("forktest#{id}/{me}: EXITING, no error");
    }
    fail(0)
}

/// ssdd's number of a state (its `STATE_*` constants).
fn state_number(state: WaitState) -> i32 {
    match state {
        WaitState::Exited => 1,
        WaitState::Stopped(_) => 2,
        WaitState::Signaled(_) => 3,
        WaitState::Unknown => 4,
        WaitState::NoChild => 5,
        WaitState::ExitedWithError(_) => 7,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tracer_single_steps_its_tracee_and_exits_0() {
        if let Some(emulator) = rtlat_testkit::emulation::emulated() {
            println!(
                "SKIPPED a_tracer_single_steps_its_tracee_and_exits_0 (emulated: {emulator}): \
                 qemu-user does not emulate ptrace between guest processes"
            );
            return;
        }
        let tracees = Tracees::new(1).unwrap();
        let pid = fork_tracer(
            TracerPlan {
                id: 0,
                steps: 50,
                quiet: true,
                parent: crate::system::current_pid(),
            },
            &tracees,
        )
        .unwrap();
        let (got, state) = wait_child(pid, false).unwrap().unwrap();
        assert_eq!((got, state), (pid, WaitState::Exited));
        // It reaped its tracee and cleared the word.
        assert_eq!(tracees.tracee(0), None);
    }

    #[test]
    fn a_killed_tracers_tracee_is_reaped_by_its_pid_and_no_other_child() {
        if let Some(emulator) = rtlat_testkit::emulation::emulated() {
            println!(
                "SKIPPED a_killed_tracers_tracee_is_reaped_by_its_pid_and_no_other_child \
                 (emulated: {emulator}): qemu-user does not emulate ptrace between guest \
                 processes"
            );
            return;
        }
        crate::process::become_subreaper().unwrap();
        // A child that is neither tracer nor tracee, ended and not reaped.
        let mut other = std::process::Command::new("true").spawn().unwrap();
        let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: `info` is live and writable for the call; WNOWAIT leaves
        // the ended child to be reaped later.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                other.id(),
                info.as_mut_ptr(),
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        assert_eq!(rc, 0);
        let tracees = Tracees::new(2).unwrap();
        let tracer = fork_tracer(
            TracerPlan {
                id: 1,
                steps: u32::MAX,
                quiet: true,
                parent: crate::system::current_pid(),
            },
            &tracees,
        )
        .unwrap();
        // The word is written before the tracer's fork returns; the tracer
        // is at work once it is.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let tracee = loop {
            if let Some(pid) = tracees.tracee(1) {
                break pid;
            }
            assert!(std::time::Instant::now() < deadline, "no tracee");
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        kill_child(tracer);
        let (_, state) = wait_child(tracer, false).unwrap().unwrap();
        assert_eq!(state, WaitState::Signaled(libc::SIGKILL));
        tracees.reap(1);
        assert_eq!(tracees.tracee(1), None);
        // The tracee is gone (reaped), the other child is still ours.
        assert_eq!(
            wait_child(tracee, true).unwrap(),
            Some((0, WaitState::NoChild))
        );
        assert!(other.try_wait().unwrap().unwrap().success());
        assert_eq!(tracees.tracee(0), None);
    }
}
