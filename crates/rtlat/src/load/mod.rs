//! `rtlat load`: background load on its own, measured. The workers are
//! `rtlat_core::load`'s; this module runs them until a stop signal or the
//! `-D` duration and prints one `KIND: N ops/s (W workers)` line per kind.

pub mod beside;

use std::ffi::OsString;
use std::io::Write;
use std::time::{Duration, Instant};

use rtlat_core::load::LoadSet;

use crate::cli::load::{Invocation, Settings, help_text, parse};
use crate::signals::SignalFlags;
use rtlat_args::stdio::{Stdout, note};
use rtlat_args::values::SystemView;

/// How often the main thread looks at the signal flags and the clock.
const TICK: Duration = Duration::from_millis(20);

/// `rtlat load ARGS...`: parse, validate, run. Returns the exit status.
pub fn main(args: &[OsString]) -> anyhow::Result<u8> {
    let system = SystemView::of_this_process();
    match parse(args, &system, std::env::temp_dir())? {
        Invocation::Help => {
            rtlat_args::stdio::print(&help_text())?;
            Ok(0)
        }
        Invocation::Run(settings) => run(&settings),
    }
}

fn run(settings: &Settings) -> anyhow::Result<u8> {
    let signals = SignalFlags::install()?;
    let running = LoadSet::start(&settings.plan)?;
    let limit = settings
        .duration
        .map(|d| Duration::from_nanos(d.as_nanos().max(0) as u64));
    let started = Instant::now();
    loop {
        if signals.stop_requested() || running.any_worker_ended() {
            break;
        }
        let left = match limit {
            Some(l) => match l.checked_sub(started.elapsed()) {
                Some(left) if !left.is_zero() => left,
                _ => break,
            },
            None => TICK,
        };
        std::thread::sleep(left.min(TICK));
    }
    let report = running.stop();
    let mut out = Stdout::new(false);
    out.emit(|w| {
        report
            .lines()
            .iter()
            .try_for_each(|line| writeln!(w, "{line}"))
    });
    let shown = out.finish();
    for e in &report.errors {
        note!("rtlat load: {e}");
    }
    shown?;
    Ok(if report.errors.is_empty() { 0 } else { 1 })
}
