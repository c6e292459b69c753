//! `rtlat hackbench`: rt-tests' hackbench 2.4, the same options, lines
//! and exit status. The groups themselves are `rtlat_core::hackbench`;
//! here are the settings and the run: the two opening lines, the stop
//! signals (SIGINT, SIGTERM, and SIGHUP and SIGQUIT as every rtlat tool:
//! the tasks are ended and reaped, C's lines about it printed), the
//! `Time:` line.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::Context;
use rtlat_args::stdio::{self, note, tell};
use rtlat_core::hackbench::{HackbenchConfig, Mode, Outcome};
use rtlat_sys::process::STOP_SIGNALS;

/// A validated `rtlat hackbench` command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The run.
    pub config: HackbenchConfig,
}

/// hackbench's first two lines.
pub fn opening_lines(config: &HackbenchConfig) -> String {
    format!(
        "Running in {} mode with {} groups using {} file descriptors each (== {} tasks)\n\
         Each sender will pass {} messages of {} bytes\n",
        config.mode.word(),
        config.groups,
        u64::from(config.fds) * 2,
        config.tasks(),
        config.loops,
        config.datasize,
    )
}

/// The `Time:` line: seconds and milliseconds, truncated, as C prints a
/// `timeval`'s.
pub fn time_line(elapsed: std::time::Duration) -> String {
    format!(
        "Time: {}.{:03}\n",
        elapsed.as_secs(),
        elapsed.subsec_millis()
    )
}

/// Runs `settings`; returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let config = &settings.config;
    let stop = Arc::new(AtomicBool::new(false));
    let which = Arc::new(AtomicUsize::new(0));
    for sig in STOP_SIGNALS {
        signal_hook::flag::register_usize(sig, Arc::clone(&which), sig as usize)
            .with_context(|| format!("installing the handler of signal {sig}"))?;
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .with_context(|| format!("installing the handler of signal {sig}"))?;
    }
    stdio::print(&opening_lines(config))?;
    let outcome = rtlat_core::hackbench::run(config, &stop)?;
    finish(config, &outcome, which.load(Ordering::Relaxed))
}

/// What C prints once the run is over: its lines about a signal, then the
/// time (or that there is none).
fn finish(config: &HackbenchConfig, outcome: &Outcome, signal: usize) -> anyhow::Result<u8> {
    let mut text = String::new();
    if outcome.stopped {
        note!("Signal {signal} caught, longjmp'ing out!");
        note!("longjmp'ed out, reaping children");
        if config.mode == Mode::Process {
            note!("sending SIGTERM to all child processes");
            text.push_str(&format!(
                "signaling {} worker threads to terminate\n",
                outcome.tasks
            ));
        }
    }
    if let Some(elapsed) = outcome.elapsed {
        text.push_str(&time_line(elapsed));
    }
    stdio::print(&text)?;
    if outcome.elapsed.is_none() {
        note!("No measurements available");
    }
    if outcome.failed > 0 {
        tell!("{} of {} tasks failed", outcome.failed, outcome.tasks);
        return Ok(1);
    }
    Ok(stdio::exit_status(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_core::hackbench::Transport;
    use std::time::Duration;

    #[test]
    fn the_lines_are_cs() {
        let config = HackbenchConfig {
            mode: Mode::Threads,
            transport: Transport::Pipe,
            groups: 1,
            fds: 2,
            loops: 5,
            datasize: 100,
            fifo: false,
        };
        assert_eq!(
            opening_lines(&config),
            "Running in threaded mode with 1 groups using 4 file descriptors each (== 4 tasks)\n\
             Each sender will pass 5 messages of 100 bytes\n"
        );
        assert_eq!(time_line(Duration::from_micros(1_037_999)), "Time: 1.037\n");
        assert_eq!(time_line(Duration::from_micros(999)), "Time: 0.000\n");
    }
}
