//! What the two sides of every pair and their readers share, in threads
//! mode and in a synthetic run alike: each pair's channel (the receiver's
//! figures and histogram, the sender's count, the cells both sides touch)
//! and the run's stop flag, break cell and trace control. The engine
//! (`engine`) makes them and its threads write them; the synthetic run
//! (`synthetic`) fills them in virtual time; readers only read.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rtlat_sys::tracefs::TraceControl;

use super::Side;
use crate::stats::{BreakCell, ThreadChannel, ThreadSlot};

/// The cells both sides of a pair touch besides their slots: the sender's
/// timestamp, the time-out count, the thread handles for sigwaittest.
#[repr(align(128))]
#[derive(Debug, Default)]
pub(super) struct PairControl {
    pub(super) sent_ns: AtomicU64,
    pub(super) timeouts: AtomicU64,
    pub(super) receiver_thread: AtomicU64,
    pub(super) sender_thread: AtomicU64,
}

/// Everything one pair publishes.
#[derive(Debug)]
pub struct PairChannel {
    /// The receiver's figures and histogram.
    pub receiver: ThreadChannel,
    /// The sender's count (its `cycles`).
    pub sender: ThreadSlot,
    pub(super) control: PairControl,
}

impl PairChannel {
    /// The time-outs counted so far (pmqtest `-f`).
    pub fn timeouts(&self) -> u64 {
        self.control.timeouts.load(Relaxed)
    }

    pub(super) fn slot(&self, side: Side) -> &ThreadSlot {
        match side {
            Side::Receiver => &self.receiver.slot,
            Side::Sender => &self.sender,
        }
    }
}

/// What the sides and their readers share.
#[derive(Debug)]
pub struct PairShared {
    /// One channel per pair, in index order.
    pub pairs: Box<[PairChannel]>,
    pub(super) stop: AtomicU64,
    pub(super) breaks: BreakCell,
    pub(super) trace: Option<TraceControl>,
}

impl PairShared {
    /// Asks every side to leave its loop.
    pub fn request_stop(&self) {
        self.stop.store(1, Relaxed);
    }

    /// Adds `n` time-outs to pair `pair`'s count (synthetic runs).
    pub(crate) fn add_timeouts(&self, pair: usize, n: u64) {
        let cell = &self.pairs[pair].control.timeouts;
        cell.store(cell.load(Relaxed) + n, Relaxed);
    }

    /// The break cell (`-b`).
    pub(crate) fn breaks(&self) -> &BreakCell {
        &self.breaks
    }
}
