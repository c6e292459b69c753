//! What an IPC tool run does in either mode ([`super::threads`],
//! [`super::fork`]): `mlockall` (as the C tools always lock memory) and
//! the `-b` trace files, the audit before the first sample, the live
//! display every 50 ms until the run ends (loops, `-D`, `-b`, a signal, a
//! closed stdout), then the final outputs: the `-q` frame or the cursor
//! move below the last live frame, the JSON document, the histogram.

use std::time::{Duration, Instant};

use rtlat_audit::counters::SystemDisturbances;
use rtlat_core::TimeSourceKind;
use rtlat_core::ipc::ETIMEDOUT;
use rtlat_core::ipc::PairRunning;
use rtlat_core::ipc::{PairConfig, Side};
use rtlat_core::ipc::{PairReport, PairResult};
use rtlat_core::{EndReason, ThreadError, ThreadStep};
use rtlat_sys::tracefs::{self, TraceControl};

use super::PairTool;
use super::output::{
    ShownCpus, receivers_as_run_report, write_frame, write_json, write_leave, write_rewind,
};
use super::settings::IpcSettings;
use crate::host::Host;
use crate::load::beside::{LoadBeside, LoadOutcome};
use crate::output::{Stdout, end_run};
use crate::report::RunMeta;
use crate::report::formats::{self, Asked, Finished, HistogramAsked, ToolOutputs};
use crate::report::json::Extras;
use crate::report::verdict;
use crate::rtsetup::{io_strerror, lock_memory_because};
use crate::run_audit;
use crate::signals::SignalFlags;
use rtlat_args::stdio::{note, tell};

/// How often the live display is redrawn (the C tools: 50 ms).
const FRAME_PERIOD: Duration = Duration::from_millis(50);

/// A run the display can watch: threads mode or fork mode.
pub trait LiveRun {
    /// The pairs as they stand.
    fn snapshot(&self) -> Vec<PairResult>;
    /// Whether some side has ended by itself (loops, break, failure).
    fn reached_end(&self) -> bool;
}

impl LiveRun for PairRunning {
    fn snapshot(&self) -> Vec<PairResult> {
        PairRunning::snapshot(self)
    }

    fn reached_end(&self) -> bool {
        PairRunning::reached_end(self)
    }
}

/// `mlockall(MCL_CURRENT | MCL_FUTURE)`. A real-time run must have it; a
/// SCHED_OTHER run (whose figures are not real-time latencies anyway) goes
/// on without it after a note, since an unprivileged user's lock limit is
/// often smaller than the process (C refuses to run at all).
pub fn lock_memory(config: &PairConfig) -> anyhow::Result<()> {
    match lock_memory_because("", "") {
        Err(e) if !config.needs_realtime() => {
            tell!("note: {e}; the SCHED_OTHER run goes on with its memory unlocked");
            Ok(())
        }
        locked => locked,
    }
}

/// The tracefs files a `-b` break stops the trace through.
pub fn open_trace_files(config: &PairConfig) -> Option<TraceControl> {
    config.breaktrace?;
    let Some(dir) = tracefs::tracing_dir() else {
        note!(
            "WARN: tracefs is not mounted (/sys/kernel/tracing): -b will stop the run but \
             cannot stop the trace"
        );
        return None;
    };
    match TraceControl::open(&dir, false) {
        Ok(trace) => Some(trace),
        Err(e) => {
            note!(
                "WARN: cannot open {}/tracing_on: {}; -b will stop the run but cannot stop \
                 the trace",
                dir.display(),
                io_strerror(&e)
            );
            None
        }
    }
}

/// Where the CPU a side last ran on is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcView {
    /// Sides are threads of this process: `/proc/self/task/<tid>/stat`.
    Threads,
    /// Sides are processes: `/proc/<pid>/stat`.
    Processes,
}

/// The CPU each side is shown on: its pinned CPU, else the one it last ran
/// on, read from /proc by the main thread (the C sides call
/// `sched_getcpu` in their loop; ours do not need to).
pub struct CpuTracker {
    pinned: Vec<Option<usize>>,
    shown: Vec<ShownCpus>,
    view: ProcView,
    synthetic: bool,
}

impl CpuTracker {
    /// A tracker for the pairs of `config`.
    pub fn new(config: &PairConfig, view: ProcView, synthetic: bool) -> CpuTracker {
        let pinned: Vec<Option<usize>> = config.pairs.iter().map(|p| p.cpu).collect();
        let shown = pinned
            .iter()
            .map(|cpu| {
                let c = cpu.map_or(if synthetic { 0 } else { -1 }, |c| c as i64);
                (c, c)
            })
            .collect();
        CpuTracker {
            pinned,
            shown,
            view,
            synthetic,
        }
    }

