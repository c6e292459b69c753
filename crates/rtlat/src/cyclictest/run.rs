//! Carries out one `rtlat cyclictest` run, in cyclictest's order:
//! privilege check, `-v` CPU lines, main-thread affinity, `mlockall`,
//! `/dev/cpu_dma_latency`, the trace files of `-b`, the `-R` probe, signal
//! handlers and the SIGUSR2 snapshot file, the check of the `-F` FIFO's
//! path, the measuring threads and the FIFO, the live display (and the
//! `--stats-file` lines, and the `--load-schedule` phase changes) until the
//! run ends, then the final outputs (the last `--stats-file` lines, JSON,
//! `-q` summary, spikes, histogram, `-b` lines, load lines). Every way a
//! run ends — loops, duration, a break, a signal, a closed stdout, an
//! error — goes through the same final outputs, and the snapshot file and
//! FIFO are removed. The
//! `--load` workers start before the measuring threads and are stopped and
//! joined right after them (or, on an early error, when dropped).

use std::io::{self, Write};
use std::time::Duration;

use anyhow::{Context, bail};
use rtlat_core::Footprint;
use rtlat_core::Nanos;
use rtlat_core::{Engine, Running};
use rtlat_core::{MeasureMode, SchedPolicy, TimeSourceKind, WaitMode};
use rtlat_core::{RunReport, ThreadError, ThreadStep};
use rtlat_sys::affinity;
use rtlat_sys::clock::{self, Clock};
use rtlat_sys::power::{self, DmaLatencyError};

use super::blocks::BlockCollector;
use super::idle_states::{IdleStateLock, LimitedIdleStates};
use super::settings::{DmaLatency, Settings};
use super::stats_file::StatsFile;
use crate::explain::{ExplainSession, start_explain_reader};
use crate::gate;
use crate::host::Host;
use crate::limits;
use crate::live::after_frame;
use crate::live::fifo::FifoServer;
use crate::live::progress::{Progress, ProgressLine};
use crate::live::snapshot::StatusSnapshotFile;
use crate::live::text::{LiveMode, LiveText, write_status_block};
use crate::load::beside::LoadBeside;
use crate::monitor::Monitor;
use crate::output::{Stdout, end_run};
use crate::report::RunMeta;
use crate::report::formats::{self, Asked, Finished, HistogramAsked, Place, ToolOutputs};
use crate::report::json::{Extras, write_json_with};
use crate::report::run_clock::Timeline;
use crate::report::sample_time::SampleInstants;
use crate::report::status::write_quiet_summary;
use crate::report::verdict::{self, SystemWatch};
use crate::rtsetup::{
    check_realtime_privilege, errno_text, io_strerror, lock_memory, note_not_realtime, pin_failure,
    pinned_cpus, policy_failure, start_janitor,
};
use crate::run_audit;
use crate::signals::SignalFlags;
use rtlat_args::stdio::{self, note, tell};
use rtlat_stats::blocks::BlockSeries;
use rtlat_sys::tracefs::{self, TraceControl};

/// How often the live display is redrawn (cyclictest: `usleep(10000)`).
const FRAME_PERIOD: Duration = Duration::from_millis(10);
/// How often `rtlat monitor`'s main thread looks ([`Display::frame_period`]).
const MONITOR_FRAME_PERIOD: Duration = Duration::from_millis(100);

