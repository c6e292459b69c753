//! `--deepest-idle-state N`: the cpuidle `disable` files of the measured
//! CPUs during a run (states deeper than N disabled, `-1` all), and put
//! back as they were after a normal end, a stop signal, an error and a
//! SIGKILL (the janitor); C 2.8's warning instead of
//! `/dev/cpu_dma_latency`; bad values.
//!
//! The idle states are machine-wide: the tests that change them hold a
//! [`Restore`] guard, which leases every CPU (no other test, in this
//! process or another, measures while the states change under it, nor
//! changes them at the same time) and writes back what the files held
//! before the test, even if it fails.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rtlat_sys::cpuidle::{CPU_SYSFS, idle_states};

use crate::support::cpus::CpuLease;
use crate::support::{
    Running, allowed_cpus, rtlat_cyclictest, run, spawn, wait_until, wait_until_spinning,
};

const WARNING: &str = "WARN: not setting cpu_dma_latency, --deepest-idle-state is set instead";

/// The `disable` files of `cpu`'s idle states, by state index.
fn disable_files(cpu: usize) -> Vec<(u32, PathBuf)> {
    idle_states(Path::new(CPU_SYSFS), cpu)
        .into_iter()
        .map(|(index, dir)| (index, dir.join("disable")))
        .collect()
}

/// A cyclictest run of up to 10 s with `extra` options, started.
fn spawn_long_run(extra: &[&str]) -> Running {
    spawn(rtlat_cyclictest(["-q", "-i", "1000", "-D", "10"]).args(extra))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_owned()
}

/// Every `disable` file of the allowed CPUs with its content.
fn snapshot() -> Vec<(PathBuf, String)> {
    allowed_cpus()
        .into_iter()
        .flat_map(disable_files)
        .map(|(_, path)| {
            let value = read(&path);
            (path, value)
        })
        .collect()
}

/// Holds the machine for one test (a lease of every CPU) and writes back,
/// when dropped, what the `disable` files held when it was made, before
/// the lease ends.
struct Restore {
    before: Vec<(PathBuf, String)>,
    lease: CpuLease,
}

impl Restore {
    fn new() -> Restore {
        let lease = CpuLease::all();
        Restore {
            before: snapshot(),
            lease,
        }
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        for (path, value) in &self.before {
            let _ = std::fs::write(path, value);
        }
        // The lease ends after this, with the fields.
    }
}

/// Returns from the calling test, saying so, unless it runs as root on a
/// machine whose allowed CPUs have at least two idle states each.
macro_rules! require_cpuidle {
    () => {
        require_root!();
        if allowed_cpus()
            .iter()
            .any(|&cpu| disable_files(cpu).len() < 2)
        {
            skip_note!(
                "SKIPPED (needs cpuidle with two states or more on every CPU): {}",
                function_name!()
            );
            return;
        }
    };
}

/// Whether `done` holds within a safety net of 3 s (wider under
/// emulation, where the run and its janitor are emulated processes).
fn eventually(done: impl FnMut() -> bool) -> bool {
    wait_until(Duration::from_secs(3), done)
}

fn all_disabled(cpu: usize) -> bool {
    disable_files(cpu).iter().all(|(_, p)| read(p) == "1")
}

#[test]
fn restored_after_a_normal_end_including_a_state_disabled_before() {
    require_cpuidle!();
    let guard = Restore::new();
    // A state disabled before the run stays disabled after it; the
    // others come back enabled.
    let cpus = allowed_cpus();
    for &cpu in &cpus {
        for (_, path) in disable_files(cpu) {
            std::fs::write(&path, "0").unwrap();
        }
    }
    let (_, first_deep) = &disable_files(cpus[0])[1];
    std::fs::write(first_deep, "1").unwrap();
    let before = snapshot();
    let r = run(&mut rtlat_cyclictest([
        "-q",
        "-i",
        "1000",
        "-l",
        "200",
        "--deepest-idle-state",
        "0",
    ]));
    r.expect_code(0);
    assert_eq!(snapshot(), before, "{}", r.describe());
    drop(guard);
}

#[test]
fn minus_one_disables_every_state_of_the_a_cpus_only_and_sigterm_restores() {
    require_cpuidle!();
    let guard = Restore::new();
    // Every state enabled, so that the unmeasured CPU's show it untouched.
    for (path, _) in &guard.before {
        std::fs::write(path, "0").unwrap();
    }
    let before = snapshot();
    let cpus = guard.lease.cpus().to_vec();
    let measured = *cpus.last().unwrap();
    let child = spawn_long_run(&["-a", &measured.to_string(), "--deepest-idle-state=-1"]);
    assert!(
        eventually(|| all_disabled(measured)),
        "every state of CPU {measured} disabled during the run: {:?}",
        snapshot()
    );
    for &cpu in cpus.iter().filter(|&&c| c != measured) {
        assert!(
            disable_files(cpu).iter().all(|(_, p)| read(p) == "0"),
            "CPU {cpu} is not measured: {:?}",
            snapshot()
        );
    }
    child.signal("TERM");
    let r = child.wait(Duration::from_secs(5));
    r.expect_code(0);
    assert_eq!(snapshot(), before, "{}", r.describe());
    drop(guard);
}

