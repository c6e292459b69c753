//! Carries out one `rtlat signaltest` run: privilege check, the trace file
//! of `-b`, `mlockall`, signal handlers, the `--load` beside the ring, the
//! ring, the live display (thread 0's line redrawn every 10 ms, or its
//! samples with `-v`) until the run ends, then every thread's `T:` line,
//! the JSON, the histogram, the `# load` and `--verdict` lines and the
//! `--fail-if` gates. Every way a run ends (loops, duration, `-b`, a
//! signal, a closed stdout, a failed load) goes through the same final
//! outputs.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rtlat_core::ClockInstant;
use rtlat_core::SYNTHETIC_RING_START;
use rtlat_core::ThreadChannel;
use rtlat_core::time;
use rtlat_core::{RingEngine, RingRunning};
use rtlat_core::{RunReport, ThreadError, ThreadStep};
use rtlat_core::{SchedPolicy, TimeSourceKind};
use rtlat_sys::clock::Clock;
use rtlat_sys::tracefs::{self, TraceControl};

use super::output::{write_json, write_sample_line, write_status_line, write_thread_line};
use super::settings::Settings;
use crate::host::Host;
use crate::live::after_frame;
use crate::load::beside::LoadBeside;
use crate::output::{Stdout, end_run};
use crate::report::RunMeta;
use crate::report::formats::{self, Asked, Finished, HistogramAsked, Place, ToolOutputs};
use crate::report::json::Extras;
use crate::report::sample_time::SampleInstants;
use crate::report::verdict::{self, SystemWatch};
use crate::rtsetup::{
    check_realtime_privilege, io_strerror, lock_memory, note_not_realtime, pin_failure,
    pinned_cpus, policy_failure,
};
use crate::run_audit;
use crate::signals::SignalFlags;
use rtlat_args::stdio::{self, note, tell};

/// How often the live display is redrawn (signaltest: `usleep(10000)`).
const FRAME_PERIOD: Duration = Duration::from_millis(10);

/// What the main thread shows while the ring runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Thread 0's line, redrawn in place.
    Frames,
    /// Every sample of thread 0.
    Verbose,
    /// Nothing.
    Quiet,
}

/// Runs the ring described by `settings`; returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let ring = &settings.ring;
    let synthetic = matches!(ring.source, TimeSourceKind::Synthetic { .. });
    let host = if synthetic { Host::Pinned } else { Host::Real };
    let start_time = host.timestamp();
    let mut out = Stdout::new(false);
    if !synthetic && ring.needs_realtime() {
        // Before the room: without the privilege no limit matters.
        check_realtime_privilege(
            SchedPolicy::Fifo,
            ring.max_priority(),
            pinned_cpus(ring.threads.iter().map(|t| t.cpu)).as_deref(),
            "leave out -p",
        )?;
    }
    crate::limits::check_room(
        &format!("-t {}", ring.threads.len()),
        &rtlat_core::Footprint::of_ring(ring),
        settings.mlockall && !synthetic,
    )?;
    if !synthetic && !ring.needs_realtime() {
        note_not_realtime("the ring threads", SchedPolicy::Other);
    }
    // A ring has no interval: its idle states are judged against the
    // default one.
    let audit = run_audit::audit_run(
        host,
        settings.json.is_some() || settings.verdict.is_some(),
        settings.gates.as_ref(),
        &run_audit::request(
            ring.threads.iter().map(|t| t.cpu),
            ring.needs_realtime().then(|| ring.max_priority()),
            None,
        ),
    );
    // Opened before mlockall, so that locking covers it.
    let trace = match (synthetic, ring.break_threshold) {
        (false, Some(_)) => open_tracing_on(),
        _ => None,
    };
    let engine = RingEngine::new(ring.clone(), trace).context("preparing the ring threads")?;
    if settings.mlockall && !synthetic {
        lock_memory()?;
    }
    let signals = SignalFlags::install()?;
    let mut load = LoadBeside::start(settings.load.as_ref())?;
    let system = SystemWatch::start(!synthetic, ring.threads.iter().map(|t| t.cpu));
    let running = engine.start().context("starting the ring threads")?;
    let timeline = host.timeline(Clock::Monotonic, ring_origin());
    load.set_origin(Instant::now());
    if let Some((index, error)) = running.setup_error() {
        running.finish(false);
        bail!(describe_thread_error(index, error, settings));
    }
    if let Err(e) = running.kick() {
        running.finish(true);
        return Err(e.into());
    }

    let mode = if settings.verbose {
        Mode::Verbose
    } else if settings.quiet {
        Mode::Quiet
    } else {
        Mode::Frames
    };
    let shared = running.shared_handle();
    let mut verbose = VerbosePrinter::default();
    let external_stop = Display {
        running: &running,
        settings,
        mode,
        host,
        signals: &signals,
    }
    .until_end(&mut verbose, &mut out, &mut load)?;
    let run_time = running.started().elapsed();
    let report = running.finish(external_stop);
    let system = system.finish();
    let load = load.stop();
    if mode == Mode::Verbose {
        // The samples taken after the last batch: nothing is lost.
        out.emit(|w| verbose.drain(w, &shared.channels[0]));
        if verbose.lost > 0 {
            tell!(
                "-v: {} samples were overwritten before they could be printed",
                verbose.lost
            );
        }
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
    // How long the ring ran; a synthetic run's time means nothing.
    let measured = (!synthetic).then_some(run_time);
    let load_results = load.results(settings.load.as_ref(), measured);
    let extras = Extras {
        load: load_results.as_ref(),
        verdict: &verdict,
        explain: None,
        timeline: Some(timeline),
    };
    let written = write_final_outputs(settings, &report, &meta, &extras, &mut out);
    let failure = thread_failure
        .map(|(index, error)| describe_thread_error(index, error, settings))
        .or_else(|| load.failure.clone());
    let status = end_run(&mut out, written, failure, status)?;
    let seconds = measured.map_or(0.0, |d| d.as_secs_f64());
    let gates = settings.gates.as_ref();
    crate::gate::apply(
        gates,
        &report,
        &verdict,
        "thread",
        "signaltest",
        seconds,
        status,
    )
}