    /// Reads the CPUs of the unpinned sides of `pairs` again.
    pub fn refresh(&mut self, pairs: &[PairResult]) {
        if self.synthetic {
            return;
        }
        for (i, p) in pairs.iter().enumerate() {
            if self.pinned[i].is_some() {
                continue;
            }
            if let Some(cpu) = last_cpu(self.view, p.receiver.id) {
                self.shown[i].0 = cpu;
            }
            if let Some(cpu) = last_cpu(self.view, p.sender.id) {
                self.shown[i].1 = cpu;
            }
        }
    }

    /// The CPUs to show, per pair.
    pub fn shown(&self) -> &[ShownCpus] {
        &self.shown
    }
}

/// Field 39 (`processor`) of a task's `stat` file.
fn last_cpu(view: ProcView, id: i32) -> Option<i64> {
    if id <= 0 {
        return None;
    }
    let path = match view {
        ProcView::Threads => format!("/proc/self/task/{id}/stat"),
        ProcView::Processes => format!("/proc/{id}/stat"),
    };
    let text = std::fs::read_to_string(path).ok()?;
    let after_name = &text[text.rfind(')')? + 1..];
    // Fields from 3 (state) on; `processor` is field 39.
    after_name.split_whitespace().nth(39 - 3)?.parse().ok()
}

/// Shows the live frames until the run ends by itself or is stopped.
/// Returns why the caller stopped it (signal, closed stdout, a failed
/// `--load`: `Stopped`; `-D`: `Duration`), or `None` when a side ended it.
pub fn display(
    settings: &IpcSettings,
    run: &dyn LiveRun,
    signals: &SignalFlags,
    cpus: &mut CpuTracker,
    out: &mut Stdout,
    load: &mut LoadBeside<'_>,
) -> anyhow::Result<Option<EndReason>> {
    let synthetic = matches!(settings.engine.run.source, TimeSourceKind::Synthetic { .. });
    let npairs = settings.engine.pairs.len();
    let deadline = match (synthetic, settings.engine.run.duration) {
        (false, Some(d)) => d.to_duration().map(|d| Instant::now() + d),
        _ => None,
    };
    let mut shown_counts: Option<Vec<u64>> = None;
    loop {
        load.drive();
        let external = if signals.stop_requested() || load.failed() {
            Some(EndReason::Stopped)
        } else if deadline.is_some_and(|d| Instant::now() >= d) {
            Some(EndReason::Duration)
        } else {
            None
        };
        let over = external.is_some() || run.reached_end();
        // Read every time, not only at the end: a side that has ended may
        // have left /proc already, and its last CPU is the one to show.
        let pairs = run.snapshot();
        cpus.refresh(&pairs);
        if !settings.quiet {
            let counts: Vec<u64> = pairs.iter().map(|p| p.receiver.compat.cycles).collect();
            let print = match settings.tool {
                // pmqtest: once every receiver has two samples, and then
                // only when something changed (or at the end).
                PairTool::Pmqtest => {
                    counts.iter().min().is_some_and(|&m| m > 1)
                        && (over || shown_counts.as_ref() != Some(&counts))
                }
                _ => counts[0] > 1 || over,
            };
            if print {
                out.emit(|w| {
                    write_frame(w, settings.tool, &pairs, cpus.shown())?;
                    write_rewind(w, npairs)
                });
                out.flush();
                shown_counts = Some(counts);
            }
            if out.is_closed() {
                return Ok(Some(EndReason::Stopped));
            }
        }
        if over {
            return Ok(external);
        }
        let pause = deadline.map_or(FRAME_PERIOD, |d| {
            FRAME_PERIOD.min(d.saturating_duration_since(Instant::now()))
        });
        std::thread::sleep(pause);
    }
}

/// What went on beside the pairs during a run.
pub struct Beside {
    /// The load, once stopped.
    pub load: LoadOutcome,
    /// What the system-wide counters saw (`None` for a synthetic run).
    pub system: Option<SystemDisturbances>,
}

/// What the JSON envelope of a run says besides its figures.
#[derive(Debug)]
pub struct RunFacts {
    /// Where the host facts come from.
    pub host: Host,
    /// When the run started, formatted for the JSON.
    pub start_time: String,
    /// The audit made before the first sample.
    pub audit: Option<rtlat_audit::Audit>,
}

/// The audit of a pair run, made before its first sample when its JSON,
/// its verdict or its gates need it. It judges the pairs' CPUs, their
/// highest real-time priority and the shortest interval.
pub fn audit_pair_run(settings: &IpcSettings, host: Host) -> Option<rtlat_audit::Audit> {
    let engine = &settings.engine;
    let request = run_audit::request(
        engine.pairs.iter().map(|p| p.cpu),
        engine.needs_realtime().then(|| engine.max_priority()),
        engine.pairs.iter().map(|p| p.interval).min(),
    );
    run_audit::audit_run(
        host,
        settings.json.is_some() || settings.verdict.is_some(),
        settings.gates.as_ref(),
        &request,
    )
}

