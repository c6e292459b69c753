//! Fork mode: the run's state in one shared mapping of 64-bit atomic
//! cells, which the main process and the sides (separate processes
//! re-executed from our binary, told only `-fr<N>` / `-fs<N>`) all map.
//!
//! The mapping holds everything a side needs to know (the plan of its pair,
//! loops, units, histogram size, the semaphore set's id) and everything it
//! publishes (its process id, state, figures and histogram), so the child
//! command line stays the C tools' contract. Each side writes only its own
//! cells, with plain stores, as in threads mode.
//!
//! Layout: a 16-cell header, then per pair a block of 16 cells of plan and
//! control, 16 cells of receiver slot, 16 of sender slot, 16 of the two
//! sides' disturbance counts (receiver first, 8 each) and, with a
//! histogram, `2 * buckets + 1` cells, rounded up to 16 cells (128 bytes).

use std::sync::atomic::{AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use std::time::{Duration, Instant};

use rtlat_sys::ipc::shm::SharedCells;
use rtlat_sys::ipc::sysv::SemSet;
use rtlat_sys::tracefs::TraceControl;
use rtlat_sys::{Errno, signals, system};

use super::engine::{receiver_params, sender_params, set_up_side};
use super::handoff::{self, ReceiverSink, SenderSink};
use super::links::{SemReceiver, SemSender, SignalReceiver, SignalSender, SignalTarget};
use super::report::{PairReport, PairResult, SideResult, end_reason};
use super::{Mechanism, PairConfig, PairPlan, Side};
use crate::config::{RunConfig, SchedPolicy};
use crate::engine::threads::DisturbanceMark;
use crate::report::{
    BreakReport, CompatStats, Disturbances, EndReason, HistogramData, PreciseStats, ThreadError,
    ThreadStep,
};
use crate::slot::LoopEnd;
use crate::units::{Nanos, Resolution};

const MAGIC: u64 = 0x7274_6c61_7469_7063; // "rtlatipc"
const LINE: usize = 16;

// Header cells.
const H_MAGIC: usize = 0;
const H_PAIRS: usize = 1;
const H_MECHANISM: usize = 2;
const H_LOOPS: usize = 3;
const H_RESOLUTION: usize = 4;
const H_BUCKETS: usize = 5;
const H_BREAK: usize = 6;
const H_STOP: usize = 7;
const H_GO: usize = 8;
const H_READY: usize = 9;
const H_BREAK_CLAIMED: usize = 10;
const H_BREAK_PAIR: usize = 11;
const H_BREAK_ID: usize = 12;
const H_BREAK_VALUE: usize = 13;

// Plan and control cells of a pair block.
const P_INTERVAL: usize = 0;
const P_POLICY: usize = 1;
const P_PRIORITY: usize = 2;
const P_CPU: usize = 3;
const P_SEMID: usize = 4;
const P_SENT: usize = 8;

// Slot cells (one line per side).
const S_STATE: usize = 0;
const S_END: usize = 1;
const S_STEP: usize = 2;
const S_ERRNO: usize = 3;
const S_ID: usize = 4;
const S_CYCLES: usize = 5;
const S_ACT: usize = 6;
const S_MIN: usize = 7;
const S_MAX: usize = 8;
const S_SUM: usize = 9;
const S_MIN_NS: usize = 10;
const S_MAX_NS: usize = 11;
const S_SUM_NS: usize = 12;

// Disturbance cells (half a line per side): `D_PUBLISHED` is stored last;
// `D_MIGRATIONS` is `u64::MAX` when migrations were not counted.
const D_PUBLISHED: usize = 0;
const D_INVOLUNTARY: usize = 1;
const D_MINOR: usize = 2;
const D_MAJOR: usize = 3;
const D_MIGRATIONS: usize = 4;
/// Lines of a pair block before its histogram.
const BLOCK_LINES: usize = 4;

const STARTING: u64 = 0;
const RUNNING: u64 = 1;
const ENDED: u64 = 2;
const FAILED: u64 = 3;

/// What can go wrong with the shared mapping.
#[derive(Debug, thiserror::Error)]
pub enum CellsError {
    /// The mapping could not be made.
    #[error("cannot create the shared memory: {0}")]
    Map(Errno),
    /// The mapping handed down is not one of ours.
    #[error("the shared memory handed down is not an rtlat fork-mode layout")]
    Foreign,
    /// The child was asked for a pair the run does not have.
    #[error("pair {pair} does not exist (the run has {pairs})")]
    NoSuchPair {
        /// The pair asked for.
        pair: usize,
        /// The pairs the run has.
        pairs: usize,
    },
}

/// The shared state of a fork-mode run.
#[derive(Debug)]
pub struct ForkCells {
    map: SharedCells,
    pairs: usize,
    buckets: usize,
    stride: usize,
}

fn policy_code(p: SchedPolicy) -> u64 {
    match p {
        SchedPolicy::Other => 0,
        SchedPolicy::Batch => 1,
        SchedPolicy::Idle => 2,
        SchedPolicy::Fifo => 3,
        SchedPolicy::RoundRobin => 4,
    }
}

fn policy_from(code: u64) -> SchedPolicy {
    match code {
        1 => SchedPolicy::Batch,
        2 => SchedPolicy::Idle,
        3 => SchedPolicy::Fifo,
        4 => SchedPolicy::RoundRobin,
        _ => SchedPolicy::Other,
    }
}

fn stride_for(buckets: usize) -> usize {
    let hist = if buckets > 0 { 2 * buckets + 1 } else { 0 };
    (BLOCK_LINES * LINE + hist).div_ceil(LINE) * LINE
}

impl ForkCells {
    /// The mapping for `config` (threads mode's plans, written once).
    pub fn create(config: &PairConfig) -> Result<ForkCells, CellsError> {
        let buckets = config.histogram.unwrap_or(0);
        let stride = stride_for(buckets);
        let map =
            SharedCells::create(LINE + config.pairs.len() * stride).map_err(CellsError::Map)?;
        let cells = ForkCells {
            map,
            pairs: config.pairs.len(),
            buckets,
            stride,
        };
        let h = cells.header();
        h[H_PAIRS].store(config.pairs.len() as u64, Relaxed);
        h[H_MECHANISM].store(
            match config.mechanism {
                Mechanism::SysvSemaphore => 0,
                Mechanism::MessageQueue => 1,
                Mechanism::Futex => 2,
                Mechanism::Signal => 3,
            },
            Relaxed,
        );
        h[H_LOOPS].store(config.run.loops.unwrap_or(0), Relaxed);
        h[H_RESOLUTION].store(
            u64::from(config.run.resolution == Resolution::Nanos),
            Relaxed,
        );
        h[H_BUCKETS].store(buckets as u64, Relaxed);
        h[H_BREAK].store(config.breaktrace.map_or(0, |b| b as u64), Relaxed);
        for plan in &config.pairs {
            let p = cells.block(plan.index);
            p[P_INTERVAL].store(plan.interval.as_nanos() as u64, Relaxed);
            p[P_POLICY].store(policy_code(plan.policy), Relaxed);
            p[P_PRIORITY].store(u64::from(plan.priority), Relaxed);
            p[P_CPU].store(plan.cpu.map_or(0, |c| c as u64 + 1), Relaxed);
        }
        h[H_MAGIC].store(MAGIC, Release);
        Ok(cells)
    }

    /// The mapping a parent handed down as descriptor `fd`.
    pub fn open_inherited(fd: i32) -> Result<ForkCells, CellsError> {
        let map = SharedCells::open_inherited(fd).map_err(CellsError::Map)?;
        let c = map.cells();
        if c.len() < LINE || c[H_MAGIC].load(Acquire) != MAGIC {
            return Err(CellsError::Foreign);
        }
        let pairs = c[H_PAIRS].load(Relaxed) as usize;
        let buckets = c[H_BUCKETS].load(Relaxed) as usize;
        let stride = stride_for(buckets);
        if pairs.checked_mul(stride).and_then(|n| n.checked_add(LINE)) != Some(c.len()) {
            return Err(CellsError::Foreign);
        }
        Ok(ForkCells {
            map,
            pairs,
            buckets,
            stride,
        })
    }

    /// The descriptor to hand to the sides.
    pub fn raw_fd(&self) -> i32 {
        self.map.raw_fd()
    }

    fn header(&self) -> &[AtomicU64] {
        &self.map.cells()[..LINE]
    }

    fn block(&self, pair: usize) -> &[AtomicU64] {
        let start = LINE + pair * self.stride;
        &self.map.cells()[start..start + self.stride]
    }

    fn slot(&self, pair: usize, side: Side) -> &[AtomicU64] {
        let b = self.block(pair);
        match side {
            Side::Receiver => &b[LINE..2 * LINE],
            Side::Sender => &b[2 * LINE..3 * LINE],
        }
    }

    fn disturbance_cells(&self, pair: usize, side: Side) -> &[AtomicU64] {
        let b = self.block(pair);
        let half = LINE / 2;
        match side {
            Side::Receiver => &b[3 * LINE..3 * LINE + half],
            Side::Sender => &b[3 * LINE + half..4 * LINE],
        }
    }

    fn histogram(&self, pair: usize) -> Option<&[AtomicU64]> {
        let start = BLOCK_LINES * LINE;
        (self.buckets > 0).then(|| &self.block(pair)[start..start + 2 * self.buckets + 1])
    }

    /// The mechanism the run uses.
    pub fn mechanism(&self) -> Mechanism {
        match self.header()[H_MECHANISM].load(Relaxed) {
            0 => Mechanism::SysvSemaphore,
            1 => Mechanism::MessageQueue,
            2 => Mechanism::Futex,
            _ => Mechanism::Signal,
        }
    }

    /// The number of pairs.
    pub fn pairs(&self) -> usize {
        self.pairs
    }

    /// Records the SysV semaphore set of `pair`.
    pub fn set_semaphore(&self, pair: usize, set: &SemSet) {
        self.block(pair)[P_SEMID].store(set.id() as u64, Relaxed);
    }

    /// Sides that have finished their set-up (well or not).
    pub fn ready(&self) -> usize {
        self.header()[H_READY].load(Acquire) as usize
    }

    /// Lets the sides start measuring.
    pub fn go(&self) {
        self.header()[H_GO].store(1, Release);
    }

    /// Asks every side to leave its loop.
    pub fn request_stop(&self) {
        self.header()[H_STOP].store(1, Relaxed);
    }

    /// The process id of a side (0 before it started).
    pub(crate) fn side_id(&self, pair: usize, side: Side) -> i32 {
        self.slot(pair, side)[S_ID].load(Relaxed) as i32
    }

    /// Whether a side is still starting or measuring.
    pub fn side_active(&self, pair: usize, side: Side) -> bool {
        matches!(
            self.slot(pair, side)[S_STATE].load(Acquire),
            STARTING | RUNNING
        )
    }

    /// Marks a side failed from outside (it died before it could say so).
    pub fn mark_failed(&self, pair: usize, side: Side, step: ThreadStep, errno: i32) {
        if self.side_active(pair, side) {
            fail(self.slot(pair, side), step, errno);
        }
    }

    /// The first side that failed: (pair, side, error).
    pub fn setup_error(&self) -> Option<(usize, Side, ThreadError)> {
        (0..self.pairs).find_map(|i| {
            [Side::Receiver, Side::Sender]
                .into_iter()
                .find_map(|s| slot_error(self.slot(i, s)).map(|e| (i, s, e)))
        })
    }

    /// Whether some side has ended by itself.
    pub fn reached_end(&self) -> bool {
        (0..self.pairs).any(|i| {
            [Side::Receiver, Side::Sender]
                .into_iter()
                .any(|s| matches!(self.slot(i, s)[S_STATE].load(Acquire), ENDED | FAILED))
        })
    }

    fn plan(&self, pair: usize) -> PairPlan {
        let p = self.block(pair);
        let cpu = p[P_CPU].load(Relaxed);
        PairPlan {
            index: pair,
            interval: Nanos(p[P_INTERVAL].load(Relaxed) as i64),
            policy: policy_from(p[P_POLICY].load(Relaxed)),
            priority: p[P_PRIORITY].load(Relaxed) as u8,
            cpu: (cpu > 0).then(|| cpu as usize - 1),
        }
    }

    /// The run's configuration as the sides see it.
    pub fn config(&self) -> PairConfig {
        let h = self.header();
        let non_zero = |v: u64| (v != 0).then_some(v);
        PairConfig {
            mechanism: self.mechanism(),
            pairs: (0..self.pairs).map(|i| self.plan(i)).collect(),
            run: RunConfig {
                loops: non_zero(h[H_LOOPS].load(Relaxed)),
                resolution: if h[H_RESOLUTION].load(Relaxed) == 1 {
                    Resolution::Nanos
                } else {
                    Resolution::Micros
                },
                ..RunConfig::default()
            },
            histogram: (self.buckets > 0).then_some(self.buckets),
            breaktrace: non_zero(h[H_BREAK].load(Relaxed)).map(|b| b as i64),
            mq_timeouts: None,
        }
    }

    /// The pairs as they stand; histograms only with `with_histograms`.
    pub fn results(&self, with_histograms: bool) -> Vec<PairResult> {
        (0..self.pairs)
            .map(|i| {
                let plan = self.plan(i);
                let side = |s: Side| {
                    let c = self.slot(i, s);
                    let cycles = c[S_CYCLES].load(Relaxed);
                    let any = cycles > 0;
                    let signed = |k: usize| c[k].load(Relaxed) as i64;
                    SideResult {
                        id: c[S_ID].load(Relaxed) as i32,
                        policy: plan.policy,
                        priority: plan.priority,
                        cpu: plan.cpu,
                        compat: CompatStats {
                            cycles,
                            min: signed(S_MIN),
                            max: signed(S_MAX),
                            act: signed(S_ACT),
                            sum: signed(S_SUM),
                        },
                        precise: PreciseStats {
                            min: any.then(|| Nanos(signed(S_MIN_NS))),
                            max: any.then(|| Nanos(signed(S_MAX_NS))),
                            sum_ns: i128::from(signed(S_SUM_NS)),
                            sum_sq_ns: None,
                            overruns: 0,
                        },
                        error: slot_error(c),
                        disturbances: disturbances_of(self.disturbance_cells(i, s)),
                        ended: matches!(c[S_STATE].load(Acquire), ENDED | FAILED),
                    }
                };
                PairResult {
                    index: i,
                    interval: plan.interval,
                    receiver: side(Side::Receiver),
                    sender: side(Side::Sender),
                    timeouts: 0,
                    histogram: if with_histograms {
                        self.histogram(i).map(|h| histogram_data(h, self.buckets))
                    } else {
                        None
                    },
                    distribution: None,
                    phases: Vec::new(),
                }
            })
            .collect()
    }

    /// The final report, once the sides have stopped. `external`: why the
    /// caller stopped the run, if it did.
    pub fn report(&self, external: Option<EndReason>) -> PairReport {
        let pairs = self.results(true);
        let failed = pairs
            .iter()
            .any(|p| p.receiver.error.is_some() || p.sender.error.is_some());
        let looped = (0..self.pairs).any(|i| {
            [Side::Receiver, Side::Sender]
                .into_iter()
                .any(|s| self.slot(i, s)[S_END].load(Relaxed) == 1)
        });
        let h = self.header();
        let break_info = (h[H_BREAK_CLAIMED].load(Acquire) == 2).then(|| BreakReport {
            thread: h[H_BREAK_PAIR].load(Relaxed) as usize,
            tid: h[H_BREAK_ID].load(Relaxed) as i32,
            value: h[H_BREAK_VALUE].load(Relaxed) as i64,
        });
        PairReport {
            resolution: self.config().run.resolution,
            end: end_reason(external, failed, break_info.is_some(), looped),
            pairs,
            break_info,
        }
    }

    fn claim_break(&self, pair: usize, id: i32, value: i64) -> bool {
        let h = self.header();
        if h[H_BREAK_CLAIMED]
            .compare_exchange(0, 1, Acquire, Relaxed)
            .is_err()
        {
            return false;
        }
        h[H_BREAK_PAIR].store(pair as u64, Relaxed);
        h[H_BREAK_ID].store(id as u64, Relaxed);
        h[H_BREAK_VALUE].store(value as u64, Relaxed);
        h[H_BREAK_CLAIMED].store(2, Release);
        true
    }
}

fn fail(slot: &[AtomicU64], step: ThreadStep, errno: i32) {
    slot[S_STEP].store(u64::from(step.code()), Relaxed);
    slot[S_ERRNO].store(errno as u64, Relaxed);
    slot[S_STATE].store(FAILED, Release);
}

fn publish_disturbances(cells: &[AtomicU64], d: Disturbances) {
    cells[D_INVOLUNTARY].store(d.involuntary_switches, Relaxed);
    cells[D_MINOR].store(d.minor_faults, Relaxed);
    cells[D_MAJOR].store(d.major_faults, Relaxed);
    cells[D_MIGRATIONS].store(d.migrations.unwrap_or(u64::MAX), Relaxed);
    cells[D_PUBLISHED].store(1, Release);
}

fn disturbances_of(cells: &[AtomicU64]) -> Option<Disturbances> {
    (cells[D_PUBLISHED].load(Acquire) != 0).then(|| Disturbances {
        involuntary_switches: cells[D_INVOLUNTARY].load(Relaxed),
        minor_faults: cells[D_MINOR].load(Relaxed),
        major_faults: cells[D_MAJOR].load(Relaxed),
        migrations: Some(cells[D_MIGRATIONS].load(Relaxed)).filter(|&m| m != u64::MAX),
    })
}

fn slot_error(slot: &[AtomicU64]) -> Option<ThreadError> {
    let step = ThreadStep::from_code(slot[S_STEP].load(Relaxed))?;
    Some(ThreadError {
        step,
        errno: slot[S_ERRNO].load(Relaxed) as i32,
    })
}

fn set_end(slot: &[AtomicU64], end: LoopEnd) {
    let code = match end {
        LoopEnd::Loops => 1,
        LoopEnd::Duration => 2,
        LoopEnd::Stopped => 3,
        LoopEnd::Break(_) => 4,
        LoopEnd::Failed(errno) | LoopEnd::SmiFailed(errno) => {
            fail(slot, ThreadStep::Wait, errno);
            return;
        }
    };
    slot[S_END].store(code, Relaxed);
    slot[S_STATE].store(ENDED, Release);
}

fn histogram_data(h: &[AtomicU64], buckets: usize) -> HistogramData {
    let overflows = h[buckets].load(Relaxed);
    // A count past usize::MAX (2^32 on 32-bit targets) logs every cell,
    // never the count's low bits.
    let logged = usize::try_from(overflows).map_or(buckets, |n| n.min(buckets));
    HistogramData {
        buckets: h[..buckets].iter().map(|c| c.load(Relaxed)).collect(),
        overflows,
        overflow_cycles: h[buckets + 1..buckets + 1 + logged]
            .iter()
            .map(|c| c.load(Relaxed))
            .collect(),
    }
}

/// A receiver's results into its slot cells (and histogram cells), the
/// way [`SlotWriter`](crate::stats::SlotWriter) publishes: plain stores,
/// minimum and maximum only when they move. It keeps its own figures, not
/// a `Tally`: the cells publish no sum of squares, so the receiver's loop
/// neither squares each sample in 128 bits nor copies a tally per cycle.
struct CellSink<'a> {
    slot: &'a [AtomicU64],
    histogram: Option<&'a [AtomicU64]>,
    buckets: usize,
    cycles: u64,
    min: i64,
    max: i64,
    sum: i64,
    min_ns: i64,
    max_ns: i64,
    sum_ns: i64,
}