/// Where a synthetic ring's clock starts (the real ring's clock is
/// CLOCK_MONOTONIC).
fn ring_origin() -> ClockInstant {
    ClockInstant(time::to_nanos(&SYNTHETIC_RING_START))
}

/// The main thread while the ring runs.
struct Display<'a> {
    running: &'a RingRunning,
    settings: &'a Settings,
    mode: Mode,
    host: Host,
    signals: &'a SignalFlags,
}

impl Display<'_> {
    /// Shows the live output until the run ends by itself or is stopped.
    /// Returns whether the stop came from outside (signal, closed stdout
    /// or a failed `--load`). `load` is driven (its phases, its workers'
    /// health) at every frame.
    fn until_end(
        &self,
        verbose: &mut VerbosePrinter,
        out: &mut Stdout,
        load: &mut LoadBeside<'_>,
    ) -> anyhow::Result<bool> {
        let stop = |load: &mut LoadBeside<'_>| {
            load.drive();
            self.signals.stop_requested() || load.failed()
        };
        if self.host == Host::Pinned {
            // A synthetic ring finishes in an instant: show its final state
            // only, so that the output is the same every time.
            while !self.running.reached_end() {
                if stop(load) {
                    return Ok(true);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        loop {
            // Looked at before the frame is drawn, so that the last frame
            // shows thread 0 with its final count.
            let ended = self.running.reached_end();
            self.draw(verbose, out);
            if let Some(stopped) = after_frame(out, ended) {
                return Ok(stopped);
            }
            std::thread::sleep(FRAME_PERIOD);
            if self.signals.take_status_request() {
                stdio::to_stderr(|w| self.write_status_block(w));
            }
            if stop(load) {
                return Ok(true);
            }
            if self.mode == Mode::Frames {
                out.emit(|w| w.write_all(b"\x1b[3A"));
            }
        }
    }

    fn draw(&self, verbose: &mut VerbosePrinter, out: &mut Stdout) {
        let shared = self.running.shared();
        match self.mode {
            Mode::Quiet => {}
            Mode::Verbose => out.emit(|w| verbose.drain(w, &shared.channels[0])),
            Mode::Frames => {
                let loadavg = self.host.load_average();
                let slot = &shared.channels[0].slot;
                let plan = &self.settings.ring.threads[0];
                out.emit(|w| {
                    write!(w, "{loadavg}          \n\n")?;
                    write_status_line(
                        w,
                        0,
                        slot.tid(),
                        plan.priority,
                        &slot.compat(),
                        self.settings.ring.resolution,
                    )
                });
            }
        }
    }

    /// SIGUSR1 to the process: every thread's line as it stands, on stderr.
    fn write_status_block(&self, w: &mut impl Write) -> io::Result<()> {
        let shared = self.running.shared();
        for (plan, channel) in self
            .settings
            .ring
            .threads
            .iter()
            .zip(shared.channels.iter())
        {
            write_status_line(
                w,
                plan.index,
                channel.slot.tid(),
                plan.priority,
                &channel.slot.compat(),
                self.settings.ring.resolution,
            )?;
        }
        Ok(())
    }
}

/// Prints thread 0's samples as `-v` lines, each once, in order.
#[derive(Debug, Default)]
struct VerbosePrinter {
    /// The next sample number to print.
    next: u64,
    /// Samples overwritten in the ring before they could be printed.
    lost: u64,
}

impl VerbosePrinter {
    fn drain(&mut self, w: &mut impl Write, channel: &ThreadChannel) -> io::Result<()> {
        let Some(ring) = &channel.samples else {
            return Ok(());
        };
        let published = channel.slot.cycles();
        for cycle in self.next..published {
            match ring.get(cycle, published) {
                Some(value) => write_sample_line(w, 0, cycle, value)?,
                None => self.lost += 1,
            }
        }
        self.next = self.next.max(published);
        Ok(())
    }
}

/// The final outputs ([`crate::report::formats`]): every thread's `T:`
/// line (after `Thread N exceeded trace limit.` for the thread that broke
/// the run), then the JSON, then the histogram, then the closing `# load`
/// and `--verdict` lines (as cyclictest's). Every output is attempted;
/// the first failure is returned.
fn write_final_outputs(
    settings: &Settings,
    report: &RunReport,
    meta: &RunMeta,
    extras: &Extras<'_, '_>,
    out: &mut Stdout,
) -> anyhow::Result<()> {
    let asked = Asked {
        json: settings.json.as_ref(),
        histogram: settings
            .histogram
            .as_ref()
            .map(|target| HistogramAsked::to(target).in_dialect(settings.rt_tests)),
        verdict: settings.verdict,
        subject: "Thread",
        max_times: settings
            .verdict
            .is_some()
            .then_some(SampleInstants::SentReceived),
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
        },
    };
    formats::write_all(&finished, out)
}

