//! What an explanation needs to know about the machine besides the events:
//! each measured CPU's idle states (name and exit latency, from cpuidle's
//! sysfs files, read once at the start) and a task's scheduling policy
//! and priority (from `/proc/<pid>/stat`, read when a task is named, while
//! it most likely still exists), and the kernel's function names (read
//! from `/proc/kallsyms` before the first sample).

use std::collections::HashMap;
use std::path::Path;

use rtlat_audit::facts::parse_task_stat;
use rtlat_explain::{ExplainContext, KernelSymbols};

/// An idle state: its name and its exit latency in ns.
type IdleState = (String, i64);

/// The host's answers, behind an [`ExplainContext`].
pub struct HostContext {
    idle: Box<dyn Fn(usize, u32) -> Option<IdleState> + Send>,
    policy: Box<dyn Fn(i32) -> Option<(String, i32)> + Send>,
    symbols: KernelSymbols,
}

impl HostContext {
    /// Reads the idle states of `cpus` from this machine; functions are
    /// named from `symbols`.
    pub fn read(cpus: &[usize], symbols: KernelSymbols) -> HostContext {
        let table = idle_states(Path::new("/sys/devices/system/cpu"), cpus);
        HostContext {
            idle: Box::new(move |cpu, state| table.get(&(cpu, state)).cloned()),
            policy: Box::new(|pid| {
                let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                policy_in_stat(&text)
            }),
            symbols,
        }
    }

    /// The context the analysis asks.
    pub fn as_context(&self) -> ExplainContext<'_> {
        ExplainContext {
            idle_exit_latency: &*self.idle,
            task_policy: &*self.policy,
            symbols: &self.symbols,
        }
    }
}

/// `(cpu, state) → (name, exit latency ns)` for every state of `cpus` under
/// `cpu_dir` (`/sys/devices/system/cpu`).
fn idle_states(cpu_dir: &Path, cpus: &[usize]) -> HashMap<(usize, u32), IdleState> {
    let mut table = HashMap::new();
    for &cpu in cpus {
        for state in 0u32.. {
            let dir = cpu_dir.join(format!("cpu{cpu}/cpuidle/state{state}"));
            let (Ok(name), Ok(latency)) = (
                std::fs::read_to_string(dir.join("name")),
                std::fs::read_to_string(dir.join("latency")),
            ) else {
                break;
            };
            let Ok(latency_us) = latency.trim().parse::<i64>() else {
                continue;
            };
            table.insert(
                (cpu, state),
                (name.trim().to_owned(), latency_us.saturating_mul(1000)),
            );
        }
    }
    table
}

/// The policy name and user priority (the real-time priority, else the
/// nice value) in the text of `/proc/<pid>/stat`.
fn policy_in_stat(text: &str) -> Option<(String, i32)> {
    let stat = parse_task_stat(text)?;
    let name = match stat.policy_number {
        0 => "other",
        1 => "fifo",
        2 => "rr",
        3 => "batch",
        5 => "idle",
        6 => "deadline",
        _ => return None,
    };
    let priority = if matches!(stat.policy_number, 1 | 2) {
        i32::try_from(stat.rt_priority).ok()?
    } else {
        i32::try_from(stat.nice).ok()?
    };
    Some((name.to_owned(), priority))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_and_priority_are_read_after_the_command_name() {
        // A command name with a space and a parenthesis; policy 1 (fifo),
        // rt_priority 90.
        let mut fields: Vec<String> = (3..=52).map(|n| n.to_string()).collect();
        fields[19 - 3] = "0".into();
        fields[40 - 3] = "90".into();
        fields[41 - 3] = "1".into();
        let text = format!("4242 (spin (x) y) {}", fields.join(" "));
        assert_eq!(policy_in_stat(&text), Some(("fifo".to_owned(), 90)));
        fields[41 - 3] = "0".into();
        fields[19 - 3] = "-5".into();
        let text = format!("4242 (spin) {}", fields.join(" "));
        assert_eq!(policy_in_stat(&text), Some(("other".to_owned(), -5)));
        assert_eq!(policy_in_stat("4242 (spin) R 1"), None);
    }

    #[test]
    fn this_process_has_a_policy() {
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        let (policy, _) = policy_in_stat(&own).expect("our own stat line");
        assert!(["other", "fifo", "rr", "batch", "idle"].contains(&policy.as_str()));
    }

    #[test]
    fn idle_states_are_read_from_sysfs_files() {
        let dir = tempfile::tempdir().unwrap();
        for (state, name, latency) in [(0, "POLL", "0"), (1, "C1", "2")] {
            let d = dir.path().join(format!("cpu1/cpuidle/state{state}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("name"), format!("{name}\n")).unwrap();
            std::fs::write(d.join("latency"), format!("{latency}\n")).unwrap();
        }
        let table = idle_states(dir.path(), &[1, 3]);
        assert_eq!(table.get(&(1, 1)), Some(&("C1".to_owned(), 2000)));
        assert_eq!(table.get(&(1, 0)), Some(&("POLL".to_owned(), 0)));
        assert_eq!(table.len(), 2);
    }
}
