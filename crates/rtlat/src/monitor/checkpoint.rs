//! Checkpoints: the monitor's whole state in one file, written atomically
//! (a temporary file, fsync, rename, fsync of the directory), and read back
//! by `--resume`.
//!
//! A checkpoint is a `rtlat cyclictest --json` result document (so
//! `rtlat compare` and `rtlat plot` read it like any result) with two
//! members added at the end:
//! - `"monitor"`: what resuming needs exactly: per thread the counters and
//!   the distribution by its buckets' places (`cells`), the distribution's
//!   shape, the first start, the gaps between a checkpoint and the start
//!   that resumed from it;
//! - `"timeline"`: one object per thread and 5 minutes, the shape of a
//!   `--stats-file` line (`time`, `elapsed`, `thread`, `interval`,
//!   `cycles`, `min`, `avg`, `max`, `p99`, `overruns`, and `partial` on a
//!   last, short period), for `rtlat plot --kind timeline`.
//!
//! The final `--json` of a monitor run is the same document. Its threads'
//! `"blocks"` (their runs as blocks of 1 s and more) are read back too, so
//! that a resumed monitor's series, and so its projection, go on from
//! them: the time between the checkpoint and the resumed start is left
//! out, the blocks join up (a block begun before the checkpoint was
//! written is lost with it).
//!
//! `--resume` trusts nothing it reads ([`check_resumable`]): the checkpoint
//! must come from this host and from a run whose samples mean what this
//! run's mean ([`Measured`]: interval, policy, priority, wait, clock,
//! measurement, unit), its counters must fit and agree with its
//! distributions, and every bucket must lie in the distribution's shape.
//! A checkpoint written before `"measured"` existed is resumed with a
//! warning that its host and options could not be checked (resuming after
//! an upgrade is what checkpoints are for); the next one records them.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use rtlat_results::monitor::MonitorMembers;
pub use rtlat_results::monitor::{Gap, Measured, MonitorState, PlanState, ThreadState, VERSION};

use rtlat_core::Nanos;
use rtlat_core::ThreadReport;
use rtlat_core::{ClockKind, CyclicConfig, WaitMode};
use rtlat_core::{CompatStats, PreciseStats};
use rtlat_core::{Distribution, DistributionPlan, SparseCounts};
use rtlat_results::blocks::BlocksDoc;
use rtlat_results::timeline::StatsLine;
use rtlat_stats::blocks::{BlockSeries, DEFAULT_CAPACITY};

use super::tracker::TimelineEntry;
use crate::report::run_clock::Timeline;

/// What the samples of the run `engine` configures mean, on this host.
pub fn measured_of(engine: &CyclicConfig) -> Measured {
    let wait = match engine.wait {
        WaitMode::PosixTimer {
            armed_relative: true,
        } => "posix-timer, armed relative (-r)".to_owned(),
        wait => wait.name().to_owned(),
    };
    Measured {
        host: rtlat_sys::system::kernel_identity().nodename,
        interval_ns: engine.threads.iter().map(|t| t.interval.0).collect(),
        policy: engine
            .threads
            .iter()
            .map(|t| t.policy.name().to_owned())
            .collect(),
        priority: engine.threads.iter().map(|t| t.priority).collect(),
        wait,
        clock: match engine.clock {
            ClockKind::Monotonic => "monotonic",
            ClockKind::Realtime => "realtime",
        }
        .to_owned(),
        measure: engine.measure.name().to_owned(),
        unit: engine.run.resolution.unit_name().to_owned(),
    }
}

/// The largest counter a checkpoint may hold: a run at 1 µs takes 292 000
/// years to count this far, and the sum of two such stays within u64.
pub const MAX_COUNT: u64 = i64::MAX as u64;

/// How far a thread's sample count and the total of its distribution may
/// be apart: a checkpoint written while the threads run reads the counters
/// a moment before it copies the distributions, and the samples of that
/// moment are in the one and not in the other. 1 % or 1000 samples,
/// whichever is more.
fn count_slack(cycles: u64) -> u64 {
    (cycles / 100).max(1000)
}

