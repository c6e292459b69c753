//! What a run will hold in memory, known from its configuration before
//! anything is allocated.
//!
//! A front end compares a [`Footprint`] with the machine's limits (address
//! space, available memory, tasks) and refuses a run that cannot fit with
//! one line, instead of letting an allocation fail, and the process abort,
//! in the middle of the run. The figures come from the functions that size
//! the buffers (`heap_bytes`, beside each buffer's `new`), so they follow
//! the code; `tests/footprint.rs` holds them against what the engines
//! really allocate.
//!
//! Heap is counted at its peak, the end of a run, when each thread's
//! report (a 64-bit copy of its counters) exists beside its channel.

use crate::candidates::CandidateRing;
use crate::config::{CyclicConfig, SAMPLE_RING_LEN, ThreadPlan};
use crate::distribution::{DistributionPlan, LatencyHistogram};
use crate::engine::THREAD_STACK_BYTES;
use crate::interval::IntervalLog;
use crate::ipc::PairConfig;
use crate::ipc::report::PairResult;
use crate::phase::PhaseLog;
use crate::report::ThreadReport;
use crate::ring::{RingConfig, RingThreadPlan};
use crate::stats::{Histogram, SampleRing, SignedHistogram, SpikeLog, ThreadChannel};
use crate::units::Bytes;

/// Per measuring thread, what starting it costs beyond its channel and
/// stack: its job (plan, handles) boxed for the new thread, its name, its
/// handle. Measured at about 400 bytes (x86-64); counted with room.
const THREAD_START_HEAP: Bytes = Bytes(1024);

/// The memory a run will use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Measuring threads the run starts.
    pub threads: usize,
    /// Heap at the end of the run: the threads' channels, buffers and
    /// reports, and the run's shared buffers.
    pub heap: Bytes,
    /// Address space of one thread's stack, guard page included.
    pub stack_per_thread: Bytes,
}

impl Footprint {
    /// Address space of every thread's stack.
    pub fn stacks(&self) -> Bytes {
        self.stack_per_thread.times(self.threads as u64)
    }

    /// Heap and stacks.
    pub fn total(&self) -> Bytes {
        self.heap.plus(self.stacks())
    }

    /// `rtlat cyclictest` and `rtlat latency` (the cyclic engine).
    pub fn of_cyclic(config: &CyclicConfig) -> Footprint {
        let buffers = ChannelBuffers {
            histogram: config.histogram.map(|h| h.buckets),
            sample_rings: usize::from(config.sample_ring) * (1 + usize::from(config.smi)),
            signed_histogram: config.signed_histogram.map(|s| s.per_side),
            intervals: config.intervals.map(|i| i.ring),
            distribution: config.run.distribution,
            phases: config.run.phases.as_ref().map_or(0, |p| p.ends.len()),
            candidates: config.explain.is_some(),
        };
        // The --stats-file writer's p99: a snapshot of each thread's
        // distribution kept between drains, and while it drains one
        // thread, a new snapshot and the difference of the two.
        let interval_copy = match (config.intervals, config.run.distribution) {
            (Some(_), Some(plan)) => LatencyHistogram::heap_bytes(plan).1,
            _ => Bytes(0),
        };
        let per_thread = buffers
            .heap()
            .plus(Bytes::of::<ThreadReport>(1))
            .plus(Bytes::of::<ThreadPlan>(2))
            .plus(interval_copy);
        let spikes = config.spikes.map_or(Bytes(0), |s| {
            let (log, report) = SpikeLog::heap_bytes(s.capacity);
            log.plus(report)
        });
        Footprint::of_threads(
            config.threads.len(),
            per_thread,
            spikes.plus(buffers.merged()).plus(interval_copy.times(2)),
        )
    }

    /// `rtlat signaltest` (the ring engine): only the first member keeps
    /// the sample ring of `-v`.
    pub fn of_ring(config: &RingConfig) -> Footprint {
        let buffers = ChannelBuffers {
            histogram: config.histogram_buckets,
            ..ChannelBuffers::default()
        };
        let per_thread = buffers
            .heap()
            .plus(Bytes::of::<ThreadReport>(1))
            .plus(Bytes::of::<RingThreadPlan>(2));
        let ring = match config.sample_ring {
            true => SampleRing::heap_bytes(SAMPLE_RING_LEN),
            false => Bytes(0),
        };
        Footprint::of_threads(config.threads.len(), per_thread, ring)
    }

    /// The IPC tools in thread mode: two threads a pair, the receiver's
    /// channel holding the pair's buffers.
    pub fn of_pairs(config: &PairConfig) -> Footprint {
        let buffers = ChannelBuffers {
            histogram: config.histogram,
            distribution: config.run.distribution,
            phases: config.run.phases.as_ref().map_or(0, |p| p.ends.len()),
            ..ChannelBuffers::default()
        };
        // Per pair: the receiver's channel with the buffers, the sender's
        // slot (counted as a channel), the pair's report.
        let per_pair = buffers
            .heap()
            .plus(Bytes::of::<ThreadChannel>(1))
            .plus(Bytes::of::<PairResult>(1));
        Footprint::of_threads(
            2 * config.pairs.len(),
            Bytes(0),
            per_pair
                .times(config.pairs.len() as u64)
                .plus(buffers.merged()),
        )
    }

    fn of_threads(threads: usize, per_thread: Bytes, shared: Bytes) -> Footprint {
        let guard = Bytes(rtlat_sys::memory::page_size() as u64);
        Footprint {
            threads,
            heap: per_thread
                .plus(THREAD_START_HEAP)
                .times(threads as u64)
                .plus(shared),
            stack_per_thread: Bytes(THREAD_STACK_BYTES as u64).plus(guard),
        }
    }
}

/// The optional buffers of one [`ThreadChannel`].
#[derive(Clone, Copy, Debug, Default)]
struct ChannelBuffers {
    histogram: Option<usize>,
    sample_rings: usize,
    signed_histogram: Option<usize>,
    intervals: Option<usize>,
    distribution: Option<DistributionPlan>,
    phases: usize,
    /// `--explain`'s candidate ring.
    candidates: bool,
}

impl ChannelBuffers {
    /// The channel and its buffers, and their snapshot in the report.
    fn heap(&self) -> Bytes {
        let pair = |(live, report): (Bytes, Bytes)| live.plus(report);
        Bytes::of::<ThreadChannel>(1)
            .plus(
                self.histogram
                    .map_or(Bytes(0), |b| pair(Histogram::heap_bytes(b))),
            )
            .plus(SampleRing::heap_bytes(SAMPLE_RING_LEN).times(self.sample_rings as u64))
            .plus(
                self.signed_histogram
                    .map_or(Bytes(0), |s| pair(SignedHistogram::heap_bytes(s))),
            )
            .plus(self.intervals.map_or(Bytes(0), IntervalLog::heap_bytes))
            // The report reads the distribution in place: no copy.
            .plus(
                self.distribution
                    .map_or(Bytes(0), |d| LatencyHistogram::heap_bytes(d).0),
            )
            .plus(pair(PhaseLog::heap_bytes(self.phases, self.distribution)))
            .plus(match self.candidates {
                true => CandidateRing::heap_bytes(),
                false => Bytes(0),
            })
    }

    /// The all-threads distribution the outputs merge at the end.
    fn merged(&self) -> Bytes {
        self.distribution
            .map_or(Bytes(0), |d| LatencyHistogram::heap_bytes(d).1)
    }
}
