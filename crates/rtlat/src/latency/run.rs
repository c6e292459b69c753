//! Carries out one `rtlat latency` run: privilege check, the audit of
//! the machine (for `--json`, `--verdict` and a verdict gate), the trace
//! files of `-f`, `mlockall` (Xenomai always locks), the measuring thread,
//! then one `RTD|` line per second read from the thread's sealed intervals
//! (each also a block of 1 s: [`crate::cyclictest::blocks`])
//! until `-T` or a signal ends the run, and finally the JSON, the
//! histograms, the gnuplot file, the `RTS|` summary, the load lines and
//! the `--verdict` lines. Every way a run ends goes through the same final
//! outputs.

use std::io::{self, Write};
use std::time::Duration;

use anyhow::{Context, bail};
use rtlat_core::Nanos;
use rtlat_core::SignedHistogram;
use rtlat_core::{Engine, Running};
use rtlat_core::{IntervalReader, IntervalRecord};
use rtlat_core::{RunReport, ThreadError, ThreadStep};
use rtlat_core::{SchedPolicy, TimeSourceKind};
use rtlat_sys::tracefs::{self, TraceControl};

use super::gnuplot::write_gnuplot;
use super::output::{
    HistogramReport, Kind, Moments, SecondFigures, Summary, write_banner, write_data_line,
    write_header, write_histograms, write_summary,
};
use super::settings::Settings;
use super::settings::WARMUP;
use crate::cyclictest::blocks::BlockCollector;
use crate::explain::{ExplainSession, start_explain_reader};
use crate::host::Host;
use crate::live::after_frame;
use crate::load::beside::LoadBeside;
use crate::output::{OutputTarget, Stdout, end_run, write_to};
use crate::report::RunMeta;
use crate::report::formats::{self, Asked, Finished, Place, ToolOutputs};
use crate::report::json::{Extras, write_json_with};
use crate::report::sample_time::SampleInstants;
use crate::report::verdict::{self, SystemWatch};
use crate::rtsetup::{
    check_realtime_privilege, io_strerror, lock_memory_because, pinned_cpus, start_janitor,
};
use crate::run_audit;
use crate::signals::SignalFlags;
use rtlat_args::stdio::{note, tell};

/// The warm-up, as the main thread counts it.
const WARMUP_DURATION: Duration = Duration::from_nanos(WARMUP.as_nanos() as u64);

/// How often the display looks for newly sealed seconds.
const POLL_PERIOD: Duration = Duration::from_millis(20);

