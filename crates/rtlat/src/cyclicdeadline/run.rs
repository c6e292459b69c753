//! Carries out one `rtlat cyclicdeadline` run: the HRTICK check (a warning
//! where C refuses), C's set-up lines, the memory lock, the signal
//! handlers, the `--load` beside the threads, the deadline threads, the
//! live display (every thread's `T:` line redrawn every 10 ms) until the
//! run ends, then the `-q` lines, the `-b` lines, the JSON, the `# load`
//! and `--verdict` lines and the `--fail-if` gates. Every way a run ends
//! (duration, `-b`, a signal, a closed stdout, a failed load) goes through
//! the same final outputs; a thread that cannot take SCHED_DEADLINE ends
//! the run before anything is measured, with one line saying why and how
//! to fix it.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use crate::rtsetup::setattr_cause;
use anyhow::{Context, bail};
use rtlat_core::deadline::{DeadlineEngine, DeadlinePlan, DeadlineRunning};
use rtlat_core::{ClockInstant, RunReport, ThreadError, ThreadStep};
use rtlat_sys::clock::Clock;
use rtlat_sys::tracefs::{self, TraceControl};

use super::output::{write_json, write_status_line, write_thread_line};
use super::settings::Settings;
use crate::cli::cyclicdeadline::HRTICK_RUNTIME_US;
use crate::host::Host;
use crate::live::after_frame;
use crate::load::beside::LoadBeside;
use crate::output::{Stdout, end_run};
use crate::report::RunMeta;
use crate::report::formats::{self, Asked, Finished, HistogramAsked, Place, ToolOutputs};
use crate::report::json::Extras;
use crate::report::verdict::{self, SystemWatch};
use crate::run_audit;
use crate::signals::SignalFlags;
use rtlat_args::stdio::note;
use rtlat_core::RtTests;

/// How often the live display is redrawn (C: `usleep(10000)`).
const FRAME_PERIOD: Duration = Duration::from_millis(10);

/// Runs the deadline threads of `settings`; returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let host = Host::Real;
    let start_time = host.timestamp();
    let plans = &settings.config.threads;
    let mut out = Stdout::new(false);
    hrtick_check(plans);
    let audit = run_audit::audit_run(
        host,
        settings.json.is_some() || settings.verdict.is_some(),
        settings.gates.as_ref(),
        &run_audit::request(
            plans.iter().map(|_| None),
            None,
            plans.first().map(|p| p.period),
        ),
    );
    if settings.using_all_cpus {
        out.emit(|w| w.write_all(b"Using all CPUS\n"));
    }
    for plan in plans {
        let tested = test_record_us();
        let runtime_us = plan.runtime.as_nanos() / 1000;
        if settings.info_lines {
            out.emit(|w| {
                writeln!(
                    w,
                    "interval: {runtime_us}:{}",
                    plan.deadline.as_nanos() / 1000
                )
            });
        }
        if tested > runtime_us {
            out.flush();
            bail!(
                "recording one job took {tested} µs, more than thread {}'s runtime of \
                 {runtime_us} µs: use a longer -i",
                plan.index
            );
        }
        if settings.info_lines {
            out.emit(|w| writeln!(w, "  Tested at {tested}us of {runtime_us}us"));
        }
    }
    out.flush();
    let trace = match settings.config.break_threshold {
        Some(_) => open_trace(settings.tracemark),
        None => None,
    };
    let engine = DeadlineEngine::new(settings.config.clone(), trace)
        .context("preparing the deadline threads")?;
    // C: mlockall(MCL_CURRENT|MCL_FUTURE), a warning if it fails.
    if let Err(e) = rtlat_sys::memory::lock_all() {
        note!(
            "WARN: mlockall failed: {}; the run goes on without locked memory",
            rtlat_sys::strerror(e.raw_os_error())
        );
    }
    let signals = SignalFlags::install()?;
    let mut load = LoadBeside::start(settings.load.as_ref())?;
    let system = SystemWatch::start(true, plans.iter().map(|_| None));
    let running = engine.start().context("starting the deadline threads")?;
    let timeline = host.timeline(Clock::Monotonic, ClockInstant(0));
    load.set_origin(Instant::now());
    if let Some((index, error)) = running.setup_error() {
        let _ = running.finish(false);
        let _ = load.stop();
        bail!(describe_thread_error(index, error, &plans[index]));
    }
    let tids = running.tids();
    out.emit(|w| {
        if !settings.debug_lines {
            return Ok(());
        }
        for tid in &tids {
            writeln!(w, "deadline thread {tid}")?;
        }
        for (tid, plan) in tids.iter().zip(plans) {
            writeln!(
                w,
                "thread[{tid}] runtime={}us deadline={}us",
                plan.runtime.as_nanos() / 1000,
                plan.deadline.as_nanos() / 1000
            )?;
        }
        writeln!(w, "main thread {}", std::process::id())
    });

    let external_stop = until_end(&running, settings, &signals, &mut out, &mut load);
    let run_time = running.started().elapsed();
    let report = running.finish(external_stop);
    let system = system.finish();
    let load = load.stop();
    if !settings.quiet {
        // C: the cursor back below the last frame.
        let n = plans.len() + 2;
        out.emit(|w| write!(w, "\x1b[{n}B"));
    }

    let thread_failure = report
        .threads
        .iter()
        .find_map(|t| t.error.map(|e| (t.index, e)));
    let status: u8 = u8::from(thread_failure.is_some() || load.failure.is_some());
    let mut meta = host.run_meta(
        &settings.cmdline,
        settings.rt_tests,
        start_time,
        status,
        audit,
    );
    meta.projection = settings.projection.request();
    let verdict = verdict::judge(&report, &meta, system.as_ref());
    let load_results = load.results(settings.load.as_ref(), Some(run_time));
    let extras = Extras {
        load: load_results.as_ref(),
        verdict: &verdict,
        explain: None,
        timeline: Some(timeline),
    };
    let written = write_final_outputs(settings, &report, &meta, &extras, &mut out);
    let failure = thread_failure
        .map(|(index, error)| describe_thread_error(index, error, &plans[index]))
        .or_else(|| load.failure.clone());
    let status = end_run(&mut out, written, failure, status)?;
    crate::gate::apply(
        settings.gates.as_ref(),
        &report,
        &verdict,
        "thread",
        "cyclicdeadline",
        run_time.as_secs_f64(),
        status,
    )
}

