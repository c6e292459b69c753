//! Carries out one IPC tool run in threads mode (each side a thread of
//! this process), or hands fork mode (`-f`) over to [`super::fork`]:
//! privilege check, room, the pairs, then the live display and the final
//! outputs of [`super::run`].

use std::time::Instant;

use anyhow::{Context, bail};
use rtlat_core::config::{SchedPolicy, TimeSourceKind};
use rtlat_core::ipc::engine::PairEngine;
use rtlat_core::ipc::{Mechanism, PairConfig};

use super::run::{
    Beside, CpuTracker, ProcView, RunFacts, audit_pair_run, describe_error, display, finish,
    lock_memory, open_trace_files,
};
use super::settings::IpcSettings;
use crate::host::Host;
use crate::load::beside::LoadBeside;
use crate::output::Stdout;
use crate::report::verdict::SystemWatch;
use crate::rtsetup::{check_realtime_privilege, note_not_realtime, pinned_cpus, start_janitor};
use crate::signals::SignalFlags;

/// Runs `settings` in threads mode (or hands fork mode over); returns the
/// exit status.
pub fn run(settings: &IpcSettings) -> anyhow::Result<u8> {
    let synthetic = matches!(settings.engine.run.source, TimeSourceKind::Synthetic { .. });
    let footprint = rtlat_core::footprint::Footprint::of_pairs(&settings.engine);
    let pairs = format!("-t {}", settings.engine.pairs.len());
    if !synthetic && settings.engine.needs_realtime() {
        // Before the room: without the privilege no limit matters.
        check_realtime_privilege(
            SchedPolicy::Fifo,
            settings.engine.max_priority(),
            pinned_cpus(settings.engine.pairs.iter().map(|p| p.cpu)).as_deref(),
            "leave out -p",
        )?;
    }
    if settings.fork && !synthetic {
        // Each side is a process of its own: the tasks count, the memory
        // is the children's.
        let processes = rtlat_core::footprint::Footprint {
            heap: rtlat_core::units::Bytes(0),
            stack_per_thread: rtlat_core::units::Bytes(0),
            ..footprint
        };
        crate::limits::check_room(&pairs, &processes, false)?;
        note_if_not_realtime(&settings.engine);
        return super::fork::run(settings);
    }
    // Locked for real-time runs; a SCHED_OTHER run goes on unlocked when
    // the lock limit is too small (lock_memory).
    let locked = !synthetic && settings.engine.needs_realtime();
    crate::limits::check_room(&pairs, &footprint, locked)?;
    if !synthetic {
        note_if_not_realtime(&settings.engine);
    }
    let host = if synthetic { Host::Pinned } else { Host::Real };
    let start_time = host.timestamp();
    let mut out = Stdout::new(false);
    let audit = audit_pair_run(settings, host);
    let trace = if synthetic {
        None
    } else {
        lock_memory(&settings.engine)?;
        open_trace_files(&settings.engine)
    };
    let signals = SignalFlags::install()?;
    if !synthetic && settings.engine.mechanism == Mechanism::SysvSemaphore {
        start_janitor("its SysV semaphore sets");
    }
    let engine = PairEngine::new(settings.engine.clone(), trace).context("preparing the pairs")?;
    let facts = RunFacts {
        host,
        start_time,
        audit,
    };
    let mut load = LoadBeside::start(settings.load.as_ref())?;
    let system = SystemWatch::start(!synthetic, settings.engine.pairs.iter().map(|p| p.cpu));
    let running = engine.start().context("starting the pairs")?;
    load.set_origin(Instant::now());
    if let Some((pair, side, error)) = running.setup_error() {
        running.finish(None);
        bail!(describe_error(settings, pair, side, error));
    }
    let mut cpus = CpuTracker::new(&settings.engine, ProcView::Threads, synthetic);
    let external = display(settings, &running, &signals, &mut cpus, &mut out, &mut load)?;
    let report = running.finish(external);
    let system = system.finish();
    let load = load.stop();
    let beside = Beside { load, system };
    finish(settings, &report, &mut cpus, facts, &mut out, beside)
}

/// A SCHED_OTHER run needs no privilege; it gets a note saying its
/// figures are not real-time latencies. (A real-time run's privilege is
/// checked before anything else, the room included.)
fn note_if_not_realtime(config: &PairConfig) {
    if !config.needs_realtime() {
        note_not_realtime("the pairs", SchedPolicy::Other);
    }
}