/// Runs `rtlat latency` with `settings`; returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let synthetic = matches!(settings.engine.run.source, TimeSourceKind::Synthetic { .. });
    let host = if synthetic { Host::Pinned } else { Host::Real };
    let start_time = host.timestamp();
    // Xenomai sets stdout line-buffered: each line is out as it is made.
    let mut out = Stdout::new(true);

    // --explain's refusals come first: one line, nothing else printed.
    let prepared = match &settings.explain {
        Some(_) => Some(crate::explain::preflight()?),
        None => None,
    };
    if !synthetic {
        check_realtime_privilege(
            SchedPolicy::Fifo,
            settings.priority,
            pinned_cpus(settings.engine.threads.iter().map(|t| t.cpu)).as_deref(),
            "rtlat cyclictest --policy other",
        )?;
    }
    // Before the memory is locked and the thread (and the load) start.
    let shows = settings.json.is_some() || settings.verdict.is_some();
    let audit = run_audit::audit_cyclic_run(host, &settings.engine, shows, settings.gates.as_ref());
    // Also for a synthetic run: its spikes are a deterministic way to see
    // -f freeze the real trace.
    let trace = settings.freeze.then(open_freeze_trace).flatten();
    let engine = Engine::with_trace(settings.engine.clone(), trace)
        .context("preparing the measuring thread")?;
    if !synthetic {
        // Xenomai locks its memory unconditionally.
        lock_memory_because("", "")?;
    }
    let signals = SignalFlags::install()?;
    // The run's own trace instance, recording from before the warm-up; the
    // janitor removes it if the run is killed.
    let mut explain = match (&settings.explain, prepared) {
        (Some(plan), Some(prepared)) => {
            start_janitor("its tracefs instance");
            Some(ExplainSession::open(plan, prepared)?)
        }
        _ => None,
    };
    out.emit(|w| write_banner(w, settings.period));
    // Before the thread, so that the warm-up already runs under load; the
    // phases count from the end of the warm-up, as the thread's do.
    let mut load = LoadBeside::start(settings.load.as_ref())?;
    let system = SystemWatch::start(!synthetic, settings.engine.threads.iter().map(|t| t.cpu));
    let running = engine.start().context("starting the measuring thread")?;
    let timeline = host.cyclic_timeline(&running);
    load.set_origin(running.started() + WARMUP_DURATION);
    if let Some((_, error)) = running.setup_error() {
        running.finish(false);
        bail!(describe_thread_error(error, settings));
    }
    if let Some(session) = explain.as_mut()
        && let Err(e) = start_explain_reader(session, &running, &settings.engine, &timeline)
    {
        running.finish(false);
        return Err(e);
    }
    out.emit(|w| writeln!(w, "warming up..."));
    if settings.quiet {
        note!(
            "running quietly for {} seconds",
            settings.duration_secs.unwrap_or(0)
        );
    }

    let shared = running.shared_handle();
    let mut seconds = Seconds::new(settings)?;
    let mut blocks = BlockCollector::new(&settings.engine);
    let external_stop = until_end(
        &running,
        &signals,
        &mut load,
        (&mut seconds, blocks.as_mut()),
        &mut out,
    )?;
    let mut report = running.finish(external_stop);
    let explained = explain.and_then(ExplainSession::finish);
    if let Some(outcome) = &explained {
        outcome.attach_latencies(&mut report);
    }
    let system = system.finish();
    let load = load.stop();
    // The seconds sealed after the last look, and the partial last one.
    if let Some(log) = &shared.channels[0].intervals {
        let mut lines = Vec::new();
        seconds.take(log, &mut lines);
        if !out.is_closed() {
            out.emit(|w| w.write_all(&lines));
        }
    }
    let block_series = blocks.map(|b| b.finish(&shared)).unwrap_or_default();
    if seconds.reader.lost() > 0 {
        tell!(
            "{} seconds were overwritten before they could be printed",
            seconds.reader.lost()
        );
    }

    let failure = report.threads[0]
        .error
        .map(|error| describe_thread_error(error, settings))
        .or_else(|| load.failure.clone());
    let status = u8::from(failure.is_some());
    let load_results = load.results(
        settings.load.as_ref(),
        (!synthetic).then(|| Duration::from_secs(seconds.complete)),
    );
    let mut meta = host.run_meta(
        &settings.cmdline,
        rtlat_core::RtTests::default(),
        start_time,
        status,
        audit,
    );
    meta.projection = settings.projection.request();
    // Before the verdict, which projects from them.
    meta.blocks = block_series;
    let mut verdict = verdict::judge(&report, &meta, system.as_ref());
    if let Some(outcome) = &explained {
        verdict.worst_sample = outcome.worst_sample();
    }
    let extras = Extras {
        load: load_results.as_ref(),
        verdict: &verdict,
        explain: explained.as_ref(),
        timeline: Some(timeline),
    };
    let written = write_final_outputs(settings, &report, &meta, extras, &seconds, &mut out);
    let status = end_run(&mut out, written, failure, status)?;
    crate::gate::apply(
        settings.gates.as_ref(),
        &report,
        &verdict,
        "thread",
        "latency",
        seconds.complete as f64,
        status,
    )
}

/// Shows each second as it is sealed (and takes it as a block of the
/// thread's series), until the run ends by itself or is stopped. Returns whether the stop came from outside (a signal or a
/// closed stdout).
fn until_end(
    running: &Running,
    signals: &SignalFlags,
    load: &mut LoadBeside<'_>,
    (seconds, mut blocks): (&mut Seconds, Option<&mut BlockCollector>),
    out: &mut Stdout,
) -> anyhow::Result<bool> {
    let Some(log) = &running.shared().channels[0].intervals else {
        bail!("the measuring thread keeps no per-second figures");
    };
    let mut lines = Vec::new();
    loop {
        let ended = running.reached_end();
        lines.clear();
        seconds.take(log, &mut lines);
        out.emit(|w| w.write_all(&lines));
        if let Some(blocks) = blocks.as_deref_mut() {
            blocks.drain_if_due(running.shared());
        }
        if let Some(stopped) = after_frame(out, ended) {
            return Ok(stopped);
        }
        std::thread::sleep(POLL_PERIOD);
        load.drive();
        if signals.stop_requested() || load.failed() {
            return Ok(true);
        }
    }
}

