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
//! table, then the row in the crate documentation.
//!
//! A file that could not be read makes its check `unknown` (the path is in
//! the fact); a file whose absence means the feature is not in this kernel
//! (no cpufreq, no KSM, no NUMA balancing) is judged as that.

use crate::facts::{Fact, Facts, Unread, cpu_list, cpus_phrase};
use crate::suggest::Suggestion;
use crate::{Finding, Request, Status};

mod clocksource;
mod interference;
mod isolation;
mod kernel;
mod limits;
mod memory;
mod platform;
mod power;
mod scheduler;

pub use kernel::NOT_PREEMPT_RT;

/// At most this many items are named in one fact; the rest are counted.
const LISTED: usize = 6;

/// One check: its id, what it reads, when it flags, and the function
/// that judges.
#[derive(Clone, Copy, Debug)]
pub struct Check {
    /// Stable dotted identifier, e.g. `kernel.preemption`.
    pub id: &'static str,
    /// What it judges: the files and facts it reads (Markdown).
    pub judges: &'static str,
    /// When it is flagged, and how (Markdown).
    pub flagged_when: &'static str,
    judge: fn(&Judge<'_>) -> Finding,
}

impl Check {
    /// Its row of the crate documentation's table of checks.
    pub fn doc_row(&self) -> String {
        format!(
            "| `{}` | {} | {} |",
            self.id, self.judges, self.flagged_when
        )
    }
}

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

fn finding(id: &'static str, status: Status, fact: String) -> Finding {
    Finding {
        id,
        status,
        fact,
        why: None,
        fix: None,
        cpus: Vec::new(),
    }
}

fn ok(id: &'static str, fact: impl Into<String>) -> Finding {
    finding(id, Status::Ok, fact.into())
}

fn info(id: &'static str, fact: impl Into<String>) -> Finding {
    finding(id, Status::Info, fact.into())
}

fn unknown(id: &'static str, unread: &Unread) -> Finding {
    finding(id, Status::Unknown, unread.to_string())
}

/// A `warn` or `bad` finding about `cpus` (empty: the whole machine).
fn flag(
    id: &'static str,
    status: Status,
    fact: impl Into<String>,
    why: impl Into<String>,
    fix: impl Into<String>,
    cpus: Vec<usize>,
) -> Finding {
    Finding {
        id,
        status,
        fact: fact.into(),
        why: Some(why.into()),
        fix: Some(fix.into()),
        cpus,
    }
}

/// `a, b, c and 4 more`.
fn listing(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LISTED {
        text.push_str(&format!(" and {} more", items.len() - LISTED));
    }
    text
}

struct Judge<'a> {
    facts: &'a Facts,
    request: &'a Request,
    /// The command line suggested: the isolation fixes name its CPUs.
    suggestion: &'a Suggestion,
    measured: &'a [usize],
    /// The measured CPUs as a list (`0-1`), for fixes.
    measured_text: String,
    /// The measured CPUs in a sentence (`CPU 1`, `CPUs 0-1`).
    measured_cpus: String,
}

impl Judge<'_> {
    /// The measured CPUs not in `cpus`.
    fn measured_outside(&self, cpus: &[usize]) -> Vec<usize> {
        self.measured
            .iter()
            .copied()
            .filter(|cpu| !cpus.contains(cpu))
            .collect()
    }

    /// Online CPUs where housekeeping can go: those not measured, else
    /// those the suggested command leaves out (never none but on a
    /// machine of one CPU).
    fn housekeeping(&self) -> Vec<usize> {
        match &self.facts.online {
            Ok(online) => {
                let outside = self.measured_outside_of(online);
                if outside.is_empty() {
                    online
                        .iter()
                        .copied()
                        .filter(|cpu| !self.suggestion.cpus.contains(cpu))
                        .collect()
                } else {
                    outside
                }
            }
            Err(_) => Vec::new(),
        }
    }

    /// Where a fix sends interrupts: the housekeeping CPUs, or a
    /// placeholder when they are unknown.
    fn housekeeping_target(&self) -> String {
        let housekeeping = self.housekeeping();
        if housekeeping.is_empty() {
            "<a CPU you do not measure>".to_owned()
        } else {
            cpu_list(&housekeeping)
        }
    }

    fn measured_outside_of(&self, cpus: &[usize]) -> Vec<usize> {
        cpus.iter()
            .copied()
            .filter(|cpu| !self.measured.contains(cpu))
            .collect()
    }

    /// The lowest priority a thread must have to delay the measuring
    /// threads: `-p`, or 0 (every real-time thread) without one.
    fn priority(&self) -> u32 {
        self.request.priority.map_or(0, u32::from)
    }

    fn priority_text(&self) -> String {
        match self.request.priority {
            Some(priority) => format!("-p {priority}"),
            None => "the measuring threads (no -p: SCHED_OTHER)".to_owned(),
        }
    }

    /// A sysctl that should read 0.
    fn sysctl_off(
        &self,
        id: &'static str,
        name: &str,
        value: &Fact<i64>,
        absent: &str,
        why: &str,
        fix: &str,
    ) -> Finding {
        match value {
            Err(unread) if unread.reason == "not found" => {
                ok(id, format!("{name} absent: {absent}"))
            }
            Err(unread) => unknown(id, unread),
            Ok(0) => ok(id, format!("{name}=0")),
            Ok(on) => flag(
                id,
                Status::Warn,
                format!("{name}={on}"),
                why,
                fix,
                Vec::new(),
            ),
        }
    }
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
