//! THE measuring loop of a signal ring (signaltest).
//!
//! Rules, which every line here obeys:
//! - no allocation, no lock, no formatting, no I/O;
//! - per hop exactly one wait for the token (`sigwaitinfo`) and one
//!   hand-off (`pthread_kill`); the clock is read through the vDSO. The
//!   leader adds one sleep (and two clock reads) every [`Pacing::every`]
//!   receptions;
//! - results go to the member's own [`ThreadChannel`] with plain stores
//!   ([`SlotWriter`]);
//! - an error ends the loop and is reported as a value, never a panic.
//!
//! A member's sample is the time between two consecutive receptions of the
//! token, one full trip round the ring; the first reception is not a
//! sample. The leader (member 0) pauses the ring now and then so that it
//! does not take a whole CPU (rt-tests signaltest sleeps 10 ms every 16
//! cycles); it measures how long the pause took and adds it to
//! [`RingState`]'s pause total before passing the token on. Every member,
//! the leader included, moves its previous reception forward by the pause
//! time published since then, as if the clock had stood still during the
//! pause: no sample contains a pause, and no lap is thrown away (the lap
//! right after a pause, with its cold caches and idle CPUs, is measured
//! too). The token is the only thing that moves round the ring, so a
//! member sees each pause exactly once, in the lap it happened in.
//!
//! The leader ends the run (loop count, duration, `-b` break): it raises
//! the ring's finishing flag and passes the token a last time; each other
//! member takes the sample of that last, complete lap, passes the token on
//! and leaves. A stop from outside ([`RingState::request_stop`]) ends every
//! member at its next reception without a sample.

use std::sync::atomic::{
    AtomicBool, AtomicI64,
    Ordering::{Acquire, Relaxed, Release},
};

use rtlat_sys::clock::Timespec;

use super::port::RingPort;
use crate::engine::source::WaitError;
use crate::engine::time::{self, Period};
use crate::slot::{LoopEnd, SlotWriter};
use crate::stats::ThreadChannel;
use crate::units::Resolution;

/// What the members of one ring share besides their channels.
#[derive(Debug, Default)]
pub struct RingState {
    stop: AtomicBool,
    finishing: AtomicBool,
    paused_ns: AtomicI64,
}

impl RingState {
    /// A ring that runs, with no pause taken yet.
    pub fn new() -> RingState {
        RingState::default()
    }

    /// Asks every member to leave at its next reception, without a sample.
    pub fn request_stop(&self) {
        self.stop.store(true, Relaxed);
    }

    /// Whether a stop was requested.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Relaxed)
    }

    /// The leader has ended the run: the lap under way is the last one.
    pub(crate) fn begin_finish(&self) {
        self.finishing.store(true, Release);
    }

    /// Whether the leader has ended the run.
    pub(crate) fn finishing(&self) -> bool {
        self.finishing.load(Acquire)
    }

    /// Adds a pause of `ns` to the total (leader only, before it passes the
    /// token on).
    pub(crate) fn add_pause(&self, ns: i64) {
        let total = self.paused_ns.load(Relaxed);
        self.paused_ns.store(total + ns, Release);
    }

    /// All pauses so far, in ns.
    pub fn paused_ns(&self) -> i64 {
        self.paused_ns.load(Acquire)
    }
}

/// The leader's pacing pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    /// Pause after every this many receptions.
    pub every: u64,
    /// How long.
    pub pause: Period,
}

/// What one member's loop needs to know, prepared before it starts.
#[derive(Clone, Copy, Debug)]
pub struct RelayParams {
    /// Unit of the C-compatible figures.
    pub resolution: Resolution,
    /// Member 0: ends the run and paces the ring.
    pub leader: bool,
    /// Leader: end the run after this many samples.
    pub loops: Option<u64>,
    /// Leader: end the run this long after its first reception.
    pub duration: Option<Period>,
    /// Leader: end the run at the first sample above this many units.
    pub break_threshold: Option<i64>,
    /// Leader: the pacing pause, if any.
    pub pacing: Option<Pacing>,
}

