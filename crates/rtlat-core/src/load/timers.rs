//! `timers`: timer-interrupt and wake-up pressure. Each worker runs eight
//! threads (itself and seven helpers), each sleeping and waking up over
//! and over:
//!
//! - six sleep 1 to 10 µs at a time (`nanosleep`, lengths drawn from a
//!   per-thread pseudo-random sequence). The timer slack of SCHED_OTHER
//!   threads (50 µs by default) lets the kernel end such sleeps up to that
//!   much later and batch their expiries into fewer interrupts: these
//!   threads make most of the wake-ups and context switches;
//! - two wait on their own periodic `timerfd`, every 30 and 60 µs (less
//!   0.3 µs times the worker's index modulo 16, so that workers' timers
//!   drift apart). Timer slack does not apply to timerfd: these expire
//!   about 50,000 times a second per worker, each expiry a timer interrupt
//!   of its own unless another timer on that CPU expires with it.
//!
//! An operation is one wake-up of any of the eight.

use std::sync::atomic::{AtomicBool, Ordering};

use rtlat_sys::clock::{Clock, Timespec};
use rtlat_sys::timerfd::PeriodicTimerFd;

use super::{Counter, WorkerCtx, WorkerResult};

pub(super) const OP: &str =
    "one wake-up of one of 8 threads per worker (6 sleep 1-10 us, 2 wait on 30/60 us timerfds)";

/// Sleeping threads per worker.
const SLEEPERS: usize = 6;
/// Their shortest and longest sleep.
const SLEEP_NS: (u64, u64) = (1_000, 10_000);
/// The periods of the timerfd threads.
const PERIODS_NS: [u64; 2] = [30_000, 60_000];

/// What one thread of a worker does.
#[derive(Clone, Copy)]
enum Waiter {
    /// Sleeps of pseudo-random length; the seed.
    Sleeper(u64),
    /// A periodic timerfd; the period in ns.
    Periodic(u64),
}

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    let shift = (ctx.index % 16) as u64 * 300;
    let waiters: Vec<Waiter> = PERIODS_NS
        .iter()
        .map(|&p| Waiter::Periodic(p - shift))
        .chain((0..SLEEPERS).map(|s| Waiter::Sleeper((ctx.index * SLEEPERS + s) as u64)))
        .collect();
    // Raised when this worker ends early (an error), to end its helpers.
    let abort = AtomicBool::new(false);
    let stop = ctx.stop_flag();
    let stopping = || stop.load(Ordering::Relaxed) || abort.load(Ordering::Relaxed);
    let counter: &Counter = &ctx.counter;
    std::thread::scope(|scope| {
        let (own, others) = waiters.split_first().ok_or("no waiter")?;
        let mut helpers = Vec::with_capacity(others.len());
        let mut result = Ok(());
        for (t, &w) in others.iter().enumerate() {
            let spawned = std::thread::Builder::new()
                .name(format!("load-timers-{}.{}", ctx.index, t + 1))
                .stack_size(64 * 1024)
                .spawn_scoped(scope, move || wait_loop(w, stopping, counter));
            match spawned {
                Ok(h) => helpers.push(h),
                Err(e) => {
                    result = Err(format!("cannot start a helper thread: {e}"));
                    break;
                }
            }
        }
        if result.is_ok() {
            result = wait_loop(*own, stopping, counter);
        }
        // Helpers see the flag within one sleep or period (< 0.1 ms).
        abort.store(true, Ordering::Relaxed);
        for h in helpers {
            let r = h
                .join()
                .unwrap_or_else(|_| Err("a helper thread panicked".into()));
            result = result.and(r);
        }
        result
    })
}

/// Waits as `w` says and counts the wake-ups until `stopping()`.
fn wait_loop(w: Waiter, stopping: impl Fn() -> bool, counter: &Counter) -> WorkerResult {
    match w {
        Waiter::Sleeper(seed) => {
            // xorshift64; never zero.
            let mut x = (seed + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let (lo, hi) = SLEEP_NS;
            while !stopping() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let span = Timespec {
                    tv_sec: 0,
                    tv_nsec: (lo + x % (hi - lo + 1)) as _,
                };
                match rtlat_sys::clock::nanosleep(&span) {
                    Ok(()) => counter.add(1),
                    Err(rtlat_sys::Errno::INTR) => {}
                    Err(e) => return Err(format!("nanosleep: {e}")),
                }
            }
            Ok(())
        }
        Waiter::Periodic(period_ns) => {
            let timer = PeriodicTimerFd::new(Clock::Monotonic)
                .map_err(|e| format!("timerfd_create: {e}"))?;
            let period = Timespec {
                tv_sec: 0,
                tv_nsec: period_ns as _,
            };
            let mut first = rtlat_sys::clock::now(Clock::Monotonic);
            first.tv_nsec += period.tv_nsec;
            if first.tv_nsec >= 1_000_000_000 {
                first.tv_nsec -= 1_000_000_000;
                first.tv_sec += 1;
            }
            timer
                .arm_absolute(&first, &period)
                .map_err(|e| format!("timerfd_settime: {e}"))?;
            while !stopping() {
                match timer.wait() {
                    Ok(_) => counter.add(1),
                    Err(rtlat_sys::Errno::INTR) => {}
                    Err(e) => return Err(format!("timerfd read: {e}")),
                }
            }
            Ok(())
        }
    }
}
