//! `rtlat audit`: reads the machine (through `rtlat_audit`, which changes
//! nothing), prints one line per check and the command line suggested
//! for this machine, and with `--json` writes the same as a JSON
//! document. Exit 0 whatever it finds; `--fail-on LEVEL` makes a check at
//! or above LEVEL exit 3.
//!
//! `text` renders the lines for a person (colour on a terminal only),
//! `json` the document for programs.

pub mod json;
pub mod text;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rtlat_audit::{Audit, AuditError, Request, Status};

use crate::output::{OutputTarget, Stdout, end_run};
use crate::report::formats::{self, Document};
use rtlat_args::UsageError;
use rtlat_args::values::SystemView;

/// What `rtlat audit` was asked.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The tree read: `/`, or a copy given by `--root`.
    pub root: PathBuf,
    /// What is to be measured: CPUs, priority, interval.
    pub request: Request,
    /// `--json`: where the JSON document goes (standard output: instead of
    /// the text).
    pub json: Option<OutputTarget>,
    /// `--fail-on`: the least status that makes the exit status 3.
    pub fail_on: Option<Status>,
}

/// `rtlat audit`: audits, prints. Returns the exit status: 0, or 3 with
/// `--fail-on` when a check is at or above its level.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    // A CPU the tree does not have, or a root it cannot read, is the
    // command line's fault: one line, exit 2.
    let audit = rtlat_audit::audit(&settings.root, &settings.request).map_err(|e| match e {
        AuditError::CpuNotPresent { .. } => UsageError(format!("--cpus: {e}")),
        AuditError::Root { .. } => UsageError(format!("--root: {e}")),
    })?;

    let mut out = Stdout::new(false);
    let written = formats::write_document(
        &Audited {
            audit: &audit,
            json: settings.json.as_ref(),
        },
        &mut out,
    );
    let failing: Vec<&str> = match settings.fail_on {
        Some(level) => audit.at_least(level).map(|f| f.id).collect(),
        None => Vec::new(),
    };
    let (failure, status) = match settings.fail_on {
        Some(level) if !failing.is_empty() => (
            Some(format!(
                "--fail-on {level}: {count} at {level} or worse: {ids}",
                level = level.name(),
                count = match failing.len() {
                    1 => "1 check".to_string(),
                    n => format!("{n} checks"),
                },
                ids = failing.join(", ")
            )),
            3,
        ),
        _ => (None, 0),
    };
    end_run(&mut out, written, failure, status)
}

/// The audit as the final outputs see it: the text, coloured and wrapped
/// for stdout, and the `--json` document.
struct Audited<'a> {
    audit: &'a Audit,
    json: Option<&'a OutputTarget>,
}

impl Document for Audited<'_> {
    fn write_text(&self, w: &mut dyn Write) -> io::Result<()> {
        let colour = text::Colour::for_stdout();
        let width = rtlat_args::columns::width(rtlat_args::columns::Stream::Stdout);
        text::write_text(w, self.audit, colour, width)
    }

    fn json_target(&self) -> Option<&OutputTarget> {
        self.json
    }

    fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        json::write_json(w, self.audit)
    }
}

/// The CPUs of the machine under `root`, against which `--cpus` is read:
/// this process's own view for `/`; for a copied tree, the CPUs it says
/// are present (`sys/devices/system/cpu/present`) and those its process
/// may use (`proc/self/status`), or this process's view where the tree
/// does not say.
pub fn machine_of(root: &Path) -> SystemView {
    let own = SystemView::of_this_process();
    if std::fs::canonicalize(root).is_ok_and(|r| r == Path::new("/")) {
        return own;
    }
    let present = read_cpu_list(&root.join("sys/devices/system/cpu/present"));
    // Read as the audit reads the tree: a FIFO or an endless file there
    // is not waited on.
    let allowed = rtlat_audit::facts::read_small_file(&root.join("proc/self/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .and_then(cpu_list)
        });
    match (present, allowed) {
        (Some(present), allowed) => SystemView {
            configured_cpus: present.last().map_or(0, |last| last + 1),
            allowed_cpus: allowed.unwrap_or(present),
        },
        (None, Some(allowed)) => SystemView {
            configured_cpus: allowed.last().map_or(0, |last| last + 1),
            allowed_cpus: allowed,
        },
        (None, None) => own,
    }
}

fn read_cpu_list(path: &Path) -> Option<Vec<usize>> {
    cpu_list(&rtlat_audit::facts::read_small_file(path).ok()?)
}

/// A kernel CPU list (`0-3,8`), sorted.
fn cpu_list(text: &str) -> Option<Vec<usize>> {
    rtlat_audit::facts::parse_kernel_cpu_list(text, usize::MAX)
}

/// A hand-built audit for the output tests.
#[cfg(test)]
pub(crate) mod test_support {
    use rtlat_audit::{Audit, Environment, Finding, Status};

    fn finding(
        id: &'static str,
        status: Status,
        fact: &str,
        advice: Option<(&str, &str)>,
    ) -> Finding {
        Finding {
            id,
            status,
            fact: fact.to_string(),
            why: advice.map(|(why, _)| why.to_string()),
            fix: advice.map(|(_, fix)| fix.to_string()),
            cpus: Vec::new(),
        }
    }

    /// The contract's example environment.
    pub fn environment() -> Environment {
        serde_json::from_value(serde_json::json!({
            "rtlat_version": "0.1.0",
            "kernel": {"release": "6.1.0-rt", "version": "#1 SMP PREEMPT_RT", "preemption": "PREEMPT_RT",
                       "hz": 1000, "nohz_full": true, "cmdline": "isolcpus=2-3"},
            "cpu": {"model": "Example CPU", "count": 4, "smt": false},
            "measured_cpus": [2, 3],
            "cpus": [{"cpu": 2, "governor": "performance",
                      "idle_states": [{"name": "POLL", "exit_latency_us": 0, "disabled": false}]}],
            "clocksource": "tsc",
            "isolation": {"isolated": "2-3", "nohz_full": "2-3", "isolcpus": "2-3",
                          "rcu_nocbs": "2-3", "irqaffinity": "0-1"},
            "sched_rt_runtime_us": -1,
            "virtualization": {"hypervisor": false, "steal_time_seen": false},
            "limits": {"rlimit_rtprio": "unlimited", "rlimit_memlock": "8388608",
                       "cap_sys_nice": true, "cap_ipc_lock": true}
        }))
        .expect("the contract's environment")
    }

    /// One finding of each status, the worst (`bad`) last.
    pub fn audit() -> Audit {
        Audit {
            measured_cpus: vec![2, 3],
            checks: vec![
                finding("kernel.preemption", Status::Ok, "PREEMPT_RT", None),
                finding("kernel.hz", Status::Info, "HZ=250", None),
                finding("cpufreq.governor", Status::Unknown, "no governor", None),
                finding(
                    "memory.thp",
                    Status::Warn,
                    "transparent huge pages: always",
                    Some(("huge-page faults stall", "echo madvise > enabled")),
                ),
                finding(
                    "clocksource.current",
                    Status::Bad,
                    "hpet \"slow\"",
                    Some(("every timestamp costs µs", "clocksource=tsc")),
                ),
            ],
            environment: environment(),
            suggested_command: "rtlat cyclictest -m -a 2-3 -t 2 -p 95 -i 1000".to_string(),
        }
    }
}
