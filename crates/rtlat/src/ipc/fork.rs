//! Fork mode (`-f`, svsematest and sigwaittest): each side of each pair is
//! a process of its own.
//!
//! As in the C tools, the main process re-executes the program with one
//! argument, `-fr<N>` (receiver of pair N) or `-fs<N>` (sender), and the
//! shown IDs are process ids. The program is this very binary
//! (`/proc/self/exe`), started under the tool's name. Unlike C, which
//! shares a POSIX shared-memory object with a fixed name (`/sigwaittest`,
//! for both tools), the state lives in an anonymous memfd the children
//! inherit; the variable `RTLAT_IPC_SHM_FD` tells them its descriptor.
//! Nothing is named, so any number of runs can go on at once. The
//! semaphore sets of svsematest are announced to the janitor
//! (`rtlat_core::janitor`), which removes them if this process is killed.
//!
//! The sides never outlive the run: they start with the stop signals
//! blocked (a Ctrl-C to the process group reaches this process, which
//! stops them), and their first act is to ask for SIGKILL when this
//! process dies and to check that it is still their parent (its pid comes
//! in `RTLAT_HELPER_PARENT`; see `rtlat_sys::process`). Without both
//! variables, `-fr<N>` / `-fs<N>` are refused.

use std::cell::RefCell;
use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rtlat_core::ThreadStep;
use rtlat_core::helper::{PARENT_ENV, spawn_child};
use rtlat_core::ipc::PairResult;
use rtlat_core::ipc::{ForkCells, run_side};
use rtlat_core::ipc::{Mechanism, Side};
use rtlat_core::janitor::KeptSemSet;
use rtlat_sys::process::{ChildProcess, Stdio};
use rtlat_sys::signals;

use super::PairTool;
use super::run::{
    Beside, CpuTracker, LiveRun, ProcView, RunFacts, audit_pair_run, describe_error, display,
    finish, lock_memory, open_trace_files,
};
use super::settings::IpcSettings;
use crate::host::Host;
use crate::load::beside::LoadBeside;
use crate::output::Stdout;
use crate::report::verdict::SystemWatch;
use crate::rtsetup::{OWN_BINARY, start_janitor};
use crate::signals::SignalFlags;
use rtlat_args::UsageError;

/// The environment variable that hands the shared memory down.
const SHM_FD_VAR: &str = "RTLAT_IPC_SHM_FD";

/// How long the sides may take to start.
const START_LIMIT: Duration = Duration::from_secs(10);

struct ForkRun<'a> {
    cells: &'a ForkCells,
    children: RefCell<&'a mut Children>,
}

impl LiveRun for ForkRun<'_> {
    fn snapshot(&self) -> Vec<PairResult> {
        self.cells.results(false)
    }

    /// Also when a side's process has died (killed, say): its partner
    /// would wait for it for ever.
    fn reached_end(&self) -> bool {
        self.children.borrow_mut().note_deaths(self.cells) || self.cells.reached_end()
    }
}

/// The children of a run; killed and reaped when dropped, whatever
/// happened.
struct Children(Vec<(ChildProcess, usize, Side)>);

impl Children {
    /// Marks sides whose process has died without saying why as failed.
    fn note_deaths(&mut self, cells: &ForkCells) -> bool {
        let mut died = false;
        for (child, pair, side) in &mut self.0 {
            if let Ok(Some(status)) = child.try_wait()
                && cells.side_active(*pair, *side)
            {
                died = true;
                let code = status.code().unwrap_or(0);
                cells.mark_failed(
                    *pair,
                    *side,
                    ThreadStep::Wait,
                    if code > 0 { code } else { 5 },
                );
            }
        }
        died
    }

