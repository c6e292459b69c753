//! The janitor under faults (`rtlat_core::janitor`): what a run announces
//! to it before the object exists, what happens when the janitor dies
//! first, when the run's whole process group is killed, when both die at
//! once; two `--deepest-idle-state` runs at a time; `-F` failing once
//! the run is on.
//!
//! The idle-state tests use a cpuidle tree of their own
//! (`RTLAT_TEST_CPU_SYSFS`), so they run where the machine has no cpuidle
//! driver (this VM) and never touch the real states. The runs that take a
//! real-time policy hold a CPU lease and are pinned to it.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::{
    Running, allowed_cpus, children_of, rtlat, rtlat_cyclictest, run, send_signal, spawn,
    wait_for_realtime_threads, wait_until, wait_until_spinning,
};

const TRACING: &str = "/sys/kernel/tracing";

/// How long after a kill the janitor has to put everything back (a
/// safety net: it takes milliseconds).
const CLEAN_WITHIN: Duration = Duration::from_secs(5);

/// Returns from the calling test, saying so, unless it runs as root with
/// tracefs instances.
macro_rules! require_tracefs_instances {
    () => {
        require_root!();
        if !Path::new(TRACING).join("instances").is_dir() {
            skip_note!(
                "SKIPPED (needs tracefs with instances at {TRACING}): {}",
                function_name!()
            );
            return;
        }
    };
}

/// The trace instance of run `pid`.
fn instance_of(pid: u32) -> PathBuf {
    Path::new(TRACING).join(format!("instances/rtlat-{pid}"))
}

/// Removes, when dropped, what a failed test may have left (a trace
/// instance, a FIFO), so that one failure does not leak kernel memory.
struct Leftovers(Vec<PathBuf>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for path in &self.0 {
            if path.is_dir() {
                let _ = std::fs::write(path.join("tracing_on"), "0");
                let _ = std::fs::remove_dir(path);
            } else {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// A cpuidle tree of the test's own: three idle states, all enabled, on
/// every CPU the machine has.
struct FakeCpuidle(tempfile::TempDir);

impl FakeCpuidle {
    fn new() -> FakeCpuidle {
        let root = tempfile::tempdir().unwrap();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cpus = cpus.max(rtlat_sys::system::configured_cpus());
        for cpu in 0..cpus {
            for state in 0..3 {
                let dir = root.path().join(format!("cpu{cpu}/cpuidle/state{state}"));
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("disable"), "0\n").unwrap();
            }
        }
        FakeCpuidle(root)
    }

    fn root(&self) -> &Path {
        self.0.path()
    }

    /// How many `disable` files hold 1.
    fn disabled(&self) -> usize {
        let mut count = 0;
        for cpu in std::fs::read_dir(self.root()).unwrap().flatten() {
            for state in std::fs::read_dir(cpu.path().join("cpuidle"))
                .unwrap()
                .flatten()
            {
                let value = std::fs::read_to_string(state.path().join("disable")).unwrap();
                count += usize::from(value.trim() == "1");
            }
        }
        count
    }
}

/// The janitor of run `pid` (its child named `rtlat-janitor`), if any.
fn janitor_of(pid: u32) -> Option<u32> {
    children_of(pid).into_iter().find(|&child| {
        std::fs::read(format!("/proc/{child}/cmdline"))
            .is_ok_and(|c| c.split(|&b| b == 0).next() == Some(b"rtlat-janitor"))
    })
}

/// Waits for run `pid`'s janitor and returns its pid.
fn wait_for_janitor(pid: u32) -> u32 {
    let mut found = None;
    assert!(
        wait_until(Duration::from_secs(5), || {
            found = janitor_of(pid);
            found.is_some()
        }),
        "no janitor for run {pid}"
    );
    found.unwrap()
}

/// Whether process `pid` has ended and been reaped or is a zombie.
fn gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rsplit_once(')')
            .is_some_and(|(_, f)| f.trim_start().starts_with('Z'))
    })
}

/// The SysV semaphore sets whose creation (or last operation) was made by
/// process `pid` (`GETPID`).
fn semaphore_sets_of(pid: u32) -> Vec<i32> {
    let text = std::fs::read_to_string("/proc/sysvipc/sem").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let id = fields.get(1)?.parse::<i32>().ok()?;
            let count = fields.get(3)?.parse::<u16>().ok()?;
            (0..count)
                .any(|sem| {
                    rtlat_sys::ipc::sysv::last_operator(id, sem)
                        .is_ok_and(|p| u32::try_from(p) == Ok(pid))
                })
                .then_some(id)
        })
        .collect()
}

