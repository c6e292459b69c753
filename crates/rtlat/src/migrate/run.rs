//! Carries out one `rtlat rt-migrate-test` run: the privilege check, the
//! audit for the JSON, the signal handlers, the tasks with the progress
//! bar, then the report, the JSON and C's exit status: 0 passed (or no
//! `-c`), 255 a failed check (C's `exit(-1)`), 1 a run stopped before its
//! last interval (a signal or `-D`, as C: "we use this test in bash while
//! loops").

use std::io::Write;
use std::time::Instant;

use rtlat_core::SchedPolicy;
use rtlat_core::migrate;

use super::output::{Report, members, write_progress, write_report};
use super::settings::Settings;
use crate::host::Host;
use crate::output::{Stdout, end_run, write_to};
use crate::report::json::write_unjudged;
use crate::rtsetup::check_realtime_privilege;
use crate::run_audit;
use crate::signals::SignalFlags;

/// C's status of a failed check (`exit(-1)`).
pub const FAILED: u8 = 255;
/// C's status of a run stopped before its end.
pub const STOPPED: u8 = 1;

/// Runs the tasks described by `settings`; returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let engine = &settings.engine;
    let host = Host::Real;
    let start_time = host.timestamp();
    let mut out = Stdout::new(false);
    check_realtime_privilege(
        SchedPolicy::Fifo,
        engine.main_priority,
        None,
        "not an option here: rt-migrate-test checks real-time scheduling",
    )?;
    let highest = engine.priorities.iter().copied().max();
    let audit = run_audit::audit_run(
        host,
        settings.json.is_some(),
        None,
        &run_audit::request(std::iter::empty(), highest, None),
    );
    let signals = SignalFlags::install()?;
    let started = Instant::now();
    let deadline = settings
        .duration
        .map(|d| started + std::time::Duration::from_nanos(d.as_nanos().max(0) as u64));
    let stop = || signals.stop_requested() || deadline.is_some_and(|d| Instant::now() >= d);
    let quiet = settings.quiet;
    let mut progress = |done: usize, total: usize| {
        if !quiet {
            let _ = write_progress(&mut std::io::stderr().lock(), done * 100 / total.max(1));
        }
    };
    progress(0, 1);
    let outcome = migrate::run(engine, &stop, &mut progress)?;
    let _ = std::io::stderr().write_all(b"\n");

    if let Some((task, errno)) = outcome.priority_error {
        anyhow::bail!(
            "task {task}: cannot set SCHED_FIFO priority {}: {}",
            engine.priorities[task],
            rtlat_sys::strerror(errno)
        );
    }
    let failed = outcome.failed_at.is_some();
    let stopped = outcome.stopped;
    let report = Report {
        intervals: &outcome.intervals,
        priorities: &engine.priorities,
        tids: &outcome.tids,
        pid: rtlat_sys::system::current_pid(),
        check: engine.check.then_some(failed),
    };
    out.emit(|w| write_report(w, &report));
    let status = if failed {
        FAILED
    } else if stopped {
        STOPPED
    } else {
        0
    };
    let written = match &settings.json {
        Some(target) => {
            // C's return_code: 1 when the check failed.
            let meta = host.run_meta(
                &settings.cmdline,
                settings.rt_tests,
                start_time,
                u8::from(failed),
                audit,
            );
            let doc = members(&outcome.intervals, &engine.priorities);
            write_to(target, &mut out, "--json", |mut w| {
                write_unjudged(&mut w, &meta, &doc)
            })
        }
        None => Ok(()),
    };
    end_run(&mut out, written, None, status)
}
