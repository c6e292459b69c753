//! Judging the facts: one function per check, each turning what
//! [`facts`](crate::facts) read into a [`Finding`] with a status, the fact
//! observed and, for `warn` and `bad`, why it matters and what to do.
//!
//! The checks live by area, one file each: `kernel`, `isolation` (and
//! SMT), `power` (frequency, thermal, idle), `clocksource`, `scheduler`,
//! `memory`, `interference` (watchdogs, interrupts, competing threads),
//! `platform` (hypervisor, SMIs) and `limits`. Each area lists its checks
//! in a table of [`Check`]s (id, what it judges, when it flags, its
//! function); [`CHECKS`] joins the tables in order and is the one list:
//! [`run`] judges in its order, [`CHECK_IDS`](crate::CHECK_IDS) is its
//! ids, and the table in the crate documentation is its rows (a test
//! compares them). A new check is a function and a row in its area's
//! table, then the row in the crate documentation. What every area builds
//! with (the `Check` row, the `Judge` and its shared helpers, the finding
//! constructors) is in `judge`.
//!
//! A file that could not be read makes its check `unknown` (the path is in
//! the fact); a file whose absence means the feature is not in this kernel
//! (no cpufreq, no KSM, no NUMA balancing) is judged as that.

use crate::facts::{Facts, cpu_list, cpus_phrase};
use crate::suggest::Suggestion;
use crate::{Finding, Request};

mod clocksource;
mod interference;
mod isolation;
mod judge;
mod kernel;
mod limits;
mod memory;
mod platform;
mod power;
mod scheduler;

pub use judge::Check;
pub use kernel::NOT_PREEMPT_RT;

use judge::Judge;

/// The areas' tables, in the order the audit lists them.
const AREAS: &[&[Check]] = &[
    kernel::CHECKS,
    isolation::CHECKS,
    power::CHECKS,
    clocksource::CHECKS,
    scheduler::CHECKS,
    memory::CHECKS,
    interference::CHECKS,
    platform::CHECKS,
    limits::CHECKS,
];

/// How many checks there are.
const COUNT: usize = count(AREAS);

/// Every check, in the order the audit judges and lists them.
pub const CHECKS: &[Check] = &joined::<COUNT>(AREAS);

/// Every check's id, in the order of [`CHECKS`].
pub const IDS: [&str; COUNT] = ids::<COUNT>(CHECKS);

/// The checks of all `areas`.
const fn count(areas: &[&[Check]]) -> usize {
    let mut total = 0;
    let mut area = 0;
    while area < areas.len() {
        total += areas[area].len();
        area += 1;
    }
    total
}

/// The tables of `areas` one after the other (`N`: [`count`] of them).
const fn joined<const N: usize>(areas: &[&[Check]]) -> [Check; N] {
    let mut all = [areas[0][0]; N];
    let mut at = 0;
    let mut area = 0;
    while area < areas.len() {
        let mut i = 0;
        while i < areas[area].len() {
            all[at] = areas[area][i];
            at += 1;
            i += 1;
        }
        area += 1;
    }
    all
}

/// The ids of the first `N` of `checks`.
const fn ids<const N: usize>(checks: &[Check]) -> [&'static str; N] {
    let mut ids = [""; N];
    let mut i = 0;
    while i < N {
        ids[i] = checks[i].id;
        i += 1;
    }
    ids
}

/// Judges `facts` for `request`; `suggestion` is the command line
/// suggested, whose caveats some findings carry.
pub fn run(facts: &Facts, request: &Request, suggestion: &Suggestion) -> Vec<Finding> {
    let judge = Judge {
        facts,
        request,
        suggestion,
        measured: &facts.measured,
        measured_text: cpu_list(&facts.measured),
        measured_cpus: cpus_phrase(&facts.measured),
    };
    CHECKS.iter().map(|check| (check.judge)(&judge)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table of the crate documentation is [`CHECKS`], row by row.
    #[test]
    fn the_documented_table_is_the_registry() {
        let documented: Vec<&str> = include_str!("../lib.rs")
            .lines()
            .filter_map(|line| line.strip_prefix("//! "))
            .filter(|line| line.starts_with("| `"))
            .collect();
        let registered: Vec<String> = CHECKS.iter().map(Check::doc_row).collect();
        assert_eq!(documented, registered);
    }
}
