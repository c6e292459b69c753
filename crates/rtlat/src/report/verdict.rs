//! The verdict on a run (the JSON's `"verdict"`, `--verdict`): the
//! judgement is crate `rtlat-verdict`'s (pure, no I/O; re-exported
//! here); what it needs from the machine is read here: the system-wide
//! counters over the run ([`SystemWatch`]) and the clock's resolution
//! ([`judge`]). Its text is [`text`]'s.

use std::path::Path;

use rtlat_audit::counters::{RunWatch, SystemDisturbances};
use rtlat_core::RunReport;
pub use rtlat_verdict::*;

pub mod injected;
pub mod text;

/// The system-wide counters of a real run, read before its first sample
/// and after its last; nothing for a synthetic run (it measures no CPU).
#[derive(Debug)]
pub struct SystemWatch(Option<RunWatch>);

impl SystemWatch {
    /// Starts watching the CPUs of threads pinned to `cpus` (all CPUs if
    /// one is not pinned) when the run is `real`.
    pub fn start(real: bool, cpus: impl IntoIterator<Item = Option<usize>>) -> SystemWatch {
        SystemWatch(real.then(|| RunWatch::start(Path::new("/"), cpu_set(cpus))))
    }

    /// What the counters saw since the start.
    pub fn finish(self) -> Option<SystemDisturbances> {
        self.0.map(RunWatch::finish)
    }
}

/// The verdict on a finished run: its report, the audit, blocks and
/// projection request in its `meta` and what `system` saw. The clock's
/// resolution is read for a real run (one with system counters).
pub fn judge(
    report: &RunReport,
    meta: &super::RunMeta,
    system: Option<&SystemDisturbances>,
) -> Verdict {
    let clock_resolution_ns = system.map(|_| {
        let res = rtlat_sys::clock::resolution(rtlat_core::sys_clock(report.clock));
        res.tv_sec as i64 * 1_000_000_000 + res.tv_nsec as i64
    });
    Evidence {
        report,
        audit: meta.audit.as_ref(),
        system,
        blocks: &meta.blocks,
        request: Some(&meta.projection),
        clock_resolution_ns,
    }
    .judge()
}

#[cfg(test)]
pub(crate) mod tests;
