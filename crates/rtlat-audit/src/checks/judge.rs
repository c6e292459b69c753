//! What every check is built from: its row ([`Check`]), the [`Judge`]
//! that holds the facts and the request with the helpers several areas
//! use (housekeeping CPUs, priorities, sysctls), and the constructors of a
//! finding by status.

use crate::facts::{Fact, Facts, Unread, cpu_list};
use crate::suggest::Suggestion;
use crate::{Finding, Request, Status};

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
    pub(super) judge: fn(&Judge<'_>) -> Finding,
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

pub(super) fn finding(id: &'static str, status: Status, fact: String) -> Finding {
    Finding {
        id,
        status,
        fact,
        why: None,
        fix: None,
        cpus: Vec::new(),
    }
}

pub(super) fn ok(id: &'static str, fact: impl Into<String>) -> Finding {
    finding(id, Status::Ok, fact.into())
}

pub(super) fn info(id: &'static str, fact: impl Into<String>) -> Finding {
    finding(id, Status::Info, fact.into())
}

pub(super) fn unknown(id: &'static str, unread: &Unread) -> Finding {
    finding(id, Status::Unknown, unread.to_string())
}

/// A `warn` or `bad` finding about `cpus` (empty: the whole machine).
pub(super) fn flag(
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
pub(super) fn listing(items: &[String]) -> String {
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

pub(super) struct Judge<'a> {
    pub(super) facts: &'a Facts,
    pub(super) request: &'a Request,
    /// The command line suggested: the isolation fixes name its CPUs.
    pub(super) suggestion: &'a Suggestion,
    pub(super) measured: &'a [usize],
    /// The measured CPUs as a list (`0-1`), for fixes.
    pub(super) measured_text: String,
    /// The measured CPUs in a sentence (`CPU 1`, `CPUs 0-1`).
    pub(super) measured_cpus: String,
}

impl Judge<'_> {
    /// The measured CPUs not in `cpus`.
    pub(super) fn measured_outside(&self, cpus: &[usize]) -> Vec<usize> {
        self.measured
            .iter()
            .copied()
            .filter(|cpu| !cpus.contains(cpu))
            .collect()
    }

    /// Online CPUs where housekeeping can go: those not measured, else
    /// those the suggested command leaves out (never none but on a
    /// machine of one CPU).
    pub(super) fn housekeeping(&self) -> Vec<usize> {
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
    pub(super) fn housekeeping_target(&self) -> String {
        let housekeeping = self.housekeeping();
        if housekeeping.is_empty() {
            "<a CPU you do not measure>".to_owned()
        } else {
            cpu_list(&housekeeping)
        }
    }

    pub(super) fn measured_outside_of(&self, cpus: &[usize]) -> Vec<usize> {
        cpus.iter()
            .copied()
            .filter(|cpu| !self.measured.contains(cpu))
            .collect()
    }

    /// The lowest priority a thread must have to delay the measuring
    /// threads: `-p`, or 0 (every real-time thread) without one.
    pub(super) fn priority(&self) -> u32 {
        self.request.priority.map_or(0, u32::from)
    }

    pub(super) fn priority_text(&self) -> String {
        match self.request.priority {
            Some(priority) => format!("-p {priority}"),
            None => "the measuring threads (no -p: SCHED_OTHER)".to_owned(),
        }
    }

    /// A sysctl that should read 0.
    pub(super) fn sysctl_off(
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
