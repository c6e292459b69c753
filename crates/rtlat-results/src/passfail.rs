//! The documents of the pass/fail tools, rt-migrate-test's and ssdd's:
//! rt-tests' envelope ([`Header`]), the tool's own members (C's keys, in
//! C's order: rt-migrate-test's `num_threads` and `thread`, none for
//! ssdd), then rtlat's `environment` and `audit` (`null` where no audit
//! was made). No `verdict`: these tools judge the scheduler, not a
//! latency, and their `return_code` is their judgement.

use std::collections::BTreeMap;

use serde::Serialize;

/// rt-migrate-test's members.
#[derive(Clone, Debug, Serialize)]
pub struct MigrateMembers {
    /// Tasks run.
    pub num_threads: usize,
    /// Each task by its number (`"0"`, `"1"`, ...).
    pub thread: BTreeMap<usize, MigrateThread>,
}

/// One task of rt-migrate-test: when it started its busy loop in each
/// interval, after the interval's release, in whole µs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MigrateThread {
    /// Its SCHED_FIFO priority.
    pub prio: i64,
    /// The earliest start.
    pub min: u64,
    /// `total` / intervals (C: the µs total divided, truncated).
    pub avg: u64,
    /// The latest start.
    pub max: u64,
    /// The starts summed.
    pub total: u64,
}

/// ssdd's members: none beyond the envelope.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SsddMembers {}
