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
//! Nothing is named, so any number of runs can go on at once.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rtlat_core::ipc::cells::{ForkCells, run_side};
use rtlat_core::ipc::report::PairResult;
use rtlat_core::ipc::{Mechanism, Side};
use rtlat_core::report::ThreadStep;
use rtlat_sys::ipc::sysv::SemSet;
use rtlat_sys::signals;

use super::PairTool;
use super::run::{
    CpuTracker, LiveRun, ProcView, describe_error, display, finish, lock_memory, open_trace_files,
    prepare_process,
};
use super::settings::IpcSettings;
use crate::cli::UsageError;
use crate::cyclictest::host::Host;
use crate::load::beside::LoadBeside;
use crate::output::Stdout;
use crate::signals::SignalFlags;

/// The environment variable that hands the shared memory down.
const SHM_FD_VAR: &str = "RTLAT_IPC_SHM_FD";

/// How long the sides may take to start.
const START_LIMIT: Duration = Duration::from_secs(10);

struct ForkRun<'a> {
    cells: &'a ForkCells,
}

impl LiveRun for ForkRun<'_> {
    fn snapshot(&self) -> Vec<PairResult> {
        self.cells.results(false)
    }

    fn reached_end(&self) -> bool {
        self.cells.reached_end()
    }
}

/// The children of a run; killed and reaped when dropped, whatever
/// happened.
struct Children(Vec<(Child, usize, Side)>);

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
                        let _ = signals::signal_process(child.id() as i32, signals::wake_signal());
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
    prepare_process(&settings.engine)?;
    let signals = SignalFlags::install()?;
    let cells = ForkCells::create(&settings.engine).context("preparing fork mode")?;
    let mut semaphores = Vec::new();
    if settings.engine.mechanism == Mechanism::SysvSemaphore {
        for plan in &settings.engine.pairs {
            let set = SemSet::create_private(2).map_err(|e| {
                anyhow::anyhow!(
                    "cannot create the SysV semaphore set of pair {}: {e}",
                    plan.index
                )
            })?;
            cells.set_semaphore(plan.index, &set);
            semaphores.push(set);
        }
    }
    let mut children = Children(Vec::new());
    for plan in &settings.engine.pairs {
        for (side, letter) in [(Side::Receiver, 'r'), (Side::Sender, 's')] {
            let child = Command::new("/proc/self/exe")
                .arg0(settings.tool.name())
                .arg(format!("-f{letter}{}", plan.index))
                .env(SHM_FD_VAR, cells.raw_fd().to_string())
                .stdin(Stdio::null())
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
    cells.go();
    let mut cpus = CpuTracker::new(&settings.engine, ProcView::Processes, false);
    let view = ForkRun { cells: &cells };
    let external = display(settings, &view, &signals, &mut cpus, &mut out, &mut load)?;
    children.stop(&cells);
    let load = load.stop();
    let report = cells.report(external);
    drop(semaphores);
    finish(
        settings, &report, &mut cpus, host, start_time, &mut out, load,
    )
}

/// Side `side` of pair `pair` of a fork-mode run (`-fr<N>` / `-fs<N>`).
pub fn child(tool: PairTool, side: Side, pair: usize) -> anyhow::Result<u8> {
    let letter = if side == Side::Receiver { 'r' } else { 's' };
    let fd = std::env::var(SHM_FD_VAR)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .ok_or_else(|| {
            UsageError(format!(
                "-f/--fork: '{letter}{pair}' is for the processes of a fork-mode run, which get \
                 their settings from the rtlat that starts them; run '{} -f' instead",
                tool.name()
            ))
        })?;
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
