//! Each measuring thread's run as a [`BlockSeries`]: the JSON's `"blocks"`,
//! what the verdict projects from and what `rtlat compare` puts intervals
//! on.
//!
//! Every cyclictest run (and `rtlat monitor`, which is one) has the engine
//! seal per-interval figures into each thread's ring
//! ([`rtlat_core::interval`]): intervals of 100 ms by default (of
//! `--stats-interval` when it is given, of 1 s for the monitor; see
//! `cli::cyclictest::block_plan`); `rtlat latency` takes its seconds. The main thread drains them here, with
//! its own [`IntervalReader`] beside those of `--stats-file` and the
//! monitor, and turns each sealed interval into one base interval of the
//! thread's series. The measuring loop is not touched: it seals its
//! intervals anyway.
//!
//! A block's samples, exact maximum and sum are the interval's own, exact.
//! Its counts at or above each step of [`LADDER_NS`] come from the
//! thread's full distribution, which knows no time: a drain that finds
//! sealed intervals reads the distribution's counts at or above each step
//! and places what was counted since the previous such drain on the
//! intervals it found ([`place_counts`]). That is an approximation, as the
//! `--stats-file` p99 is (see [`super::stats_file`]), with two guards:
//! - a block is given counts at a step only if its exact maximum is at or
//!   above it (at least one then: its maximum), and never more than it has
//!   samples (or counts at the step below);
//! - what cannot be placed (samples of the interval in progress, counted
//!   before it was sealed) waits for the next drain.
//!
//! So a spike is counted in a block whose maximum reaches it (its own but
//! for two such blocks in one drain's reach), and only the lowest
//! steps, which nearly every sample passes, may move a few samples from
//! the start of one block to the end of the one before: up to a drain's
//! distance, 10 ms of a real run. A synthetic run (`--synthetic`) is
//! drained once, after its threads have stopped, so that its series is the
//! same every time (its ring holds the whole run): its counts are placed
//! over all its blocks at once, in proportion to each block's samples
//! among those allowed at a step; their sums over the blocks stay the
//! distribution's.
//!
//! The last interval of a thread, cut short by the end of the run (by `-l`
//! off an interval's edge, `-D`, a signal), is not a block: its samples
//! are in the thread's totals only, and its counts are placed on it and
//! dropped with it. Intervals a reader lost (it fell a whole ring behind)
//! become [`Block::lost_interval`]s; intervals in which the thread took no
//! sample are empty blocks. The series is bounded ([`DEFAULT_CAPACITY`]
//! blocks, neighbours merged in pairs when full), so a day's run takes the
//! memory of a minute's: about 170 KiB per thread.

use std::time::{Duration, Instant};

use rtlat_core::Bytes;
use rtlat_core::Shared;
use rtlat_core::{CyclicConfig, TimeSourceKind};
use rtlat_core::{IntervalReader, IntervalRecord};
use rtlat_stats::blocks::{Block, BlockSeries, DEFAULT_CAPACITY, LADDER_NS, ladder_counts};

/// Steps of the ladder.
const STEPS: usize = LADDER_NS.len();

/// How often a real run's intervals are drained at most: every look of the
/// main thread (10 ms; the monitor's 100 ms).
const DRAIN_PERIOD: Duration = Duration::from_millis(10);

/// The main thread's reader of every thread's sealed intervals.
#[derive(Debug)]
pub struct BlockCollector {
    synthetic: bool,
    threads: Vec<ThreadBlocks>,
    /// One drain's records, reused.
    batch: Vec<IntervalRecord>,
    last_drain: Option<Instant>,
}

/// One thread's reader and series.
#[derive(Debug)]
struct ThreadBlocks {
    reader: IntervalReader,
    /// The number of the interval the next block is.
    next_index: u64,
    /// Intervals lost whose place in the series is not yet known.
    lost_unplaced: u64,
    /// The distribution's counts at or above each step at the last drain
    /// that found sealed intervals.
    counted: [u64; STEPS],
    /// Counted, not yet placed on a block.
    pending: [u64; STEPS],
    series: BlockSeries,
}