/// Whether these totals are whole and fit `plan` (see
/// [`check_resumable`]); the problem in words otherwise.
fn check_thread(state: &ThreadState, plan: DistributionPlan) -> Result<(), String> {
    let thread = state.thread;
    let counters = [
        ("cycles", Some(state.cycles)),
        ("overruns", Some(state.overruns)),
        ("smi", state.smi),
        ("below_zero", Some(state.below_zero)),
        ("above_top", Some(state.above_top)),
    ];
    for (name, value) in counters {
        if let Some(value) = value.filter(|&v| v > MAX_COUNT) {
            return Err(format!(
                "thread {thread}: {name} {value} is more than any run counts (at most \
                 {MAX_COUNT})"
            ));
        }
    }
    let places = plan.places();
    let mut total = state
        .below_zero
        .checked_add(state.above_top)
        .and_then(|n| n.checked_add(state.lost_wraps.checked_mul(1 << 32)?));
    let mut previous: Option<u64> = None;
    for &(place, count) in &state.cells {
        if place >= places {
            return Err(format!(
                "thread {thread}: a bucket at place {place}, outside its distribution's \
                 {places} places"
            ));
        }
        if previous.is_some_and(|p| p >= place) {
            return Err(format!(
                "thread {thread}: the buckets are not in order (place {place} after {})",
                previous.unwrap_or_default()
            ));
        }
        previous = Some(place);
        total = total.and_then(|t| t.checked_add(count));
    }
    let Some(total) = total.filter(|&t| t <= MAX_COUNT) else {
        return Err(format!(
            "thread {thread}: its distribution counts more samples than any run counts (at \
             most {MAX_COUNT})"
        ));
    };
    if total.abs_diff(state.cycles) > count_slack(state.cycles) {
        return Err(format!(
            "thread {thread}: cycles {} against {total} samples in its distribution",
            state.cycles
        ));
    }
    if let (Some(min), Some(max)) = (state.min_ns, state.max_ns)
        && min > max
    {
        return Err(format!(
            "thread {thread}: min_ns {min} is above max_ns {max}"
        ));
    }
    if state.cycles > 0 && state.compat_min > state.compat_max {
        return Err(format!(
            "thread {thread}: compat_min {} is above compat_max {}",
            state.compat_min, state.compat_max
        ));
    }
    Ok(())
}

/// Whether the checkpoint `resumed` may be resumed by a run of `ours`
/// with distributions of `plan`: its threads' counters and distributions
/// are whole (every counter at most [`MAX_COUNT`], each thread's samples
/// and distribution total agreeing, every bucket inside `plan`, the
/// timeline's entries of its threads) and, when it records them, its host
/// and options are this run's. The problem in words
/// otherwise.
pub fn check_resumable(
    resumed: &Resumed,
    ours: &Measured,
    plan: DistributionPlan,
) -> Result<(), String> {
    let state = &resumed.state;
    if let Some(theirs) = &state.measured
        && let Some(difference) = theirs.difference(ours)
    {
        return Err(difference);
    }
    state
        .threads
        .iter()
        .try_for_each(|t| check_thread(t, plan))?;
    for entry in &resumed.timeline {
        if entry.thread >= state.threads.len() || entry.index > MAX_COUNT {
            return Err(format!(
                "its timeline has an entry of thread {}, period {}, which its {} threads \
                 cannot have",
                entry.thread,
                entry.index,
                state.threads.len()
            ));
        }
    }
    Ok(())
}

