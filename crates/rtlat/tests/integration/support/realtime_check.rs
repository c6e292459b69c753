//! The check that keeps CPU leases honest: every process a test starts
//! (through [`super::SpawnChecked`], which every start goes through) is
//! watched, with its descendants, while it lives; a thread of theirs under
//! SCHED_FIFO or SCHED_RR that may run on a CPU outside the lease the test
//! held when it started the process ([`super::cpus`]) is a fault of the
//! test, reported when the test waits for the process: an unleased
//! real-time test would share a CPU with another one by accident.
//!
//! One watcher thread looks every [`LOOK_EVERY`] while a watched process
//! lives and sleeps on a condition variable otherwise. A real-time thread
//! that lives less than that can slip through: the check guards the
//! suite's habits, it does not prove them.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use super::parse_cpu_list;
use super::proc_stat;

/// How often the watcher looks at the live watched processes.
pub const LOOK_EVERY: Duration = Duration::from_millis(10);

#[derive(Debug)]
struct Watched {
    pid: u32,
    /// The CPUs of the starting test's lease (empty: it held none).
    leased: Vec<usize>,
    /// The first real-time thread seen outside `leased`.
    fault: Option<String>,
    /// Whether the process was seen ended (gone or a zombie).
    ended: bool,
    /// How many times the watcher looked at it.
    looks: u64,
}

#[derive(Debug, Default)]
struct Watchlist {
    entries: Vec<Watched>,
}

struct Watcher {
    list: Mutex<Watchlist>,
    something_lives: Condvar,
}

fn watcher() -> &'static Watcher {
    static WATCHER: OnceLock<&'static Watcher> = OnceLock::new();
    WATCHER.get_or_init(|| {
        let watcher: &'static Watcher = Box::leak(Box::new(Watcher {
            list: Mutex::new(Watchlist::default()),
            something_lives: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("realtime-check".into())
            .spawn(move || watch_forever(watcher))
            .expect("starting the real-time check's thread");
        watcher
    })
}

/// Watches `pid`, just started by the calling thread, against the lease
/// that thread holds.
pub fn watch(pid: u32) {
    let w = watcher();
    let mut list = w.list.lock().unwrap_or_else(|e| e.into_inner());
    list.entries.retain(|e| e.pid != pid);
    list.entries.push(Watched {
        pid,
        leased: super::cpus::held_by_this_thread(),
        fault: None,
        ended: false,
        looks: 0,
    });
    w.something_lives.notify_all();
}

/// Stops watching `pid` (after the test waited for it) and says whether
/// one of its real-time threads ran outside the lease.
pub fn outcome(pid: u32) -> Result<(), String> {
    let w = watcher();
    let mut list = w.list.lock().unwrap_or_else(|e| e.into_inner());
    let at = list.entries.iter().position(|e| e.pid == pid);
    match at.map(|at| list.entries.swap_remove(at)) {
        Some(Watched {
            fault: Some(fault), ..
        }) => Err(fault),
        _ => Ok(()),
    }
}

/// Panics with the fault of `pid`, if it had one ([`outcome`]).
pub fn assert_kept_to_its_lease(pid: u32) {
    if let Err(fault) = outcome(pid) {
        panic!("{fault}");
    }
}

fn watch_forever(w: &Watcher) {
    loop {
        let live: Vec<(u32, Vec<usize>)> = {
            let mut list = w.list.lock().unwrap_or_else(|e| e.into_inner());
            while !list.entries.iter().any(|e| !e.ended && e.fault.is_none()) {
                list = w
                    .something_lives
                    .wait(list)
                    .unwrap_or_else(|e| e.into_inner());
            }
            list.entries
                .iter()
                .filter(|e| !e.ended && e.fault.is_none())
                .map(|e| (e.pid, e.leased.clone()))
                .collect()
        };
        for (pid, leased) in live {
            let look = look_at(pid, &leased);
            let mut list = w.list.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(entry) = list.entries.iter_mut().find(|e| e.pid == pid) {
                entry.looks += 1;
                match look {
                    Look::Ended => entry.ended = true,
                    Look::Fault(fault) => entry.fault = Some(fault),
                    Look::Fine => {}
                }
            }
        }
        std::thread::sleep(LOOK_EVERY);
    }
}

enum Look {
    Fine,
    Ended,
    Fault(String),
}

