//! Child processes and terminal signals under faults: nothing a run starts
//! or creates outlives it, whatever kills it, and a stop signal sent to the
//! whole process group (what a terminal sends) ends it normally.
//!
//! Each run is started in a process group of its own with a private
//! TMPDIR; what belongs to it is found from its pids: its descendants in
//! /proc (recorded while it measures, with their start times, so that a
//! reused pid is never mistaken for one of them), the SysV semaphore sets
//! whose last operation was made by one of them (`GETPID`), its POSIX
//! message queues (named after its pid), its `/dev/shm/cyclictest<pid>`.
//! Nothing global is counted: other tests run the same binary meanwhile.
//!
//! Each test takes one CPU lease and keeps its runs there: real-time
//! threads and fork-mode sides with `-a` (`-c` for latency), loads with
//! `--cpus` and `--load-cpus`.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use crate::support::cpus::CpuLease;
use crate::support::realtime_check::assert_kept_to_its_lease;
use crate::support::{
    SpawnChecked, describe_process, proc_stat, read_json, rtlat, rtlat_path, safety_net,
    send_signal, wait_for_realtime_threads, wait_until,
};

/// How long after a SIGKILL everything of the run must be gone.
const CLEAN_WITHIN: Duration = Duration::from_secs(1);

/// A process, by pid and start time (clock ticks after boot).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Proc {
    pid: i32,
    start: u64,
}

/// What `/proc/PID/stat` says: (name, state, ppid, start time).
fn stat_of(pid: i32) -> Option<(String, char, i32, u64)> {
    let (name, fields) = proc_stat(Path::new(&format!("/proc/{pid}/stat")))?;
    // Fields from 3 (state) on: state ppid ... starttime is field 22.
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(22 - 3)?.parse().ok()?;
    Some((name, state, ppid, start))
}

impl Proc {
    fn of(pid: i32) -> Option<Proc> {
        stat_of(pid).map(|(_, _, _, start)| Proc { pid, start })
    }

    /// Still running: the same process (not a reused pid), not a zombie
    /// (a dead process its new parent has not reaped yet).
    fn running(self) -> bool {
        stat_of(self.pid)
            .is_some_and(|(_, state, _, start)| start == self.start && !matches!(state, 'Z' | 'X'))
    }

    /// Its `argv[0]`.
    fn argv0(self) -> String {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", self.pid)).unwrap_or_default();
        let first = cmdline.split(|&b| b == 0).next().unwrap_or_default();
        String::from_utf8_lossy(first).into_owned()
    }

    fn is_side(self) -> bool {
        is_side(&self.argv0())
    }

    fn is_janitor(self) -> bool {
        self.argv0() == JANITOR
    }
}

/// The janitor's `argv[0]`.
const JANITOR: &str = "rtlat-janitor";

/// Whether `argv0` is a fork-mode side's (the tool's name, as in C).
fn is_side(argv0: &str) -> bool {
    matches!(argv0, "svsematest" | "sigwaittest")
}

/// Every descendant of `root`, found from the parent pids in /proc.
fn descendants(root: i32) -> BTreeSet<Proc> {
    let mut all: Vec<(i32, i32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some((_, _, ppid, _)) = stat_of(pid) {
            all.push((pid, ppid));
        }
    }
    let mut found = BTreeSet::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for &(pid, _) in all.iter().filter(|(_, ppid)| *ppid == parent) {
            if let Some(p) = Proc::of(pid) {
                found.insert(p);
                parents.push(pid);
            }
        }
    }
    found
}

/// The SysV semaphore sets whose last operation (or creation) was made by
/// one of `pids`.
fn semaphore_sets_of(pids: &BTreeSet<i32>) -> BTreeSet<i32> {
    let text = std::fs::read_to_string("/proc/sysvipc/sem").unwrap_or_default();
    let mut sets = BTreeSet::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(id), Some(count)) = (
            fields.get(1).and_then(|f| f.parse::<i32>().ok()),
            fields.get(3).and_then(|f| f.parse::<u16>().ok()),
        ) else {
            continue;
        };
        let ours = (0..count).any(|sem| {
            rtlat_sys::ipc::sysv::last_operator(id, sem).is_ok_and(|pid| pids.contains(&pid))
        });
        if ours {
            sets.insert(id);
        }
    }
    sets
}

/// Whether the SysV semaphore set `id` exists.
fn semaphore_set_exists(id: i32) -> bool {
    rtlat_sys::ipc::sysv::last_operator(id, 0).is_ok()
}

