//! A run as a series of blocks of equal length.
//!
//! The measuring threads seal per-interval figures (samples, exact
//! maximum) into a ring; a non-real-time reader turns each sealed interval
//! into a [`Block`], adds the counts of its samples at or above each
//! latency of [`LADDER_NS`] (from the thread's distribution), and pushes it
//! here. A [`BlockSeries`] keeps at most `capacity` blocks: when it is
//! full, neighbours are merged in pairs and the block length doubles, so a
//! day's run takes the same memory as a minute's and every figure stays
//! exact (counts add, maxima take the larger).

use serde::{Deserialize, Serialize};

/// The latencies whose exceedances every block counts: 1-2-5 steps from
/// 1 µs to 100 ms (a sample counts for every step at or below it).
pub const LADDER_NS: [i64; 16] = [
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
];

/// How many blocks a series keeps by default before merging pairs.
pub const DEFAULT_CAPACITY: usize = 1024;

/// One block of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// Samples taken in it.
    pub cycles: u64,
    /// Its largest sample, exact; `None` without samples, or when the
    /// reader lost the interval (see [`Block::lost`]).
    pub max_ns: Option<i64>,
    /// Sum of its samples, ns (saturating).
    pub sum_ns: i64,
    /// Samples at or above each step of [`LADDER_NS`].
    pub at_or_above: [u64; LADDER_NS.len()],
    /// Base intervals in it that the reader lost (their figures are
    /// missing from the block).
    pub lost: u64,
}

impl Block {
    /// A block of `cycles` samples, the largest `max_ns`, summing to
    /// `sum_ns`, without ladder counts yet.
    pub fn new(cycles: u64, max_ns: Option<i64>, sum_ns: i64) -> Block {
        Block {
            cycles,
            max_ns,
            sum_ns,
            ..Block::default()
        }
    }

    /// A base interval the reader lost.
    pub fn lost_interval() -> Block {
        Block {
            lost: 1,
            ..Block::default()
        }
    }

    /// Adds `other` (a neighbour) to this block.
    pub fn absorb(&mut self, other: &Block) {
        self.cycles += other.cycles;
        self.max_ns = match (self.max_ns, other.max_ns) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
        for (mine, theirs) in self.at_or_above.iter_mut().zip(other.at_or_above) {
            *mine += theirs;
        }
        self.lost += other.lost;
    }

    /// The mean sample, ns, if there was any.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.cycles > 0).then(|| self.sum_ns as f64 / self.cycles as f64)
    }
}

/// A run's blocks, bounded: see the module documentation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockSeries {
    /// Length of one base interval, ns (what the reader pushes).
    base_ns: i64,
    /// Base intervals per block (a power of two).
    factor: u64,
    /// Complete blocks, oldest first.
    blocks: Vec<Block>,
    /// The block being filled, and how many base intervals it holds.
    filling: Block,
    filled: u64,
    /// At most this many complete blocks (even, at least 2).
    capacity: usize,
}

impl BlockSeries {
    /// An empty series of base intervals `base_ns` long keeping at most
    /// `capacity` blocks (rounded up to an even number, at least 2).
    pub fn new(base_ns: i64, capacity: usize) -> BlockSeries {
        let capacity = capacity.max(2).next_multiple_of(2);
        BlockSeries {
            base_ns: base_ns.max(1),
            factor: 1,
            blocks: Vec::with_capacity(capacity),
            filling: Block::default(),
            filled: 0,
            capacity,
        }
    }

    /// A series made of complete blocks of `block_ns` each (a reader's
    /// copy of a written series).
    pub fn from_blocks(block_ns: i64, blocks: Vec<Block>) -> BlockSeries {
        let capacity = blocks.len().max(2).next_multiple_of(2);
        BlockSeries {
            base_ns: block_ns.max(1),
            factor: 1,
            blocks,
            filling: Block::default(),
            filled: 0,
            capacity,
        }
    }

