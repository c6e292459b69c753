//! The audit's types, as `rtlat audit --json` and a result document's
//! `"audit"` and `"environment"` members write them: each check's
//! [`Finding`] with its [`Status`], the whole [`Audit`], and the
//! `rtlat audit --json` document ([`AuditDocument`]), `{"rtlat_version",
//! "checks": [{"id", "status", "fact", "why", "fix"}], "environment":
//! {...}, "suggested_command"}`. Crate `rtlat-audit` reads the machine,
//! runs the checks and fills them.

use serde::Serialize;

use crate::environment::Environment;

/// The document's top level, in the order written.
#[derive(Clone, Debug, Serialize)]
pub struct AuditDocument<'a> {
    /// rtlat's version.
    pub rtlat_version: &'a str,
    /// Each check's finding.
    pub checks: &'a [Finding],
    /// The machine's facts.
    pub environment: &'a Environment,
    /// The command line the audit suggests for the machine.
    pub suggested_command: &'a str,
}

/// How a check judged what it saw. Ordered from harmless to worst, so
/// that `--fail-on warn` means "at least `Warn`".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// As a real-time machine should be.
    Ok,
    /// Worth knowing, nothing to change.
    Info,
    /// Could not be read (file absent or unreadable).
    Unknown,
    /// Can add latency; worth changing.
    Warn,
    /// Adds latency that makes results meaningless for real-time work.
    Bad,
}

impl Status {
    /// The word printed and written to JSON: `ok`, `info`, `unknown`,
    /// `warn`, `bad`.
    pub const fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Info => "info",
            Status::Unknown => "unknown",
            Status::Warn => "warn",
            Status::Bad => "bad",
        }
    }
}

/// One check's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable dotted identifier, e.g. `kernel.preemption`, `idle.states`.
    pub id: &'static str,
    /// How it was judged.
    pub status: Status,
    /// What was observed, in a few words (`governor powersave on CPU 1`).
    pub fact: String,
    /// For `warn` and `bad`: why it matters (`null` otherwise).
    pub why: Option<String>,
    /// For `warn` and `bad`: what to do (a kernel parameter, a sysctl, a
    /// command); `null` otherwise.
    pub fix: Option<String>,
    /// The measured CPUs it concerns; empty: the whole machine.
    #[serde(skip)]
    pub cpus: Vec<usize>,
}

/// The audit of a machine for what is to be measured (crate
/// `rtlat-audit`'s `Request`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Audit {
    /// The CPUs judged as measured (the request's, or every allowed one).
    #[serde(skip)]
    pub measured_cpus: Vec<usize>,
    /// Every check's finding, in the order of `rtlat_audit::CHECK_IDS`.
    pub checks: Vec<Finding>,
    /// The facts, as results record them.
    pub environment: Environment,
    /// The cyclictest command line suggested for this machine.
    pub suggested_command: String,
}

impl Audit {
    /// How many findings have each status present, from `ok` to `bad`.
    pub fn counts(&self) -> Vec<(Status, usize)> {
        [
            Status::Ok,
            Status::Info,
            Status::Unknown,
            Status::Warn,
            Status::Bad,
        ]
        .into_iter()
        .map(|status| {
            let count = self.checks.iter().filter(|f| f.status == status).count();
            (status, count)
        })
        .filter(|&(_, count)| count > 0)
        .collect()
    }

    /// The worst status found (`ok` for no finding).
    pub fn worst(&self) -> Status {
        self.checks
            .iter()
            .map(|finding| finding.status)
            .max()
            .unwrap_or(Status::Ok)
    }

    /// The first finding of the worst status.
    pub fn worst_finding(&self) -> Option<&Finding> {
        let worst = self.worst();
        self.checks.iter().find(|finding| finding.status == worst)
    }

    /// The findings at or above `status` (for `--fail-on`, verdicts).
    pub fn at_least(&self, status: Status) -> impl Iterator<Item = &Finding> {
        self.checks
            .iter()
            .filter(move |finding| finding.status >= status)
    }

    /// The last line of the audit: `audit: 14 ok, 3 warn, 1 bad: not a
    /// PREEMPT_RT kernel, so ...` (the counts, then why the worst finding
    /// matters, when it is `warn` or `bad`).
    pub fn summary(&self) -> String {
        let counts: Vec<String> = self
            .counts()
            .iter()
            .map(|(status, count)| format!("{count} {}", status.name()))
            .collect();
        let mut line = format!("audit: {}", counts.join(", "));
        if let Some(why) = self
            .worst_finding()
            .and_then(|finding| finding.why.as_deref())
        {
            line.push_str(": ");
            line.push_str(why);
        }
        line
    }
}