/// What signaltest writes its own way: its JSON document and, first, its
/// `T:` lines.
struct Own<'a> {
    report: &'a RunReport,
    meta: &'a RunMeta,
    extras: &'a Extras<'a, 'a>,
}

impl ToolOutputs for Own<'_> {
    fn write_document(&self, mut w: &mut dyn Write) -> io::Result<()> {
        write_json(&mut w, self.report, self.meta, self.extras)
    }

    fn write_text(&self, place: Place, out: &mut Stdout) -> anyhow::Result<()> {
        if place == Place::First {
            out.emit(|w| {
                for t in &self.report.threads {
                    if self.report.break_info.is_some_and(|b| b.thread == t.index) {
                        writeln!(w, "Thread {} exceeded trace limit.", t.index)?;
                    }
                    write_thread_line(w, t, self.report.resolution)?;
                }
                Ok(())
            });
        }
        Ok(())
    }
}

/// `tracing_on` of a mounted tracefs, so that a `-b` break stops the trace
/// (C signaltest does not touch ftrace); `None`, with a warning when the
/// file exists but cannot be opened, otherwise.
fn open_tracing_on() -> Option<TraceControl> {
    let dir = tracefs::tracing_dir()?;
    match TraceControl::open(&dir, false) {
        Ok(control) => Some(control),
        Err(e) => {
            note!(
                "WARN: -b: cannot open {}: {}; the kernel trace will not be stopped",
                dir.join("tracing_on").display(),
                io_strerror(&e)
            );
            None
        }
    }
}

fn describe_thread_error(index: usize, error: ThreadError, settings: &Settings) -> String {
    let why = rtlat_sys::strerror(error.errno);
    let plan = &settings.ring.threads[index];
    let who = format!("ring thread {index}");
    match error.step {
        ThreadStep::Affinity => {
            let cpu = plan.cpu.map_or("?".to_string(), |c| c.to_string());
            pin_failure(&who, cpu, &why)
        }
        ThreadStep::Scheduler => policy_failure(&who, plan.policy, plan.priority, &why),
        _ => format!("{who}: waiting for or passing on the signal failed: {why}"),
    }
}