    /// A series of base intervals `base_ns` long, at most `capacity`
    /// blocks, that goes on from `blocks` of `block_ns` each (a resumed
    /// run's, read back with [`BlockSeries::from_blocks`]'s figures).
    /// `None` unless `block_ns` is `base_ns` times a power of two and the
    /// blocks fit.
    pub fn resumed(
        base_ns: i64,
        capacity: usize,
        block_ns: i64,
        blocks: Vec<Block>,
    ) -> Option<BlockSeries> {
        let mut series = BlockSeries::new(base_ns, capacity);
        if block_ns % series.base_ns != 0 {
            return None;
        }
        let factor = u64::try_from(block_ns / series.base_ns).ok()?;
        if !factor.is_power_of_two() || blocks.len() > series.capacity {
            return None;
        }
        series.factor = factor;
        series.blocks = blocks;
        Some(series)
    }

    /// Adds the next base interval.
    pub fn push(&mut self, block: Block) {
        self.filling.absorb(&block);
        self.filled += 1;
        if self.filled == self.factor {
            if self.blocks.len() == self.capacity {
                // Twice as long now: the block being filled is half full.
                self.halve();
            } else {
                self.blocks.push(std::mem::take(&mut self.filling));
                self.filled = 0;
            }
        }
    }

    /// Merges neighbours in pairs: half the blocks, twice as long.
    fn halve(&mut self) {
        let merged: Vec<Block> = self
            .blocks
            .chunks(2)
            .map(|pair| {
                let mut block = pair[0];
                if let Some(second) = pair.get(1) {
                    block.absorb(second);
                }
                block
            })
            .collect();
        self.blocks = merged;
        self.factor *= 2;
    }

    /// The length of a complete block, ns.
    pub fn block_ns(&self) -> i64 {
        self.base_ns.saturating_mul(self.factor as i64)
    }

    /// The length of a base interval, ns.
    pub fn base_ns(&self) -> i64 {
        self.base_ns
    }

    /// The complete blocks, oldest first.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// The incomplete block at the end, if it holds anything.
    pub fn partial(&self) -> Option<&Block> {
        (self.filled > 0).then_some(&self.filling)
    }

    /// The time the complete blocks cover, s.
    pub fn covered_s(&self) -> f64 {
        self.blocks.len() as f64 * self.block_ns() as f64 / 1e9
    }

    /// Samples in the complete blocks and the partial one.
    pub fn cycles(&self) -> u64 {
        self.blocks.iter().map(|b| b.cycles).sum::<u64>() + self.filling.cycles
    }

    /// Base intervals lost, over all blocks.
    pub fn lost(&self) -> u64 {
        self.blocks.iter().map(|b| b.lost).sum::<u64>() + self.filling.lost
    }

    /// The complete blocks merged `k` at a time (a last group of fewer
    /// than `k` is left out): blocks `k` times as long.
    pub fn coarsened(&self, k: usize) -> Vec<Block> {
        let k = k.max(1);
        self.blocks
            .chunks_exact(k)
            .map(|group| {
                let mut block = group[0];
                for other in &group[1..] {
                    block.absorb(other);
                }
                block
            })
            .collect()
    }

    /// The series of several threads together, block by block (the
    /// largest maximum, counts added), at the longest block length among
    /// them; blocks beyond the shortest thread's are left out. `None`
    /// without a series, or when the lengths are not multiples of one
    /// another.
    pub fn together(series: &[&BlockSeries]) -> Option<BlockSeries> {
        let longest = series.iter().map(|s| s.block_ns()).max()?;
        let mut merged: Option<Vec<Block>> = None;
        for s in series {
            if longest % s.block_ns() != 0 {
                return None;
            }
            let blocks = s.coarsened((longest / s.block_ns()) as usize);
            merged = Some(match merged {
                None => blocks,
                Some(mut acc) => {
                    acc.truncate(blocks.len());
                    for (a, b) in acc.iter_mut().zip(&blocks) {
                        a.absorb(b);
                    }
                    acc
                }
            });
        }
        merged.map(|blocks| BlockSeries::from_blocks(longest, blocks))
    }
}