/// Looks at `pid` and its descendants once.
fn look_at(pid: u32, leased: &[usize]) -> Look {
    match proc_stat(Path::new(&format!("/proc/{pid}/stat"))) {
        None => return Look::Ended,
        Some((_, fields)) if fields.first().map(String::as_str) == Some("Z") => {
            return Look::Ended;
        }
        Some(_) => {}
    }
    let leased_set: BTreeSet<usize> = leased.iter().copied().collect();
    for process in tree_of(pid) {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{process}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Some((name, fields)) = proc_stat(&task.path().join("stat")) else {
                continue;
            };
            // Field 41 of proc(5): the policy (1 SCHED_FIFO, 2 SCHED_RR,
            // 6 SCHED_DEADLINE).
            let policy = match fields.get(38).map(String::as_str) {
                Some("1") => "SCHED_FIFO",
                Some("2") => "SCHED_RR",
                Some("6") => "SCHED_DEADLINE",
                _ => continue,
            };
            let Some(allowed) = std::fs::read_to_string(task.path().join("status"))
                .ok()
                .and_then(|status| {
                    status
                        .lines()
                        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                        .map(|list| parse_cpu_list(list.trim()))
                })
            else {
                continue;
            };
            if allowed.iter().all(|cpu| leased_set.contains(cpu)) {
                continue;
            }
            let lease = if leased.is_empty() {
                "no lease held".to_owned()
            } else {
                format!("CPUs {leased:?}")
            };
            return Look::Fault(format!(
                "a real-time thread ran outside its test's CPU lease: thread {} '{name}' of \
                 process {process} (started as {pid} by the test), {policy}, may run on CPUs \
                 {allowed:?}; the test's lease: {lease}. Take a lease \
                 (support::cpus::CpuLease) before starting real-time work, and keep it on the \
                 leased CPUs (-a, CpuLease::pinned)",
                task.file_name().to_string_lossy()
            ));
        }
    }
    Look::Fine
}

/// `pid` and every process below it, from `/proc/PID/task/TID/children`.
fn tree_of(pid: u32) -> Vec<u32> {
    let mut found = vec![pid];
    let mut next = 0;
    while next < found.len() {
        let process = found[next];
        next += 1;
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{process}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            found.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::cpus::CpuLease;
    use crate::support::{SpawnChecked, wait_until};
    use std::process::Command;

    /// How many looks the watcher has taken at `pid`, and its fault.
    fn state_of(pid: u32) -> Option<(u64, Option<String>)> {
        let list = watcher().list.lock().unwrap();
        list.entries
            .iter()
            .find(|e| e.pid == pid)
            .map(|e| (e.looks, e.fault.clone()))
    }

    #[test]
    fn a_realtime_child_without_a_lease_is_a_fault() {
        require_root!();
        // A sleeping SCHED_FIFO process disturbs nobody: the stand-in for
        // a test that forgot its lease.
        let mut child = Command::new("chrt")
            .args(["-f", "1", "sleep", "30"])
            .spawn_checked()
            .unwrap();
        let pid = child.id();
        let seen = wait_until(Duration::from_secs(10), || {
            state_of(pid).is_some_and(|(_, fault)| fault.is_some())
        });
        child.kill().unwrap();
        child.wait().unwrap();
        let fault = outcome(pid).expect_err("no fault for an unleased real-time child");
        assert!(seen);
        assert!(
            fault.contains("SCHED_FIFO") && fault.contains("no lease held"),
            "{fault}"
        );
    }

    #[test]
    fn a_realtime_grandchild_outside_the_lease_is_a_fault_and_one_inside_is_not() {
        require_root!();
        let lease = CpuLease::one();
        let outside = crate::support::allowed_cpus()
            .into_iter()
            .find(|&c| c != lease.cpu());
        // Inside: taskset, then chrt, then sleep, below a shell.
        let mut inside = lease
            .pinned("sh")
            .args(["-c", "chrt -f 1 sleep 30 & wait"])
            .spawn_checked()
            .unwrap();
        let mut wrong = outside.map(|cpu| {
            Command::new("sh")
                .args(["-c", &format!("taskset -c {cpu} chrt -f 1 sleep 30 & wait")])
                .spawn_checked()
                .unwrap()
        });
        // The sign that the watcher looked at the grandchild inside: it
        // runs under SCHED_FIFO, and a look after that has been taken.
        let inside_pid = inside.id();
        assert!(wait_until(Duration::from_secs(10), || {
            crate::support::children_of(inside_pid)
                .into_iter()
                .any(|c| crate::support::realtime_threads(c) == 1)
        }));
        let looks_then = state_of(inside_pid).unwrap().0;
        assert!(wait_until(Duration::from_secs(10), || {
            state_of(inside_pid).unwrap().0 >= looks_then + 2
        }));
        if let Some(wrong) = &wrong {
            let pid = wrong.id();
            assert!(wait_until(Duration::from_secs(10), || {
                state_of(pid).is_some_and(|(_, fault)| fault.is_some())
            }));
        }
        for child in std::iter::once(&mut inside).chain(wrong.as_mut()) {
            for grandchild in crate::support::children_of(child.id()) {
                crate::support::send_signal(grandchild, "KILL");
            }
            child.wait().unwrap();
        }
        assert_eq!(outcome(inside_pid), Ok(()));
        match wrong {
            Some(wrong) => {
                let fault = outcome(wrong.id()).expect_err("no fault outside the lease");
                assert!(
                    fault.contains(&format!("CPUs [{}]", lease.cpu())),
                    "{fault}"
                );
            }
            None => skip_note!(
                "SKIPPED a part (one CPU: no CPU outside the lease): {}",
                function_name!()
            ),
        }
    }
}
