//! How many pairs an ipc run has and where they run: `-t`, `-a` and `-S`
//! checked against the CPUs this process may use.

use rtlat_args::UsageError;
use rtlat_args::values::{SystemView, int, invalid};

use super::flags::name;
use super::raw::{MAX_PAIRS, Raw};

/// How the pairs are placed on CPUs.
pub(super) enum Pinning {
    None,
    /// Pair i on the i-th allowed CPU, round robin.
    RoundRobin,
    /// Every pair on this CPU.
    All(usize),
}

impl Pinning {
    /// The CPU of pair `index`, `allowed` sorted and never empty.
    pub(super) fn cpu_of(&self, index: usize, allowed: &[usize]) -> Option<usize> {
        match self {
            Pinning::None => None,
            Pinning::RoundRobin => Some(allowed[index % allowed.len()]),
            Pinning::All(cpu) => Some(*cpu),
        }
    }
}

/// The CPUs this process may use, sorted, without repeats; an error when
/// there is none.
pub(super) fn allowed_cpus(system: &SystemView) -> Result<Vec<usize>, UsageError> {
    let mut allowed = system.allowed_cpus.clone();
    allowed.sort_unstable();
    allowed.dedup();
    if allowed.is_empty() {
        return Err(UsageError(
            "no CPU is available to this process, so there is no pair to start".to_owned(),
        ));
    }
    Ok(allowed)
}

/// The number of pairs and their placement; `-S` overrides `-t` and `-a`
/// with a warning for each.
pub(super) fn pairs_and_pinning(
    raw: &Raw,
    affinity_zero_is_cpu: bool,
    allowed: &[usize],
    system: &SystemView,
    warnings: &mut Vec<String>,
) -> Result<(usize, Pinning), UsageError> {
    let pinning = pinning(raw, affinity_zero_is_cpu, allowed, system)?;
    let per_cpu = allowed.len();
    let pairs_from_t = match &raw.threads {
        None => 1,
        Some(None) => per_cpu,
        Some(Some(text)) => match int::<i64>(text) {
            Some(0) => per_cpu,
            Some(n) if (1..=MAX_PAIRS).contains(&n) => n as usize,
            _ => {
                return Err(invalid(
                    name("threads"),
                    text,
                    format_args!(
                        "expected a number of pairs, 1 to {MAX_PAIRS}, or 0 for one per CPU"
                    ),
                ));
            }
        },
    };
    if raw.smp {
        if raw.threads.is_some() {
            warnings.push("WARN: -t ignored due to --smp".to_owned());
        }
        if raw.affinity.is_some() {
            warnings.push("WARN: -a ignored due to --smp".to_owned());
        }
        Ok((per_cpu, Pinning::RoundRobin))
    } else {
        Ok((pairs_from_t, pinning))
    }
}

/// `-a`: no value (or `-a 0` as two words) is round robin, a CPU pins
/// every pair to it.
fn pinning(
    raw: &Raw,
    affinity_zero_is_cpu: bool,
    allowed: &[usize],
    system: &SystemView,
) -> Result<Pinning, UsageError> {
    let text = match &raw.affinity {
        None => return Ok(Pinning::None),
        Some(None) => return Ok(Pinning::RoundRobin),
        Some(Some(text)) => text,
    };
    let cpu = int::<i64>(text)
        .ok_or_else(|| invalid(name("affinity"), text, "expected a CPU number, or no value"))?;
    if cpu == 0 && !affinity_zero_is_cpu {
        Ok(Pinning::RoundRobin)
    } else if cpu < 0 || cpu as usize >= system.configured_cpus {
        Err(invalid(
            name("affinity"),
            text,
            format_args!(
                "CPU {cpu} does not exist: this machine has {} CPUs (0 to {})",
                system.configured_cpus,
                system.configured_cpus - 1
            ),
        ))
    } else if !allowed.contains(&(cpu as usize)) {
        Err(invalid(
            name("affinity"),
            text,
            format_args!(
                "CPU {cpu} is not available to this process (it may use {})",
                cpu_list(allowed)
            ),
        ))
    } else {
        Ok(Pinning::All(cpu as usize))
    }
}

/// `0-3,5` for a sorted CPU list.
fn cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}