/// The state of `t` (whose distribution must be kept); the time of its
/// maximum through `timeline`.
pub fn thread_state(t: &ThreadReport, timeline: Option<&Timeline>) -> ThreadState {
    let sparse = t
        .distribution
        .as_ref()
        .map(Distribution::to_sparse)
        .unwrap_or_default();
    ThreadState {
        thread: t.index,
        cpu: t.cpu.map_or(-1, |c| c as i64),
        cycles: t.compat.cycles,
        overruns: t.precise.overruns,
        smi: t.smi_count,
        min_ns: t.precise.min.map(|n| n.0),
        max_ns: t.precise.max.map(|n| n.0),
        max_time: crate::report::json::max_time(t, timeline),
        sum_ns: t.precise.sum_ns,
        compat_min: t.compat.min,
        compat_max: t.compat.max,
        compat_act: t.compat.act,
        compat_sum: t.compat.sum,
        below_zero: sparse.below_zero,
        above_top: sparse.above_top,
        lost_wraps: sparse.lost_wraps,
        cells: sparse.cells,
    }
}

/// Adds these totals to `live`, the same thread's figures since the
/// resumed start; the larger maximum keeps its time (the checkpoint's
/// mapped onto this run's clock through `timeline`). The sum of
/// squares is not kept in a checkpoint: the combined figures have none
/// (no standard deviation). Sums saturate rather than wrap (a resumed
/// checkpoint's counters are at most [`MAX_COUNT`], so they never
/// need to).
pub fn add_thread_to(
    state: &ThreadState,
    live: &mut ThreadReport,
    plan: DistributionPlan,
    timeline: Option<&Timeline>,
) {
    if state.max_ns.map(Nanos) > live.precise.max {
        live.max_at = match (state.max_time, timeline) {
            (Some(unix_s), Some(timeline)) => {
                Some(timeline.clock_at((unix_s * 1e9).round() as i128))
            }
            _ => None,
        };
    }
    let compat = live.compat;
    let had = state.cycles > 0;
    let has = compat.cycles > 0;
    live.compat = CompatStats {
        cycles: state.cycles.saturating_add(compat.cycles),
        min: match (had, has) {
            (true, true) => state.compat_min.min(compat.min),
            (true, false) => state.compat_min,
            _ => compat.min,
        },
        max: match (had, has) {
            (true, true) => state.compat_max.max(compat.max),
            (true, false) => state.compat_max,
            _ => compat.max,
        },
        act: if has { compat.act } else { state.compat_act },
        sum: state.compat_sum.saturating_add(compat.sum),
    };
    let precise = live.precise;
    live.precise = PreciseStats {
        min: lesser(state.min_ns.map(Nanos), precise.min),
        max: state.max_ns.map(Nanos).max(precise.max),
        sum_ns: state.sum_ns.saturating_add(precise.sum_ns),
        sum_sq_ns: None,
        overruns: state.overruns.saturating_add(precise.overruns),
    };
    live.smi_count = match (state.smi, live.smi_count) {
        (Some(a), Some(b)) => Some(a.saturating_add(b)),
        (_, b) => b,
    };
    let sparse = SparseCounts {
        below_zero: state.below_zero,
        above_top: state.above_top,
        lost_wraps: state.lost_wraps,
        cells: state.cells.clone(),
    };
    let mut distribution = Distribution::empty(plan);
    distribution.add_sparse(&sparse);
    if let Some(d) = &live.distribution {
        distribution.merge(d);
    }
    distribution.set_extremes(live.precise.min, live.precise.max);
    live.distribution = Some(distribution);
}