/// The mqueue file system mounted on a temporary directory (root only), to
/// list the POSIX message queues by name; unmounted when dropped.
struct MessageQueues(tempfile::TempDir);

impl MessageQueues {
    fn mount() -> Option<MessageQueues> {
        let dir = tempfile::tempdir().ok()?;
        let mounted = Command::new("mount")
            .args(["-t", "mqueue", "mqueue"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status_checked()
            .is_ok_and(|s| s.success());
        mounted.then_some(MessageQueues(dir))
    }

    /// The queues named after process `pid` (`rtlat-PID-N`).
    fn of(&self, pid: i32) -> Vec<String> {
        let prefix = format!("rtlat-{pid}-");
        std::fs::read_dir(self.0.path())
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.starts_with(&prefix))
            .collect()
    }
}

impl Drop for MessageQueues {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status_checked();
    }
}

/// A run in a process group of its own, with a private TMPDIR, whose
/// standard output is read line by line as it comes.
struct Watched {
    child: Child,
    pid: i32,
    what: String,
    lines: Receiver<String>,
    /// The whole standard output and error, each sent once it is closed.
    stdout: Receiver<String>,
    stderr: Receiver<String>,
    tmp: Option<tempfile::TempDir>,
}

/// What a watched run printed and how it ended.
struct Ended {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Ended {
    fn describe(&self) -> String {
        format!(
            "status {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

impl Watched {
    /// `rtlat ARGS...` (with `{tmp}` in an argument replaced by the private
    /// temporary directory).
    fn start(args: &[&str]) -> Watched {
        let tmp = tempfile::tempdir().unwrap();
        let tmp_text = tmp.path().to_str().unwrap().to_string();
        let args: Vec<String> = args.iter().map(|a| a.replace("{tmp}", &tmp_text)).collect();
        let mut cmd = rtlat();
        cmd.args(&args)
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn_checked().expect("spawning rtlat");
        let (tx, lines) = channel();
        let (stdout_tx, stdout) = channel();
        let (stderr_tx, stderr) = channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                all.push_str(&line);
                all.push('\n');
                let _ = tx.send(line);
            }
            let _ = stdout_tx.send(all);
        });
        let mut err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut all = String::new();
            let _ = err.read_to_string(&mut all);
            let _ = stderr_tx.send(all);
        });
        Watched {
            pid: child.id() as i32,
            child,
            what: format!("rtlat {}", args.join(" ")),
            lines,
            stdout,
            stderr,
            tmp: Some(tmp),
        }
    }

    /// Waits (up to 10 s) for an output line containing `text`.
    fn wait_for_line(&self, text: &str) {
        let limit = safety_net(Duration::from_secs(10));
        let deadline = Instant::now() + limit;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(text) => return,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        panic!("{}: no line with '{text}' within {limit:?}", self.what);
    }

    /// Waits until `ready` holds, up to a safety net of 10 s (wider under
    /// emulation, where a start takes seconds).
    fn wait_until(&self, what: &str, ready: impl Fn() -> bool) {
        let limit = Duration::from_secs(10);
        assert!(
            wait_until(limit, ready),
            "{}: not {what} within {:?}",
            self.what,
            safety_net(limit)
        );
    }

    /// Waits until `n` helper processes (fork-mode sides, fork load
    /// helpers; the janitor not counted) run.
    fn wait_for_helpers(&self, n: usize) {
        self.wait_until(&format!("running {n} helper processes"), || {
            let running = descendants(self.pid);
            running.iter().filter(|p| !p.is_janitor()).count() >= n
        });
    }

    /// Whether the run has a file of its private TMPDIR open with
    /// something written in it: an `io` load's worker file (unnamed,
    /// reached through `/proc/PID/fd`) once the worker works.
    fn writes_in_its_tmpdir(&self) -> bool {
        let tmp = self.tmp.as_ref().unwrap().path();
        std::fs::read_dir(format!("/proc/{}/fd", self.pid))
            .map(|fds| {
                fds.flatten().any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|target| target.starts_with(tmp))
                        && std::fs::metadata(fd.path()).is_ok_and(|m| m.len() > 0)
                })
            })
            .unwrap_or(false)
    }

    /// Whether one of the run's threads is named `name` (as the kernel
    /// keeps it: 15 bytes at most).
    fn has_thread(&self, name: &str) -> bool {
        let name = &name[..name.len().min(15)];
        std::fs::read_dir(format!("/proc/{}/task", self.pid))
            .map(|tasks| {
                tasks.flatten().any(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|comm| comm.trim_end() == name)
                })
            })
            .unwrap_or(false)
    }

    /// Sends `signal` (a kill(1) name) to the run's whole process group.
    fn signal_group(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg("--")
            .arg(format!("-{}", self.pid))
            .status_checked()
            .expect("kill(1)");
        assert!(status.success(), "kill -{signal} -{}", self.pid);
    }

    /// Waits (up to `limit`, a safety net: wider under emulation) for the
    /// run to exit; kills it and fails on time-out.
    fn wait(mut self, limit: Duration) -> (Ended, tempfile::TempDir) {
        let limit = safety_net(limit);
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let what_it_was = describe_process(self.child.id());
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "{}: still running after {limit:?}; killed it. It was: {what_it_was}",
                    self.what
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_kept_to_its_lease(self.child.id());
        // Closed once no process of the run has them open: a process
        // left behind keeps them open.
        let net = safety_net(Duration::from_secs(5));
        let closed = |output: &Receiver<String>, name: &str| {
            output.recv_timeout(net).unwrap_or_else(|_| {
                panic!(
                    "{}: its {name} is still open {net:?} after it exited: processes of the \
                     run are left",
                    self.what
                )
            })
        };
        let ended = Ended {
            status,
            stdout: closed(&self.stdout, "standard output"),
            stderr: closed(&self.stderr, "standard error"),
        };
        (ended, self.tmp.take().unwrap())
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        // A failed test (or a binary with the defects tested here) must not
        // leave a real-time run behind: the whole group goes.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.pid)])
            .stderr(Stdio::null())
            .status_checked();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Everything a run has while it measures.
#[derive(Debug)]
struct Belongings {
    pid: i32,
    processes: BTreeSet<Proc>,
    /// Their `argv[0]`s, read while they ran.
    argv0s: Vec<String>,
    semaphore_sets: BTreeSet<i32>,
    shm_file: PathBuf,
}

impl Belongings {
    fn of(run: &Watched) -> Belongings {
        let processes = descendants(run.pid);
        let mut pids: BTreeSet<i32> = processes.iter().map(|p| p.pid).collect();
        pids.insert(run.pid);
        Belongings {
            pid: run.pid,
            argv0s: processes.iter().map(|p| p.argv0()).collect(),
            semaphore_sets: semaphore_sets_of(&pids),
            processes,
            shm_file: PathBuf::from(format!("/dev/shm/cyclictest{}", run.pid)),
        }
    }

    fn sides(&self) -> usize {
        self.argv0s.iter().filter(|a| is_side(a)).count()
    }

    fn has_janitor(&self) -> bool {
        self.argv0s.iter().any(|a| a == JANITOR)
    }

    /// What is still there: processes running, semaphore sets, the shm
    /// file, entries of the private TMPDIR, message queues.
    fn left(&self, tmp: &Path, queues: Option<&MessageQueues>) -> Vec<String> {
        let mut left: Vec<String> = self
            .processes
            .iter()
            .filter(|p| p.running())
            .map(|p| format!("process {} ({})", p.pid, p.argv0()))
            .collect();
        left.extend(
            self.semaphore_sets
                .iter()
                .filter(|&&id| semaphore_set_exists(id))
                .map(|id| format!("SysV semaphore set {id}")),
        );
        if self.shm_file.exists() {
            left.push(self.shm_file.display().to_string());
        }
        left.extend(
            std::fs::read_dir(tmp)
                .unwrap()
                .flatten()
                .map(|e| format!("TMPDIR entry {}", e.path().display())),
        );
        if let Some(q) = queues {
            left.extend(
                q.of(self.pid)
                    .into_iter()
                    .map(|n| format!("message queue {n}")),
            );
        }
        left
    }
}

/// SIGKILLs the run's main process only, then checks that within a second
/// nothing of what it had is left.
/// (Whatever is left is killed with the run's process group afterwards.)
fn kill_and_expect_nothing_left(
    mut run: Watched,
    had: &Belongings,
    queues: Option<&MessageQueues>,
) {
    send_signal(run.pid as u32, "KILL");
    let _ = run.child.wait();
    assert_kept_to_its_lease(run.child.id());
    let tmp = run.tmp.as_ref().unwrap().path().to_path_buf();
    let deadline = Instant::now() + CLEAN_WITHIN;
    let mut left = had.left(&tmp, queues);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        left = had.left(&tmp, queues);
    }
    assert!(
        left.is_empty(),
        "{}: one second after SIGKILL, left: {left:?} (it had {had:?})",
        run.what
    );
}