/// Runs one member's loop until the run ends; returns how it ended.
#[inline(never)]
pub fn relay<P: RingPort>(
    port: &mut P,
    params: &RelayParams,
    channel: &ThreadChannel,
    ring: &RingState,
) -> LoopEnd {
    let histogram = channel.histogram.as_ref();
    let samples = channel.samples.as_ref();
    let mut writer = SlotWriter::new(&channel.slot);
    let mut last: Option<Timespec> = None;
    let mut seen_paused: i64 = 0;
    let mut end_at: Option<Timespec> = None;
    let mut receptions: u64 = 0;

    loop {
        match port.receive() {
            Ok(()) => {}
            Err(WaitError::Interrupted) => {
                if ring.stop_requested() {
                    return LoopEnd::Stopped;
                }
                continue;
            }
            Err(WaitError::Exhausted) => return LoopEnd::Stopped,
            Err(WaitError::Failed(errno)) => {
                ring.request_stop();
                return LoopEnd::Failed(errno);
            }
        }
        let now = port.now();
        if ring.stop_requested() {
            let _ = port.pass();
            return LoopEnd::Stopped;
        }
        let finishing = !params.leader && ring.finishing();
        let paused = ring.paused_ns();

        if let Some(prev) = last {
            let from = if paused == seen_paused {
                prev
            } else {
                time::add(prev, Period::from_nanos(paused - seen_paused))
            };
            let ns = time::diff_nanos(&now, &from);
            let units = match params.resolution {
                Resolution::Micros => time::diff_micros_c(&now, &from),
                Resolution::Nanos => ns,
            };
            // The sample and the histogram first, the count (which readers
            // go by) last.
            let cycle = writer.cycles();
            if let Some(ring) = samples {
                ring.record(cycle, units);
            }
            if let Some(h) = histogram {
                h.record(units, cycle);
            }
            // A new maximum keeps its reception (the end of its lap) as
            // its time.
            writer.record(units, ns, || time::to_nanos(&now));
            if params.break_threshold.is_some_and(|limit| units > limit) {
                return last_pass(port, ring, LoopEnd::Break(units));
            }
            if params.loops == Some(writer.cycles()) {
                return last_pass(port, ring, LoopEnd::Loops);
            }
        }
        if finishing {
            let _ = port.pass();
            return LoopEnd::Stopped;
        }
        last = Some(now);
        seen_paused = paused;

        if let Some(d) = params.duration {
            let end = *end_at.get_or_insert_with(|| time::add(now, d));
            if !time::is_after(&end, &now) {
                return last_pass(port, ring, LoopEnd::Duration);
            }
        }
        if let Some(pacing) = params.pacing {
            receptions += 1;
            if receptions.is_multiple_of(pacing.every) {
                let before = port.now();
                if let Err(WaitError::Failed(errno)) = port.pause(pacing.pause) {
                    ring.request_stop();
                    return LoopEnd::Failed(errno);
                }
                let after = port.now();
                ring.add_pause(time::diff_nanos(&after, &before));
            }
        }
        if let Err(errno) = port.pass() {
            ring.request_stop();
            return LoopEnd::Failed(errno);
        }
    }
}