#[test]
fn states_deeper_than_n_are_disabled_and_sigint_restores() {
    require_cpuidle!();
    let guard = Restore::new();
    let before = snapshot();
    let child = spawn_long_run(&["--deepest-idle-state", "0"]);
    // Without -a: every allowed CPU; state 0 stays as it was.
    let deep_disabled = || {
        allowed_cpus().into_iter().all(|cpu| {
            disable_files(cpu)
                .iter()
                .all(|(k, p)| *k == 0 || read(p) == "1")
        })
    };
    assert!(eventually(deep_disabled), "{:?}", snapshot());
    for cpu in allowed_cpus() {
        let (_, state0) = &disable_files(cpu)[0];
        let was = &before.iter().find(|(p, _)| p == state0).unwrap().1;
        assert_eq!(&read(state0), was, "CPU {cpu} state 0");
    }
    child.signal("INT");
    child.wait(Duration::from_secs(5)).expect_code(0);
    assert_eq!(snapshot(), before);
    drop(guard);
}

#[test]
fn restored_after_an_error_once_they_were_set() {
    require_cpuidle!();
    let guard = Restore::new();
    let before = snapshot();
    // The -F FIFO is checked after the idle states are set (and after the
    // warning that follows them): a regular file in its place stops the
    // run there, exit 1.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("not-a-fifo");
    std::fs::write(&fifo, b"").unwrap();
    let r = run(&mut rtlat_cyclictest([
        "-q",
        "-l",
        "100",
        "-F",
        fifo.to_str().unwrap(),
        "--deepest-idle-state",
        "-1",
    ]));
    r.expect_code(1);
    assert!(r.stderr.contains("-F/--fifo"), "{}", r.describe());
    assert!(r.stderr_lines().contains(&WARNING), "{}", r.describe());
    assert_eq!(snapshot(), before, "{}", r.describe());
    drop(guard);
}

#[test]
fn the_janitor_restores_them_after_sigkill() {
    require_cpuidle!();
    let guard = Restore::new();
    let before = snapshot();
    let child = spawn_long_run(&["--deepest-idle-state", "-1"]);
    // Killed at the first change seen, polled without a pause: a run must
    // have told its janitor before it writes.
    assert!(
        wait_until_spinning(Duration::from_secs(3), || snapshot() != before),
        "{:?}",
        snapshot()
    );
    child.signal("KILL");
    let r = child.wait(Duration::from_secs(5));
    assert_eq!(r.code(), None, "killed: {}", r.describe());
    assert!(
        eventually(|| snapshot() == before),
        "not restored after SIGKILL: {:?}, before {before:?}",
        snapshot()
    );
    drop(guard);
}

#[test]
fn cpu_dma_latency_is_left_alone_with_cs_warning() {
    // C 2.8's warning; --laptop keeps its own, as in C.
    require_cpuidle!();
    let guard = Restore::new();
    let laptop = "WARN: not setting cpu_dma_latency to save battery power";
    for (extra, warning, not) in [(None, WARNING, laptop), (Some("--laptop"), laptop, WARNING)] {
        let mut cmd = rtlat_cyclictest(["-q", "-l", "50", "--deepest-idle-state", "1"]);
        let r = run(cmd.args(extra));
        r.expect_code(0);
        let lines = r.stderr_lines();
        assert!(lines.contains(&warning), "{}", r.describe());
        assert!(!lines.contains(&not), "{}", r.describe());
        assert!(!r.stdout.contains("cpu_dma_latency"), "{}", r.describe());
    }
    drop(guard);
}

#[test]
fn bad_values_are_one_line_and_exit_2() {
    // Refused before anything is touched: no root needed.
    for bad in ["x", "-2", "", "1.5", "99999999999"] {
        let r = run(&mut rtlat_cyclictest([
            "-q",
            "-l",
            "10",
            "--deepest-idle-state",
            bad,
        ]));
        r.expect_code(2);
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{bad:?}: {}", r.describe());
        assert!(
            lines[0].contains("--deepest-idle-state") && lines[0].contains("-1 to"),
            "{bad:?}: {}",
            r.describe()
        );
    }
}