fn lesser(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn micros(ns: f64) -> f64 {
    ns.round() / 1000.0
}

/// A timeline entry as written: a `--stats-file` line (the one type of
/// both, in rtlat-results).
pub fn line_of(e: &TimelineEntry) -> StatsLine {
    let us = |n: Option<Nanos>| n.map(|n| micros(n.0 as f64));
    StatsLine {
        time: (e.time_s * 1000.0).round() / 1000.0,
        elapsed: (e.elapsed_s * 1000.0).round() / 1000.0,
        thread: e.thread,
        interval: e.index,
        cycles: e.stretch_cycles,
        min: us(e.min),
        avg: e.mean_ns.map(micros),
        max: us(e.max),
        p99: us(e.p99),
        overruns: e.overruns,
        partial: e.partial,
    }
}

/// A timeline entry read back (the µs figures to the ns).
pub fn entry_of(line: &StatsLine) -> TimelineEntry {
    let ns = |us: Option<f64>| us.map(|u| Nanos((u * 1000.0).round() as i64));
    TimelineEntry {
        thread: line.thread,
        index: line.interval,
        time_s: line.time,
        elapsed_s: line.elapsed,
        stretch_cycles: line.cycles,
        min: ns(line.min),
        mean_ns: line.avg.map(|a| a * 1000.0),
        max: ns(line.max),
        p99: ns(line.p99),
        overruns: line.overruns,
        partial: line.partial,
    }
}

/// Timeline entries serialized as `--stats-file` lines one by one, with
/// no list of them made first.
struct Lines<I>(I);

impl<'e, I: Iterator<Item = &'e TimelineEntry> + Clone> Serialize for Lines<I> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.clone().map(line_of))
    }
}

/// Passes on what a pretty-printed JSON object holds between its braces:
/// its opening `{` is dropped, and its closing `\n}` held back (the last
/// two bytes seen are held until more come) and checked by `finish`.
struct BetweenBraces<'w> {
    inner: &'w mut dyn Write,
    opened: bool,
    held: [u8; 2],
    held_len: usize,
}

impl<'w> BetweenBraces<'w> {
    fn new(inner: &'w mut dyn Write) -> BetweenBraces<'w> {
        BetweenBraces {
            inner,
            opened: false,
            held: [0; 2],
            held_len: 0,
        }
    }

    fn finish(self) -> io::Result<()> {
        if self.opened && self.held[..self.held_len] == *b"\n}" {
            Ok(())
        } else {
            Err(io::Error::other(
                "the monitor's members are not a JSON object",
            ))
        }
    }
}

impl Write for BetweenBraces<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        if !self.opened {
            let Some((&first, rest)) = buf.split_first() else {
                return Ok(());
            };
            if first != b'{' {
                return Err(io::Error::other(
                    "the monitor's members are not a JSON object",
                ));
            }
            self.opened = true;
            buf = rest;
        }
        if buf.len() >= 2 {
            self.inner.write_all(&self.held[..self.held_len])?;
            let (pass, hold) = buf.split_at(buf.len() - 2);
            self.inner.write_all(pass)?;
            self.held.copy_from_slice(hold);
            self.held_len = 2;
            return Ok(());
        }
        let mut joined = [0u8; 3];
        let total = self.held_len + buf.len();
        joined[..self.held_len].copy_from_slice(&self.held[..self.held_len]);
        joined[self.held_len..total].copy_from_slice(buf);
        let keep = total.min(2);
        self.inner.write_all(&joined[..total - keep])?;
        self.held[..keep].copy_from_slice(&joined[total - keep..total]);
        self.held_len = keep;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes `document` (a whole pretty-printed JSON object, as the result
/// writer makes it) with the monitor's members added before its closing
/// brace, streamed to `w` (a checkpoint is written without a copy of it
/// in memory).
pub fn write_with_sections<'e>(
    w: &mut dyn Write,
    document: &[u8],
    state: &MonitorState,
    timeline: impl Iterator<Item = &'e TimelineEntry> + Clone,
) -> io::Result<()> {
    let trimmed = document.trim_ascii_end();
    let Some(body) = trimmed.strip_suffix(b"}") else {
        return Err(io::Error::other("the result document is not a JSON object"));
    };
    w.write_all(body.trim_ascii_end())?;
    w.write_all(b",")?;
    // `{\n  "monitor": ...\n}`: its members, after the comma.
    let mut members = BetweenBraces::new(w);
    serde_json::to_writer_pretty(
        &mut members,
        &MonitorMembers {
            monitor: state,
            timeline: Lines(timeline),
        },
    )?;
    members.finish()?;
    w.write_all(b"\n}\n")
}

/// Writes to `path`, whole or not at all, durably, what `write` writes:
/// the temporary file is synced before the rename, the directory after it
/// (a checkpoint must survive a power cut, not only a crash).
pub fn store(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    rtlat_args::output_file::replace_whole(path, write)?;
    let dir = rtlat_args::output_file::directory_of(path);
    std::fs::File::open(dir)?.sync_all()
}

/// A checkpoint read back for `--resume`.
#[derive(Clone, Debug, PartialEq)]
pub struct Resumed {
    /// Its `"monitor"` member.
    pub state: MonitorState,
    /// Its timeline.
    pub timeline: Vec<TimelineEntry>,
    /// Each thread's `"blocks"` in the result document, in thread order
    /// (`None` for a thread without: a checkpoint of an older rtlat).
    pub blocks: Vec<Option<BlocksDoc>>,
}

impl Resumed {
    /// Each thread's series, checked ([`BlocksDoc::to_series`]), going on
    /// in base intervals of `base_ns` (this run's): the problem in words
    /// when a thread's blocks are broken or are not a power-of-two
    /// multiple of them.
    pub fn series(&self, base_ns: i64) -> Result<Vec<Option<BlockSeries>>, String> {
        self.blocks
            .iter()
            .enumerate()
            .map(|(thread, doc)| {
                let Some(doc) = doc else { return Ok(None) };
                let written = doc
                    .to_series()
                    .map_err(|why| format!("thread {thread}: {why}"))?;
                BlockSeries::resumed(
                    base_ns,
                    DEFAULT_CAPACITY,
                    written.block_ns(),
                    written.blocks().to_vec(),
                )
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "thread {thread}: its {} blocks of {} s do not go on in this run's \
                         intervals of {} s",
                        written.blocks().len(),
                        doc.block_s,
                        base_ns as f64 / 1e9
                    )
                })
            })
            .collect()
    }
}

