//! Carries out one `rtlat oslat` run, in C's order: the version line, the
//! real-time privilege (with `-f`), `mlockall`, the main thread pinned to
//! `-C`, the header, the pre-heat, the bias, the measurement, the summary
//! table, the JSON, then the `--fail-if` gates. A stop signal (SIGINT,
//! SIGTERM, SIGHUP, SIGQUIT) ends the phase that runs and skips the rest:
//! the summary and the files are still written. A gap that reaches `-T`
//! writes its marker into the kernel trace and stops it, ends the run
//! with C's message on stderr and exit status 1, after the summary.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use anyhow::bail;
use rtlat_core::oslat::{OslatError, OslatRun, Stop, ThreadFigures, run_phase};
use rtlat_core::{
    ClockKind, CompatStats, EndReason, Nanos, PreciseStats, Resolution, RunReport, SchedPolicy,
    ThreadReport,
};
use rtlat_sys::tracefs::{self, TraceControl};

use super::output::{Summary, members, version_line, write_header, write_summary};
use super::settings::Settings;
use crate::host::Host;
use crate::load::beside::LoadBeside;
use crate::output::{Stdout, end_run};
use crate::report::RunMeta;
use crate::report::formats::{self, Asked, Finished, ToolOutputs};
use crate::report::json::{Extras, load_dto, write_envelope};
use crate::report::load::LoadResults;
use crate::report::verdict::{self, SystemWatch, Verdict};
use crate::rtsetup::{check_realtime_privilege, errno_text, io_strerror, lock_memory_because};
use crate::run_audit;
use crate::signals::SignalFlags;
use rtlat_args::stdio::note;

/// How long the pre-heat runs (C: 1 s, whatever `-D` says).
const PREHEAT: Duration = Duration::from_secs(1);

/// Runs oslat as `settings` says; returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let mut out = Stdout::new(false);
    if settings.version_only {
        out.emit(|w| writeln!(w, "{}", version_line(settings.rt_tests)));
        return end_run(&mut out, Ok(()), None, 0);
    }
    let config = &settings.config;
    let host = Host::Real;
    let start_time = host.timestamp();
    if config.rtprio > 0 {
        check_realtime_privilege(
            SchedPolicy::Fifo,
            config.rtprio,
            Some(&config.cpus),
            "leave out -f",
        )?;
    }
    let audit = run_audit::audit_run(
        host,
        settings.json.is_some() || settings.verdict.is_some(),
        settings.gates.as_ref(),
        &run_audit::request(
            config.cpus.iter().map(|&c| Some(c)),
            (config.rtprio > 0).then_some(config.rtprio),
            None,
        ),
    );
    let trace = match config.trace_threshold_us {
        Some(_) => open_trace(),
        None => None,
    };
    out.emit(|w| writeln!(w, "{}", version_line(settings.rt_tests)));
    // C locks everything, always (its threads' stacks and tables too).
    lock_memory_because("", "")?;
    if let Err(e) = rtlat_sys::affinity::pin_current_thread(&[settings.main_cpu]) {
        bail!(
            "-C/--cpu-main-thread: cannot run the main thread on CPU {}: {}",
            settings.main_cpu,
            errno_text(e)
        );
    }
    if config.rtprio > 0 && config.cpus.contains(&0) {
        out.emit(|w| {
            writeln!(
                w,
                "WARNING: Running SCHED_FIFO workload on CPU 0 may hang the thread"
            )
        });
    }
    let signals = SignalFlags::install()?;
    let mut load = LoadBeside::start(settings.load.as_ref())?;
    load.set_origin(Instant::now());
    let system = SystemWatch::start(true, config.cpus.iter().map(|&c| Some(c)));
    if !settings.quiet {
        out.emit(|w| write_header(w, settings));
        out.emit(|w| writeln!(w, "Pre-heat for 1 seconds..."));
    }
    out.flush();
    let engine = OslatRun::new(config.clone(), trace);
    let stop = Stop::default();
    let mut tick = || {
        load.drive();
        if signals.stop_requested() || load.failed() {
            stop.request();
            return true;
        }
        false
    };
    let preheat_cpus = if settings.single_preheat {
        &config.cpus[..1]
    } else {
        &config.cpus[..]
    };
    let preheat = run_phase(&engine, preheat_cpus, 0, true, PREHEAT, &stop, &mut tick)
        .map_err(|e| anyhow::anyhow!(describe(&e)))?;
    let bias = if settings.bias {
        let bias = preheat.threads.iter().map(|t| t.min_lat).min().unwrap_or(0);
        let text = config.scale.text(bias);
        out.emit(|w| writeln!(w, "Global bias set to {text} (us)"));
        bias
    } else {
        0
    };
    if !settings.quiet {
        out.emit(|w| writeln!(w, "Test starts..."));
    }
    out.flush();
    let length = Duration::from_nanos(config.duration.as_nanos().max(0) as u64);
    let started = Instant::now();
    let measured = run_phase(&engine, &config.cpus, bias, false, length, &stop, &mut tick)
        .map_err(|e| anyhow::anyhow!(describe(&e)))?;
    let run_time = started.elapsed();
    let system = system.finish();
    let load = load.stop();
    if !settings.quiet {
        out.emit(|w| writeln!(w, "Test completed.\n"));
    }
    let summary = Summary {
        threads: &measured.threads,
        bias,
        scale: config.scale,
        rt_tests: settings.rt_tests,
        bucket_size: config.bucket_size,
        zero_omit: settings.zero_omit,
    };
    out.emit(|w| write_summary(w, &summary));

    // C's message (its program name first; 2.4 adds a second line).
    let triggered = measured.trigger.map(|t| {
        format!(
            "{}: Trace threshold ({} us) triggered on cpu {} with {} us!\n{}",
            rtlat_args::stdio::program_name(),
            config.trace_threshold_us.unwrap_or(0),
            t.cpu,
            config.scale.text(t.lat),
            if settings.rt_tests.oslat_trace_message_one_line() {
                ""
            } else {
                "Stopping the test.\n"
            }
        )
    });
    let status = u8::from(triggered.is_some() || load.failure.is_some());
    let report = run_report(&measured.threads, settings, triggered.is_some());
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
    let asked = Asked {
        json: settings.json.as_ref(),
        hgrm: settings.hgrm.as_ref().map(|h| h.asked()),
        verdict: settings.verdict,
        subject: "Thread",
        ..Asked::default()
    };
    let finished = Finished {
        report: &report,
        extras: Extras {
            // The load is in the JSON only (oslat prints no `# load` lines).
            load: None,
            verdict: &verdict,
            explain: None,
            timeline: None,
        },
        asked: &asked,
        tool: &Own {
            summary: &summary,
            load: load_results.as_ref(),
            meta: &meta,
            verdict: &verdict,
        },
    };
    let written = formats::write_all(&finished, &mut out);
    let status = end_run(&mut out, written, load.failure.clone(), status)?;
    if let Some(message) = triggered {
        rtlat_args::stdio::to_stderr(|w| w.write_all(message.as_bytes()));
    }
    crate::gate::apply(
        settings.gates.as_ref(),
        &report,
        &verdict,
        "thread",
        "oslat",
        run_time.as_secs_f64(),
        status,
    )
}

