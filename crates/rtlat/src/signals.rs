//! Signals a run reacts to. Handlers only set flags (signal-hook's `flag`
//! module); the main thread looks at the flags between display frames.
//!
//! - SIGINT, SIGQUIT, SIGHUP, SIGTERM (`rtlat_sys::process::STOP_SIGNALS`):
//!   stop the run cleanly (summary and files are still written).
//!   cyclictest has no SIGHUP or SIGQUIT handler and dies without its
//!   summary; we treat them like SIGTERM. rtlat's helper processes start
//!   with these signals blocked, so that one sent to the whole process
//!   group (Ctrl-C, `Ctrl-\`, a closed terminal) stops the run, which then
//!   ends its helpers, instead of killing them under it.
//! - SIGUSR1: print the status block to stderr.
//! - SIGUSR2: write the status block to `/dev/shm/cyclictest<pid>`, for
//!   rt-tests' `get_cyclictest_snapshot`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use rtlat_sys::process::STOP_SIGNALS;
use signal_hook::consts::{SIGUSR1, SIGUSR2};

/// Flags raised by the signal handlers.
#[derive(Debug)]
pub struct SignalFlags {
    stop: Arc<AtomicBool>,
    status: Arc<AtomicBool>,
    snapshot: Arc<AtomicBool>,
}

impl SignalFlags {
    /// Installs the handlers.
    pub fn install() -> anyhow::Result<SignalFlags> {
        let flags = SignalFlags {
            stop: Arc::new(AtomicBool::new(false)),
            status: Arc::new(AtomicBool::new(false)),
            snapshot: Arc::new(AtomicBool::new(false)),
        };
        for sig in STOP_SIGNALS {
            signal_hook::flag::register(sig, Arc::clone(&flags.stop))
                .with_context(|| format!("installing the handler of signal {sig}"))?;
        }
        signal_hook::flag::register(SIGUSR1, Arc::clone(&flags.status))
            .context("installing the SIGUSR1 handler")?;
        signal_hook::flag::register(SIGUSR2, Arc::clone(&flags.snapshot))
            .context("installing the SIGUSR2 handler")?;
        Ok(flags)
    }

    /// Whether a stop signal arrived.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Whether a stop signal arrived since the last call: the flag is
    /// lowered, so that the next one (a second Ctrl-C) is seen again.
    pub fn take_stop_request(&self) -> bool {
        self.stop.swap(false, Ordering::Relaxed)
    }

    /// Whether a status dump was asked for since the last call.
    pub fn take_status_request(&self) -> bool {
        self.status.swap(false, Ordering::Relaxed)
    }

    /// Whether a snapshot file was asked for since the last call.
    pub fn take_snapshot_request(&self) -> bool {
        self.snapshot.swap(false, Ordering::Relaxed)
    }
}
