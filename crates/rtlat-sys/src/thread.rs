//! Measuring threads created with `pthread_create` directly.
//!
//! `std::thread` gives every thread an alternate signal stack (8 KiB and a
//! guard page) for its stack-overflow message; under `mlockall(MCL_FUTURE)`
//! that is 12 KiB of locked memory per measuring thread, more than a third
//! of what such a thread needs. A thread made here has only the stack it
//! asks for (plus glibc's guard page). A stack overflow still hits the guard
//! page; the process then dies of SIGSEGV without Rust's message.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A running thread made by [`spawn`]. Join it, or it is detached when
/// dropped.
#[derive(Debug)]
pub struct RawThread {
    handle: libc::pthread_t,
    joined: bool,
}

type Job = Box<dyn FnOnce() + Send + 'static>;

extern "C" fn run_job(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `arg` is the pointer `spawn` made with Box::into_raw from a
    // Box<Job>, handed to exactly this one thread; we take ownership back.
    let job: Box<Job> = unsafe { Box::from_raw(arg.cast::<Job>()) };
    // A panic must not unwind into C; the panic hook has already printed it.
    let _ = catch_unwind(AssertUnwindSafe(job));
    std::ptr::null_mut()
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// Starts `job` on a new thread named `name` (at most 15 bytes are kept)
/// with a stack of `stack_bytes` (rounded up to the system minimum).
pub fn spawn(
    name: &str,
    stack_bytes: usize,
    job: impl FnOnce() + Send + 'static,
) -> io::Result<RawThread> {
    let min_stack = usize::try_from(
        // SAFETY: sysconf has no memory effects.
        unsafe { libc::sysconf(libc::_SC_THREAD_STACK_MIN) },
    )
    .unwrap_or(16 * 1024);
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: pthread_attr_init initialises the attribute object it is given.
    check(unsafe { libc::pthread_attr_init(attr.as_mut_ptr()) })?;
    // SAFETY: initialised by pthread_attr_init just above.
    let mut attr = unsafe { attr.assume_init() };
    // SAFETY: `attr` is an initialised attribute object.
    let sized =
        check(unsafe { libc::pthread_attr_setstacksize(&mut attr, stack_bytes.max(min_stack)) });
    let name = name.to_string();
    let job: Box<Job> = Box::new(Box::new(move || {
        crate::system::set_thread_name(&name);
        job();
    }));
    let arg = Box::into_raw(job).cast::<c_void>();
    let mut handle: libc::pthread_t = 0;
    let created = sized.and_then(|()| {
        // SAFETY: `attr` is initialised, `run_job` has the signature
        // pthread_create expects, and `arg` stays valid until the new thread
        // takes ownership of it.
        check(unsafe { libc::pthread_create(&mut handle, &attr, run_job, arg) })
    });
    // SAFETY: `attr` is initialised and no longer needed.
    unsafe { libc::pthread_attr_destroy(&mut attr) };
    if let Err(e) = created {
        // SAFETY: the thread was not created, so `arg` is still ours.
        drop(unsafe { Box::from_raw(arg.cast::<Job>()) });
        return Err(e);
    }
    Ok(RawThread {
        handle,
        joined: false,
    })
}

impl RawThread {
    /// The pthread handle, for [`crate::signals::signal_thread`].
    pub fn handle(&self) -> libc::pthread_t {
        self.handle
    }

    /// Waits for the thread to finish.
    pub fn join(mut self) -> io::Result<()> {
        self.joined = true;
        // SAFETY: the thread is live and joined exactly once (here); a null
        // result pointer is allowed.
        check(unsafe { libc::pthread_join(self.handle, std::ptr::null_mut()) })
    }
}

impl Drop for RawThread {
    fn drop(&mut self) {
        if !self.joined {
            // SAFETY: the thread was neither joined nor detached before.
            unsafe { libc::pthread_detach(self.handle) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn runs_the_job_and_joins() {
        let hits = Arc::new(AtomicUsize::new(0));
        let h2 = Arc::clone(&hits);
        let t = spawn("rtlat-test", 32 * 1024, move || {
            h2.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        t.join().unwrap();
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    const EXPECTED_PANIC: &str = "expected in this test";

    /// How many times the panic hook was handed [`EXPECTED_PANIC`], which
    /// it keeps off stderr (a thread made here is not one of libtest's,
    /// whose output it captures, so the default hook would print the
    /// message and a backtrace in a passing run); every other panic goes
    /// to the hook there was.
    static EXPECTED_PANICS_SEEN: AtomicUsize = AtomicUsize::new(0);

    fn keep_the_expected_panic_quiet() {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        INSTALL.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if info.payload().downcast_ref::<&str>() == Some(&EXPECTED_PANIC) {
                    EXPECTED_PANICS_SEEN.fetch_add(1, Ordering::SeqCst);
                } else {
                    previous(info);
                }
            }));
        });
    }

    #[test]
    fn a_panicking_job_does_not_take_the_process_down() {
        keep_the_expected_panic_quiet();
        let ran = Arc::new(AtomicUsize::new(0));
        let ran_in_job = Arc::clone(&ran);
        let t = spawn("rtlat-panic", 64 * 1024, move || {
            ran_in_job.fetch_add(1, Ordering::SeqCst);
            std::panic::panic_any(EXPECTED_PANIC)
        })
        .unwrap();
        t.join().unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert_eq!(EXPECTED_PANICS_SEEN.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_thread_is_named() {
        let (tx, rx) = std::sync::mpsc::channel();
        let t = spawn("rtlat-named-thread-long", 32 * 1024, move || {
            let comm = std::fs::read_to_string("/proc/thread-self/comm").unwrap();
            tx.send(comm).unwrap();
        })
        .unwrap();
        let comm = rx.recv().unwrap();
        t.join().unwrap();
        // The kernel keeps 15 bytes of a thread name.
        assert_eq!(comm.trim_end(), "rtlat-named-thr");
    }
}
