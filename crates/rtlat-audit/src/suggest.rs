//! The cyclictest command line suggested for the machine audited:
//! `rtlat cyclictest -m -a LIST -t N -p PRIO -i US --mainaffinity=CPU`.
//!
//! - `-a LIST -t N`: the isolated CPUs among those measured (the requested
//!   ones, or every allowed CPU and every isolated one when none were
//!   requested); the measured CPUs themselves when none is isolated;
//!   never every online CPU ([`Housekeeping`]): when the list would hold
//!   them all, the first one not isolated (CPU 0 as a rule, the CPU the
//!   kernel boots on and keeps its housekeeping on) and its SMT siblings
//!   are left out for the housekeeping, and the isolation fixes of
//!   [`crate::checks`] name the same list; a machine with one CPU has
//!   nothing to isolate, and the suggestion says so;
//! - `-p PRIO`: the requested priority (95 without one), raised above any
//!   real-time thread, user or kernel, that may run on those CPUs (at
//!   most 99);
//! - `--mainaffinity=CPU`: the main thread on a housekeeping CPU, one that
//!   is neither measured nor an SMT sibling of a measured CPU (a
//!   non-isolated one first). Without such a CPU the option is left out
//!   and [`Suggestion::no_main_cpu`] says why.

use crate::Request;
use crate::facts::{Facts, cpu_list};

/// The priority suggested when the request names none.
pub const DEFAULT_PRIORITY: u8 = 95;

/// A suggested command line and how it was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// The whole command line.
    pub command: String,
    /// The CPUs it measures (`-a`).
    pub cpus: Vec<usize>,
    /// Its priority (`-p`).
    pub priority: u8,
    /// Its main thread's CPU (`--mainaffinity`), if one suits.
    pub main_cpu: Option<usize>,
    /// Why `--mainaffinity` was left out, when it was.
    pub no_main_cpu: Option<String>,
    /// Where the housekeeping goes.
    pub housekeeping: Housekeeping,
}

/// Where the work that is not measured (interrupts, kernel threads, the
/// main thread, everything else) goes, given the suggested `-a` CPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Housekeeping {
    /// Online CPUs outside the suggested ones were there already.
    Outside,
    /// Every online CPU would have been measured: these were left out of
    /// the suggestion (and of the isolation it advises) for housekeeping.
    Kept(Vec<usize>),
    /// The machine has one CPU: nothing can be isolated.
    OneCpu,
    /// The online CPUs are not known.
    Unknown,
}

/// What the advice says on a machine of one CPU.
pub const ONE_CPU: &str = "one CPU only: nothing can be isolated, and the measuring thread shares its CPU with all other work";

/// Builds the command line for `facts` and `request`.
pub fn command(facts: &Facts, request: &Request) -> Suggestion {
    let isolated: Vec<usize> = facts
        .isolated_cpus()
        .into_iter()
        .filter(|cpu| {
            facts
                .online
                .as_ref()
                .map_or(true, |online| online.contains(cpu))
        })
        .collect();
    let pool: Vec<usize> = match &request.cpus {
        Some(_) => facts.measured.clone(),
        None => {
            let mut pool = facts.measured.clone();
            pool.extend(&isolated);
            pool.sort_unstable();
            pool.dedup();
            pool
        }
    };
    let isolated_in_pool: Vec<usize> = pool
        .iter()
        .copied()
        .filter(|cpu| isolated.contains(cpu))
        .collect();
    let cpus = if isolated_in_pool.is_empty() {
        facts.measured.clone()
    } else {
        isolated_in_pool
    };
    let online = facts
        .online
        .clone()
        .or_else(|_| facts.present.clone())
        .unwrap_or_default();
    let (cpus, housekeeping) = keep_housekeeping(facts, cpus, &online, &isolated);

    let competing = facts
        .threads
        .as_ref()
        .map(|threads| {
            threads
                .realtime_user
                .iter()
                .chain(&threads.kernel)
                .filter(|thread| {
                    matches!(
                        thread.policy,
                        crate::facts::Policy::Fifo | crate::facts::Policy::RoundRobin
                    )
                })
                .filter(|thread| thread.may_run_on(&cpus))
                .map(|thread| thread.rt_priority)
                .max()
        })
        .ok()
        .flatten();
    let wanted = u32::from(request.priority.unwrap_or(DEFAULT_PRIORITY));
    let priority = competing
        .map_or(wanted, |highest| wanted.max(highest + 1))
        .min(99);
    let priority = u8::try_from(priority).unwrap_or(99);

    let candidates: Vec<usize> = online
        .into_iter()
        .filter(|cpu| !cpus.contains(cpu))
        .filter(|cpu| {
            !cpus
                .iter()
                .any(|&measured| facts.siblings_of(measured).contains(cpu))
        })
        .collect();
    let main_cpu = candidates
        .iter()
        .copied()
        .find(|cpu| !isolated.contains(cpu))
        .or_else(|| candidates.first().copied());

    let mut command = if cpus.is_empty() {
        // Nothing says which CPUs there are: one thread per allowed CPU.
        format!("rtlat cyclictest -m -t -p {priority}")
    } else {
        format!(
            "rtlat cyclictest -m -a {} -t {} -p {priority}",
            cpu_list(&cpus),
            cpus.len()
        )
    };
    command.push_str(&format!(" -i {}", request.interval_us));
    let no_main_cpu = match main_cpu {
        Some(cpu) => {
            command.push_str(&format!(" --mainaffinity={cpu}"));
            None
        }
        None if housekeeping == Housekeeping::OneCpu => Some(ONE_CPU.to_owned()),
        None => Some(
            "no housekeeping CPU outside the measured CPUs and their SMT siblings, so the suggested command has no --mainaffinity"
                .to_owned(),
        ),
    };
    Suggestion {
        command,
        cpus,
        priority,
        main_cpu,
        no_main_cpu,
        housekeeping,
    }
}

/// `cpus` with room left for housekeeping: unchanged when an online CPU
/// is outside them (or the online CPUs are unknown); else without the
/// first of them that is not isolated (the first of all when every one
/// is) and its SMT siblings, or without that CPU alone when its siblings
/// are all the rest; unchanged on a machine of one CPU.
fn keep_housekeeping(
    facts: &Facts,
    cpus: Vec<usize>,
    online: &[usize],
    isolated: &[usize],
) -> (Vec<usize>, Housekeeping) {
    if online.is_empty() || cpus.is_empty() {
        return (cpus, Housekeeping::Unknown);
    }
    if online.iter().any(|cpu| !cpus.contains(cpu)) {
        return (cpus, Housekeeping::Outside);
    }
    if cpus.len() == 1 {
        return (cpus, Housekeeping::OneCpu);
    }
    let keep = cpus
        .iter()
        .copied()
        .find(|cpu| !isolated.contains(cpu))
        .unwrap_or(cpus[0]);
    let mut kept = vec![keep];
    kept.extend(facts.siblings_of(keep));
    kept.sort_unstable();
    if cpus.iter().all(|cpu| kept.contains(cpu)) {
        kept = vec![keep];
    }
    let rest = cpus.into_iter().filter(|cpu| !kept.contains(cpu)).collect();
    (rest, Housekeeping::Kept(kept))
}