/// The display's view of the seconds: what it printed and what the
/// per-second histograms and the summary need. Its size does not depend on
/// the run's length.
struct Seconds<'a> {
    settings: &'a Settings,
    reader: IntervalReader,
    printed: u64,
    overruns: u64,
    best: Option<Nanos>,
    worst: Option<Nanos>,
    /// Whole seconds measured (the last complete one's number + 1).
    complete: u64,
    minima: Option<(SignedHistogram, Moments)>,
    maxima: Option<(SignedHistogram, Moments)>,
}

impl<'a> Seconds<'a> {
    fn new(settings: &'a Settings) -> anyhow::Result<Seconds<'a>> {
        let histogram = || -> anyhow::Result<Option<(SignedHistogram, Moments)>> {
            match settings.engine.signed_histogram {
                Some(plan) => {
                    let h = SignedHistogram::new(plan.width.as_nanos(), plan.per_side)
                        .context("not enough memory for the per-second histograms")?;
                    Ok(Some((h, Moments::default())))
                }
                None => Ok(None),
            }
        };
        Ok(Seconds {
            settings,
            reader: IntervalReader::new(),
            printed: 0,
            overruns: 0,
            best: None,
            worst: None,
            complete: 0,
            minima: histogram()?,
            maxima: histogram()?,
        })
    }

    /// Takes the seconds sealed since the last call and writes their lines
    /// (unless `-q`) to `lines`.
    fn take(&mut self, log: &rtlat_core::IntervalLog, lines: &mut Vec<u8>) {
        let mut records = Vec::new();
        self.reader.drain(log, |r| records.push(r));
        for record in records {
            // Writing to a Vec cannot fail.
            let _ = self.add(&record, lines);
        }
    }

    fn add(&mut self, r: &IntervalRecord, lines: &mut Vec<u8>) -> io::Result<()> {
        if r.partial || r.cycles == 0 {
            // A second cut short by the end of the run has no RTD line;
            // its samples are in the summary and the all-samples histogram.
            return Ok(());
        }
        self.overruns += r.overruns;
        self.best = Some(self.best.map_or(r.min, |b| b.min(r.min)));
        self.worst = Some(self.worst.map_or(r.max, |w| w.max(r.max)));
        self.complete = r.index + 1;
        for (slot, value) in [(&mut self.minima, r.min), (&mut self.maxima, r.max)] {
            if let Some((histogram, moments)) = slot {
                histogram.record(value.as_nanos());
                moments.add(value.as_nanos());
            }
        }
        if self.settings.quiet {
            return Ok(());
        }
        let every = self.settings.lines_per_header;
        if every > 0 && self.printed.is_multiple_of(every) {
            write_header(
                lines,
                r.index + 1,
                self.settings.period,
                self.settings.priority,
            )?;
        }
        self.printed += 1;
        write_data_line(
            lines,
            &SecondFigures {
                min: r.min,
                avg: Nanos(r.sum_ns / r.cycles as i64),
                max: r.max,
                overruns: self.overruns,
                best: self.best.unwrap_or(r.min),
                worst: self.worst.unwrap_or(r.max),
            },
        )
    }
}

/// The final outputs ([`crate::report::formats`]): the JSON first (as
/// in cyclictest: `--json=-` comes right after the `RTD|` lines), the
/// histograms (with `-h`, `-s` or `-g`), the gnuplot file, the summary,
/// the load lines, then the `--verdict` lines. Every output is attempted;
/// the first failure is returned.
fn write_final_outputs(
    settings: &Settings,
    report: &RunReport,
    meta: &RunMeta,
    extras: Extras<'_, '_>,
    seconds: &Seconds,
    out: &mut Stdout,
) -> anyhow::Result<()> {
    let asked = Asked {
        json: settings.json.as_ref(),
        explain: settings.explain.as_ref(),
        verdict: settings.verdict,
        subject: "Thread",
        max_times: settings
            .verdict
            .is_some()
            .then_some(SampleInstants::DueWoke),
        ..Asked::default()
    };
    let own = Own {
        settings,
        report,
        meta,
        extras,
        seconds,
    };
    let finished = Finished {
        report,
        extras,
        asked: &asked,
        tool: &own,
    };
    formats::write_all(&finished, out)
}

/// What latency writes its own way: its JSON document and, after it,
/// Xenomai's histograms, the gnuplot file and the summary.
struct Own<'a> {
    settings: &'a Settings,
    report: &'a RunReport,
    meta: &'a RunMeta,
    extras: Extras<'a, 'a>,
    seconds: &'a Seconds<'a>,
}