impl<'a> CellSink<'a> {
    fn new(slot: &'a [AtomicU64], histogram: Option<&'a [AtomicU64]>, buckets: usize) -> Self {
        CellSink {
            slot,
            histogram,
            buckets,
            cycles: 0,
            min: i64::MAX,
            max: i64::MIN,
            sum: 0,
            min_ns: i64::MAX,
            max_ns: i64::MIN,
            sum_ns: 0,
        }
    }
}

impl ReceiverSink for CellSink<'_> {
    #[inline(always)]
    fn record(&mut self, units: i64, ns: i64, _now_ns: i64) -> u64 {
        let s = self.slot;
        if units < self.min {
            self.min = units;
            s[S_MIN].store(units as u64, Relaxed);
        }
        if units > self.max {
            self.max = units;
            s[S_MAX].store(units as u64, Relaxed);
        }
        if ns < self.min_ns {
            self.min_ns = ns;
            s[S_MIN_NS].store(ns as u64, Relaxed);
        }
        if ns > self.max_ns {
            self.max_ns = ns;
            s[S_MAX_NS].store(ns as u64, Relaxed);
        }
        self.sum = self.sum.wrapping_add(units);
        self.sum_ns = self.sum_ns.wrapping_add(ns);
        s[S_ACT].store(units as u64, Relaxed);
        s[S_SUM].store(self.sum as u64, Relaxed);
        s[S_SUM_NS].store(self.sum_ns as u64, Relaxed);
        if let Some(h) = self.histogram {
            match usize::try_from(units).ok().filter(|&u| u < self.buckets) {
                Some(u) => h[u].store(h[u].load(Relaxed) + 1, Relaxed),
                None => {
                    let n = h[self.buckets].load(Relaxed);
                    // Only the first `buckets` overflows are logged; a
                    // count past 2^32 must not wrap into the log on 32-bit.
                    if let Some(i) = usize::try_from(n).ok().filter(|&i| i < self.buckets) {
                        h[self.buckets + 1 + i].store(self.cycles, Relaxed);
                    }
                    h[self.buckets].store(n + 1, Relaxed);
                }
            }
        }
        self.cycles += 1;
        s[S_CYCLES].store(self.cycles, Relaxed);
        self.cycles
    }

    #[inline(always)]
    fn timed_out(&mut self) {}
}

