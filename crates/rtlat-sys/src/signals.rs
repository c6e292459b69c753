//! Signal masks and thread-directed signals.
//!
//! Measuring threads block every asynchronous signal but one, the wake-up
//! signal, which the main thread sends to interrupt a sleep when the run
//! stops. Process-directed signals (SIGINT, SIGTERM, ...) therefore always
//! reach the main thread.
#![allow(unsafe_code)]

use crate::Errno;

/// The signal the main thread sends to interrupt a measuring thread's sleep
/// at the end of a run (a real-time signal nothing else uses).
pub fn wake_signal() -> i32 {
    libc::SIGRTMIN() + 1
}

/// SIGTERM, for a module that stops its own process as a user would.
pub const SIGTERM: i32 = libc::SIGTERM;

/// SIGKILL, for a group that did not end on SIGTERM.
pub const SIGKILL: i32 = libc::SIGKILL;

/// Blocks every signal in the calling thread except `allowed` (and the
/// unblockable SIGKILL and SIGSTOP, and synchronous fault signals).
pub fn block_all_except(allowed: i32) -> Result<(), Errno> {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigfillset initialises the sigset_t it is given; the pointer is
    // to a live local.
    unsafe { libc::sigfillset(set.as_mut_ptr()) };
    // SAFETY: the set was initialised by sigfillset above.
    let mut set = unsafe { set.assume_init() };
    for sig in [
        allowed,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGFPE,
        libc::SIGILL,
    ] {
        // SAFETY: `set` is an initialised sigset_t and `sig` a valid number.
        unsafe { libc::sigdelset(&mut set, sig) };
    }
    // SAFETY: `set` is initialised; a null old-set pointer is allowed.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(Errno::from_raw_os_error(rc))
    }
}

/// Unblocks every signal in the calling thread: what a helper does before
/// it becomes another program (the mask survives exec), so that the
/// program starts as a shell would start it.
pub fn unblock_all() -> Result<(), Errno> {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the sigset_t it is given; the pointer
    // is to a live local.
    unsafe { libc::sigemptyset(set.as_mut_ptr()) };
    // SAFETY: the set was initialised by sigemptyset above.
    let set = unsafe { set.assume_init() };
    // SAFETY: `set` is initialised; a null old-set pointer is allowed.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(Errno::from_raw_os_error(rc))
    }
}

/// A thread handle as `std::os::unix::thread::JoinHandleExt::as_pthread_t`
/// returns it.
pub type ThreadHandle = libc::pthread_t;

/// Sends `signal` to one thread of this process.
pub fn signal_thread(thread: ThreadHandle, signal: i32) -> Result<(), Errno> {
    // SAFETY: the caller passes the handle of a thread it has not joined
    // yet (a JoinHandle it still owns), so the handle is valid.
    let rc = unsafe { libc::pthread_kill(thread, signal) };
    if rc == 0 {
        Ok(())
    } else {
        Err(Errno::from_raw_os_error(rc))
    }
}

extern "C" fn ignore_wake(_signal: libc::c_int) {}