/// The leader's exit: the lap under way becomes the last one.
fn last_pass<P: RingPort>(port: &mut P, ring: &RingState, end: LoopEnd) -> LoopEnd {
    ring.begin_finish();
    let _ = port.pass();
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::diff_nanos;

    /// A scripted port: receptions at fixed times, pauses counted; with
    /// `finish`, the leader ends the run before reception number `.0`.
    struct Script<'a> {
        arrivals: Vec<Timespec>,
        next: usize,
        now: Timespec,
        passes: usize,
        paused: i64,
        finish: Option<(usize, &'a RingState)>,
    }

    impl Script<'_> {
        /// A port whose messages arrive at `arrivals`, the clock at 0.
        fn arriving(arrivals: Vec<Timespec>) -> Self {
            Script {
                arrivals,
                next: 0,
                now: at_us(0),
                passes: 0,
                paused: 0,
                finish: None,
            }
        }
    }

    fn at_us(us: i64) -> Timespec {
        Timespec {
            tv_sec: 10 + us / 1_000_000,
            tv_nsec: (us % 1_000_000) * 1_000,
        }
    }

    impl RingPort for Script<'_> {
        fn receive(&mut self) -> Result<(), WaitError> {
            let t = *self.arrivals.get(self.next).ok_or(WaitError::Exhausted)?;
            self.next += 1;
            if let Some((k, ring)) = self.finish
                && k == self.next
            {
                ring.begin_finish();
            }
            // A pause moved this member's clock on: arrivals come later.
            self.now = time::add(t, Period::from_nanos(self.paused));
            Ok(())
        }
        fn now(&mut self) -> Timespec {
            self.now
        }
        fn pass(&mut self) -> Result<(), i32> {
            self.passes += 1;
            Ok(())
        }
        fn pause(&mut self, span: Period) -> Result<(), WaitError> {
            let ns = diff_nanos(&time::add(self.now, span), &self.now);
            self.paused += ns;
            self.now = time::add(self.now, span);
            Ok(())
        }
    }

    fn params(leader: bool) -> RelayParams {
        RelayParams {
            resolution: Resolution::Micros,
            leader,
            loops: None,
            duration: None,
            break_threshold: None,
            pacing: None,
        }
    }

    #[test]
    fn samples_are_laps_and_the_first_reception_is_not_one() {
        let mut port = Script::arriving([0, 30, 55, 100].map(at_us).to_vec());
        let channel = ThreadChannel::default();
        let ring = RingState::new();
        let end = relay(&mut port, &params(false), &channel, &ring);
        assert_eq!(end, LoopEnd::Stopped);
        let c = channel.slot.compat();
        assert_eq!((c.cycles, c.min, c.max, c.act, c.sum), (3, 25, 45, 45, 100));
        assert_eq!(port.passes, 4);
        // The largest lap (45 us) ended at the reception at 100 us.
        let at = channel.slot.max_at().unwrap();
        assert_eq!(at.as_nanos(), time::to_nanos(&at_us(100)));
    }

    #[test]
    fn the_leaders_pause_is_left_out_of_its_samples() {
        // Laps of 20 us; a 10 ms pause after every 2nd reception.
        let mut port = Script::arriving((0..9).map(|i| at_us(i * 20)).collect());
        let channel = ThreadChannel::default();
        let ring = RingState::new();
        let p = RelayParams {
            loops: Some(6),
            pacing: Some(Pacing {
                every: 2,
                pause: Period::from_nanos(10_000_000),
            }),
            ..params(true)
        };
        let end = relay(&mut port, &p, &channel, &ring);
        assert_eq!(end, LoopEnd::Loops);
        let c = channel.slot.compat();
        assert_eq!((c.cycles, c.min, c.max), (6, 20, 20));
        assert_eq!(ring.paused_ns(), 3 * 10_000_000);
        assert!(ring.finishing());
    }

    #[test]
    fn a_follower_takes_the_last_lap_then_leaves() {
        let channel = ThreadChannel::default();
        let ring = RingState::new();
        let mut port = Script::arriving([0, 40, 80, 120].map(at_us).to_vec());
        // The leader finished before this member's third reception.
        port.finish = Some((3, &ring));
        let end = relay(&mut port, &params(false), &channel, &ring);
        assert_eq!(end, LoopEnd::Stopped);
        // Laps 1 and 2; the third reception is never waited for.
        assert_eq!(channel.slot.compat().cycles, 2);
        assert_eq!(port.next, 3);
    }

    #[test]
    fn a_break_ends_the_leader_after_recording_the_sample() {
        let mut port = Script::arriving([0, 10, 25, 90, 100].map(at_us).to_vec());
        let channel = ThreadChannel::default();
        let ring = RingState::new();
        let p = RelayParams {
            break_threshold: Some(50),
            ..params(true)
        };
        assert_eq!(relay(&mut port, &p, &channel, &ring), LoopEnd::Break(65));
        assert_eq!(channel.slot.compat().cycles, 3);
        assert!(ring.finishing());
    }

    #[test]
    fn an_outside_stop_ends_without_a_sample() {
        let mut port = Script::arriving([0, 10, 20].map(at_us).to_vec());
        let channel = ThreadChannel::default();
        let ring = RingState::new();
        ring.request_stop();
        assert_eq!(
            relay(&mut port, &params(true), &channel, &ring),
            LoopEnd::Stopped
        );
        assert_eq!(channel.slot.compat().cycles, 0);
    }
}