/// Runs the measurement described by `settings`; returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let synthetic = matches!(settings.engine.run.source, TimeSourceKind::Synthetic { .. });
    let host = if synthetic { Host::Pinned } else { Host::Real };
    let start_time = host.timestamp();
    let mut out = Stdout::new(settings.unbuffered);

    // --explain's refusals come first: one line, nothing else printed.
    let prepared = match &settings.explain {
        Some(_) => Some(crate::explain::preflight()?),
        None => None,
    };
    if !synthetic {
        if settings.engine.needs_realtime() {
            let policy = settings
                .engine
                .threads
                .iter()
                .map(|t| t.policy)
                .find(|p| p.is_realtime())
                .unwrap_or(SchedPolicy::Fifo);
            check_realtime_privilege(
                policy,
                settings.engine.max_priority(),
                pinned_cpus(settings.engine.threads.iter().map(|t| t.cpu)).as_deref(),
                "--policy other, no -p",
            )?;
        }
        if settings.engine.measure == MeasureMode::Tsc
            && let Err(why) = rtlat_sys::tsc::support()
        {
            bail!("--measure tsc: the TSC cannot measure time on this machine: {why}");
        }
        if settings.engine.smi
            && let Err(why) = rtlat_sys::msr::smi_support()
        {
            bail!("--smi: the SMI counter is not available on this CPU: {why}");
        }
    }
    // After the privilege: without it no limit matters.
    limits::check_room(
        &format!("-t {}", settings.engine.threads.len()),
        &Footprint {
            // The main thread's block series besides the engine's buffers.
            heap: Footprint::of_cyclic(&settings.engine)
                .heap
                .plus(BlockCollector::heap_bytes(&settings.engine)),
            ..Footprint::of_cyclic(&settings.engine)
        },
        settings.mlockall && !synthetic,
    )?;
    if !synthetic && !settings.engine.needs_realtime() {
        note_not_realtime("the measuring threads", settings.engine.threads[0].policy);
    }

    // Made before anything else, so that a file that cannot be written
    // stops the run before it starts.
    let mut stats = match &settings.stats_file {
        Some(path) => Some(StatsFile::create(path, &settings.engine)?),
        None => None,
    };

    if settings.verbose {
        let (configured, online) = host.cpu_counts();
        out.emit(|w| writeln!(w, "Max CPUs = {configured}\nOnline CPUs = {online}"));
    }
    if let Some(cpus) = &settings.main_cpus_before_start {
        if !synthetic {
            affinity::pin_current_thread(cpus).map_err(|e| {
                anyhow::anyhow!(
                    "cannot restrict the main thread to the -a CPUs: {}",
                    errno_text(e)
                )
            })?;
        }
        if settings.verbose {
            out.emit(|w| writeln!(w, "Using {} cpus.", cpus.len()));
        }
    }
    let shows = settings.json.is_some() || settings.verdict.is_some() || settings.monitor.is_some();
    let audit = run_audit::audit_cyclic_run(host, &settings.engine, shows, settings.gates.as_ref());
    // Before the first sample: a checkpoint that does not fit, an address
    // in use, stop the run here.
    let mut monitor = match &settings.monitor {
        Some(plan) => Some(prepare_monitor(plan, settings, host, &start_time, &audit)?),
        None => None,
    };
    // Allocated before mlockall, so that locking maps and pre-faults it, and
    // a lock limit too small for it is reported by mlockall, clearly.
    let trace = if synthetic {
        None
    } else {
        open_trace_files(settings)
    };
    let engine = Engine::with_trace(settings.engine.clone(), trace)
        .context("preparing the measuring threads")?;
    if settings.mlockall && !synthetic {
        lock_memory()?;
    }
    if settings.show_methods {
        // Only for the new methods: the default output stays C's.
        let (wait, measure) = (settings.engine.wait.name(), settings.engine.measure.name());
        out.emit(|w| writeln!(w, "# wait: {wait}, measure: {measure}"));
    }
    let idle_state_limit = settings.deepest_idle_state.as_ref().filter(|_| !synthetic);
    // Before anything the run must put back is changed: from the first
    // disabled idle state on, a stop signal ends the run through its normal
    // end (which restores them), and a SIGKILL leaves them to the janitor.
    let signals = SignalFlags::install()?;
    // Before the janitor, which inherits it: one run at a time limits the
    // idle states, and a killed run's lock lasts until they are restored.
    let idle_state_lock = idle_state_limit
        .map(|_| IdleStateLock::take())
        .transpose()?;
    start_janitor(if idle_state_limit.is_some() {
        "its status file in /dev/shm (and the -F FIFO) and the disabled idle states"
    } else {
        "its status file in /dev/shm (and the -F FIFO)"
    });
    // Before the cpu_dma_latency step, as in rt-tests 2.8; restored when
    // dropped, on every way out of this function.
    let _idle_states = match (idle_state_limit, idle_state_lock) {
        (Some(limit), Some(lock)) => Some(LimitedIdleStates::apply(limit, lock)?),
        _ => None,
    };
    let _dma_request = request_dma_latency(settings.dma_latency, synthetic, &mut out)?;
    if !synthetic
        && clock::resolution(Clock::Monotonic)
            != (clock::Timespec {
                tv_sec: 0,
                tv_nsec: 1,
            })
    {
        note!("WARN: High resolution timers not available");
    }
    if settings.check_resolution {
        stdio::to_stderr(|w| {
            super::resolution::probe(
                w,
                rtlat_core::sys_clock(settings.engine.clock),
                settings.verbose,
                settings.debug_resolution,
            )
        });
    }
    // The run's own trace instance, recording from before the first sample.
    let mut explain = match (&settings.explain, prepared) {
        (Some(plan), Some(prepared)) => Some(ExplainSession::open(plan, prepared)?),
        _ => None,
    };
    let mut snapshot = match StatusSnapshotFile::create(rtlat_sys::system::current_pid()) {
        Ok(file) => Some(file),
        Err(e) => {
            note!(
                "WARN: cannot create the SIGUSR2 snapshot file in /dev/shm: {}",
                io_strerror(&e)
            );
            None
        }
    };

    if settings.verbose {
        let explicit_cpus = settings.main_cpus_before_start.is_some();
        out.emit(|w| {
            for t in &settings.engine.threads {
                if let (true, Some(cpu)) = (explicit_cpus, t.cpu) {
                    writeln!(w, "Thread {} using cpu {cpu}.", t.index)?;
                }
                writeln!(
                    w,
                    "Thread {} Interval: {}",
                    t.index,
                    t.interval.as_micros_truncated()
                )?;
            }
            Ok(())
        });
    }

    // Checked before the first sample: a FIFO that cannot be made (a
    // read-only file system, no permission, another kind of file in the
    // way) stops the run here, exit 1. It is made once the threads run, so
    // that no reader gets a snapshot from before.
    if let Some(path) = &settings.fifo {
        crate::live::fifo::check(path).map_err(|e| {
            let why = if e.kind() == io::ErrorKind::AlreadyExists {
                "a file that is not a FIFO is in the way (only a FIFO is replaced)".to_owned()
            } else {
                io_strerror(&e)
            };
            anyhow::anyhow!("-F/--fifo: cannot create '{}': {why}", path.display())
        })?;
    }
    // Started before the measuring threads, so that it runs before the
    // first sample; a load that cannot start stops the run here.
    let mut load = LoadBeside::start(settings.load.as_ref())?;
    let system = SystemWatch::start(!synthetic, settings.engine.threads.iter().map(|t| t.cpu));
    let running = engine.start().context("starting the measuring threads")?;
    load.set_origin(running.started());
    let timeline = host.cyclic_timeline(&running);
    if let Some(stats) = stats.as_mut() {
        stats.start(timeline);
    }
    if let Some((index, error)) = running.setup_error() {
        running.finish(false);
        bail!(describe_thread_error(index, error, settings));
    }
    if let Some(session) = explain.as_mut()
        && let Err(e) = start_explain_reader(session, &running, &settings.engine, &timeline)
    {
        running.finish(false);
        return Err(e);
    }
    if let (Some(cpus), false) = (&settings.main_affinity, synthetic)
        && let Err(e) = affinity::pin_current_thread(cpus)
    {
        note!(
            "WARN: Couldn't setaffinity in main thread: {}",
            errno_text(e)
        );
    }

    if let Some(monitor) = monitor.as_mut()
        && let Err(e) = monitor.start(running.started(), Some(timeline))
    {
        running.finish(false);
        return Err(e);
    }

    let shared = running.shared_handle();
    // The run is on by then, but no sample has been shown: a FIFO that
    // cannot be made now (the file system changed since the check) or a
    // server thread that cannot start stops the run, one line, exit 1
    // (C prints "Error creating fifo" and goes on, exit 0; docs/compatibility.md).
    let fifo = match settings.fifo.as_ref().map(|path| {
        FifoServer::start(
            path.clone(),
            shared.clone(),
            settings.engine.threads.clone(),
            settings.engine.run.resolution,
        )
        .map_err(|e| (path, e))
    }) {
        Some(Err((path, e))) => {
            running.finish(false);
            bail!(
                "-F/--fifo: cannot create '{}': {}",
                path.display(),
                io_strerror(&e)
            );
        }
        Some(Ok(server)) => Some(server),
        None => None,
    };
    let mut live = LiveText::new(
        live_mode(settings),
        settings.header_policy.clone(),
        settings.engine.run.resolution,
        settings.engine.threads.len(),
        settings.oscope_reduction,
    );
    let progress = ProgressLine::on_terminal(
        settings.progress && host != Host::Pinned,
        planned_length(settings),
    );
    let mut blocks = BlockCollector::new(&settings.engine);
    // A resumed monitor's blocks go on from its checkpoint's.
    if let (Some(collector), Some(monitor)) = (blocks.as_mut(), monitor.as_mut()) {
        collector.resume(monitor.take_resumed_blocks());
    }
    let mut display = Display {
        settings,
        running: &running,
        signals: &signals,
        snapshot: snapshot.as_mut(),
        stats: stats.as_mut(),
        blocks: blocks.as_mut(),
        host,
        load: &mut load,
        progress,
        monitor: monitor.as_mut(),
    };
    let external_stop = display.until_end(&mut live, &mut out)?;
    if let Some(line) = display.progress.take() {
        line.erase();
    }
    if settings.refresh_on_max {
        out.emit(|w| live.write_leave(w, settings.engine.threads.len()));
    }
    let run_time = running.started().elapsed();
    let mut report = running.finish(external_stop);
    if let Some(monitor) = monitor.as_mut() {
        monitor.end();
        // A resumed run's totals include the checkpoint's.
        report = monitor.combined(report);
    }
    // After the threads have stopped: the last events are read, the
    // pending samples (a -b break's too) explained, the instance removed.
    let explained = explain.and_then(ExplainSession::finish);
    if let Some(outcome) = &explained {
        outcome.attach_latencies(&mut report);
    }
    let mut system = system.finish();
    if let Some(injected) = &settings.injected {
        injected.apply(&mut report, &mut system);
    }
    let load = load.stop();
    // The intervals sealed since the last batch and the last, partial ones.
    let stats_written = stats.map_or(Ok(()), |s| s.finish(&shared));
    let block_series = blocks.map(|b| b.finish(&shared)).unwrap_or_default();
    if let Some(fifo) = fifo {
        fifo.stop();
    }
    if live.mode() == LiveMode::Verbose {
        // The samples taken after the last batch: nothing is lost.
        out.emit(|w| live.write_frame(w, &shared, &settings.engine.threads, ""));
        if live.lost_samples() > 0 {
            tell!(
                "-v: {} samples were overwritten before they could be printed",
                live.lost_samples()
            );
        }
    }
    let thread_failure = report
        .threads
        .iter()
        .find_map(|t| t.error.map(|e| (t.index, e)));
    let status: u8 = if thread_failure.is_some() || load.failure.is_some() {
        1
    } else {
        0
    };

    let mut meta = host.run_meta(
        &settings.cmdline,
        settings.rt_tests,
        start_time,
        status,
        audit,
    );
    meta.projection = settings.projection.request();
    // Before the verdict, which projects from them.
    meta.blocks = block_series;
    let mut verdict = verdict::judge(&report, &meta, system.as_ref());
    if let Some(monitor) = monitor.as_mut() {
        // The last metrics show the verdict's projection, from every block
        // (the monitor asks the same request).
        monitor.project_final(&meta.blocks, verdict.projection.clone());
    }
    if let Some(outcome) = &explained {
        verdict.worst_sample = outcome.worst_sample();
    }
    let load_results = load.results(settings.load.as_ref(), (!synthetic).then_some(run_time));
    let extras = Extras {
        load: load_results.as_ref(),
        verdict: &verdict,
        explain: explained.as_ref(),
        timeline: Some(timeline),
    };
    // The monitor's result document: its --json and its last checkpoint.
    let monitor_document = match monitor.as_mut() {
        Some(monitor) => {
            let mut document = Vec::new();
            write_json_with(&mut document, &report, &meta, &settings.engine, extras)?;
            let mut full = Vec::new();
            monitor.add_sections(&report, &document, &mut full)?;
            Some(full)
        }
        None => None,
    };
    let monitor_finished = match (monitor, &monitor_document) {
        (Some(monitor), Some(document)) => monitor.finish(&report, document),
        _ => Ok(()),
    };
    let written = write_final_outputs(
        settings,
        &report,
        &meta,
        extras,
        monitor_document.as_deref(),
        &mut out,
    )
    .and(stats_written)
    .and(monitor_finished);
    let failure = thread_failure
        .map(|(index, error)| describe_thread_error(index, error, settings))
        .or_else(|| load.failure.clone());
    let status = end_run(&mut out, written, failure, status)?;
    let duration_s = if synthetic {
        0.0
    } else {
        run_time.as_secs_f64()
    };
    gate::apply(
        settings.gates.as_ref(),
        &report,
        &verdict,
        "thread",
        "cyclictest",
        duration_s,
        status,
    )
}

