//! The real-time audit of a Linux machine, as a library: [`audit`] reads
//! the facts from a root directory (`/`, or a copied tree in tests) and
//! turns them into findings, each with a status, the fact observed and,
//! where something should change, why and how. It changes nothing.
//!
//! A robot controller can run the same checks at boot; `rtlat audit`
//! prints them, and every rtlat result carries the [`Environment`] and the
//! findings of the run's CPUs.
//!
//! Modules: [`facts`] reads the tree, [`checks`] judges the facts,
//! [`counters`] reads the system-wide counters a run compares at its end,
//! [`suggest`] builds the cyclictest command line for this machine,
//! [`environment`] is the plain record of the facts that results carry.

pub mod checks;
pub mod counters;
pub mod environment;
pub mod facts;
pub mod suggest;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use environment::Environment;

/// What is to be measured, which the checks judge the machine against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// The CPUs to be measured; `None`: every CPU the process may use
    /// (read from `proc/self/status` under the root).
    pub cpus: Option<Vec<usize>>,
    /// The real-time priority the measuring threads will use (`-p`);
    /// `None`: none given (cyclictest's default, 0).
    pub priority: Option<u8>,
    /// The interval between wake-ups in µs (`-i`; cyclictest's default
    /// 1000), against which idle-state exit latencies are judged.
    pub interval_us: u64,
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

/// The audit of a machine for a [`Request`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Audit {
    /// The CPUs judged as measured (the request's, or every allowed one).
    #[serde(skip)]
    pub measured_cpus: Vec<usize>,
    /// Every check's finding, in a fixed order.
    pub checks: Vec<Finding>,
    /// The facts, as results record them.
    pub environment: Environment,
    /// The cyclictest command line suggested for this machine.
    pub suggested_command: String,
}

/// Why an audit could not be made at all (a check that cannot read its
/// file is a finding with status `unknown`, not an error).
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The root directory does not exist or is not a directory.
    #[error("{}: {reason}", path.display())]
    Root {
        /// The root given.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A requested CPU is not present on the machine audited.
    #[error("CPU {cpu} is not present (present: {present})")]
    CpuNotPresent {
        /// The CPU asked for.
        cpu: usize,
        /// The present CPUs, as a list (`0-3`).
        present: String,
    },
}

/// Reads the machine under `root` and judges it for `request`.
pub fn audit(root: &Path, request: &Request) -> Result<Audit, AuditError> {
    let _ = (root, request);
    todo!("helper A: facts::gather, checks::run, suggest::command, Environment::from")
}
