//! `hackbench`: rteval's default load, the real hackbench workload run in
//! rounds (the engine of `rtlat hackbench`, [`crate::hackbench`]). Each
//! worker runs rounds of `hackbench -P -g 2 -l 100 -s 1000` one after the
//! other: 2 groups of 20 senders and 20 receivers, forked processes, UNIX
//! sockets, 1000-byte messages. rteval runs one `hackbench -P -g N -l L
//! -s 1000` per NUMA node again and again; with the default of one worker
//! per CPU this makes two groups per CPU. A round of 100 loops (about a
//! tenth of a second on an idle 2-CPU machine) keeps the figures fresh:
//! the messages of a round count when it ends.
//!
//! The tasks are forked: done in the measuring process, every fork would
//! write-protect its pages and make the measuring threads take faults
//! that a separate load never causes them (as for `fork`). So when the
//! plan names a helper program, each worker starts it as
//! `rtlat-hackbench-helper` ([`HelperRole::HackbenchLoad`]), which runs
//! the rounds ([`helper_main`]) and reports the messages of each round
//! over a pipe. It ends when the worker closes its input (its round's
//! tasks killed and reaped) or with the worker's thread (parent death
//! signal; its tasks die with it, theirs). Without a helper the worker
//! runs the rounds itself (`rtlat-core`'s own tests).

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::{WorkerCtx, WorkerResult, run_helper};
use crate::hackbench::{HackbenchConfig, Mode, Transport};
use crate::helper::HelperRole;

pub(super) const OP: &str = "one 1000-byte message passed from a sender to a receiver \
     (rounds of hackbench -P -g 2 -l 100 -s 1000, counted when a round ends)";

/// One round.
pub const ROUND: HackbenchConfig = HackbenchConfig {
    mode: Mode::Process,
    transport: Transport::Socket,
    groups: 2,
    fds: 20,
    loops: 100,
    datasize: 1000,
    fifo: false,
};

/// How often the helper reports (a zero when no round ended meanwhile).
const REPORT_EVERY: Duration = Duration::from_millis(10);

/// Rounds until `stop`; each finished round adds its messages to `count`.
fn rounds(stop: &Arc<AtomicBool>, count: &dyn Fn(u64)) -> Result<(), String> {
    while !stop.load(Ordering::Relaxed) {
        let out = crate::hackbench::run(&ROUND, stop).map_err(|e| e.to_string())?;
        if out.failed > 0 {
            return Err(format!("{} of {} tasks failed", out.failed, out.tasks));
        }
        if !out.stopped {
            count(ROUND.messages());
        }
    }
    Ok(())
}

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    match &ctx.shared.fork_helper {
        Some(program) => run_helper(ctx, program, HelperRole::HackbenchLoad, "hackbench"),
        None => rounds(&ctx.stop_flag(), &|n| ctx.counter.add(n)),
    }
}

/// The hackbench helper process: rounds until its input ends (a thread
/// watches it), a report every 10 ms on stdout (the messages of the
/// rounds ended since the last one, 8 bytes little-endian). `parent` is
/// the pid of the process that started it: if that is no longer the
/// parent, it exits at once. Returns the exit status.
pub(crate) fn helper_main(parent: i32) -> u8 {
    if rtlat_sys::process::die_with_parent(parent).is_err() {
        return 1;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let watch = {
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("input-end".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                let mut sink = [0u8; 64];
                let mut input = std::io::stdin().lock();
                while matches!(input.read(&mut sink), Ok(n) if n > 0) {}
                stop.store(true, Ordering::Relaxed);
            })
    };
    let report = {
        let stop = Arc::clone(&stop);
        let count = Arc::clone(&count);
        std::thread::Builder::new()
            .name("report".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                let mut out = std::io::stdout().lock();
                loop {
                    let ended = stop.load(Ordering::Relaxed);
                    let n = count.swap(0, Ordering::Relaxed);
                    if out
                        .write_all(&n.to_le_bytes())
                        .and_then(|()| out.flush())
                        .is_err()
                    {
                        return false;
                    }
                    if ended {
                        return true;
                    }
                    std::thread::sleep(REPORT_EVERY);
                }
            })
    };
    let (Ok(_watch), Ok(report)) = (watch, report) else {
        return 1;
    };
    let ran = rounds(&stop, &|n| {
        count.fetch_add(n, Ordering::Relaxed);
    });
    stop.store(true, Ordering::Relaxed);
    let reported = report.join().unwrap_or(false);
    // A last count left after the report thread's last look.
    let last = count.swap(0, Ordering::Relaxed);
    if last > 0 {
        let mut out = std::io::stdout().lock();
        let _ = out
            .write_all(&last.to_le_bytes())
            .and_then(|()| out.flush());
    }
    match ran {
        Ok(()) if reported => 0,
        Ok(()) => 1,
        Err(e) => {
            eprintln!("rtlat-hackbench-helper: {e}");
            1
        }
    }
}