fn semaphore_set_exists(id: i32) -> bool {
    rtlat_sys::ipc::sysv::last_operator(id, 0).is_ok()
}

#[test]
fn sigkill_at_the_trace_instances_creation_leaves_no_instance() {
    // The instance is announced before it is made: killed the moment its
    // directory appears (its buffers being allocated), the run leaves
    // nothing. Told after, as before, the janitor never knew of it.
    require_tracefs_instances!();
    let lease = CpuLease::one();
    let cpu = lease.cpu().to_string();
    let mut cmd = rtlat_cyclictest([
        "-q",
        "-m",
        "-a",
        &cpu,
        "-p",
        "50",
        "-i",
        "1000",
        "-D",
        "10",
        "--explain",
    ]);
    let child = spawn(&mut cmd);
    let own = instance_of(child.pid());
    let _cleanup = Leftovers(vec![own.clone()]);
    assert!(
        wait_until_spinning(Duration::from_secs(5), || own.exists()),
        "the instance appears"
    );
    send_signal(child.pid(), "KILL");
    let r = child.wait(Duration::from_secs(5));
    assert_eq!(r.code(), None, "killed: {}", r.describe());
    assert!(
        wait_until(CLEAN_WITHIN, || !own.exists()),
        "{} left behind by a run killed at its creation",
        own.display()
    );
}

/// A cyclictest run with every object the janitor guards: the trace
/// instance, the shm file, the `-F` FIFO, the idle states of `idle`.
fn run_with_everything(lease: &CpuLease, fifo: &Path, idle: &FakeCpuidle) -> std::process::Command {
    let cpu = lease.cpu().to_string();
    let mut cmd = rtlat_cyclictest([
        "-q",
        "-m",
        "-a",
        &cpu,
        "-p",
        "50",
        "-i",
        "1000",
        "-D",
        "10",
        "--explain",
        "--deepest-idle-state",
        "-1",
        "-F",
    ]);
    cmd.arg(fifo).env("RTLAT_TEST_CPU_SYSFS", idle.root());
    cmd
}

fn spawn_run_with_everything(lease: &CpuLease, fifo: &Path, idle: &FakeCpuidle) -> Running {
    spawn(&mut run_with_everything(lease, fifo, idle))
}

/// What of `pid`'s objects is still there.
fn left_of(pid: u32, fifo: &Path, idle: &FakeCpuidle) -> Vec<String> {
    let mut left = Vec::new();
    let instance = instance_of(pid);
    if instance.exists() {
        left.push(instance.display().to_string());
    }
    let shm = PathBuf::from(format!("/dev/shm/cyclictest{pid}"));
    if shm.exists() {
        left.push(shm.display().to_string());
    }
    if fifo.exists() {
        left.push(format!("the -F FIFO {}", fifo.display()));
    }
    if idle.disabled() > 0 {
        left.push(format!("{} idle states disabled", idle.disabled()));
    }
    left
}

#[test]
fn the_janitor_killed_first_then_the_run_leaves_nothing() {
    // The run sees its janitor's death at once, starts a new one and
    // tells it what is alive: the run killed after that leaves nothing.
    require_tracefs_instances!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("status");
    let idle = FakeCpuidle::new();
    let child = spawn_run_with_everything(&lease, &fifo, &idle);
    let pid = child.pid();
    let _cleanup = Leftovers(vec![instance_of(pid), fifo.clone()]);
    wait_for_realtime_threads(pid, 1);
    assert!(
        wait_until(Duration::from_secs(5), || left_of(pid, &fifo, &idle).len()
            == 4),
        "every object made: {:?}",
        left_of(pid, &fifo, &idle)
    );
    let first = wait_for_janitor(pid);
    send_signal(first, "KILL");
    child.wait_for_stderr(Duration::from_secs(5), "the janitor replaced", |e| {
        e.contains(&format!(
            "rtlat's janitor (pid {first}) died (signal 9); a new one"
        ))
    });
    let second = wait_for_janitor(pid);
    assert_ne!(second, first);
    send_signal(pid, "KILL");
    let r = child.wait(Duration::from_secs(5));
    assert_eq!(r.code(), None, "killed: {}", r.describe());
    assert!(
        wait_until(CLEAN_WITHIN, || left_of(pid, &fifo, &idle).is_empty()),
        "left after the janitor, then the run, were killed: {:?}\n{}",
        left_of(pid, &fifo, &idle),
        r.describe()
    );
    assert!(
        wait_until(CLEAN_WITHIN, || gone(second)),
        "the new janitor ends"
    );
}