/// The live display until the run ends; whether the stop came from
/// outside (a signal, the duration, a closed stdout, a failed load).
fn until_end(
    running: &DeadlineRunning,
    settings: &Settings,
    signals: &SignalFlags,
    out: &mut Stdout,
    load: &mut LoadBeside<'_>,
) -> bool {
    let n = settings.config.threads.len();
    let end_at = settings
        .duration
        .map(|d| running.started() + Duration::from_nanos(d.as_nanos() as u64));
    loop {
        let ended = running.reached_end();
        if !settings.quiet {
            let shared = running.shared();
            out.emit(|w| {
                for (plan, channel) in settings.config.threads.iter().zip(shared.channels.iter()) {
                    let slot = &channel.slot;
                    write_status_line(
                        w,
                        plan.index,
                        slot.tid(),
                        plan.deadline.as_nanos() / 1000,
                        &slot.compat(),
                    )?;
                }
                Ok(())
            });
        }
        if let Some(stopped) = after_frame(out, ended) {
            return stopped;
        }
        std::thread::sleep(FRAME_PERIOD);
        load.drive();
        if signals.stop_requested() || load.failed() || end_at.is_some_and(|t| Instant::now() >= t)
        {
            return true;
        }
        if !settings.quiet {
            out.emit(|w| write!(w, "\x1b[{n}A"));
        }
    }
}

/// How long recording one job takes, µs (C's "Tested at": one call of its
/// measuring step, timed).
fn test_record_us() -> i64 {
    let slot = rtlat_core::ThreadSlot::default();
    let mut writer = rtlat_core::SlotWriter::new(&slot);
    let now = || {
        let t = rtlat_sys::clock::now(Clock::Monotonic);
        t.tv_sec * 1_000_000_000 + t.tv_nsec
    };
    let start = now();
    let late = now() - start;
    writer.record(late / 1000, late, || start);
    (now() - start) / 1000
}

/// C refuses a runtime under 2 ms unless it can turn HRTICK on in
/// debugfs (and leaves it on). rtlat changes no kernel setting: it says
/// what the feature would change and runs.
pub(crate) fn hrtick_check(plans: &[DeadlinePlan]) {
    let Some(short) = plans
        .iter()
        .find(|p| p.runtime.as_nanos() < HRTICK_RUNTIME_US as i64 * 1000)
    else {
        return;
    };
    let state = hrtick_state();
    let (feature, on) = match &state {
        Some((feature, on)) => (feature.as_str(), *on),
        None => ("HRTICK_DL", false),
    };
    if on {
        return;
    }
    let why = match state {
        Some(_) => format!("{feature} is off in the kernel's sched features"),
        None => {
            "debugfs is not mounted, so the scheduler's HRTICK features cannot be read".to_owned()
        }
    };
    note!(
        "WARN: thread {}'s runtime ({} µs) is under 2 ms and {why}: the kernel may let a job \
         overrun its runtime by up to a tick before throttling it (C cyclicdeadline refuses to \
         run here); to enable it: mount -t debugfs none /sys/kernel/debug; echo {feature} > \
         /sys/kernel/debug/sched/features",
        short.index,
        short.runtime.as_nanos() / 1000
    );
}