/// oslat's own document: the envelope around its members.
struct Own<'a> {
    summary: &'a Summary<'a>,
    load: Option<&'a LoadResults<'a>>,
    meta: &'a RunMeta,
    verdict: &'a Verdict,
}

impl ToolOutputs for Own<'_> {
    fn write_document(&self, mut w: &mut dyn Write) -> io::Result<()> {
        let members = members(self.summary, self.load.map(load_dto));
        write_envelope(&mut w, self.meta, &members, self.verdict)
    }
}

/// `-T`'s trace files: `trace_marker` and `tracing_on` of the mounted
/// tracefs; `None`, after a warning, without them (the run goes on, as
/// C's).
fn open_trace() -> Option<TraceControl> {
    let Some(dir) = tracefs::tracing_dir() else {
        note!("WARN: -T: no tracefs is mounted: no marker, and the kernel trace is not stopped");
        return None;
    };
    match TraceControl::open(&dir, true) {
        Ok(control) => Some(control),
        Err(e) => {
            note!(
                "WARN: -T: cannot open the trace files of {}: {}; no marker, and the kernel \
                 trace is not stopped",
                dir.display(),
                io_strerror(&e)
            );
            None
        }
    }
}

fn describe(e: &OslatError) -> String {
    match e {
        OslatError::Pin { cpu, errno } => format!(
            "-c/--cpu-list: cannot run a thread on CPU {cpu}: {}",
            errno_text(*errno)
        ),
        OslatError::Priority {
            cpu,
            priority,
            errno,
        } => format!(
            "-f/--rtprio: cannot set SCHED_FIFO priority {priority} on the thread of CPU {cpu}: {}",
            errno_text(*errno)
        ),
        OslatError::Spawn(e) => format!("cannot start a measuring thread: {}", io_strerror(e)),
    }
}

/// The run as the house's report, for the gates and the verdict: one
/// thread per CPU, C's µs figures as the compatible ones (the sum is C's
/// average times the count), the ns extremes as the precise ones.
fn run_report(threads: &[ThreadFigures], settings: &Settings, triggered: bool) -> RunReport {
    let policy = if settings.config.rtprio > 0 {
        SchedPolicy::Fifo
    } else {
        SchedPolicy::Other
    };
    RunReport {
        resolution: Resolution::Micros,
        clock: ClockKind::Monotonic,
        end: if triggered {
            EndReason::Break
        } else {
            EndReason::Duration
        },
        threads: threads
            .iter()
            .enumerate()
            .map(|(index, t)| {
                let avg = t.average(0);
                let ns = |v: Option<f64>| v.map(|v| Nanos(v as i64));
                ThreadReport {
                    index,
                    tid: t.tid,
                    policy,
                    priority: settings.config.rtprio,
                    interval: Nanos::ZERO,
                    cpu: Some(t.cpu),
                    node: None,
                    smi_count: None,
                    compat: CompatStats {
                        cycles: t.loops,
                        min: (t.min_lat / t.scale.unit_per_us) as i64,
                        max: (t.max_lat / t.scale.unit_per_us) as i64,
                        act: 0,
                        sum: if avg.is_finite() {
                            (avg * t.loops as f64) as i64
                        } else {
                            0
                        },
                    },
                    precise: PreciseStats {
                        min: ns(t.min_ns),
                        max: ns(t.max_ns),
                        sum_ns: t.mean_ns().map_or(0, |m| (m * t.loops as f64) as i128),
                        sum_sq_ns: None,
                        overruns: 0,
                    },
                    max_at: None,
                    histogram: None,
                    signed_histogram: None,
                    distribution: Some(t.distribution()),
                    phases: Vec::new(),
                    error: None,
                    disturbances: None,
                    wakeup_latencies: None,
                }
            })
            .collect(),
        break_info: None,
        spikes: None,
    }
}