/// Runs `check` for each item on a thread of its own (the runs are short
/// but each waits a second after its kill).
fn each_at_once<T: Send + 'static>(items: Vec<T>, check: fn(T)) {
    let handles: Vec<_> = items
        .into_iter()
        .map(|item| std::thread::spawn(move || check(item)))
        .collect();
    let mut failures = Vec::new();
    for h in handles {
        if let Err(panic) = h.join() {
            failures.push(
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default(),
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn sigkill_of_an_ipc_run_leaves_no_process_and_no_ipc_object() {
    skip_if_emulated!("the sides must be running within a time an emulated start does not keep");
    require_root!();
    let lease = CpuLease::one();
    let queues = MessageQueues::mount();
    if queues.is_none() {
        skip_note!(
            "SKIPPED a part (cannot mount an mqueue file system: pmqtest's queues checked by \
             process only): {}",
            function_name!()
        );
    }
    // (tool arguments, sides as processes, SysV sets, janitor expected)
    let runs: Vec<(&[&str], usize, usize, bool)> = vec![
        (
            &["svsematest", "-f", "-t", "2", "-p", "80", "-i", "500"],
            4,
            2,
            true,
        ),
        (
            &["sigwaittest", "-f", "-t", "2", "-p", "80", "-i", "500"],
            4,
            0,
            false,
        ),
        (
            &["svsematest", "-t", "2", "-p", "80", "-i", "500"],
            0,
            2,
            true,
        ),
        (
            &["pmqtest", "-t", "2", "-p", "80", "-i", "500"],
            0,
            0,
            false,
        ),
    ];
    // Every pair of every run, and its sides, on the leased CPU (attached:
    // `-a 0` as two words is `-a` alone, one pair per CPU, as in C).
    let affinity = format!("-a{}", lease.cpu());
    let started: Vec<_> = runs
        .into_iter()
        .map(|(args, sides, sets, janitor)| {
            let pinned: Vec<&str> = args.iter().copied().chain([affinity.as_str()]).collect();
            (Watched::start(&pinned), sides, sets, janitor)
        })
        .collect();
    let mut checks = Vec::new();
    for (run, sides, sets, janitor) in started {
        run.wait_for_line(" -> #0, Min");
        let had = Belongings::of(&run);
        assert_eq!(had.sides(), sides, "{}: {had:?}", run.what);
        assert_eq!(had.semaphore_sets.len(), sets, "{}: {had:?}", run.what);
        if let Some(q) = &queues {
            assert!(
                q.of(run.pid).is_empty(),
                "{}: message queues are unlinked once open",
                run.what
            );
        }
        checks.push((run, had, janitor));
    }
    // Each killed and checked on a thread of its own.
    let queues = std::sync::Arc::new(queues);
    let handles: Vec<_> = checks
        .into_iter()
        .map(|(run, had, janitor)| {
            let queues = std::sync::Arc::clone(&queues);
            std::thread::spawn(move || {
                let what = run.what.clone();
                kill_and_expect_nothing_left(run, &had, queues.as_ref().as_ref());
                assert_eq!(
                    had.has_janitor(),
                    janitor,
                    "{what}: a janitor for runs with SysV sets only: {had:?}"
                );
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn sigkill_of_a_load_leaves_nothing_of_any_kind() {
    let lease = CpuLease::one();
    let kinds = rtlat_core::load::LoadKind::ALL.map(|k| (k.name(), lease.list()));
    each_at_once(kinds.to_vec(), |(kind, cpu)| {
        let spec = format!("{kind}:1");
        let run = Watched::start(&["load", &spec, "--cpus", &cpu]);
        let worker = format!("load-{kind}-0");
        run.wait_until("running its worker", || run.has_thread(&worker));
        // Killed once it has what it could leave behind: fork's helper
        // process, io's file; the other kinds have threads of the run
        // only.
        match kind {
            "fork" => run.wait_for_helpers(1),
            "io" => run.wait_until("writing its file", || run.writes_in_its_tmpdir()),
            _ => {}
        }
        let had = Belongings::of(&run);
        assert!(!had.has_janitor(), "{kind}: no janitor for a load: {had:?}");
        kill_and_expect_nothing_left(run, &had, None);
    });
}

#[test]
fn sigkill_of_cyclictest_with_fork_load_leaves_nothing() {
    // SCHED_OTHER: no privilege needed; the load on a leased CPU.
    let lease = CpuLease::one();
    let run = Watched::start(&[
        "cyclictest",
        "-t",
        "2",
        "-i",
        "1000",
        "--load",
        "fork:1",
        "--load-cpus",
        &lease.list(),
    ]);
    run.wait_for_line("T: 1 ");
    run.wait_for_helpers(1);
    let had = Belongings::of(&run);
    assert!(had.shm_file.exists(), "{had:?}");
    kill_and_expect_nothing_left(run, &had, None);
}

/// A run with `helpers` helper processes and `realtime` real-time threads
/// (in it and its child processes), ended by `signal` to its process group
/// once it measures (and has printed a line with `ready`, if given): exit
/// 0, the outputs `expect` lists, and nothing left.
fn signal_to_the_group(
    run: Watched,
    helpers: usize,
    realtime: usize,
    ready: Option<&str>,
    expect: &[&str],
    signal: &str,
) -> Ended {
    run.wait_for_helpers(helpers);
    wait_for_realtime_threads(run.pid as u32, realtime);
    if let Some(text) = ready {
        run.wait_for_line(text);
    }
    // The duration is the point: the run measures, and its load works,
    // for a while before the signal, so that what it prints at the end
    // has samples and operations in it.
    std::thread::sleep(Duration::from_millis(700));
    let had = Belongings::of(&run);
    run.signal_group(signal);
    let what = run.what.clone();
    let (ended, tmp) = run.wait(Duration::from_secs(10));
    assert_eq!(
        ended.status.code(),
        Some(0),
        "{what} after SIG{signal} to its group: {}",
        ended.describe()
    );
    for text in expect {
        assert!(
            ended.stdout.contains(text),
            "{what}: no '{text}' in {}",
            ended.describe()
        );
    }
    // Gone at once, not a second later: the run ended them itself.
    let left = had.left(tmp.path(), None);
    assert!(left.is_empty(), "{what}: left {left:?}");
    ended
}

/// A run [`signal_to_the_group`] ends.
#[derive(Clone, Copy)]
struct GroupRun {
    /// Its arguments; `{cpu}` stands for the leased CPU (attached to an IPC
    /// tool's `-a`: `-a 0` as two words is `-a` alone there, as in C).
    command_line: &'static str,
    helpers: usize,
    /// Its real-time threads, once it measures.
    realtime: usize,
    /// A line it prints once it measures, if it prints any before the end.
    ready: Option<&'static str>,
    expect: &'static [&'static str],
    /// Whether it writes `--json` (return code 0 and the load's figures).
    json: bool,
}

#[test]
fn sigint_to_the_group_ends_runs_with_fork_load_normally() {
    require_root!();
    // Every run on one CPU: what is checked is how they end, not their
    // latencies.
    let lease = CpuLease::one();
    let ipc_lines = &["#1 -> #0, Min", "#3 -> #2, Min", "# load fork: "];
    let runs = vec![
        GroupRun {
            command_line: "cyclictest -t 2 -p 80 -i 500 -a {cpu} -q -h 20 -D 10 --load fork:2 \
                           --load-cpus {cpu}",
            helpers: 2,
            realtime: 2,
            ready: None,
            expect: &[
                "# Histogram",
                "# Total:",
                "# Max Latencies:",
                "# load fork: ",
            ],
            json: true,
        },
        GroupRun {
            command_line: "load fork:1 --cpus {cpu}",
            helpers: 1,
            realtime: 0,
            ready: None,
            expect: &["fork: "],
            json: false,
        },
        GroupRun {
            command_line: "latency -p 500 -c {cpu} -h --load fork:1 --load-cpus {cpu}",
            helpers: 1,
            realtime: 1,
            ready: Some("RTD|"),
            expect: &["RTS|", "HSD|", "# load fork: "],
            json: false,
        },
        GroupRun {
            command_line: "svsematest -t 2 -p 80 -i 500 -a{cpu} -q --load fork:1 \
                           --load-cpus {cpu}",
            helpers: 1,
            realtime: 4,
            ready: None,
            expect: ipc_lines,
            json: true,
        },
        GroupRun {
            command_line: "svsematest -f -t 2 -p 80 -i 500 -a{cpu} -q --load fork:1 \
                           --load-cpus {cpu}",
            helpers: 5,
            realtime: 4,
            ready: None,
            expect: ipc_lines,
            json: true,
        },
    ];
    // Started here, by the lease's holder; each ended and checked on a
    // thread of its own.
    let started: Vec<_> = runs
        .into_iter()
        .map(|run| {
            let dir = tempfile::tempdir().unwrap();
            let command_line = run.command_line.replace("{cpu}", &lease.list());
            let mut args: Vec<String> = command_line.split_whitespace().map(String::from).collect();
            if run.json {
                args.push(format!("--json={}", dir.path().join("run.json").display()));
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            (run, Watched::start(&args), dir)
        })
        .collect();
    each_at_once(started, |(run, watched, dir)| {
        signal_to_the_group(
            watched,
            run.helpers,
            run.realtime,
            run.ready,
            run.expect,
            "INT",
        );
        if run.json {
            let doc = read_json(&dir.path().join("run.json"));
            assert_eq!(doc["return_code"], 0, "{}: {doc}", run.command_line);
            let ops = doc["load"]["kinds"][0]["ops"].as_u64();
            assert!(ops > Some(0), "{}: {doc}", run.command_line);
        }
    });
}

#[test]
fn every_stop_signal_to_the_group_ends_a_fork_load_normally() {
    let lease = CpuLease::one();
    let loads = ["INT", "QUIT", "HUP", "TERM"]
        .map(|signal| {
            let run = Watched::start(&["load", "fork:1", "--cpus", &lease.list()]);
            (signal, run)
        })
        .into_iter()
        .collect();
    each_at_once(loads, |(signal, run)| {
        let ended = signal_to_the_group(run, 1, 0, None, &["fork: "], signal);
        assert!(ended.stderr.is_empty(), "SIG{signal}: {}", ended.describe());
    });
}

#[test]
fn a_killed_fork_mode_side_ends_the_run_with_an_error() {
    skip_if_emulated!("the sides must be running within a time an emulated start does not keep");
    require_root!();
    let lease = CpuLease::one();
    let run = Watched::start(&[
        "svsematest",
        "-f",
        "-p",
        "80",
        "-i",
        "500",
        &format!("-a{}", lease.cpu()),
        "-q",
    ]);
    run.wait_until("running both sides", || {
        descendants(run.pid).iter().filter(|p| p.is_side()).count() == 2
    });
    // Killed once both sides measure: each is then real-time.
    wait_for_realtime_threads(run.pid as u32, 2);
    let had = Belongings::of(&run);
    let side = had.processes.iter().find(|p| p.is_side()).unwrap();
    send_signal(side.pid as u32, "KILL");
    let (ended, tmp) = run.wait(Duration::from_secs(5));
    assert_eq!(ended.status.code(), Some(1), "{}", ended.describe());
    assert!(
        ended.stderr.contains("pair 0's"),
        "one line naming the pair: {}",
        ended.describe()
    );
    assert_eq!(had.left(tmp.path(), None), Vec::<String>::new());
}

#[test]
fn a_stray_helper_variable_changes_nothing() {
    // The helper modes need their own argv[0] as well: the variables alone,
    // even naming the right parent (this test process), are ignored.
    let own_pid = std::process::id().to_string();
    for (key, value) in [
        ("RTLAT_LOAD_FORK_HELPER", "1"),
        ("RTLAT_HELPER_PARENT", own_pid.as_str()),
    ] {
        let out = rtlat()
            .args(["cyclictest", "--synthetic", "1", "-q", "-l", "100"])
            .env(key, value)
            .output_checked()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{key}: {out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.lines().any(|l| l.starts_with("T: 0 ")),
            "{key}={value} must not make cyclictest a helper: {stdout:?}"
        );
        let out = rtlat()
            .args(["load", "cpu:1", "-D", "1"])
            .env(key, value)
            .output_checked()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.starts_with("cpu: "),
            "{key}={value}: {out:?}"
        );
    }
}

#[test]
fn fork_mode_sides_refuse_to_run_outside_a_run() {
    let refused = |side: &str, env: &[(&str, &str)]| {
        let mut cmd = Command::new(rtlat_path());
        cmd.arg("svsematest").arg(side).stdin(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output_checked().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{side} {env:?}: {out:?}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "-f/--fork: '{}' is for the processes of a fork-mode run",
                &side[2..]
            )),
            "{stderr}"
        );
    };
    refused("-fr0", &[]);
    // A descriptor number in the environment, without the parent.
    refused("-fr0", &[("RTLAT_IPC_SHM_FD", "0")]);
    // ... or with a parent that is not this process's.
    refused(
        "-fs1",
        &[("RTLAT_IPC_SHM_FD", "0"), ("RTLAT_HELPER_PARENT", "1")],
    );
}