impl BlockCollector {
    /// A collector for the threads of `config`, whose intervals are the
    /// base intervals of their series; `None` when the run seals none.
    pub fn new(config: &CyclicConfig) -> Option<BlockCollector> {
        let plan = config.intervals?;
        Some(BlockCollector {
            synthetic: matches!(config.run.source, TimeSourceKind::Synthetic { .. }),
            threads: config
                .threads
                .iter()
                .map(|_| ThreadBlocks {
                    reader: IntervalReader::new(),
                    next_index: 0,
                    lost_unplaced: 0,
                    counted: [0; STEPS],
                    pending: [0; STEPS],
                    series: BlockSeries::new(plan.length.as_nanos(), DEFAULT_CAPACITY),
                })
                .collect(),
            batch: Vec::with_capacity(plan.ring),
            last_drain: None,
        })
    }

    /// The heap the collector of `config` takes at most, its series full,
    /// with each thread's `"blocks"` document made from it at the end
    /// (the run's footprint counts it: it is locked with `-m`).
    pub fn heap_bytes(config: &CyclicConfig) -> Bytes {
        let ring = config.intervals.map_or(0, |p| p.ring);
        Bytes::of::<Block>(DEFAULT_CAPACITY)
            .times(2)
            .times(config.threads.len() as u64)
            .plus(Bytes::of::<IntervalRecord>(ring))
    }

    /// During a real run: takes what the threads sealed, at most every
    /// [`DRAIN_PERIOD`]. A synthetic run is taken at the end only.
    pub fn drain_if_due(&mut self, shared: &Shared) {
        if self.synthetic || self.last_drain.is_some_and(|t| t.elapsed() < DRAIN_PERIOD) {
            return;
        }
        self.last_drain = Some(Instant::now());
        self.drain(shared);
    }

    /// After the threads have stopped: takes the rest and returns each
    /// thread's series, in thread order.
    pub fn finish(mut self, shared: &Shared) -> Vec<BlockSeries> {
        self.drain(shared);
        self.threads.into_iter().map(|t| t.series).collect()
    }

    /// Each thread's series so far, in thread order.
    pub fn series(&self) -> impl Iterator<Item = &BlockSeries> {
        self.threads.iter().map(|t| &t.series)
    }

    /// Goes on from a resumed monitor's series (thread by thread; a thread
    /// without one starts anew): this run's blocks follow them.
    pub fn resume(&mut self, series: Vec<Option<BlockSeries>>) {
        for (thread, resumed) in self.threads.iter_mut().zip(series) {
            if let Some(resumed) = resumed {
                thread.series = resumed;
            }
        }
    }

    fn drain(&mut self, shared: &Shared) {
        for (thread, channel) in self.threads.iter_mut().zip(shared.channels.iter()) {
            let Some(log) = channel.intervals.as_ref() else {
                continue;
            };
            let lost_before = thread.reader.lost();
            self.batch.clear();
            let batch = &mut self.batch;
            thread.reader.drain(log, |r| batch.push(r));
            thread.lost_unplaced += thread.reader.lost() - lost_before;
            if self.batch.is_empty() {
                continue;
            }
            if let Some(histogram) = channel.distribution.as_deref() {
                let now = histogram.snapshot(None, None);
                let counted = ladder_counts(now.buckets().map(|b| (b.lower, b.count)));
                for ((pending, seen), now) in thread
                    .pending
                    .iter_mut()
                    .zip(&mut thread.counted)
                    .zip(counted)
                {
                    *pending += now.saturating_sub(*seen);
                    *seen = now;
                }
            }
            thread.take(&self.batch);
        }
    }
}

