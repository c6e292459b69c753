//! A thread's `"blocks"`: its run cut into blocks of equal length, as
//! `rtlat_stats::blocks::BlockSeries` keeps them, written column by column
//! so that a day's run stays a few hundred kilobytes:
//!
//! ```text
//! "blocks": {"block_s": 0.1, "cycles": [500, 500], "max_ns": [12345, null],
//!            "sum_ns": [1500000, 1400000], "lost": [0, 1],
//!            "ladder_ns": [1000, 2000, ..., 100000000],
//!            "at_or_above": [[500, 498], [120, 90], ..., [0, 0]]}
//! ```
//!
//! `at_or_above[j][i]` is the samples of block `i` at or above
//! `ladder_ns[j]`. Only complete blocks are written: the samples after the
//! last one are in the thread's totals, not here. A reader
//! ([`BlocksDoc::to_series`]) checks every column's length, the ladder and
//! the values' range, and says in one line what is wrong.

use rtlat_stats::blocks::{Block, BlockSeries, LADDER_NS};
use serde::{Deserialize, Serialize};

use crate::bounds;

/// The most blocks a reader accepts (a writer keeps far fewer).
pub const MAX_BLOCKS: usize = 1 << 16;

/// The `"blocks"` object of a thread.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BlocksDoc {
    /// Length of each block, s.
    pub block_s: f64,
    /// Samples in each block.
    pub cycles: Vec<u64>,
    /// Each block's largest sample, ns; `null` without one.
    pub max_ns: Vec<Option<i64>>,
    /// Sum of each block's samples, ns.
    pub sum_ns: Vec<i64>,
    /// Base intervals of each block the reader lost.
    pub lost: Vec<u64>,
    /// The latencies counted at or above, ns.
    pub ladder_ns: Vec<i64>,
    /// Per ladder step, per block: samples at or above it.
    pub at_or_above: Vec<Vec<u64>>,
}

impl BlocksDoc {
    /// The document of `series`'s complete blocks.
    pub fn from_series(series: &BlockSeries) -> BlocksDoc {
        let blocks = series.blocks();
        BlocksDoc {
            block_s: series.block_ns() as f64 / 1e9,
            cycles: blocks.iter().map(|b| b.cycles).collect(),
            max_ns: blocks.iter().map(|b| b.max_ns).collect(),
            sum_ns: blocks.iter().map(|b| b.sum_ns).collect(),
            lost: blocks.iter().map(|b| b.lost).collect(),
            ladder_ns: LADDER_NS.to_vec(),
            at_or_above: (0..LADDER_NS.len())
                .map(|j| blocks.iter().map(|b| b.at_or_above[j]).collect())
                .collect(),
        }
    }

    /// The series it describes, checked; the error names what is wrong
    /// (prefix it with the thread).
    pub fn to_series(&self) -> Result<BlockSeries, String> {
        let n = self.cycles.len();
        if n > MAX_BLOCKS {
            return Err(format!(
                "\"blocks\": {n} blocks, at most {MAX_BLOCKS} are read"
            ));
        }
        if !(self.block_s.is_finite() && self.block_s > 0.0 && self.block_s <= 86_400.0) {
            return Err(format!(
                "\"blocks\": \"block_s\" {} is not a length from 1 ns to a day",
                self.block_s
            ));
        }
        let block_ns = (self.block_s * 1e9).round() as i64;
        if block_ns < 1 {
            return Err("\"blocks\": \"block_s\" is shorter than 1 ns".into());
        }
        for (key, len) in [
            ("max_ns", self.max_ns.len()),
            ("sum_ns", self.sum_ns.len()),
            ("lost", self.lost.len()),
        ] {
            if len != n {
                return Err(format!(
                    "\"blocks\": \"{key}\" has {len} values, \"cycles\" {n}"
                ));
            }
        }
        if self.ladder_ns != LADDER_NS {
            return Err(format!(
                "\"blocks\": \"ladder_ns\" is not the ladder this version counts ({})",
                LADDER_NS.map(|ns| ns.to_string()).join(", ")
            ));
        }
        if self.at_or_above.len() != LADDER_NS.len()
            || self.at_or_above.iter().any(|column| column.len() != n)
        {
            return Err(format!(
                "\"blocks\": \"at_or_above\" must hold {} columns of {n} counts",
                LADDER_NS.len()
            ));
        }
        let mut blocks = Vec::with_capacity(n);
        for i in 0..n {
            let max_ns = match self.max_ns[i] {
                Some(ns) => Some(bounds::latency_ns(
                    format_args!("\"blocks\": \"max_ns\" {i}"),
                    ns,
                )?),
                None => None,
            };
            let mut block = Block::new(self.cycles[i], max_ns, self.sum_ns[i]);
            block.lost = self.lost[i];
            for (j, column) in self.at_or_above.iter().enumerate() {
                block.at_or_above[j] = column[i];
                let above = if j == 0 {
                    self.cycles[i]
                } else {
                    block.at_or_above[j - 1]
                };
                if column[i] > above {
                    return Err(format!(
                        "\"blocks\": block {i} counts {} samples at or above {} ns, more than \
                         {above} below that step",
                        column[i], LADDER_NS[j]
                    ));
                }
            }
            blocks.push(block);
        }
        Ok(BlockSeries::from_blocks(block_ns, blocks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series() -> BlockSeries {
        let mut s = BlockSeries::new(100_000_000, 8);
        for i in 0..3 {
            let mut b = Block::new(10, Some(1_500 * (i + 1)), 10_000);
            b.at_or_above[0] = 10;
            b.at_or_above[1] = i as u64;
            s.push(b);
        }
        s
    }

    #[test]
    fn a_series_reads_back_as_it_was_written() {
        let doc = BlocksDoc::from_series(&series());
        let text = serde_json::to_string(&doc).unwrap();
        let back: BlocksDoc = serde_json::from_str(&text).unwrap();
        let read = back.to_series().unwrap();
        assert_eq!(read.blocks(), series().blocks());
        assert_eq!(read.block_ns(), 100_000_000);
    }

    #[test]
    fn a_broken_column_is_named() {
        let mut doc = BlocksDoc::from_series(&series());
        doc.sum_ns.pop();
        assert_eq!(
            doc.to_series().unwrap_err(),
            "\"blocks\": \"sum_ns\" has 2 values, \"cycles\" 3"
        );
        let mut doc = BlocksDoc::from_series(&series());
        doc.at_or_above[1][2] = 11;
        assert!(
            doc.to_series()
                .unwrap_err()
                .contains("block 2 counts 11 samples")
        );
        let mut doc = BlocksDoc::from_series(&series());
        doc.block_s = f64::NAN;
        assert!(doc.to_series().is_err());
    }
}