/// The counts at or above each step of [`LADDER_NS`] of samples whose
/// values lie in buckets `(from_ns, count)`, each bucket counted at a
/// step when its lower bound is at or above it.
pub fn ladder_counts(buckets: impl IntoIterator<Item = (i64, u64)>) -> [u64; LADDER_NS.len()] {
    let mut counts = [0; LADDER_NS.len()];
    for (from_ns, count) in buckets {
        for (step, slot) in LADDER_NS.iter().zip(counts.iter_mut()) {
            if from_ns >= *step {
                *slot += count;
            } else {
                break;
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(cycles: u64, max: i64) -> Block {
        let mut b = Block::new(cycles, Some(max), cycles as i64 * 10);
        b.at_or_above[0] = cycles;
        b
    }

    #[test]
    fn a_full_series_merges_pairs_and_keeps_every_figure_exact() {
        let mut series = BlockSeries::new(100, 4);
        for i in 0..9 {
            series.push(block(10, i * 1000));
        }
        // 4 blocks of 100; the fifth makes them 2 of 200 and waits for
        // the sixth; 4 of 200 hold 8 base intervals, the ninth waits in
        // the partial block.
        assert_eq!(series.block_ns(), 200);
        assert_eq!(series.blocks().len(), 4);
        let maxima: Vec<_> = series.blocks().iter().map(|b| b.max_ns).collect();
        assert_eq!(maxima, vec![Some(1000), Some(3000), Some(5000), Some(7000)]);
        assert!(series.blocks().iter().all(|b| b.cycles == 20));
        assert_eq!(series.partial().map(|b| b.max_ns), Some(Some(8000)));
        assert_eq!(series.cycles(), 90);
        assert_eq!(series.covered_s(), 800.0 / 1e9);
    }

    #[test]
    fn a_resumed_series_goes_on_at_its_block_length() {
        let written: Vec<Block> = (0..4).map(|i| block(20, 100 + i)).collect();
        let mut series = BlockSeries::resumed(100, 4, 200, written.clone()).unwrap();
        assert_eq!((series.block_ns(), series.blocks()), (200, &written[..]));
        // Full: two more base intervals make 2 blocks of 400 and a third.
        series.push(block(10, 7));
        series.push(block(10, 9));
        assert_eq!(series.block_ns(), 400);
        let maxima: Vec<_> = series.blocks().iter().map(|b| b.max_ns).collect();
        assert_eq!(maxima, vec![Some(101), Some(103)]);
        assert_eq!(series.partial().map(|b| b.cycles), Some(20));
        assert!(BlockSeries::resumed(100, 4, 300, Vec::new()).is_none());
        assert!(BlockSeries::resumed(100, 4, 150, Vec::new()).is_none());
        assert!(BlockSeries::resumed(100, 2, 100, written).is_none());
    }

    #[test]
    fn a_lost_interval_counts_without_a_maximum() {
        let mut series = BlockSeries::new(100, 8);
        series.push(Block::lost_interval());
        series.push(block(5, 7));
        assert_eq!(series.lost(), 1);
        assert_eq!(series.blocks()[0].max_ns, None);
        let coarse = series.coarsened(2);
        assert_eq!(coarse[0].max_ns, Some(7));
        assert_eq!(coarse[0].lost, 1);
    }

    #[test]
    fn threads_together_take_the_larger_maximum_at_the_longer_length() {
        let mut fine = BlockSeries::new(100, 16);
        let mut coarse = BlockSeries::new(200, 16);
        for i in 0..4 {
            fine.push(block(1, 10 + i));
        }
        coarse.push(block(2, 12));
        coarse.push(block(2, 5));
        let both = BlockSeries::together(&[&fine, &coarse]).unwrap();
        assert_eq!(both.block_ns(), 200);
        let maxima: Vec<_> = both.blocks().iter().map(|b| b.max_ns).collect();
        assert_eq!(maxima, vec![Some(12), Some(13)]);
        assert_eq!(both.blocks()[0].cycles, 4);
        let odd = BlockSeries::new(150, 4);
        assert!(BlockSeries::together(&[&fine, &odd]).is_none());
    }

    #[test]
    fn ladder_counts_count_buckets_at_or_above_each_step() {
        let counts = ladder_counts([(500, 3), (1_000, 2), (4_999, 1), (100_000_000, 1)]);
        assert_eq!(counts[0], 4); // at or above 1 µs
        assert_eq!(counts[1], 2); // 2 µs: 4999 and 100 ms
        assert_eq!(counts[2], 1); // 5 µs: only 100 ms
        assert_eq!(counts[15], 1);
    }
}