/// A sender's count into its slot cells.
struct CellCount<'a> {
    slot: &'a [AtomicU64],
    cycles: u64,
}

impl SenderSink for CellCount<'_> {
    #[inline(always)]
    fn count(&mut self) -> u64 {
        self.cycles += 1;
        self.slot[S_CYCLES].store(self.cycles, Relaxed);
        self.cycles
    }
}

/// Runs side `side` of pair `pair` in this process, the whole life of a
/// fork-mode child: set-up, the start signal, the loop, the end. `trace`
/// is what a `-b` break stops. Returns how the loop ended.
pub fn run_side(
    cells: &ForkCells,
    side: Side,
    pair: usize,
    trace: Option<&TraceControl>,
) -> Result<LoopEnd, CellsError> {
    if pair >= cells.pairs {
        return Err(CellsError::NoSuchPair {
            pair,
            pairs: cells.pairs,
        });
    }
    let config = cells.config();
    let plan = cells.plan(pair);
    let slot = cells.slot(pair, side);
    let id = system::current_pid();
    slot[S_ID].store(id as u64, Relaxed);
    let mut setup =
        signals::install_wake_handler().map_err(|e| (ThreadStep::Wait, e.raw_os_error()));
    if setup.is_ok() {
        setup = set_up_side(&plan);
    }
    if let Some(h) = cells.histogram(pair).filter(|_| side == Side::Receiver) {
        for c in h {
            c.store(0, Relaxed);
        }
    }
    rtlat_sys::memory::prefault_stack::<{ 16 * 1024 }>();
    if let Err((step, errno)) = setup {
        fail(slot, step, errno);
    }
    let header = cells.header();
    header[H_READY].fetch_add(1, Release);
    if setup.is_err() {
        return Ok(LoopEnd::Failed(0));
    }
    // Set-up, not the measuring loop: polling is fine here.
    let give_up = Instant::now() + Duration::from_secs(30);
    while header[H_GO].load(Acquire) == 0 {
        if header[H_STOP].load(Relaxed) != 0 || Instant::now() > give_up {
            set_end(slot, LoopEnd::Stopped);
            return Ok(LoopEnd::Stopped);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    slot[S_STATE].store(RUNNING, Release);
    let block = cells.block(pair);
    let (sent, stop) = (&block[P_SENT], &header[H_STOP]);
    let partner = match side {
        Side::Receiver => cells.side_id(pair, Side::Sender),
        Side::Sender => cells.side_id(pair, Side::Receiver),
    };
    let semaphores = SemSet::attach(block[P_SEMID].load(Relaxed) as i32);
    let mark = DisturbanceMark::now();
    let end = match side {
        Side::Receiver => {
            let params = receiver_params(&config, &plan);
            let mut sink = CellSink::new(slot, cells.histogram(pair), cells.buckets);
            match cells.mechanism() {
                Mechanism::Signal => {
                    let mut link = SignalReceiver::new(SignalTarget::Process(partner));
                    handoff::receive(&mut link, &mut sink, sent, stop, &params)
                }
                _ => handoff::receive(
                    &mut SemReceiver(&semaphores),
                    &mut sink,
                    sent,
                    stop,
                    &params,
                ),
            }
        }
        Side::Sender => {
            let params = sender_params(&config);
            let mut sink = CellCount { slot, cycles: 0 };
            match cells.mechanism() {
                Mechanism::Signal => {
                    let mut link = SignalSender::new(SignalTarget::Process(partner));
                    handoff::send(&mut link, &mut sink, sent, stop, &params)
                }
                _ => handoff::send(&mut SemSender(&semaphores), &mut sink, sent, stop, &params),
            }
        }
    };
    if let Some(d) = mark.since() {
        publish_disturbances(cells.disturbance_cells(pair, side), d);
    }
    if let LoopEnd::Break(value) = end {
        if cells.claim_break(pair, id, value)
            && let Some(trace) = trace
        {
            let _ = trace.stop_tracing();
        }
        cells.request_stop();
    }
    set_end(slot, end);
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAST_2_32: u64 = (1 << 32) + 1;

    fn cells(n: usize) -> Vec<AtomicU64> {
        (0..n).map(|_| AtomicU64::new(0)).collect()
    }

    #[test]
    fn an_overflow_count_past_2_32_logs_every_cell() {
        let buckets = 3;
        let h = cells(2 * buckets + 1);
        h[buckets].store(PAST_2_32, Relaxed);
        for (i, c) in h[buckets + 1..].iter().enumerate() {
            c.store(100 + i as u64, Relaxed);
        }
        let data = histogram_data(&h, buckets);
        assert_eq!(data.overflows, PAST_2_32);
        assert_eq!(data.overflow_cycles, vec![100, 101, 102]);
    }

    #[test]
    fn an_overflow_past_2_32_does_not_overwrite_the_logged_cycles() {
        let buckets = 3;
        let slot = cells(S_SUM_NS + 1);
        let h = cells(2 * buckets + 1);
        h[buckets].store(PAST_2_32, Relaxed);
        let mut sink = CellSink::new(&slot, Some(&h), buckets);
        sink.cycles = 41;
        // 10 units: past the 3 buckets, so an overflow.
        assert_eq!(sink.record(10, 10_000, 0), 42);
        assert_eq!(h[buckets].load(Relaxed), PAST_2_32 + 1);
        // Cut to 32 bits the count would be 1, and cycle 41 would land in
        // the second logged cell.
        assert!(h[buckets + 1..].iter().all(|c| c.load(Relaxed) == 0));
    }
}
