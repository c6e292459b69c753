//! pip_stress's three processes around one priority-inheritance mutex in
//! shared memory, as rt-tests' pip_stress does it: the calling process is
//! the low priority one; it forks the high one, which forks the medium
//! one; all run on one CPU.
//!
//! - low (SCHED_FIFO 1) takes the mutex, notes it, sleeps (500 µs) and
//!   releases it;
//! - high (3) notes its start and blocks on the mutex, lending low its
//!   priority; once it has the mutex it checks that low had it and that
//!   medium had started, then kills medium;
//! - medium (2) notes its start (an inversion needs high to have started
//!   first) and spins: without priority inheritance it would keep low
//!   from ever running again. Here the spin is bounded (10 s), so that a
//!   kernel without working PI ends the run instead of hanging the CPU.
//!
//! The state is a handful of 32-bit words in an anonymous shared mapping
//! (no named object to leave behind); each child asks to be killed when
//! its parent dies, so nothing outlives the calling process.

use std::sync::atomic::{AtomicU32, Ordering::Acquire, Ordering::Release};
use std::time::{Duration, Instant};

use rtlat_sys::pi::{ChildEnd, PiMutex, SharedWords, fork_child, kill_child, wait_child};
use rtlat_sys::{Errno, affinity, sched};

const RESOURCE: usize = 0;
const STATE: usize = 1;
const LOW_OWNS: usize = 2;
const HIGH_STARTED: usize = 3;
const HIGH_OWNS: usize = 4;
const MEDIUM_STARTED: usize = 5;
const INVERSION: usize = 6;
const ERROR: usize = 7;
const WORDS: usize = 8;

/// How long the medium process spins at most.
const MEDIUM_SPIN_LIMIT: Duration = Duration::from_secs(10);

/// What the run found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipOutcome {
    /// The inversion happened in the expected order and priority
    /// inheritance resolved it.
    Resolved,
    /// The processes did not run in the order of an inversion.
    NoInversion,
}

/// Why the run could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PipError {
    /// The shared mapping, a fork or a wait failed.
    #[error("{0}: {1}")]
    System(&'static str, Errno),
    /// A process could not take its policy or the mutex (the errno, as
    /// the child reported it).
    #[error("a child process failed: {0}")]
    Child(Errno),
}

/// Runs the three processes on `cpu`, the low one holding the mutex for
/// `hold`. Call it while the process has one thread (it forks).
pub fn run(cpu: usize, hold: Duration) -> Result<PipOutcome, PipError> {
    let shared = SharedWords::new(WORDS).map_err(|e| PipError::System("mmap", e))?;
    let w = shared.words();
    w[INVERSION].store(1, Release);
    affinity::pin_current_thread(&[cpu]).map_err(|e| PipError::System("sched_setaffinity", e))?;
    sched::set_current_thread(sched::Policy::Fifo, 1)
        .map_err(|e| PipError::System("sched_setscheduler", e))?;
    let high = fork_child(|| high_process(w)).map_err(|e| PipError::System("fork", e))?;
    let low = low_process(w, hold);
    let ended = wait_child(high).map_err(|e| PipError::System("waitpid", e))?;
    // The parent goes back to what it was, for its own output.
    let _ = sched::set_current_thread(sched::Policy::Other, 0);
    low.map_err(PipError::Child)?;
    let reported = w[ERROR].load(Acquire);
    if reported != 0 {
        return Err(PipError::Child(Errno::from_raw_os_error(reported as i32)));
    }
    if ended != ChildEnd::Exited(0) {
        return Err(PipError::Child(Errno::CHILD));
    }
    Ok(if w[INVERSION].load(Acquire) == 1 {
        PipOutcome::Resolved
    } else {
        PipOutcome::NoInversion
    })
}

/// Under the state mutex: runs `f` on the words.
fn with_state(w: &[AtomicU32], f: impl FnOnce(&[AtomicU32])) -> Result<(), Errno> {
    let state = PiMutex::shared(&w[STATE]);
    state.lock()?;
    f(w);
    state.unlock()
}

fn low_process(w: &[AtomicU32], hold: Duration) -> Result<(), Errno> {
    let resource = PiMutex::shared(&w[RESOURCE]);
    resource.lock()?;
    with_state(w, |w| {
        w[LOW_OWNS].store(1, Release);
        if w[HIGH_OWNS].load(Acquire) == 1 || w[MEDIUM_STARTED].load(Acquire) == 1 {
            w[INVERSION].store(0, Release);
        }
    })?;
    std::thread::sleep(hold);
    resource.unlock()
}

/// The high process (a child): forks the medium one, then blocks on the
/// mutex. Returns its exit status; an error's errno goes to the words.
fn high_process(w: &[AtomicU32]) -> i32 {
    let report = |e: Errno| {
        w[ERROR].store(e.raw_os_error() as u32, Release);
        1
    };
    let medium = match fork_child(|| medium_process(w)) {
        Ok(pid) => pid,
        Err(e) => return report(e),
    };
    let result = (|| {
        sched::set_current_thread(sched::Policy::Fifo, 3)?;
        with_state(w, |w| w[HIGH_STARTED].store(1, Release))?;
        let resource = PiMutex::shared(&w[RESOURCE]);
        resource.lock()?;
        let checked = with_state(w, |w| {
            w[HIGH_OWNS].store(1, Release);
            if w[LOW_OWNS].load(Acquire) == 0 || w[MEDIUM_STARTED].load(Acquire) == 0 {
                w[INVERSION].store(0, Release);
            }
        });
        resource.unlock()?;
        checked
    })();
    let _ = kill_child(medium);
    let _ = wait_child(medium);
    match result {
        Ok(()) => 0,
        Err(e) => report(e),
    }
}

/// The medium process (a grandchild): notes its start and spins until it
/// is killed (or its spin limit).
fn medium_process(w: &[AtomicU32]) -> i32 {
    if let Err(e) = sched::set_current_thread(sched::Policy::Fifo, 2) {
        w[ERROR].store(e.raw_os_error() as u32, Release);
        return 1;
    }
    let noted = with_state(w, |w| {
        w[MEDIUM_STARTED].store(1, Release);
        if w[HIGH_STARTED].load(Acquire) == 0 {
            w[INVERSION].store(0, Release);
        }
    });
    if let Err(e) = noted {
        w[ERROR].store(e.raw_os_error() as u32, Release);
        return 1;
    }
    let start = Instant::now();
    while start.elapsed() < MEDIUM_SPIN_LIMIT {
        std::hint::spin_loop();
    }
    0
}