/// The main thread while the measuring threads run: draws the live output,
/// answers SIGUSR1 (status block on stderr) and SIGUSR2 (status block in the
/// snapshot file), and notices the end of the run.
struct Display<'a, 's> {
    settings: &'a Settings,
    running: &'a Running,
    signals: &'a SignalFlags,
    snapshot: Option<&'a mut StatusSnapshotFile>,
    stats: Option<&'a mut StatsFile>,
    /// Each thread's blocks, drained between frames.
    blocks: Option<&'a mut BlockCollector>,
    host: Host,
    /// `--load`, `--load-schedule`: moved to the next phase when due.
    load: &'a mut LoadBeside<'s>,
    /// `-q` on a terminal: the progress line on stderr.
    progress: Option<ProgressLine>,
    /// `rtlat monitor`: updated once a second.
    monitor: Option<&'a mut Monitor>,
}

impl Display<'_, '_> {
    /// Shows the live output until the run ends by itself or is stopped.
    /// Returns whether the stop came from outside (signal or closed stdout).
    fn until_end(&mut self, live: &mut LiveText, out: &mut Stdout) -> anyhow::Result<bool> {
        let plans = &self.settings.engine.threads;
        let mode = live.mode();
        if self.host == Host::Pinned {
            // Synthetic threads finish in an instant: show their final state
            // only, so that the output is the same every time.
            while !self.running.reached_end() && !self.must_stop() {
                self.answer_signals();
                self.load.drive();
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let mut maxima = Vec::new();
        loop {
            // Looked at before the frame is drawn, so that the last frame shows
            // the thread that ended the run with its final count.
            let ended = self.running.reached_end();
            let loadavg = if mode == LiveMode::Frames {
                self.host.load_average()
            } else {
                String::new()
            };
            out.emit(|w| live.write_frame(w, self.running.shared(), plans, &loadavg));
            // -M's baseline: read after the frame, never before it, so
            // that a maximum that grew while the frame was drawn (and is
            // in it) draws no second frame of the same maxima.
            if self.settings.refresh_on_max {
                maxima = self.maxima();
            }
            if let Some(stopped) = after_frame(out, ended) {
                return Ok(stopped);
            }
            std::thread::sleep(self.frame_period());
            self.between_frames();
            if self.must_stop() {
                return Ok(true);
            }
            if let Some(line) = self.progress.as_mut() {
                line.tick(|| progress_of(self.running));
            }
            out.emit(|w| live.write_rewind(w, plans.len()));
            if self.settings.refresh_on_max {
                // -M: the next frame only once some thread's maximum grew.
                loop {
                    if self.must_stop() {
                        return Ok(true);
                    }
                    if self.running.reached_end() {
                        return Ok(false);
                    }
                    if self.maxima() != maxima {
                        break;
                    }
                    std::thread::sleep(FRAME_PERIOD);
                    self.between_frames();
                }
            }
        }
    }

    /// How long the main thread sleeps between two looks: cyclictest's
    /// 10 ms, the monitor's 100 ms (it has no display to keep fresh; its
    /// updates come once a second, and a signal is answered within it).
    fn frame_period(&self) -> Duration {
        if self.monitor.is_some() {
            MONITOR_FRAME_PERIOD
        } else {
            FRAME_PERIOD
        }
    }

    /// Every thread's current maximum (for `-M`).
    fn maxima(&self) -> Vec<i64> {
        self.running
            .shared()
            .channels
            .iter()
            .map(|c| c.slot.compat().max_shown())
            .collect()
    }

    /// What the main thread does every time it wakes up between frames:
    /// answer signals, write the `--stats-file` lines when due, take the
    /// sealed blocks, move the load to its next phase when due.
    fn between_frames(&mut self) {
        self.answer_signals();
        if let Some(stats) = self.stats.as_deref_mut() {
            stats.drain_if_due(self.running.shared());
        }
        if let Some(blocks) = self.blocks.as_deref_mut() {
            blocks.drain_if_due(self.running.shared());
        }
        self.load.drive();
        if let Some(monitor) = self.monitor.as_deref_mut() {
            monitor.tick_if_due(self.running, self.blocks.as_deref());
        }
    }

    /// Whether the run is to stop early: a stop signal, or a load that
    /// failed.
    fn must_stop(&self) -> bool {
        self.signals.stop_requested() || self.load.failed()
    }

    fn answer_signals(&mut self) {
        let (shared, plans) = (self.running.shared(), &self.settings.engine.threads);
        let resolution = self.settings.engine.run.resolution;
        if self.signals.take_status_request() {
            stdio::to_stderr(|w| write_status_block(w, shared, plans, resolution));
        }
        if self.signals.take_snapshot_request() {
            match self.snapshot.as_deref_mut() {
                Some(file) => {
                    let mut text = Vec::new();
                    let _ = write_status_block(&mut text, shared, plans, resolution);
                    if let Err(e) = file.replace_contents(&text) {
                        note!(
                            "WARN: cannot write {}: {}",
                            file.path().display(),
                            io_strerror(&e)
                        );
                    }
                }
                None => note!("ERROR: rstat_fd not valid"),
            }
        }
    }
}

/// The monitor of the run: its result documents carry the run's
/// envelope (this start; the end time of the moment written), its verdict
/// level is `--verdict`'s on the figures so far.
fn prepare_monitor(
    plan: &crate::monitor::settings::MonitorPlan,
    settings: &Settings,
    host: Host,
    start_time: &str,
    audit: &Option<rtlat_audit::Audit>,
) -> anyhow::Result<Monitor> {
    let kernel = audit.as_ref().map(|a| &a.environment.kernel);
    let info = crate::monitor::metrics::Info {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        kernel: kernel
            .and_then(|k| k.release.clone())
            .unwrap_or_else(|| host.sysinfo().release),
        preemption: kernel
            .and_then(|k| k.preemption.clone())
            .unwrap_or_else(|| "unknown".to_owned()),
    };
    let mut meta = host.run_meta(
        &settings.cmdline,
        settings.rt_tests,
        start_time.to_owned(),
        0,
        audit.clone(),
    );
    meta.projection = settings.projection.request();
    let judged = meta.clone();
    let judge =
        Box::new(
            move |report: &RunReport| match verdict::judge(report, &judged, None).level {
                verdict::Level::Trustworthy => 0,
                verdict::Level::Caveats => 1,
                verdict::Level::Untrustworthy => 2,
            },
        );
    let engine = settings.engine.clone();
    let request = meta.projection.clone();
    let write_document = Box::new(
        move |report: &RunReport,
              timeline: Option<&Timeline>,
              blocks: &[BlockSeries],
              w: &mut Vec<u8>| {
            let meta = RunMeta {
                end_time: host.timestamp(),
                blocks: blocks.to_vec(),
                ..meta.clone()
            };
            let verdict = verdict::judge(report, &meta, None);
            let extras = Extras {
                load: None,
                verdict: &verdict,
                explain: None,
                timeline: timeline.copied(),
            };
            write_json_with(w, report, &meta, &engine, extras)
        },
    );
    Monitor::prepare(plan, &settings.engine, info, write_document, judge, request)
}

/// How long the run is to last, for the progress line: `-D`, or `-l`
/// periods of the slowest thread, whichever ends first; `None` when neither
/// is given.
fn planned_length(settings: &Settings) -> Option<Duration> {
    let run = &settings.engine.run;
    let by_duration = run.duration.and_then(Nanos::to_duration);
    let slowest = settings
        .engine
        .threads
        .iter()
        .map(|t| t.interval.as_nanos())
        .max();
    let by_loops = run.loops.zip(slowest).map(|(loops, interval_ns)| {
        Duration::from_nanos(
            u64::try_from(interval_ns)
                .unwrap_or(0)
                .saturating_mul(loops),
        )
    });
    match (by_duration, by_loops) {
        (Some(d), Some(l)) => Some(d.min(l)),
        (d, l) => d.or(l),
    }
}

/// What the progress line shows, read from the shared slots.
fn progress_of(running: &Running) -> Progress {
    let channels = &running.shared().channels;
    Progress {
        elapsed: running.started().elapsed(),
        samples: channels.iter().map(|c| c.slot.compat().cycles).sum(),
        max: channels.iter().filter_map(|c| c.slot.precise().max).max(),
    }
}

fn live_mode(settings: &Settings) -> LiveMode {
    if settings.verbose {
        LiveMode::Verbose
    } else if settings.quiet {
        LiveMode::Quiet
    } else {
        LiveMode::Frames
    }
}

/// The final outputs ([`crate::report::formats`]): JSON first (so
/// `--json=-` comes before the summary, as in C), then the `-q` summary,
/// then the histogram, ..., the `--verdict` lines and the times of the
/// maxima (`--verdict`, `--percentiles`) last. Every output is attempted
/// even if an earlier one failed; the first failure is returned.
fn write_final_outputs(
    settings: &Settings,
    report: &RunReport,
    meta: &RunMeta,
    extras: Extras<'_, '_>,
    monitor_document: Option<&[u8]>,
    out: &mut Stdout,
) -> anyhow::Result<()> {
    let asked = Asked {
        json: settings.json.as_ref(),
        histogram: settings.histogram.as_ref().map(|h| HistogramAsked {
            target: &h.target,
            summary_column: h.summary_column,
            rt_tests: settings.rt_tests,
        }),
        hgrm: settings.hgrm.as_ref().map(|h| h.asked()),
        percentiles: settings.percentiles,
        breaktrace: settings.engine.breaktrace.is_some(),
        explain: settings.explain.as_ref(),
        verdict: settings.verdict,
        subject: "Thread",
        max_times: (settings.verdict.is_some() || settings.percentiles)
            .then_some(SampleInstants::DueWoke),
    };
    let own = Own {
        settings,
        report,
        meta,
        extras,
        monitor_document,
    };
    let finished = Finished {
        report,
        extras,
        asked: &asked,
        tool: &own,
    };
    formats::write_all(&finished, out)
}

/// What cyclictest writes its own way: its JSON document (the monitor's,
/// when it has one) and the `-q` summary.
struct Own<'a> {
    settings: &'a Settings,
    report: &'a RunReport,
    meta: &'a RunMeta,
    extras: Extras<'a, 'a>,
    monitor_document: Option<&'a [u8]>,
}

impl ToolOutputs for Own<'_> {
    fn write_document(&self, mut w: &mut dyn Write) -> io::Result<()> {
        match self.monitor_document {
            Some(document) => w.write_all(document),
            None => write_json_with(
                &mut w,
                self.report,
                self.meta,
                &self.settings.engine,
                self.extras,
            ),
        }
    }

