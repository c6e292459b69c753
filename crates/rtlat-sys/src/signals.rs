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
        Err(Errno::from_raw_os_error(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EINVAL),
        ))
    }
}