impl ThreadBlocks {
    /// Adds the intervals of `batch` (in order) to the series, with the
    /// empty and lost ones before each.
    fn take(&mut self, batch: &[IntervalRecord]) {
        let mut blocks: Vec<(u64, Block, bool)> = Vec::with_capacity(batch.len());
        for record in batch {
            for index in self.next_index..record.index {
                let block = if self.lost_unplaced > 0 {
                    self.lost_unplaced -= 1;
                    Block::lost_interval()
                } else {
                    Block::default()
                };
                blocks.push((index, block, false));
            }
            let max_ns = (record.cycles > 0).then_some(record.max.as_nanos());
            let block = Block::new(record.cycles, max_ns, record.sum_ns);
            blocks.push((record.index, block, record.partial));
            self.next_index = record.index + 1;
        }
        let mut placed: Vec<Block> = blocks.iter().map(|(_, b, _)| *b).collect();
        place_counts(&mut placed, &mut self.pending);
        for ((_, _, partial), block) in blocks.iter().zip(placed) {
            // The last interval, cut short, is no block of the run's length.
            if !partial {
                self.series.push(block);
            }
        }
    }
}

/// Places `pending[j]` samples at or above `LADDER_NS[j]` on `blocks`
/// (their `at_or_above`, zero before), leaving in `pending` what found no
/// place. Step by step from the lowest: the blocks whose exact maximum is
/// at or above the step get one each (their maximum, even beyond
/// `pending`), then the rest in proportion to the room each has left (its
/// samples, or its count at the step below), by largest remainders, the
/// earlier block first among equals.
pub fn place_counts(blocks: &mut [Block], pending: &mut [u64; STEPS]) {
    let mut share: Vec<u128> = Vec::with_capacity(blocks.len());
    for (j, &step) in LADDER_NS.iter().enumerate() {
        let room = |b: &Block| {
            if j == 0 {
                b.cycles
            } else {
                b.at_or_above[j - 1]
            }
        };
        let allowed =
            |b: &Block| b.cycles > 0 && b.max_ns.is_some_and(|m| m >= step) && room(b) > 0;
        let eligible = blocks.iter().filter(|b| allowed(b)).count() as u64;
        let spare: u64 = blocks
            .iter()
            .filter(|b| allowed(b))
            .map(|b| room(b) - 1)
            .sum();
        let total = pending[j].max(eligible).min(eligible + spare);
        pending[j] = pending[j].saturating_sub(total);
        let extra = total - eligible;
        share.clear();
        let mut given = 0u64;
        for b in blocks.iter_mut() {
            if !allowed(b) {
                share.push(0);
                continue;
            }
            // extra × spare_i / spare, its whole part now, its remainder
            // ranked below (extra ≤ spare, so each stays within its room).
            let exact = u128::from(extra) * u128::from(room(b) - 1);
            let whole = if spare == 0 {
                0
            } else {
                (exact / u128::from(spare)) as u64
            };
            b.at_or_above[j] = 1 + whole;
            given += whole;
            share.push(if spare == 0 {
                0
            } else {
                exact % u128::from(spare)
            });
        }
        let mut left = extra - given;
        if left > 0 {
            let mut order: Vec<usize> = (0..blocks.len()).filter(|&i| share[i] > 0).collect();
            order.sort_by(|&a, &b| share[b].cmp(&share[a]).then(a.cmp(&b)));
            for i in order {
                if left == 0 {
                    break;
                }
                blocks[i].at_or_above[j] += 1;
                left -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(cycles: u64, max_ns: i64) -> Block {
        Block::new(cycles, Some(max_ns), 0)
    }

    #[test]
    fn counts_go_only_to_blocks_whose_maximum_reaches_the_step() {
        let mut blocks = [block(100, 3_000), block(100, 60_000), block(100, 1_500)];
        let mut pending = [0; STEPS];
        pending[0] = 300; // every sample at or above 1 µs
        pending[1] = 5; // 2 µs
        pending[2] = 2; // 5 µs
        pending[5] = 1; // 50 µs: the spike of block 1
        place_counts(&mut blocks, &mut pending);
        let at = |j: usize| blocks.iter().map(|b| b.at_or_above[j]).collect::<Vec<_>>();
        assert_eq!(at(0), [100, 100, 100]);
        // Blocks 0 and 1 reach 2 µs: one each, the 3 left by their room.
        assert_eq!(at(1).iter().sum::<u64>(), 5);
        assert_eq!(at(1)[2], 0);
        assert_eq!(at(2), [0, 2, 0]);
        assert_eq!(at(5), [0, 1, 0]);
        assert_eq!(at(6), [0, 0, 0]);
        assert_eq!(pending, [0; STEPS]);
    }

    #[test]
    fn what_finds_no_room_waits_and_a_maximum_always_counts() {
        let mut blocks = [block(10, 1_200)];
        let mut pending = [0; STEPS];
        pending[0] = 14; // 4 samples of the interval in progress
        pending[3] = 1; // a 10 µs spike after this block
        place_counts(&mut blocks, &mut pending);
        assert_eq!(blocks[0].at_or_above[0], 10);
        assert_eq!(blocks[0].at_or_above[3], 0);
        assert_eq!((pending[0], pending[3]), (4, 1));
        // The maximum is at or above 1 µs even if the distribution's
        // count of it came with an earlier drain.
        let mut blocks = [block(10, 1_200)];
        let mut none = [0; STEPS];
        place_counts(&mut blocks, &mut none);
        assert_eq!(blocks[0].at_or_above[0], 1);
    }

    fn record(index: u64, cycles: u64, max_ns: i64, partial: bool) -> IntervalRecord {
        IntervalRecord {
            index,
            cycles,
            min: rtlat_core::Nanos(0),
            max: rtlat_core::Nanos(max_ns),
            sum_ns: cycles as i64 * 10,
            overruns: 0,
            partial,
            end_ns: 0,
        }
    }

    fn thread() -> ThreadBlocks {
        ThreadBlocks {
            reader: IntervalReader::new(),
            next_index: 0,
            lost_unplaced: 0,
            counted: [0; STEPS],
            pending: [0; STEPS],
            series: BlockSeries::new(100, 64),
        }
    }

    #[test]
    fn empty_and_lost_intervals_keep_their_places_and_a_cut_short_one_is_left_out() {
        let mut t = thread();
        // Interval 1 had no sample.
        t.take(&[record(0, 10, 1_500, false), record(2, 10, 2_500, false)]);
        // Intervals 3 and 4 were lost, 5 had no sample.
        t.lost_unplaced = 2;
        t.take(&[record(6, 10, 1_200, false), record(7, 4, 9_000, true)]);
        let got: Vec<(u64, Option<i64>, u64)> = t
            .series
            .blocks()
            .iter()
            .map(|b| (b.cycles, b.max_ns, b.lost))
            .collect();
        assert_eq!(
            got,
            [
                (10, Some(1_500), 0),
                (0, None, 0),
                (10, Some(2_500), 0),
                (0, None, 1),
                (0, None, 1),
                (0, None, 0),
                (10, Some(1_200), 0),
            ]
        );
        assert_eq!((t.lost_unplaced, t.next_index), (0, 8));
    }

    #[test]
    fn shares_are_whole_and_sum_to_what_was_pending() {
        let mut blocks = [block(3, 5_000), block(3, 5_000), block(3, 5_000)];
        let mut pending = [0; STEPS];
        pending[0] = 8;
        place_counts(&mut blocks, &mut pending);
        let got: Vec<u64> = blocks.iter().map(|b| b.at_or_above[0]).collect();
        assert_eq!(got, [3, 3, 2]);
        assert!(blocks.iter().all(|b| b.at_or_above[1] <= b.at_or_above[0]));
    }
}