#[test]
fn svsematest_with_its_janitor_killed_first_then_killed_leaves_no_set() {
    require_root!();
    let lease = CpuLease::one();
    let mut cmd = rtlat();
    cmd.args(["svsematest", "-t", "1", "-p", "80", "-i", "500", "-D", "10"])
        .arg(format!("-a{}", lease.cpu()));
    let child = spawn(&mut cmd);
    let pid = child.pid();
    wait_for_realtime_threads(pid, 2);
    let sets = semaphore_sets_of(pid);
    assert!(!sets.is_empty(), "svsematest's sets are made");
    let first = wait_for_janitor(pid);
    send_signal(first, "KILL");
    child.wait_for_stderr(Duration::from_secs(5), "the janitor replaced", |e| {
        e.contains("a new one")
    });
    send_signal(pid, "KILL");
    let _ = child.wait(Duration::from_secs(5));
    assert!(
        wait_until(CLEAN_WITHIN, || !sets
            .iter()
            .any(|&id| semaphore_set_exists(id))),
        "SysV sets left: {sets:?}"
    );
}

#[test]
fn a_kill_of_the_runs_process_group_leaves_nothing() {
    // The decision: the janitor leads a process group of its own, so that
    // `kill -KILL -PGID` (what ends a job) does not reach it; it cleans up
    // after the run.
    require_tracefs_instances!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("status");
    let idle = FakeCpuidle::new();
    let mut cmd = run_with_everything(&lease, &fifo, &idle);
    cmd.process_group(0);
    let child = spawn(&mut cmd);
    let pid = child.pid();
    let _cleanup = Leftovers(vec![instance_of(pid), fifo.clone()]);
    wait_for_realtime_threads(pid, 1);
    assert!(
        wait_until(Duration::from_secs(5), || left_of(pid, &fifo, &idle).len()
            == 4),
        "every object made: {:?}",
        left_of(pid, &fifo, &idle)
    );
    let janitor = wait_for_janitor(pid);
    send_signal_to_group(pid, "KILL");
    let _ = child.wait(Duration::from_secs(5));
    assert!(
        wait_until(CLEAN_WITHIN, || left_of(pid, &fifo, &idle).is_empty()),
        "left after a kill of the process group: {:?}",
        left_of(pid, &fifo, &idle)
    );
    assert!(
        wait_until(CLEAN_WITHIN, || gone(janitor)),
        "the janitor ends"
    );
}

/// `kill -NAME -- -PGID`.
fn send_signal_to_group(pgid: u32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([format!("-{name}"), "--".into(), format!("-{pgid}")])
        .status()
        .expect("kill(1)");
    assert!(status.success(), "kill -{name} -- -{pgid} failed");
}

#[test]
fn both_killed_at_once_leave_at_most_what_the_next_explain_run_removes() {
    // Nobody is left to clean: one kill(1) of the janitor and the run
    // (what `pkill -9 -f rtlat` does). docs/processes.md promises no more than
    // this: the objects may stay (whether the janitor saw the end of its
    // pipe before its own SIGKILL is a race), and the next --explain run
    // removes the trace instance of any run that is gone, here also one
    // made by hand for a pid that has ended, as a sure case.
    require_tracefs_instances!();
    let lease = CpuLease::one();
    let cpu = lease.cpu().to_string();
    let explain = |extra: &[&str]| {
        let mut cmd = rtlat_cyclictest(["-q", "-m", "-a", &cpu, "-p", "50", "-i", "1000"]);
        cmd.args(extra).arg("--explain");
        cmd
    };
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    ended.wait().unwrap();
    let by_hand = instance_of(ended.id());
    std::fs::create_dir(&by_hand).unwrap();
    let child = spawn(&mut explain(&["-D", "10"]));
    let pid = child.pid();
    let own = instance_of(pid);
    // What both-at-once may leave: the shm file too.
    let shm = PathBuf::from(format!("/dev/shm/cyclictest{pid}"));
    let _cleanup = Leftovers(vec![own.clone(), by_hand.clone(), shm]);
    wait_for_realtime_threads(pid, 1);
    let janitor = wait_for_janitor(pid);
    let status = std::process::Command::new("kill")
        .args(["-KILL".to_string(), janitor.to_string(), pid.to_string()])
        .status()
        .expect("kill(1)");
    assert!(status.success());
    let _ = child.wait(Duration::from_secs(5));
    assert!(wait_until(CLEAN_WITHIN, || gone(janitor)));
    let r = run(&mut explain(&["-l", "100"]));
    r.expect_code(0);
    for instance in [&own, &by_hand] {
        assert!(
            !instance.exists(),
            "{} left after the next --explain run: {}",
            instance.display(),
            r.describe()
        );
    }
}

