//! A real-time competitor inside the test process: a SCHED_FIFO thread on a
//! leased CPU that spins in bursts, for the tests that check what rtlat
//! says of a thread that holds its measuring thread off the CPU.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtlat_sys::sched::Policy;

use super::cpus::CpuLease;

/// A SCHED_FIFO thread of this test process, named `name`, pinned to the
/// first CPU of a lease, spinning `burst` every `every` until dropped (or,
/// started by [`Spinner::start_for`], until its time is up).
#[derive(Debug)]
pub struct Spinner {
    /// Its thread id, as the kernel (and a trace) names it.
    pub tid: i32,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    /// Starts it; returns once it runs on its CPU under its policy, before
    /// its first burst. The lease is the caller's: the spinner is on its
    /// first CPU, so the caller must hold it as long as the spinner runs.
    pub fn start(
        lease: &CpuLease,
        name: &str,
        priority: i32,
        burst: Duration,
        every: Duration,
    ) -> Spinner {
        Spinner::start_with(lease, name, priority, burst, every, None)
    }

    /// [`Spinner::start`], its bursts ending by themselves after `limit`
    /// even if it is never dropped (a test that waits for something that
    /// never comes leaves no real-time thread behind it).
    pub fn start_for(
        lease: &CpuLease,
        name: &str,
        priority: i32,
        burst: Duration,
        every: Duration,
        limit: Duration,
    ) -> Spinner {
        Spinner::start_with(lease, name, priority, burst, every, Some(limit))
    }

    fn start_with(
        lease: &CpuLease,
        name: &str,
        priority: i32,
        burst: Duration,
        every: Duration,
        limit: Option<Duration>,
    ) -> Spinner {
        let cpu = lease.cpu();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let (ready, started) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                // The CPU first, then the policy: it never runs real-time
                // anywhere else.
                let set_up = rtlat_sys::affinity::pin_current_thread(&[cpu])
                    .map_err(|e| format!("pinning to CPU {cpu}: {e}"))
                    .and_then(|()| {
                        rtlat_sys::sched::set_current_thread(Policy::Fifo, priority)
                            .map_err(|e| format!("SCHED_FIFO {priority}: {e}"))
                    });
                let tid: i32 = std::fs::read_link("/proc/thread-self")
                    .ok()
                    .and_then(|p| p.file_name()?.to_str()?.parse().ok())
                    .expect("own tid");
                let failed = set_up.is_err();
                ready.send(set_up.map(|()| tid)).unwrap();
                if failed {
                    return;
                }
                let until = limit.map(|limit| Instant::now() + limit);
                while !flag.load(Ordering::Relaxed) && until.is_none_or(|u| Instant::now() < u) {
                    let start = Instant::now();
                    while start.elapsed() < burst {
                        std::hint::spin_loop();
                    }
                    std::thread::sleep(every);
                }
            })
            .expect("starting a spinner thread");
        let tid = match started.recv().expect("the spinner's start") {
            Ok(tid) => tid,
            Err(e) => panic!("spinner {name}: {e}"),
        };
        Spinner {
            tid,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