/// Installs a handler for [`wake_signal`] that does nothing: its only effect
/// is to make a blocked `clock_nanosleep` return `EINTR`. Without a handler
/// the signal's default action would end the process.
pub fn install_wake_handler() -> Result<(), Errno> {
    // SAFETY: an all-zero sigaction is a valid starting value (no flags, empty
    // mask, null handler) that we fill in below.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = ignore_wake as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: `action.sa_mask` is a field of a live, initialised struct.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: `action` is fully initialised; the handler is async-signal-safe
    // (it does nothing); a null old-action pointer is allowed.
    let rc = unsafe { libc::sigaction(wake_signal(), &action, std::ptr::null_mut()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(crate::last_errno())
    }
}

/// Waits for any of a fixed set of signals with `sigwaitinfo`; the signals
/// must be blocked in the waiting thread. Built once, so that waiting costs
/// one system call and no set-up.
#[derive(Debug, Clone, Copy)]
pub struct SignalWaiter {
    set: libc::sigset_t,
}

impl SignalWaiter {
    /// A waiter for `signals`.
    pub fn new(signals: &[i32]) -> SignalWaiter {
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset initialises the set it is given.
        unsafe { libc::sigemptyset(set.as_mut_ptr()) };
        // SAFETY: initialised by sigemptyset just above.
        let mut set = unsafe { set.assume_init() };
        for &sig in signals {
            // SAFETY: `set` is an initialised sigset_t.
            unsafe { libc::sigaddset(&mut set, sig) };
        }
        SignalWaiter { set }
    }

    /// Waits for one of the signals and returns its number;
    /// `Err(Errno::INTR)` when another signal's handler ran first.
    #[inline]
    pub fn wait(&self) -> Result<i32, Errno> {
        // SAFETY: `set` is an initialised sigset_t; a null siginfo pointer
        // is allowed.
        let rc = unsafe { libc::sigwaitinfo(&self.set, std::ptr::null_mut()) };
        if rc >= 0 {
            Ok(rc)
        } else {
            Err(crate::last_errno())
        }
    }
}

/// Sends `signal` to process `pid`.
pub fn signal_process(pid: i32, signal: i32) -> Result<(), Errno> {
    // SAFETY: kill has no memory effects; any pid and signal number are
    // valid arguments (errors come back as -1 and errno).
    let rc = unsafe { libc::kill(pid, signal) };
    if rc == 0 {
        Ok(())
    } else {
        Err(crate::last_errno())
    }
}

/// Sends `signal` to every process of the process group `pgid`. A group
/// id below 2 is refused (`EINVAL`): `kill(0)` would reach our own group
/// and `kill(-1)` every process we may signal.
pub fn signal_process_group(pgid: i32, signal: i32) -> Result<(), Errno> {
    if pgid < 2 {
        return Err(Errno::INVAL);
    }
    // SAFETY: kill has no memory effects; -pgid (pgid >= 2) names one
    // process group, and any signal number is a valid argument (errors
    // come back as -1 and errno).
    let rc = unsafe { libc::kill(-pgid, signal) };
    if rc == 0 {
        Ok(())
    } else {
        Err(crate::last_errno())
    }
}

/// A thread of this process, addressed by process and thread id, so that a
/// signal reaches it with one `tgkill` system call. (glibc's
/// `pthread_kill` makes four: `getpid`, two `rt_sigprocmask` and `tgkill`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadAddress {
    pid: i32,
    tid: i32,
}

impl ThreadAddress {
    /// The calling thread.
    pub fn current() -> ThreadAddress {
        ThreadAddress {
            pid: crate::system::current_pid(),
            tid: crate::system::current_tid(),
        }
    }

    /// Sends `signal` to the thread (`tgkill`).
    #[inline]
    pub fn signal(self, signal: i32) -> Result<(), Errno> {
        // SAFETY: tgkill takes three integers and has no memory effects;
        // errors come back as -1 and errno.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_tgkill,
                libc::c_long::from(self.pid),
                libc::c_long::from(self.tid),
                libc::c_long::from(signal),
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(crate::last_errno())
        }
    }

    /// The address packed in 64 bits, for an atomic cell.
    pub fn to_bits(self) -> u64 {
        (u64::from(self.pid as u32) << 32) | u64::from(self.tid as u32)
    }

    /// The address [`ThreadAddress::to_bits`] packed.
    pub fn from_bits(bits: u64) -> ThreadAddress {
        ThreadAddress {
            pid: (bits >> 32) as u32 as i32,
            tid: bits as u32 as i32,
        }
    }
}

/// The calling thread's own pthread handle.
pub fn current_thread_handle() -> ThreadHandle {
    // SAFETY: pthread_self always succeeds and has no memory effects.
    unsafe { libc::pthread_self() }
}

/// Counts each delivery of each of `signals` in `counter`, beside any
/// other handler of theirs (signal-hook's flags: both are entries of the
/// same registry). Two Ctrl-Cs that come before anyone looks are two,
/// where a flag would say one.
pub fn count_deliveries(
    signals: &[i32],
    counter: &std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> std::io::Result<()> {
    for &signal in signals {
        let counter = std::sync::Arc::clone(counter);
        // SAFETY: the action only adds to an atomic integer, which is
        // async-signal-safe: no allocation, no lock, no other call.
        unsafe {
            signal_hook_registry::register(signal, move || {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            })
        }?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_waits_for_a_signal_sent_to_it() {
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            block_all_except(wake_signal()).unwrap();
            tx.send(current_thread_handle()).unwrap();
            SignalWaiter::new(&[libc::SIGUSR2]).wait()
        });
        let handle = rx.recv().unwrap();
        // The signal stays pending until the thread waits for it.
        signal_thread(handle, libc::SIGUSR2).unwrap();
        assert_eq!(waiter.join().unwrap(), Ok(libc::SIGUSR2));
    }

    #[test]
    fn a_thread_address_receives_its_signal_with_one_call() {
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            block_all_except(wake_signal()).unwrap();
            tx.send(ThreadAddress::current().to_bits()).unwrap();
            SignalWaiter::new(&[libc::SIGUSR2]).wait()
        });
        let address = ThreadAddress::from_bits(rx.recv().unwrap());
        assert_eq!(address.pid, crate::system::current_pid());
        address.signal(libc::SIGUSR2).unwrap();
        assert_eq!(waiter.join().unwrap(), Ok(libc::SIGUSR2));
    }
}
