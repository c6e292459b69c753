//! `rtlat load`: background load on its own, measured. The workers are
//! `rtlat_core::load`'s; this module runs them until a stop signal or the
//! `-D` duration and prints one `KIND: N ops/s (W workers)` line per kind
//! (wrapped to the terminal's width, 80 when stdout is not one).

pub mod beside;

use std::io::{self, Write};
use std::time::{Duration, Instant};

use rtlat_core::Nanos;
use rtlat_core::load::{LoadPlan, LoadSet};

use crate::report::formats::{self, Document};
use crate::signals::SignalFlags;
use rtlat_args::columns::{self, Stream};
use rtlat_args::stdio::{Stdout, tell};

/// A validated `rtlat load`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// What runs, where, how nice.
    pub plan: LoadPlan,
    /// `-D`: how long; `None` until a stop signal.
    pub duration: Option<Nanos>,
}

/// How often the main thread looks at the signal flags and the clock.
const TICK: Duration = Duration::from_millis(20);

/// Runs the load until a stop signal, `-D` or a worker's end; prints
/// its rates. Returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
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
    let lines = report.lines();
    let written = formats::write_document(&Rates(&lines), &mut out);
    let shown = written.and(out.finish());
    for e in &report.errors {
        tell!("{e}");
    }
    shown?;
    Ok(if report.errors.is_empty() { 0 } else { 1 })
}

/// The rates as the final outputs see them: one line per kind, wrapped to
/// stdout's width; no JSON.
struct Rates<'a>(&'a [String]);

impl Document for Rates<'_> {
    fn write_text(&self, mut w: &mut dyn Write) -> io::Result<()> {
        let width = columns::width(Stream::Stdout);
        columns::write_wrapped(&mut w, width, |b| {
            self.0.iter().try_for_each(|line| writeln!(b, "{line}"))
        })
    }
}