/// The feature that sharpens deadline throttling and whether it is on:
/// `HRTICK_DL` (Linux 5.10 and later), else `HRTICK`; `None` where debugfs
/// is not mounted or the features cannot be read.
fn hrtick_state() -> Option<(String, bool)> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    let debugfs = mounts.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (_, dir, kind) = (f.next()?, f.next()?, f.next()?);
        (kind == "debugfs").then(|| dir.to_owned())
    })?;
    let text = std::fs::read_to_string(format!("{debugfs}/sched/features"))
        .or_else(|_| std::fs::read_to_string(format!("{debugfs}/sched_features")))
        .ok()?;
    let words: Vec<&str> = text.split_whitespace().collect();
    for feature in ["HRTICK_DL", "HRTICK"] {
        if words.contains(&feature) {
            return Some((feature.to_owned(), true));
        }
        if words.contains(&format!("NO_{feature}").as_str()) {
            return Some((feature.to_owned(), false));
        }
    }
    None
}

/// The final outputs: with `-q` every thread's `T:` line, the `-b` lines,
/// then the JSON, the `.hgrm` files, the `# load` and `--verdict` lines.
fn write_final_outputs(
    settings: &Settings,
    report: &RunReport,
    meta: &RunMeta,
    extras: &Extras<'_, '_>,
    out: &mut Stdout,
) -> anyhow::Result<()> {
    // cyclicdeadline's histogram came with 2.7's block (no empty
    // buckets, no `# Total:`): that block in every dialect.
    let dialect = settings.rt_tests.max(RtTests::V2_10);
    let asked = Asked {
        json: settings.json.as_ref(),
        histogram: settings
            .histogram
            .as_ref()
            .map(|target| HistogramAsked::to(target).in_dialect(dialect)),
        hgrm: settings.hgrm.as_ref().map(|h| h.asked()),
        verdict: settings.verdict,
        subject: "Thread",
        ..Asked::default()
    };
    let finished = Finished {
        report,
        extras: *extras,
        asked: &asked,
        tool: &Own {
            report,
            meta,
            extras,
            // C 2.7: with -q and --histogram the block replaces the T: lines.
            quiet: settings.quiet && settings.histogram.is_none(),
        },
    };
    formats::write_all(&finished, out)
}

struct Own<'a> {
    report: &'a RunReport,
    meta: &'a RunMeta,
    extras: &'a Extras<'a, 'a>,
    quiet: bool,
}

impl ToolOutputs for Own<'_> {
    fn write_document(&self, mut w: &mut dyn Write) -> io::Result<()> {
        write_json(&mut w, self.report, self.meta, self.extras)
    }

    fn write_text(&self, place: Place, out: &mut Stdout) -> anyhow::Result<()> {
        if place == Place::First {
            out.emit(|w| {
                if self.quiet {
                    for t in &self.report.threads {
                        write_thread_line(w, t)?;
                    }
                }
                if let Some(b) = self.report.break_info {
                    writeln!(w, "# Break thread: {}", b.tid)?;
                    writeln!(w, "# Break value: {}", b.value)?;
                }
                Ok(())
            });
        }
        Ok(())
    }
}

/// The trace a `-b` break stops (and marks, with `--tracemark`).
fn open_trace(marker: bool) -> Option<TraceControl> {
    let dir = tracefs::tracing_dir()?;
    match TraceControl::open(&dir, marker) {
        Ok(control) => Some(control),
        Err(e) => {
            note!(
                "WARN: -b: cannot open the kernel trace in {}: {}; it will not be stopped",
                dir.display(),
                rtlat_sys::io_strerror(&e)
            );
            None
        }
    }
}

/// One line: which thread could not take SCHED_DEADLINE, why, and what to
/// do about it.
fn describe_thread_error(index: usize, error: ThreadError, plan: &DeadlinePlan) -> String {
    if error.step != ThreadStep::Scheduler {
        return format!(
            "deadline thread {index}: set-up failed: {}",
            rtlat_sys::strerror(error.errno)
        );
    }
    describe_setattr_error(index, error.errno, plan)
}

/// One line: which thread could not take SCHED_DEADLINE (sched_setattr's
/// `errno`), why, and what to do about it.
pub(crate) fn describe_setattr_error(index: usize, errno: i32, plan: &DeadlinePlan) -> String {
    let why = rtlat_sys::strerror(errno);
    let (runtime, deadline) = (
        plan.runtime.as_nanos() / 1000,
        plan.deadline.as_nanos() / 1000,
    );
    let who = format!(
        "deadline thread {index} (runtime {runtime} µs, deadline and period {deadline} µs)"
    );
    let allowed = rtlat_sys::affinity::allowed_cpus().unwrap_or_default();
    let cause = setattr_cause(errno, &allowed, "use fewer threads (-t)", "change -i or -t");
    format!("{who}: cannot take SCHED_DEADLINE: {why}: {cause}")
}