#[test]
fn a_second_deepest_idle_state_run_is_refused_in_one_line() {
    // The first to end would put back what the other relies on: one at a
    // time. SCHED_OTHER runs: no lease needed.
    let idle = FakeCpuidle::new();
    let first = spawn(
        rtlat_cyclictest(["-q", "-i", "1000", "-D", "10", "--deepest-idle-state", "-1"])
            .env("RTLAT_TEST_CPU_SYSFS", idle.root()),
    );
    // -1 without -a: the three states of every allowed CPU, written one
    // after the other.
    let limited = 3 * allowed_cpus().len();
    assert!(
        wait_until(Duration::from_secs(5), || idle.disabled() == limited),
        "the first run limits the states: {} of {limited}",
        idle.disabled()
    );
    let second =
        run(
            rtlat_cyclictest(["-q", "-i", "1000", "-l", "100", "--deepest-idle-state", "0"])
                .env("RTLAT_TEST_CPU_SYSFS", idle.root()),
        );
    second.expect_code(1);
    let lines = second
        .stderr_lines()
        .into_iter()
        .filter(|l| !l.contains("note:"))
        .collect::<Vec<_>>();
    assert_eq!(lines.len(), 1, "{}", second.describe());
    assert!(
        lines[0].contains("--deepest-idle-state") && lines[0].contains("another run"),
        "{}",
        second.describe()
    );
    assert_eq!(idle.disabled(), limited, "the first run's limit holds");
    first.signal("TERM");
    first.wait(Duration::from_secs(5)).expect_code(0);
    assert_eq!(idle.disabled(), 0, "restored by the first run");
}

/// Makes `dir` append-only (`chattr +a`: files can be made in it, none
/// removed) for the guard's life; `None` where the file system refuses.
struct AppendOnly(PathBuf);

impl AppendOnly {
    fn set(dir: &Path) -> Option<AppendOnly> {
        let ok = std::process::Command::new("chattr")
            .arg("+a")
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| AppendOnly(dir.to_path_buf()))
    }
}