/// What a checkpoint's result document says of a thread that `--resume`
/// takes: its blocks.
#[derive(Deserialize)]
struct ThreadBlocks {
    #[serde(default)]
    blocks: Option<BlocksDoc>,
}

/// What a checkpoint file holds of use to `--resume`.
#[derive(Deserialize)]
struct CheckpointFile {
    monitor: Option<MonitorState>,
    #[serde(default)]
    timeline: Vec<StatsLine>,
    /// The result document's threads, by number.
    #[serde(default)]
    thread: BTreeMap<String, ThreadBlocks>,
}

/// Reads the checkpoint `text`; the problem in a few words otherwise.
pub fn read(text: &str) -> Result<Resumed, String> {
    let file: CheckpointFile =
        serde_json::from_str(text).map_err(|e| rtlat_results::file::json_problem(&e))?;
    let Some(state) = file.monitor else {
        return Err("no \"monitor\" member: not a checkpoint of rtlat monitor".into());
    };
    if state.checkpoint_version != VERSION {
        return Err(format!(
            "checkpoint version {}, this rtlat reads version {VERSION}",
            state.checkpoint_version
        ));
    }
    // In thread order: the numbers as numbers ("10" after "9").
    let mut threads: Vec<(usize, Option<BlocksDoc>)> = file
        .thread
        .into_iter()
        .filter_map(|(number, t)| Some((number.parse().ok()?, t.blocks)))
        .collect();
    threads.sort_by_key(|(number, _)| *number);
    Ok(Resumed {
        state,
        timeline: file.timeline.iter().map(entry_of).collect(),
        blocks: threads.into_iter().map(|(_, blocks)| blocks).collect(),
    })
}