    /// Asks every side to stop and waits for them: the wake-up signal ends
    /// a side's wait; a side that does not react within 5 s is killed.
    fn stop(&mut self, cells: &ForkCells) {
        cells.request_stop();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut waiting = false;
            for (child, pair, side) in &mut self.0 {
                if matches!(child.try_wait(), Ok(None)) {
                    waiting = true;
                    if cells.side_active(*pair, *side) || Instant::now() > deadline {
                        let _ = child.signal(signals::wake_signal());
                    }
                }
            }
            if !waiting {
                break;
            }
            if Instant::now() > deadline {
                for (child, _, _) in &mut self.0 {
                    let _ = child.kill();
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        for (child, _, _) in &mut self.0 {
            let _ = child.wait();
        }
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for (child, _, _) in &mut self.0 {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// Runs `settings` with each side in a process of its own.
pub fn run(settings: &IpcSettings) -> anyhow::Result<u8> {
    let host = Host::Real;
    let start_time = host.timestamp();
    let mut out = Stdout::new(false);
    let audit = audit_pair_run(settings, host);
    lock_memory(&settings.engine)?;
    let signals = SignalFlags::install()?;
    let sysv = settings.engine.mechanism == Mechanism::SysvSemaphore;
    if sysv {
        // Before the shared memory exists: the janitor needs no copy of it.
        start_janitor("its SysV semaphore sets");
    }
    let cells = ForkCells::create(&settings.engine).context("preparing fork mode")?;
    let mut semaphores = Vec::new();
    if sysv {
        for plan in &settings.engine.pairs {
            let set = KeptSemSet::create(2).map_err(|e| {
                anyhow::anyhow!(
                    "cannot create the SysV semaphore set of pair {}: {e}",
                    plan.index
                )
            })?;
            cells.set_semaphore(plan.index, &set);
            semaphores.push(set);
        }
    }
    let facts = RunFacts {
        host,
        start_time,
        audit,
    };
    let mut children = Children(Vec::new());
    for plan in &settings.engine.pairs {
        for (side, letter) in [(Side::Receiver, 'r'), (Side::Sender, 's')] {
            let child = spawn_child(Path::new(OWN_BINARY), OsStr::new(settings.tool.name()))
                .arg(format!("-f{letter}{}", plan.index))
                .env(SHM_FD_VAR, cells.raw_fd().to_string())
                .stdin(Stdio::Null)
                .spawn()
                .with_context(|| {
                    format!(
                        "cannot start the {} process of pair {}",
                        side.name(),
                        plan.index
                    )
                })?;
            children.0.push((child, plan.index, side));
        }
    }
    let expected = 2 * settings.engine.pairs.len();
    let started = Instant::now();
    while cells.ready() < expected {
        if children.note_deaths(&cells) || started.elapsed() > START_LIMIT {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if let Some((pair, side, error)) = cells.setup_error() {
        children.stop(&cells);
        bail!(describe_error(settings, pair, side, error));
    }
    if cells.ready() < expected {
        children.stop(&cells);
        bail!("the fork-mode processes did not start within {START_LIMIT:?}");
    }
    // Started before the sides are let go; on an error the children are
    // stopped (dropped) too.
    let mut load = LoadBeside::start(settings.load.as_ref())?;
    let system = SystemWatch::start(true, settings.engine.pairs.iter().map(|p| p.cpu));
    cells.go();
    let mut cpus = CpuTracker::new(&settings.engine, ProcView::Processes, false);
    let view = ForkRun {
        cells: &cells,
        children: RefCell::new(&mut children),
    };
    let external = display(settings, &view, &signals, &mut cpus, &mut out, &mut load)?;
    children.stop(&cells);
    let load = load.stop();
    let report = cells.report(external);
    let system = system.finish();
    drop(semaphores);
    let beside = Beside { load, system };
    finish(settings, &report, &mut cpus, facts, &mut out, beside)
}

/// Side `side` of pair `pair` of a fork-mode run (`-fr<N>` / `-fs<N>`).
pub fn child(tool: PairTool, side: Side, pair: usize) -> anyhow::Result<u8> {
    let letter = if side == Side::Receiver { 'r' } else { 's' };
    let refused = || {
        UsageError(format!(
            "-f/--fork: '{letter}{pair}' is for the processes of a fork-mode run, which get \
             their settings from the rtlat that starts them; run '{} -f' instead",
            tool.name()
        ))
    };
    let number = |var: &str| std::env::var(var).ok().and_then(|v| v.parse::<i32>().ok());
    let (Some(fd), Some(parent)) = (number(SHM_FD_VAR), number(PARENT_ENV)) else {
        return Err(refused().into());
    };
    // Before anything else: die with the run, which must be our parent (if
    // it died already, we have another one by now).
    rtlat_sys::process::die_with_parent(parent).map_err(|_| refused())?;
    // Shown as the C tool's sides are (not as `exe`, the name it was run by).
    rtlat_sys::system::set_thread_name(tool.name());
    let cells = ForkCells::open_inherited(fd).context("fork-mode child")?;
    if cells.mechanism() != tool.mechanism() {
        bail!("fork-mode child: the shared memory belongs to another tool's run");
    }
    if pair >= cells.pairs() {
        bail!(
            "fork-mode child: pair {pair} does not exist (the run has {})",
            cells.pairs()
        );
    }
    let config = cells.config();
    if let Err(e) = lock_memory(&config) {
        cells.mark_failed(pair, side, ThreadStep::Wait, 12);
        bail!(e);
    }
    let trace = match side {
        Side::Receiver => open_trace_files(&config),
        Side::Sender => None,
    };
    run_side(&cells, side, pair, trace.as_ref()).context("fork-mode child")?;
    Ok(0)
}