impl Drop for AppendOnly {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-a")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn a_fifo_that_cannot_be_made_once_the_run_is_on_is_one_line_and_exit_1() {
    // An old FIFO in an append-only directory: the check before the run
    // passes (a FIFO is replaced, a file can be made there), the
    // replacement fails (it cannot be removed). C prints "Error creating
    // fifo" and goes on, exit 0. SCHED_OTHER: no lease needed.
    require_root!();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("status");
    rtlat_sys::fifo::make_fifo(&fifo).unwrap();
    let Some(_append_only) = AppendOnly::set(dir.path()) else {
        skip_note!(
            "SKIPPED (chattr +a is refused on {}): {}",
            dir.path().display(),
            function_name!()
        );
        return;
    };
    let mut cmd = rtlat_cyclictest(["-q", "-i", "1000", "-l", "200", "-F"]);
    let r = run(cmd.arg(&fifo));
    r.expect_code(1);
    let lines: Vec<&str> = r
        .stderr_lines()
        .into_iter()
        .filter(|l| !l.contains("note:"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", r.describe());
    assert!(
        lines[0].contains("-F/--fifo: cannot create") && lines[0].contains("status"),
        "{}",
        r.describe()
    );
}

/// A copy of rtlat that `nobody` can execute (the build's own may sit
/// under a directory `nobody` cannot enter), written by install(1) (a
/// process of its own: see `support::nobody` on ETXTBSY).
fn copy_for_nobody(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = dir.join("rtlat");
    let status = std::process::Command::new("install")
        .args(["-m", "0755"])
        .arg(crate::support::rtlat_path())
        .arg(&copy)
        .status()
        .expect("install(1)");
    assert!(status.success());
    copy
}

#[test]
fn a_janitor_that_cannot_be_replaced_stops_the_run_with_exit_1() {
    // The run as nobody, without capabilities, from a copy of rtlat that
    // loses its execute bits once the run is on. The run stops as on
    // SIGTERM: its objects removed by itself, one line, exit 1.
    // SCHED_OTHER: no lease.
    require_root_and_setpriv!();
    let dir = tempfile::tempdir().unwrap();
    let copy = copy_for_nobody(dir.path());
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--inh-caps=-all",
    ])
    .arg(&copy)
    .args(["cyclictest", "-q", "-i", "1000", "-D", "10"])
    .current_dir("/");
    let child = spawn(&mut cmd);
    // setpriv execs rtlat: the same pid.
    let pid = child.pid();
    let janitor = wait_for_janitor(pid);
    let shm = PathBuf::from(format!("/dev/shm/cyclictest{pid}"));
    assert!(wait_until(Duration::from_secs(5), || shm.exists()));
    // The binary no longer executable: a new janitor cannot be spawned
    // (EACCES; nobody has no capability to bypass it).
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o644)).unwrap();
    send_signal(janitor, "KILL");
    let r = child.wait(Duration::from_secs(5));
    r.expect_code(1);
    assert!(
        r.stderr.contains(&format!(
            "rtlat's janitor (pid {janitor}) died (signal 9) and cannot be restarted"
        )),
        "{}",
        r.describe()
    );
    assert!(!shm.exists(), "removed by the run itself");
}

#[test]
fn a_killed_runs_idle_state_lock_lasts_until_its_janitor_has_ended() {
    // The janitor holds the lock with the run (an inherited descriptor).
    // Held back after the run's SIGKILL (a file of the run's trace
    // instance kept open here: the kernel refuses to remove it, and the
    // janitor tries again for up to 3 s), it has put the states back
    // already (they were announced first) and still keeps a second run
    // out; once it has ended, the second run goes ahead.
    require_tracefs_instances!();
    let lease = CpuLease::one();
    let cpu = lease.cpu().to_string();
    let idle = FakeCpuidle::new();
    let first = spawn(
        rtlat_cyclictest([
            "-q",
            "-m",
            "-a",
            &cpu,
            "-p",
            "50",
            "-i",
            "1000",
            "-D",
            "10",
            "--explain",
            "--deepest-idle-state",
            "-1",
        ])
        .env("RTLAT_TEST_CPU_SYSFS", idle.root()),
    );
    let pid = first.pid();
    let instance = instance_of(pid);
    let _cleanup = Leftovers(vec![instance.clone()]);
    wait_for_realtime_threads(pid, 1);
    let janitor = wait_for_janitor(pid);
    let held = std::fs::File::open(instance.join("tracing_on")).unwrap();
    send_signal(pid, "KILL");
    // Not waited for with `wait`, which reads its standard error to the
    // end: the janitor holds that too, until it ends.
    assert!(wait_until(CLEAN_WITHIN, || gone(pid)), "the run ends");
    let second = || {
        run(
            rtlat_cyclictest(["-q", "-i", "1000", "-l", "50", "--deepest-idle-state", "0"])
                .env("RTLAT_TEST_CPU_SYSFS", idle.root()),
        )
    };
    assert!(
        wait_until(CLEAN_WITHIN, || idle.disabled() == 0),
        "the states put back first"
    );
    let refused = second();
    let janitor_was_there = !gone(janitor);
    drop(held);
    let _ = first.wait(Duration::from_secs(5));
    assert!(janitor_was_there, "the janitor waited for the instance");
    refused.expect_code(1);
    assert!(
        refused.stderr.contains("another run"),
        "{}",
        refused.describe()
    );
    assert!(
        wait_until(CLEAN_WITHIN, || gone(janitor)),
        "the janitor ends"
    );
    assert!(!instance.exists(), "removed once let go");
    second().expect_code(0);
    assert_eq!(idle.disabled(), 0, "restored by the second run");
}