/// The plan `p`, as a checkpoint holds it.
pub fn plan_state(p: DistributionPlan) -> PlanState {
    PlanState {
        width_ns: p.width_ns,
        exact_buckets: p.exact_buckets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> MonitorState {
        MonitorState {
            checkpoint_version: VERSION,
            written: 1_700_000_100.5,
            first_start: 1_700_000_000.0,
            this_start: 1_700_000_000.0,
            plan: PlanState {
                width_ns: 1000,
                exact_buckets: 2000,
            },
            gaps: vec![],
            measured: None,
            threads: vec![ThreadState {
                thread: 0,
                cpu: 1,
                cycles: 3,
                sum_ns: 12_000,
                cells: vec![(3, 2), (6, 1)],
                ..ThreadState::default()
            }],
        }
    }

    #[test]
    fn sections_go_before_the_closing_brace_and_read_back() {
        let doc = b"{\n  \"thread\": {\n    \"0\": {}\n  }\n}\n";
        let entry = TimelineEntry {
            thread: 0,
            index: 4,
            time_s: 1_700_000_300.0,
            elapsed_s: 300.0,
            stretch_cycles: 60_000,
            min: Some(Nanos(1_234)),
            mean_ns: Some(2_345.6),
            max: Some(Nanos(45_678)),
            p99: Some(Nanos(5_000)),
            overruns: 0,
            partial: false,
        };
        let mut out = Vec::new();
        write_with_sections(&mut out, doc, &state(), [entry.clone()].iter()).unwrap();
        let text = String::from_utf8(out).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).expect(&text);
        assert!(value["thread"]["0"].is_object());
        assert_eq!(value["timeline"][0]["max"], 45.678);
        assert_eq!(value["timeline"][0]["interval"], 4);
        let back = read(&text).unwrap();
        assert_eq!(back.state, state());
        assert_eq!(back.timeline[0].max, entry.max);
        assert_eq!(back.timeline[0].p99, entry.p99);
        // The members are streamed as they would be cut out of the whole
        // pretty-printed object: the same bytes.
        #[derive(Serialize)]
        struct Whole {
            monitor: MonitorState,
            timeline: Vec<StatsLine>,
        }
        let whole = serde_json::to_string_pretty(&Whole {
            monitor: state(),
            timeline: vec![line_of(&entry)],
        })
        .unwrap();
        let members = whole
            .strip_prefix('{')
            .unwrap()
            .strip_suffix("\n}")
            .unwrap();
        assert_eq!(
            text,
            format!("{{\n  \"thread\": {{\n    \"0\": {{}}\n  }},{members}\n}}\n")
        );
    }

    /// Whatever pieces the serializer writes in, what lies between the
    /// braces comes through whole, and anything but an object is refused.
    #[test]
    fn between_braces_drops_the_braces_of_any_split() {
        let object = b"{\n  \"a\": [1, 2],\n  \"b\": {}\n}";
        for piece in 1..=object.len() {
            let mut out = Vec::new();
            let mut members = BetweenBraces::new(&mut out);
            for chunk in object.chunks(piece) {
                members.write_all(chunk).unwrap();
            }
            members.finish().unwrap();
            assert_eq!(out, &object[1..object.len() - 2], "pieces of {piece}");
        }
        for not_an_object in [&b"[1]"[..], b"{\"a\": 1}", b"", b"{"] {
            let mut out = Vec::new();
            let mut members = BetweenBraces::new(&mut out);
            let written = members.write_all(not_an_object);
            assert!(
                written.is_err() || members.finish().is_err(),
                "{not_an_object:?}"
            );
        }
    }

    fn measured() -> Measured {
        Measured {
            host: "vm".into(),
            interval_ns: vec![1_000_000],
            policy: vec!["fifo".into()],
            priority: vec![95],
            wait: "abs".into(),
            clock: "monotonic".into(),
            measure: "clock".into(),
            unit: "us".into(),
        }
    }

    fn plan() -> DistributionPlan {
        DistributionPlan::new(1000, Nanos(2_000_000)).unwrap()
    }

    fn resumable(state: MonitorState) -> Result<(), String> {
        let resumed = Resumed {
            state,
            timeline: vec![],
            blocks: vec![],
        };
        check_resumable(&resumed, &measured(), plan())
    }

    #[test]
    fn a_checkpoint_of_another_host_or_other_options_is_refused() {
        let mut ok = state();
        ok.measured = Some(measured());
        resumable(ok.clone()).unwrap();
        // An older checkpoint says nothing: resumed (with a warning).
        resumable(state()).unwrap();
        type Change = fn(&mut Measured);
        let changes: [(Change, &str); 6] = [
            (
                |m| m.host = "elsewhere".into(),
                "host 'elsewhere', this is 'vm'",
            ),
            (
                |m| m.interval_ns = vec![500_000],
                "-i/--interval (or -d) 500 us, this run's with 1000 us",
            ),
            (
                |m| m.priority = vec![80],
                "-p/--priority 80, this run's with 95",
            ),
            (
                |m| m.policy = vec!["rr".into()],
                "--policy rr, this run's with fifo",
            ),
            (|m| m.wait = "rel".into(), "--wait rel, this run's with abs"),
            (|m| m.unit = "ns".into(), "-N/--nsecs (the unit) ns"),
        ];
        for (change, want) in changes {
            let mut theirs = ok.clone();
            change(theirs.measured.as_mut().unwrap());
            let why = resumable(theirs).unwrap_err();
            assert!(why.contains(want), "{why}\nwanted: {want}");
        }
    }

    #[test]
    fn counters_and_buckets_that_do_not_add_up_are_refused() {
        let places = plan().places();
        type Spoil = fn(&mut ThreadState, u64);
        let cases: [(Spoil, &str); 6] = [
            (
                |t, places| t.cells = vec![(3, 2), (places, 1)],
                "outside its distribution's",
            ),
            (|t, _| t.cycles = 5991, "cycles 5991 against 3 samples"),
            (|t, _| t.cells = vec![(6, 1), (3, 2)], "not in order"),
            (
                |t, _| {
                    t.cycles = u64::MAX;
                    t.cells = vec![(3, u64::MAX)];
                },
                "cycles 18446744073709551615 is more than any run counts",
            ),
            (
                |t, _| t.overruns = u64::MAX,
                "overruns 18446744073709551615",
            ),
            (
                |t, _| t.cells = vec![(3, u64::MAX), (6, 2)],
                "counts more samples than any run",
            ),
        ];
        for (change, want) in cases {
            let mut bad = state();
            change(&mut bad.threads[0], places);
            let why = resumable(bad).unwrap_err();
            assert!(why.contains(want), "{why}\nwanted: {want}");
        }
        // A checkpoint written while the threads ran: a few samples apart.
        let mut running = state();
        running.threads[0].cycles = 5;
        resumable(running).unwrap();
    }

    #[test]
    fn adding_a_checkpoint_saturates_rather_than_wraps() {
        let base = ThreadState {
            cycles: MAX_COUNT,
            overruns: MAX_COUNT,
            compat_sum: i64::MAX,
            ..ThreadState::default()
        };
        let mut live = crate::report::test_support::ThreadFixture::new(0).build();
        live.compat.cycles = u64::MAX;
        live.compat.sum = 5;
        live.precise.overruns = u64::MAX;
        add_thread_to(&base, &mut live, plan(), None);
        assert_eq!(live.compat.cycles, u64::MAX);
        assert_eq!(live.compat.sum, i64::MAX);
        assert_eq!(live.precise.overruns, u64::MAX);
    }

    #[test]
    fn what_is_not_a_checkpoint_says_so() {
        assert!(
            read("{\"thread\": {}}")
                .unwrap_err()
                .contains("not a checkpoint")
        );
        assert!(read("{").is_err());
        let mut old = state();
        old.checkpoint_version = 99;
        let text = format!("{{\"monitor\": {}}}", serde_json::to_string(&old).unwrap());
        assert!(read(&text).unwrap_err().contains("version 99"));
    }
}