    fn write_text(&self, place: Place, out: &mut Stdout) -> anyhow::Result<()> {
        if place == Place::AfterJson && self.settings.quiet && self.settings.histogram.is_none() {
            out.emit(|w| write_quiet_summary(w, self.report));
        }
        Ok(())
    }
}

/// cyclictest's `/dev/cpu_dma_latency` step and its messages. The returned
/// request must be held for the whole run.
fn request_dma_latency(
    setting: DmaLatency,
    synthetic: bool,
    out: &mut Stdout,
) -> anyhow::Result<Option<power::DmaLatencyRequest>> {
    match setting {
        DmaLatency::SkipLaptop => {
            note!("WARN: not setting cpu_dma_latency to save battery power");
            Ok(None)
        }
        DmaLatency::SkipDefaultSystem => {
            note!("WARN: not setting cpu_dma_latency from cyclictest");
            Ok(None)
        }
        DmaLatency::SkipDeepestIdleState => {
            note!("WARN: not setting cpu_dma_latency, --deepest-idle-state is set instead");
            Ok(None)
        }
        DmaLatency::Set(value) if synthetic => {
            out.emit(|w| writeln!(w, "# /dev/cpu_dma_latency set to {value}us"));
            Ok(None)
        }
        DmaLatency::Set(value) => match power::request_dma_latency(value) {
            Ok(request) => {
                out.emit(|w| writeln!(w, "# /dev/cpu_dma_latency set to {value}us"));
                Ok(Some(request))
            }
            Err(DmaLatencyError::Open(e)) => {
                note!(
                    "WARN: open {}: {}",
                    power::DMA_LATENCY_PATH,
                    io_strerror(&e)
                );
                Ok(None)
            }
            Err(DmaLatencyError::Write { source, .. }) => {
                note!(
                    "# error setting cpu_dma_latency to {value}!: {}",
                    io_strerror(&source)
                );
                Ok(None)
            }
        },
    }
}

