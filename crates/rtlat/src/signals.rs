//! Signals a run reacts to. Handlers only set flags (signal-hook's `flag`
//! module) or count the stop signals' deliveries; the main thread looks
//! at them between display frames.
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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::Context;
use rtlat_sys::process::STOP_SIGNALS;
use signal_hook::consts::{SIGUSR1, SIGUSR2};

/// Flags raised by the signal handlers.
#[derive(Debug)]
pub struct SignalFlags {
    /// Every stop signal delivered, and how many of them
    /// [`SignalFlags::take_stop_request`] has taken.
    stops: Arc<AtomicUsize>,
    stops_taken: AtomicUsize,
    status: Arc<AtomicBool>,
    snapshot: Arc<AtomicBool>,
}

impl SignalFlags {
    /// Installs the handlers.
    pub fn install() -> anyhow::Result<SignalFlags> {
        let flags = SignalFlags {
            stops: Arc::new(AtomicUsize::new(0)),
            stops_taken: AtomicUsize::new(0),
            status: Arc::new(AtomicBool::new(false)),
            snapshot: Arc::new(AtomicBool::new(false)),
        };
        rtlat_sys::signals::count_deliveries(&STOP_SIGNALS, &flags.stops)
            .context("installing the stop signals' counter")?;
        signal_hook::flag::register(SIGUSR1, Arc::clone(&flags.status))
            .context("installing the SIGUSR1 handler")?;
        signal_hook::flag::register(SIGUSR2, Arc::clone(&flags.snapshot))
            .context("installing the SIGUSR2 handler")?;
        Ok(flags)
    }

    /// Whether a stop signal arrived (one was counted).
    pub fn stop_requested(&self) -> bool {
        self.stops.load(Ordering::Relaxed) > 0
    }

    /// Whether a stop signal arrived that no call has taken yet; takes
    /// one. Each delivery is one request: a second Ctrl-C that comes
    /// before the first is taken is still seen, by the next call (a flag
    /// would have merged the two).
    pub fn take_stop_request(&self) -> bool {
        let taken = self.stops_taken.load(Ordering::Relaxed);
        if self.stops.load(Ordering::Relaxed) > taken {
            self.stops_taken.store(taken + 1, Ordering::Relaxed);
            true
        } else {
            false
        }
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
