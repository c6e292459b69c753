//! The audit every measuring tool makes of its own run, for the
//! `"environment"` and `"audit"` keys of its results: started on a thread
//! of its own as soon as the options are valid, so that reading /proc and
//! /sys overlaps the engine's set-up, and joined before the first sample
//! (before the load and the measuring threads start, so that neither
//! disturbs the other and the audit does not see rtlat's own threads as
//! competition).
//!
//! Only a run that writes a result (`--json`) makes one: the text outputs
//! carry nothing of it, and a run without a result starts as fast as
//! before. An audit that cannot be made does not stop the run: the keys
//! are then `null` and one line on stderr says why. A synthetic run
//! (pinned host facts) makes none: its output must be the same on every
//! machine.

use std::path::PathBuf;
use std::thread::JoinHandle;

use rtlat_audit::{Audit, AuditError, Request};
use rtlat_core::units::Nanos;

use crate::cyclictest::host::Host;
use crate::stdio::note;

/// The interval the audit judges idle states against when the run has
/// none (signaltest's ring, an IPC run with `-i 0`): cyclictest's default.
pub const DEFAULT_INTERVAL_US: u64 = 1000;

/// The audit thread's stack: less than the default 2 MiB, which `-m`
/// would lock whole while it runs. An audit of this machine needed
/// between 128 and 160 KiB in a debug build (128 KiB overflowed), far
/// less optimised; 512 KiB leaves room for a larger machine.
const AUDIT_STACK: usize = 512 * 1024;

/// An audit under way on its own thread (or made, or none for a pinned
/// host).
#[derive(Debug)]
pub struct PendingAudit(State);

#[derive(Debug)]
enum State {
    /// No audit (a pinned host).
    None,
    /// Under way on its own thread.
    Running(JoinHandle<Result<Audit, AuditError>>),
    /// Made in the caller's thread (no thread could be started).
    Made(Box<Result<Audit, AuditError>>),
}

impl PendingAudit {
    /// Starts the audit of the machine for `request` when the run
    /// `records` it in a result (none for a pinned host).
    pub fn start(host: Host, records: bool, request: Request) -> PendingAudit {
        match (host, records) {
            (Host::Real, true) => PendingAudit::of_root(PathBuf::from("/"), request),
            _ => PendingAudit(State::None),
        }
    }

    /// Starts the audit of the tree under `root` for `request`.
    fn of_root(root: PathBuf, request: Request) -> PendingAudit {
        let (thread_root, thread_request) = (root.clone(), request.clone());
        let spawned = std::thread::Builder::new()
            .name("rtlat-audit".into())
            .stack_size(AUDIT_STACK)
            .spawn(move || rtlat_audit::audit(&thread_root, &thread_request));
        PendingAudit(match spawned {
            Ok(handle) => State::Running(handle),
            // No thread to spare: made now, in the caller's thread.
            Err(_) => State::Made(Box::new(rtlat_audit::audit(&root, &request))),
        })
    }

    /// Waits for the audit; `None` (after one line on stderr) when it
    /// could not be made, or for a pinned host.
    pub fn finish(self) -> Option<Audit> {
        let result = match self.0 {
            State::None => return None,
            State::Running(handle) => match handle.join() {
                Ok(result) => result.map_err(|e| e.to_string()),
                Err(_) => Err("the audit stopped unexpectedly".to_owned()),
            },
            State::Made(result) => (*result).map_err(|e| e.to_string()),
        };
        result
            .map_err(|why| {
                note!(
                    "rtlat: no \"environment\" or \"audit\" in the results (null): the audit \
                     failed: {why}"
                );
            })
            .ok()
    }
}

/// The audit request of a run whose measuring threads (or pairs) are
/// pinned to `cpus` (each `None` where not pinned), with the highest
/// real-time `priority` (`None`: no real-time policy) and the shortest
/// `interval` (`None`: the run has none).
pub fn request(
    cpus: impl IntoIterator<Item = Option<usize>>,
    priority: Option<u8>,
    interval: Option<Nanos>,
) -> Request {
    Request {
        cpus: measured_cpus(cpus),
        priority,
        interval_us: interval
            .map(|i| i.as_micros_truncated())
            .and_then(|us| u64::try_from(us).ok())
            .filter(|&us| us > 0)
            .unwrap_or(DEFAULT_INTERVAL_US),
    }
}

/// The CPUs measured: every thread's, sorted and without repeats, when
/// each thread is pinned; `None` (every allowed CPU) when one is not.
fn measured_cpus(cpus: impl IntoIterator<Item = Option<usize>>) -> Option<Vec<usize>> {
    let mut list = cpus.into_iter().collect::<Option<Vec<usize>>>()?;
    list.sort_unstable();
    list.dedup();
    (!list.is_empty()).then_some(list)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The audit of the tree under `root`, as a run waits for it.
    fn audit_of(root: &Path, request: Request) -> Option<Audit> {
        PendingAudit::of_root(root.to_path_buf(), request).finish()
    }

    #[test]
    fn measured_cpus_are_the_pinned_ones_or_all_allowed() {
        assert_eq!(measured_cpus([Some(3), Some(1), Some(3)]), Some(vec![1, 3]));
        assert_eq!(measured_cpus([Some(1), None]), None);
        assert_eq!(measured_cpus(std::iter::empty()), None);
    }

    #[test]
    fn request_takes_the_interval_in_whole_microseconds() {
        let r = request([Some(0)], Some(80), Some(Nanos(500_900)));
        assert_eq!(
            r,
            Request {
                cpus: Some(vec![0]),
                priority: Some(80),
                interval_us: 500
            }
        );
        assert_eq!(request([None], None, None).interval_us, DEFAULT_INTERVAL_US);
        assert_eq!(
            request([None], None, Some(Nanos(0))).interval_us,
            DEFAULT_INTERVAL_US
        );
    }

    #[test]
    fn a_pinned_host_or_a_run_without_a_result_makes_no_audit() {
        let pending = PendingAudit::start(Host::Pinned, true, Request::default());
        assert!(matches!(pending.0, State::None));
        assert!(pending.finish().is_none());
        let unrecorded = PendingAudit::start(Host::Real, false, Request::default());
        assert!(matches!(unrecorded.0, State::None));
    }

    #[test]
    fn an_audit_that_cannot_be_made_gives_none() {
        let missing = Path::new("/nonexistent/rtlat-audit-root");
        assert!(audit_of(missing, request([None], None, None)).is_none());
    }
}
