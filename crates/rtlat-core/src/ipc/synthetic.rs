//! The deterministic seam of the IPC tools: a run computed in virtual time
//! from a seeded generator, with no thread, no IPC and no privilege, so
//! that whole runs can be snapshot-tested.
//!
//! Pair i's hand-offs follow each other in virtual time: the sender hands
//! off at `t` (after pmqtest's `-f` delay), the receiver wakes `latency`
//! later, records it, sleeps its interval and releases the sender at once.
//! Latencies come from xorshift64* seeded per pair: mostly 2 to 30 µs,
//! sometimes up to 300 µs, rarely 1 to 3 ms. The run ends, as a real one,
//! when the first pair completes its loops, the first break happens, or the
//! duration is over, whichever comes first in virtual time; every pair
//! then shows what it had done by that moment.

use super::shared::PairShared;
use super::{PairConfig, PairPlan, SYNTHETIC_ID_BASE};
use crate::report::EndReason;
use crate::slot::{LoopEnd, SlotWriter};
use crate::units::Resolution;

/// One step of SplitMix64.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The virtual timeline of one pair.
struct Timeline {
    state: u64,
    now: i64,
    interval: i64,
    delay: i64,
    timeout: Option<i64>,
}

/// One hand-off on a [`Timeline`].
struct HandOff {
    sent_at: i64,
    received_at: i64,
    latency: i64,
    timeouts: u64,
}

impl Timeline {
    fn new(seed: u64, config: &PairConfig, plan: &PairPlan) -> Timeline {
        let mq = config.mq_timeouts;
        Timeline {
            state: splitmix64(splitmix64(seed ^ 0x1bc_7e57) ^ plan.index as u64) | 1,
            now: 0,
            interval: plan.interval.as_nanos(),
            delay: mq
                .and_then(|t| t.force_send_delay)
                .map_or(0, |d| d.as_nanos()),
            timeout: mq.map(|t| t.receive.as_nanos()).filter(|t| *t > 0),
        }
    }

    fn random(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn next(&mut self) -> HandOff {
        let r = self.random();
        let spread = (r >> 16) as i64;
        let latency = match r % 1024 {
            0 => 1_000_000 + spread % 2_000_000,
            1..16 => 30_000 + spread % 270_000,
            _ => 2_000 + spread % 28_000,
        };
        let sent_at = self.now + self.delay;
        let received_at = sent_at + latency;
        let timeouts = match self.timeout {
            Some(t) if self.delay > 0 => ((self.delay + latency) / t) as u64,
            _ => 0,
        };
        self.now = received_at + self.interval;
        HandOff {
            sent_at,
            received_at,
            latency,
            timeouts,
        }
    }
}

fn units(latency_ns: i64, resolution: Resolution) -> i64 {
    match resolution {
        Resolution::Micros => latency_ns / 1_000,
        Resolution::Nanos => latency_ns,
    }
}

/// When pair `plan` would end the run by itself (its loops or a break),
/// looking no further than `horizon`: (virtual time, reason).
fn own_end(
    seed: u64,
    config: &PairConfig,
    plan: &PairPlan,
    horizon: i64,
) -> Option<(i64, EndReason)> {
    let mut line = Timeline::new(seed, config, plan);
    let mut count = 0;
    loop {
        let h = line.next();
        if h.received_at > horizon {
            return None;
        }
        count += 1;
        if config
            .breaktrace
            .is_some_and(|b| units(h.latency, config.run.resolution) > b)
        {
            return Some((h.received_at, EndReason::Break));
        }
        if config.run.loops == Some(count) {
            return Some((h.received_at, EndReason::Loops));
        }
    }
}

/// Computes the run into `shared` and returns why it ended. The caller
/// guarantees a bound (`loops` or `duration`).
pub(crate) fn fill(config: &PairConfig, seed: u64, shared: &PairShared) -> EndReason {
    let horizon = config.run.duration.map_or(i64::MAX, |d| d.as_nanos());
    let mut end = (horizon, EndReason::Duration);
    for plan in &config.pairs {
        if let Some(own) = own_end(seed, config, plan, end.0.min(horizon))
            && own.0 < end.0
        {
            end = own;
        }
    }
    let (until, reason) = end;
    for plan in &config.pairs {
        let channel = &shared.pairs[plan.index];
        let (rslot, sslot) = (&channel.receiver.slot, &channel.sender);
        rslot.set_tid(SYNTHETIC_ID_BASE + 2 * plan.index as i32);
        sslot.set_tid(SYNTHETIC_ID_BASE + 2 * plan.index as i32 + 1);
        let mut receiver = SlotWriter::new(rslot);
        let mut sender = SlotWriter::new(sslot);
        let mut line = Timeline::new(seed, config, plan);
        let mut timeouts = 0;
        let mut own = LoopEnd::Stopped;
        loop {
            let h = line.next();
            if h.sent_at > until || config.run.loops == Some(sender.cycles()) {
                break;
            }
            sender.record(0, 0, || 0);
            if h.received_at > until {
                break;
            }
            timeouts += h.timeouts;
            let u = units(h.latency, config.run.resolution);
            let cycle = receiver.cycles();
            receiver.record(u, h.latency, || h.received_at);
            if let Some(hist) = &channel.receiver.histogram {
                hist.record(u, cycle);
            }
            if let Some(d) = &channel.receiver.distribution {
                d.record(h.latency);
            }
            if config.breaktrace.is_some_and(|b| u > b) && h.received_at == until {
                shared
                    .breaks()
                    .claim(plan.index, SYNTHETIC_ID_BASE + 2 * plan.index as i32, u);
                own = LoopEnd::Break(u);
                break;
            }
            if config.run.loops == Some(receiver.cycles()) {
                own = LoopEnd::Loops;
                break;
            }
        }
        shared.add_timeouts(plan.index, timeouts);
        rslot.set_end(own);
        sslot.set_end(if config.run.loops == Some(sender.cycles()) {
            LoopEnd::Loops
        } else {
            LoopEnd::Stopped
        });
    }
    reason
}
