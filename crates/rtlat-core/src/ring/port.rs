//! How a ring member receives the token, passes it on and reads the time:
//! for real with a signal and `sigwaitinfo`, or through a seeded synthetic
//! hand-off in virtual time.
//!
//! The relay loop is generic over [`RingPort`], so the real port gets its
//! own monomorphised loop and pays nothing for the seam.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use rtlat_sys::clock::{self, Clock, Timespec};
use rtlat_sys::signals::{SignalWaiter, ThreadAddress};

use crate::engine::source::WaitError;
use crate::engine::time::{self, Period};

/// One member's connection to the ring.
pub trait RingPort {
    /// Blocks until the token arrives.
    fn receive(&mut self) -> Result<(), WaitError>;
    /// The current time (CLOCK_MONOTONIC for real).
    fn now(&mut self) -> Timespec;
    /// Hands the token to the next member; the errno on failure.
    fn pass(&mut self) -> Result<(), i32>;
    /// Sleeps for `span` (the pacing pause).
    fn pause(&mut self, span: Period) -> Result<(), WaitError>;
}

/// The real ring: the token is a thread-directed signal, received with
/// `sigwaitinfo` and passed with `tgkill` (one system call each). The
/// signal must be blocked in the member's thread.
#[derive(Debug, Clone, Copy)]
pub struct SignalPort {
    waiter: SignalWaiter,
    signal: i32,
    next: ThreadAddress,
}

impl SignalPort {
    /// A port that waits for `signal` and passes it to the thread `next`
    /// (which must not be joined while this port can still pass to it).
    pub fn new(signal: i32, next: ThreadAddress) -> SignalPort {
        SignalPort {
            waiter: SignalWaiter::new(&[signal]),
            signal,
            next,
        }
    }
}

impl RingPort for SignalPort {
    #[inline(always)]
    fn receive(&mut self) -> Result<(), WaitError> {
        self.waiter.wait().map(|_| ()).map_err(WaitError::from)
    }

    #[inline(always)]
    fn now(&mut self) -> Timespec {
        clock::now(Clock::Monotonic)
    }

    #[inline(always)]
    fn pass(&mut self) -> Result<(), i32> {
        match self.next.signal(self.signal) {
            // The next member has already left the ring: the run is ending
            // and there is no one to pass to.
            Err(e) if e == rtlat_sys::Errno::SRCH => Ok(()),
            other => other.map_err(|e| e.raw_os_error()),
        }
    }

    fn pause(&mut self, span: Period) -> Result<(), WaitError> {
        clock::sleep_for(Clock::Monotonic, &span.as_timespec()).map_err(WaitError::from)
    }
}

/// The virtual time every synthetic ring starts at.
pub const SYNTHETIC_RING_START: Timespec = Timespec {
    tv_sec: 1_000,
    tv_nsec: 0,
};

#[derive(Debug)]
struct BatonState {
    /// The member the token was last handed to, until it takes it.
    holder: Option<usize>,
    /// Virtual time at which the token reaches `holder`.
    now: Timespec,
    /// xorshift64* state of the hop latencies.
    rng: u64,
    /// The run is over: every waiting member leaves.
    closed: bool,
}

/// The token of a synthetic ring. Only one member ever holds it, so the
/// members run strictly one after the other and a run gives the same
/// numbers for the same seed, however the OS schedules the threads. Each
/// hand-off takes a seeded pseudo-random latency of virtual time: mostly a
/// few microseconds, sometimes tens, rarely hundreds or a few thousands.
#[derive(Debug)]
pub struct Baton {
    state: Mutex<BatonState>,
    turn: Condvar,
}

impl Baton {
    /// A baton nobody holds yet, for a run seeded with `seed`.
    pub fn new(seed: u64) -> Baton {
        let rng = match splitmix64(splitmix64(seed) ^ 0x51_6E_41_4C) {
            0 => 0x9E37_79B9_7F4A_7C15,
            s => s,
        };
        Baton {
            state: Mutex::new(BatonState {
                holder: None,
                now: SYNTHETIC_RING_START,
                rng,
                closed: false,
            }),
            turn: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BatonState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives the token to member `index` (the start of the run).
    pub fn kick(&self, index: usize) {
        let mut s = self.lock();
        s.holder = Some(index);
        self.turn.notify_all();
    }

    /// Ends every wait: members waiting for the token leave their loop.
    pub fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        self.turn.notify_all();
    }
}

/// A member of a synthetic ring.
#[derive(Debug)]
pub struct SyntheticPort {
    baton: Arc<Baton>,
    index: usize,
    next: usize,
    now: Timespec,
}

impl SyntheticPort {
    /// Member `index` of the ring, passing to member `next`.
    pub fn new(baton: Arc<Baton>, index: usize, next: usize) -> SyntheticPort {
        SyntheticPort {
            baton,
            index,
            next,
            now: SYNTHETIC_RING_START,
        }
    }
}

impl RingPort for SyntheticPort {
    fn receive(&mut self) -> Result<(), WaitError> {
        let mut s = self.baton.lock();
        loop {
            if s.closed {
                return Err(WaitError::Exhausted);
            }
            if s.holder == Some(self.index) {
                s.holder = None;
                self.now = s.now;
                return Ok(());
            }
            s = self
                .baton
                .turn
                .wait(s)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn now(&mut self) -> Timespec {
        self.now
    }

    fn pass(&mut self) -> Result<(), i32> {
        let mut s = self.baton.lock();
        let hop = hop_latency_ns(&mut s.rng);
        s.now = time::add(self.now, Period::from_nanos(hop));
        s.holder = Some(self.next);
        self.baton.turn.notify_all();
        Ok(())
    }

    fn pause(&mut self, span: Period) -> Result<(), WaitError> {
        self.now = time::add(self.now, span);
        Ok(())
    }
}

/// One hand-off's latency in ns, drawn from `rng`.
fn hop_latency_ns(rng: &mut u64) -> i64 {
    *rng ^= *rng >> 12;
    *rng ^= *rng << 25;
    *rng ^= *rng >> 27;
    let r = rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
    let pick = r % 4096;
    let spread = (r >> 16) as i64;
    if pick == 0 {
        200_000 + spread % 1_800_000
    } else if pick < 64 {
        20_000 + spread % 180_000
    } else {
        2_000 + spread % 18_000
    }
}

/// One step of SplitMix64, to spread the seed's bits.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_to_the_next_member_with_a_latency() {
        let baton = Arc::new(Baton::new(3));
        let mut a = SyntheticPort::new(Arc::clone(&baton), 0, 1);
        let mut b = SyntheticPort::new(Arc::clone(&baton), 1, 0);
        baton.kick(0);
        a.receive().unwrap();
        assert_eq!(a.now(), SYNTHETIC_RING_START);
        a.pause(Period::from_nanos(10_000_000)).unwrap();
        a.pass().unwrap();
        b.receive().unwrap();
        let hop = time::diff_nanos(&b.now(), &SYNTHETIC_RING_START) - 10_000_000;
        assert!((2_000..2_000_000).contains(&hop), "{hop}");
        baton.close();
        assert_eq!(a.receive(), Err(WaitError::Exhausted));
    }

    #[test]
    fn latencies_depend_on_the_seed_only() {
        let draw = |seed| {
            let baton = Baton::new(seed);
            let mut s = baton.lock();
            (0..100)
                .map(|_| hop_latency_ns(&mut s.rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        assert!(draw(9).iter().all(|&ns| (2_000..2_000_000).contains(&ns)));
    }
}
