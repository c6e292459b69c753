//! The engine's configuration of a latency run: one SCHED_FIFO thread on a
//! periodic timerfd, a warm-up, one-second intervals, and the signed
//! histograms when something prints them.

use rtlat_core::config::{
    CyclicConfig, IntervalPlan, RunConfig, SchedPolicy, SignedHistogramPlan, ThreadPlan,
    TimeSourceKind, WaitMode,
};
use rtlat_core::distribution::DistributionPlan;
use rtlat_core::load::schedule::LoadSchedule;
use rtlat_core::units::{Nanos, Resolution};

use super::printing::Printing;
use super::thread::Thread;
use super::{INTERVAL_RING, MAX_SYNTHETIC_RING, Raw};
use crate::latency::settings::WARMUP;

/// The configuration, without the explain trigger (set once the
/// explanation is planned).
pub(super) fn engine(
    raw: &Raw,
    thread: &Thread,
    printing: &Printing,
    duration_secs: Option<u64>,
    source: TimeSourceKind,
    load: Option<&LoadSchedule>,
) -> CyclicConfig {
    let keeps_histograms = raw.histograms || raw.stats || printing.gnuplot.is_some();
    CyclicConfig {
        run: RunConfig {
            resolution: Resolution::Nanos,
            // The thread's own clock: the warm-up, then -T seconds.
            duration: duration_secs.map(|s| {
                Nanos(
                    (s as i64)
                        .saturating_mul(1_000_000_000)
                        .saturating_add(WARMUP.as_nanos()),
                )
            }),
            source,
            // Percentiles for --fail-if: 1 µs exact buckets over 2 ms.
            distribution: DistributionPlan::new(1000, Nanos::ZERO).ok(),
            phases: load.and_then(LoadSchedule::phase_plan),
            loops: None,
        },
        wait: WaitMode::Timerfd,
        warmup: Some(WARMUP),
        intervals: Some(IntervalPlan {
            length: Nanos::from_secs(1),
            ring: match source {
                // Its seconds come faster than any reader: the ring holds
                // the run (the blocks are taken at its end).
                TimeSourceKind::Synthetic { .. } => duration_secs
                    .map_or(MAX_SYNTHETIC_RING, |s| {
                        s.saturating_add(2).min(MAX_SYNTHETIC_RING as u64) as usize
                    })
                    .max(INTERVAL_RING),
                TimeSourceKind::Real => INTERVAL_RING,
            },
        }),
        signed_histogram: keeps_histograms.then_some(SignedHistogramPlan {
            width: Nanos(printing.bucket_ns),
            per_side: printing.buckets as usize,
        }),
        freeze_on_max: raw.freeze,
        ..CyclicConfig::new(vec![ThreadPlan {
            index: 0,
            interval: thread.period,
            policy: SchedPolicy::Fifo,
            priority: thread.priority,
            cpu: thread.cpu,
        }])
    }
}