/// The ftrace files for `-b` (and `--tracemark`), opened before the run.
/// Without tracefs, or without access to it, the run goes on with one
/// warning: the break still stops the run, only the trace keeps running.
fn open_trace_files(settings: &Settings) -> Option<TraceControl> {
    settings.engine.breaktrace?;
    let Some(dir) = tracefs::tracing_dir() else {
        note!(
            "WARN: tracefs is not mounted (/sys/kernel/tracing): -b will stop the run but \
             cannot stop the trace"
        );
        return None;
    };
    match TraceControl::open(&dir, settings.tracemark) {
        Ok(trace) => Some(trace),
        Err(e) => {
            note!(
                "WARN: cannot open the trace files in {}: {}; -b will stop the run but \
                 cannot stop the trace",
                dir.display(),
                io_strerror(&e)
            );
            None
        }
    }
}

fn describe_thread_error(index: usize, error: ThreadError, settings: &Settings) -> String {
    let errno = rtlat_sys::strerror(error.errno);
    let plan = &settings.engine.threads[index];
    let who = format!("measuring thread {index}");
    match error.step {
        ThreadStep::Affinity => pin_failure(&who, plan.cpu.unwrap_or(0), &errno),
        ThreadStep::Scheduler => policy_failure(&who, plan.policy, plan.priority, &errno),
        ThreadStep::Wait => {
            format!("{who}: waiting for its deadline failed: {errno}")
        }
        ThreadStep::SmiCounter => format!(
            "{who}: cannot read the SMI counter of CPU {}: {errno}; \
             is the msr module loaded (modprobe msr)?",
            plan.cpu.unwrap_or(0)
        ),
        ThreadStep::Timer if settings.engine.wait == WaitMode::Timerfd => {
            format!("{who}: cannot set up its timerfd (--wait timerfd): {errno}")
        }
        ThreadStep::Timer => {
            format!("{who}: cannot set up its POSIX timer (-x): {errno}")
        }
    }
}