/// The final outputs and the exit status.
pub fn finish(
    settings: &IpcSettings,
    report: &PairReport,
    cpus: &mut CpuTracker,
    facts: RunFacts,
    out: &mut Stdout,
    beside: Beside,
) -> anyhow::Result<u8> {
    let Beside { load, system } = beside;
    let npairs = report.pairs.len();
    if settings.quiet {
        out.emit(|w| write_frame(w, settings.tool, &report.pairs, cpus.shown()));
    } else {
        out.emit(|w| write_leave(w, npairs));
    }
    let failure = report
        .first_error()
        .map(|(pair, side, error)| describe_error(settings, pair, side, error))
        .or_else(|| load.failure.clone());
    let status: u8 = u8::from(failure.is_some());
    let mut meta = facts.host.run_meta(
        &settings.cmdline,
        settings.rt_tests,
        facts.start_time,
        status,
        facts.audit,
    );
    meta.projection = settings.projection.request();
    let load_results = load.results(settings.load.as_ref(), Some(load.run_time));
    // The receivers as a cyclictest report: for the verdict, the
    // histogram, the load lines and the gates.
    let receivers = receivers_as_run_report(report, cpus.shown());
    let verdict = verdict::judge(&receivers, &meta, system.as_ref());
    let extras = Extras {
        load: load_results.as_ref(),
        verdict: &verdict,
        explain: None,
        timeline: None,
    };
    let asked = Asked {
        json: settings.json.as_ref(),
        histogram: settings
            .histogram
            .as_ref()
            .map(|target| HistogramAsked::to(target).in_dialect(settings.rt_tests)),
        verdict: settings.verdict,
        subject: "Pair",
        ..Asked::default()
    };
    let own = Own {
        tool: settings.tool,
        report,
        cpus: cpus.shown(),
        meta: &meta,
        extras,
    };
    // Every output is tried, whichever failed before: nothing is lost to
    // another output's error (the first one is reported).
    let finished = Finished {
        report: &receivers,
        extras,
        asked: &asked,
        tool: &own,
    };
    let written = formats::write_all(&finished, out);
    let status = end_run(out, written, failure, status)?;
    crate::gate::apply(
        settings.gates.as_ref(),
        &receivers,
        &verdict,
        "pair",
        settings.tool.name(),
        0.0,
        status,
    )
}

/// What the IPC tools write their own way: their JSON document, with a
/// sender and a receiver per pair.
struct Own<'a> {
    tool: PairTool,
    report: &'a PairReport,
    cpus: &'a [ShownCpus],
    meta: &'a RunMeta,
    extras: Extras<'a, 'a>,
}

impl ToolOutputs for Own<'_> {
    fn write_document(&self, mut w: &mut dyn std::io::Write) -> std::io::Result<()> {
        write_json(
            &mut w,
            self.tool,
            self.report,
            self.cpus,
            self.meta,
            self.extras,
        )
    }
}

/// One line saying what went wrong with a side.
pub fn describe_error(
    settings: &IpcSettings,
    pair: usize,
    side: Side,
    error: ThreadError,
) -> String {
    let errno = rtlat_sys::strerror(error.errno);
    let plan = &settings.engine.pairs[pair];
    let who = format!("pair {pair}'s {}", side.name());
    match error.step {
        ThreadStep::Affinity => format!(
            "cannot pin {who} to CPU {}: {errno}",
            plan.cpu.map_or("?".to_string(), |c| c.to_string())
        ),
        ThreadStep::Scheduler => format!(
            "cannot run {who} under SCHED_{} priority {}: {errno}",
            plan.policy.name().to_uppercase(),
            plan.priority
        ),
        ThreadStep::Wait if error.errno == ETIMEDOUT && settings.tool == PairTool::Pmqtest => {
            let secs = settings
                .engine
                .mq_timeouts
                .map_or(0, |t| t.receive.as_nanos() / 1_000_000_000);
            format!(
                "{who} timed out after {secs} s waiting for the test message (-T; add -f to \
                 count time-outs instead)"
            )
        }
        _ => {
            let call = match (settings.tool, side) {
                (PairTool::Svsematest, _) => "semop",
                (PairTool::Pmqtest, Side::Receiver) => "receiving the test message",
                (PairTool::Pmqtest, Side::Sender) => "sending or receiving a message",
                (PairTool::Ptsematest, _) => "futex wait or wake",
                (PairTool::Sigwaittest, _) => "sending or waiting for a signal",
            };
            format!("{who} failed ({call}): {errno}")
        }
    }
}
