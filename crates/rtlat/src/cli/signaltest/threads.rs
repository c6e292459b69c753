//! The threads of a signaltest ring: `-t`, `-a` and `-S` checked against
//! the CPUs this process may use, and `-p`.

use rtlat_args::UsageError;
use rtlat_args::values::{OptionName, SystemView, int_in, invalid};
use rtlat_core::RingThreadPlan;
use rtlat_core::SchedPolicy;
use rtlat_core::parse_cpu_list;

use super::flags::name;
use super::raw::{MAX_THREADS, Raw};

/// The plans of the ring's threads; `-S` overrides `-t` and `-a` with a
/// warning for each.
pub(super) fn ring_threads(
    raw: &Raw,
    system: &SystemView,
    warnings: &mut Vec<String>,
) -> Result<Vec<RingThreadPlan>, UsageError> {
    let mut allowed = system.allowed_cpus.clone();
    allowed.sort_unstable();
    allowed.dedup();
    let set = match (&raw.affinity, raw.smp) {
        (Some(Some(text)), false) => Some(
            parse_cpu_list(text, &allowed, system.configured_cpus)
                .map_err(|e| invalid(name("affinity"), text, e))?,
        ),
        _ => None,
    };
    let nthreads = thread_count(raw, allowed.len(), warnings)?;
    let cpu_of = |i: usize| -> Option<usize> {
        if raw.smp || matches!(raw.affinity, Some(None)) {
            Some(allowed[i % allowed.len()])
        } else {
            set.as_ref().map(|s| s[i % s.len()])
        }
    };
    let priority = match &raw.priority {
        Some(text) => int_in(name("priority"), text, 0..=99, "a real-time priority")? as u8,
        None => 0,
    };
    let policy = if priority > 0 {
        SchedPolicy::Fifo
    } else {
        SchedPolicy::Other
    };
    Ok((0..nthreads)
        .map(|index| RingThreadPlan {
            index,
            policy,
            priority,
            cpu: cpu_of(index),
        })
        .collect())
}

/// `-t`, or with `-S` one thread per allowed CPU (at least two).
fn thread_count(
    raw: &Raw,
    allowed_cpus: usize,
    warnings: &mut Vec<String>,
) -> Result<usize, UsageError> {
    if raw.smp {
        if raw.threads.is_some() {
            warnings.push("WARN: -t ignored due to smp mode".to_owned());
        }
        if raw.affinity.is_some() {
            warnings.push("WARN: -a ignored due to smp mode".to_owned());
        }
        if allowed_cpus < 2 {
            return Err(UsageError(format!(
                "{}: one thread per CPU makes a ring of {}; a ring needs at least two threads \
                 (use -t 2 instead)",
                name("smp").spelling(),
                allowed_cpus
            )));
        }
        Ok(allowed_cpus)
    } else {
        match &raw.threads {
            Some(text) => Ok(int_in(
                name("threads"),
                text,
                2..=MAX_THREADS,
                "a number of threads in the ring",
            )? as usize),
            None => Ok(2),
        }
    }
}
