//! The audit every measuring tool makes of its own run, for the
//! `"environment"` and `"audit"` keys of its results: made in the main
//! thread once the options are valid and before the memory is locked, the
//! load and the measuring threads start (so that neither disturbs the
//! other, `-m` locks none of its buffers, and the audit does not see
//! rtlat's own threads as competition).
//!
//! It delays the first sample by about 5 ms (BENCHMARKS.md). On a thread
//! of its own, beside the rest of the set-up, it delayed it as much (the
//! set-up left to overlap is short) and cost 1.1 MiB more peak memory
//! with `-m` (its stack and malloc arena, locked) against 0.3 MiB here:
//! the main thread makes it.
//!
//! Only a run that writes a result (`--json`), shows its verdict
//! (`--verdict`) or gates on it (`--fail-if verdict=...`) makes one: the
//! other text outputs carry nothing of it, and any other run starts as
//! fast as before. An audit that cannot be made does not stop the run: the keys
//! are then `null` and one line on stderr says why. A synthetic run
//! (pinned host facts) makes none: its output must be the same on every
//! machine.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use rtlat_audit::{Audit, Request};
use rtlat_core::CyclicConfig;
use rtlat_core::Nanos;

use crate::host::Host;
use rtlat_args::stdio::tell;

/// The interval the audit judges idle states against when the run has
/// none (signaltest's ring, an IPC run with `-i 0`): cyclictest's default.
pub const DEFAULT_INTERVAL_US: u64 = 1000;

/// The audit of the machine for `request` when the run `shows` it or its
/// verdict (`--json`, `--verdict`) or when its `gates` judge the verdict
/// (whose set-up reasons come from the audit); `None` otherwise, for a
/// pinned host, or (after one line on stderr) when it could not be made.
pub fn audit_run(
    host: Host,
    shows: bool,
    gates: Option<&crate::gate::GatePlan>,
    request: &Request,
) -> Option<Audit> {
    let needed = shows || gates.is_some_and(crate::gate::GatePlan::judges_verdict);
    match (host, needed) {
        (Host::Real, true) => audit_of(Path::new("/"), request),
        _ => None,
    }
}

/// The audit of the tree under `root`; `None` after one line on stderr
/// when it could not be made (a bug in it that panics included: the run
/// goes on without it).
fn audit_of(root: &Path, request: &Request) -> Option<Audit> {
    try_audit(root, request)
        .map_err(|why| {
            tell!(
                "no \"environment\" or \"audit\" in the results (null): the audit \
                 failed: {why}"
            );
        })
        .ok()
}

/// The audit of the tree under `root`, or why it could not be made (a
/// panic in it included).
fn try_audit(root: &Path, request: &Request) -> Result<Audit, String> {
    match catch_unwind(AssertUnwindSafe(|| rtlat_audit::audit(root, request))) {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err("the audit stopped unexpectedly".to_owned()),
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

/// The audit of a run of the cyclic engine (cyclictest, latency) that
/// `shows` its verdict (`--json`, `--verdict`) or gates on it (`gates`).
pub fn audit_cyclic_run(
    host: Host,
    engine: &CyclicConfig,
    shows: bool,
    gates: Option<&crate::gate::GatePlan>,
) -> Option<Audit> {
    audit_run(host, shows, gates, &cyclic_request(engine))
}

/// The audit request of a run of the cyclic engine: its threads' CPUs,
/// their highest real-time priority and the shortest interval.
fn cyclic_request(engine: &CyclicConfig) -> Request {
    request(
        engine.threads.iter().map(|t| t.cpu),
        engine.needs_realtime().then(|| engine.max_priority()),
        engine.threads.iter().map(|t| t.interval).min(),
    )
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
    use super::*;

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
        assert!(audit_run(Host::Pinned, true, None, &Request::default()).is_none());
        assert!(audit_run(Host::Real, false, None, &Request::default()).is_none());
    }

    #[test]
    fn an_audit_that_cannot_be_made_says_why() {
        // try_audit, not audit_of: its line would go to the test run's own
        // stderr, which libtest does not capture.
        let missing = Path::new("/nonexistent/rtlat-audit-root");
        let why = try_audit(missing, &request([None], None, None)).unwrap_err();
        assert!(why.contains("/nonexistent/rtlat-audit-root"), "{why}");
    }
}
