//! What `rtlat monitor` changes in cyclictest's command line: its
//! defaults, what it refuses, and its plan in the settings.

use rtlat_core::Nanos;
use rtlat_core::{IntervalPlan, TimeSourceKind};

use super::flags::name;
use super::raw::{Raw, STATS_RING};
use crate::cyclictest::settings::Settings;
use crate::monitor::settings::MonitorPlan;
use rtlat_args::UsageError;
use rtlat_args::options::Name;
use rtlat_args::values::OptionName;

/// The monitor's defaults where the command line says nothing: one
/// thread per allowed CPU (or per CPU of `-a`'s list), each pinned, all
/// at the same interval (`-d 0`);
/// SCHED_FIFO priority 95 (above the threaded interrupt handlers' 50,
/// below the kernel's own per-CPU threads at 99); memory locked; no live
/// display. What only makes sense with a display is refused.
pub(super) fn monitor_defaults(raw: &mut Raw) -> Result<(), UsageError> {
    let refuse = |id: Name, why: &str| -> Result<(), UsageError> {
        Err(UsageError(format!(
            "{}: not with rtlat monitor ({why})",
            id.spelling()
        )))
    };
    if raw.verbose {
        return refuse(
            name("verbose"),
            "it prints no samples: its figures are at /metrics",
        );
    }
    if raw.refresh_on_max {
        return refuse(name("refresh_on_max"), "it has no live display");
    }
    if raw.oscope.is_some() {
        return refuse(name("oscope"), "it prints no samples");
    }
    if !raw.smp && raw.threads.is_none() {
        if raw.affinity.is_none() {
            raw.affinity = Some(None);
        }
        raw.threads = Some(None);
    }
    if raw.distance.is_none() {
        raw.distance = Some("0".to_owned());
    }
    if raw.priority.is_none() && raw.policy.is_none() {
        raw.priority = Some("95".to_owned());
        raw.priority_sets_fifo = true;
    }
    raw.mlockall = true;
    raw.quiet = true;
    raw.no_progress = true;
    Ok(())
}

/// The monitor's plan into `settings`, and what the run it makes cannot
/// have: a synthetic clock (the monitor's figures come second by second,
/// in real time), the `-h` block (its histogram is
/// `rtlat_latency_seconds`, and the distribution of `--json`), intervals
/// longer than the second whose maximum it reads.
pub(super) fn monitor_settings(
    settings: &mut Settings,
    plan: MonitorPlan,
) -> Result<(), UsageError> {
    if matches!(settings.engine.run.source, TimeSourceKind::Synthetic { .. }) {
        return Err(UsageError(
            "--synthetic: not with rtlat monitor (its figures come second by second, in real \
             time)"
                .to_owned(),
        ));
    }
    if settings.histogram.is_some() {
        return Err(UsageError(
            "-h/--histogram: not with rtlat monitor (its histogram is rtlat_latency_seconds, and \
             every sample is in the distribution of --json and --checkpoint)"
                .to_owned(),
        ));
    }
    // Without --stats-interval, the run's intervals are its blocks':
    // the monitor's are of one second.
    let intervals = settings
        .engine
        .intervals
        .filter(|_| settings.stats_file.is_some());
    match &intervals {
        Some(i) if i.length > Nanos::from_secs(1) => {
            return Err(UsageError(format!(
                "{}: at most 1 s with rtlat monitor (it reads each second's maximum from the \
                 intervals)",
                name("stats-interval").spelling()
            )));
        }
        Some(_) => {}
        None => {
            settings.engine.intervals = Some(IntervalPlan {
                length: Nanos::from_secs(1),
                ring: STATS_RING,
            });
        }
    }
    settings.monitor = Some(plan);
    Ok(())
}