impl ToolOutputs for Own<'_> {
    fn write_document(&self, mut w: &mut dyn Write) -> io::Result<()> {
        write_json_with(
            &mut w,
            self.report,
            self.meta,
            &self.settings.engine,
            self.extras,
        )
    }

    fn write_text(&self, place: Place, out: &mut Stdout) -> anyhow::Result<()> {
        if place != Place::AfterJson {
            return Ok(());
        }
        let (settings, seconds) = (self.settings, self.seconds);
        let thread = &self.report.threads[0];
        let cycles = thread.compat.cycles;
        let mut written = Ok(());
        if let (Some(all), Some((minima, min_moments)), Some((maxima, max_moments))) =
            (&thread.signed_histogram, &seconds.minima, &seconds.maxima)
        {
            let all_moments = Moments {
                count: cycles,
                sum_ns: thread.precise.sum_ns,
                sum_sq_ns: thread.precise.sum_sq_ns.unwrap_or(0),
            };
            let histograms = Kind::ALL.map(|kind| {
                let report = match kind {
                    Kind::Min => HistogramReport {
                        data: minima.snapshot(),
                        moments: *min_moments,
                    },
                    Kind::Avg => HistogramReport {
                        data: all.clone(),
                        moments: all_moments,
                    },
                    Kind::Max => HistogramReport {
                        data: maxima.snapshot(),
                        moments: *max_moments,
                    },
                };
                (kind, report)
            });
            out.emit(|w| write_histograms(w, &histograms, settings.histograms));
            if let Some(path) = &settings.gnuplot {
                written = write_to(&OutputTarget::File(path.clone()), out, "-g", |mut w| {
                    write_gnuplot(&mut w, all)
                });
            }
        }
        let summary = Summary {
            min: thread.precise.min,
            avg_ns: thread.precise.mean(cycles),
            max: thread.precise.max,
            overruns: thread.precise.overruns,
            actual_secs: seconds.complete,
            requested_secs: settings.duration_secs.unwrap_or(seconds.complete),
        };
        out.emit(|w| write_summary(w, &summary));
        written
    }
}

/// The trace files for `-f`, opened before the run (with the snapshot
/// buffer where the kernel has one). Without tracefs, or without access to
/// it, the run goes on with one warning and no freeze.
fn open_freeze_trace() -> Option<TraceControl> {
    let Some(dir) = tracefs::tracing_dir() else {
        note!("WARN: tracefs is not mounted (/sys/kernel/tracing): -f cannot freeze the trace");
        return None;
    };
    match TraceControl::open(&dir, true).and_then(|t| t.with_snapshot(&dir)) {
        Ok(trace) => {
            if !trace.has_snapshot() {
                tell!(
                    "note: this kernel has no trace snapshot buffer \
                     (CONFIG_TRACER_SNAPSHOT): -f stops the trace at the first sample above \
                     the warm-up's maximum, instead of keeping a copy at each new maximum"
                );
            }
            Some(trace)
        }
        Err(e) => {
            note!(
                "WARN: cannot open the trace files in {}: {}; -f cannot freeze the trace",
                dir.display(),
                io_strerror(&e)
            );
            None
        }
    }
}

fn describe_thread_error(error: ThreadError, settings: &Settings) -> String {
    let why = rtlat_sys::strerror(error.errno);
    let plan = &settings.engine.threads[0];
    match error.step {
        ThreadStep::Affinity => format!(
            "the measuring thread cannot be pinned to CPU {} (-c): {why}",
            plan.cpu.unwrap_or(0)
        ),
        ThreadStep::Scheduler => format!(
            "the measuring thread cannot get SCHED_FIFO priority {} (-P): {why}",
            plan.priority
        ),
        ThreadStep::Timer => format!("the measuring thread cannot set up its timerfd: {why}"),
        ThreadStep::Wait | ThreadStep::SmiCounter => {
            format!("latency: wait period failed: {why}")
        }
    }
}
