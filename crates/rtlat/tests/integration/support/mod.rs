//! Shared helpers: the commands under test, privilege checks, bounded runs, and parsers for the `T:` lines, the histogram block, line shapes and JSON key sets.

#![allow(dead_code)]

pub(crate) mod ipc;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The full path of the test's own function, e.g. `integration::real_runs::quiet_two_threads`.
macro_rules! function_name {
    () => {{
        fn f() {}
        fn type_name_of<T>(_: T) -> &'static str {
            std::any::type_name::<T>()
        }
        let name = type_name_of(f);
        name.strip_suffix("::f").unwrap_or(name)
    }};
}

/// Writes a line straight to the process's stderr. libtest captures only
/// the print macros, so unlike `eprintln!` this shows in a normal
/// `cargo test` run: a skipped test is never mistaken for a pass.
macro_rules! skip_note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Returns from the calling test, saying so on stderr, when the process is
/// not root with CAP_SYS_NICE. A skipped test never passes silently.
macro_rules! require_root {
    () => {
        if !$crate::support::is_root() {
            skip_note!("SKIPPED (needs root): {}", function_name!());
            return;
        }
    };
}

/// Returns from the calling test, saying so on stderr with `$why`, when
/// this program runs under an emulator (qemu-user; how it is detected:
/// `rtlat_testkit::emulation`). Only for what emulation cannot keep: times
/// (start-up, periods, when a signal arrives) or the program's own system
/// calls as strace sees them.
macro_rules! skip_if_emulated {
    ($why:expr) => {
        if let Some(emulator) = rtlat_testkit::emulation::emulated() {
            skip_note!(
                "SKIPPED (emulated: {emulator}; {}): {}",
                $why,
                function_name!()
            );
            return;
        }
    };
}

/// Asserts that a run took less than `$limit` (its `$elapsed`), with the
/// message `$($context)+`. Under emulation, where start-up alone takes
/// a good part of a second and the time a run takes follows the load, the
/// check is not made: a run that took longer says so on stderr, as a
/// SKIPPED time check, and the rest of the test goes on.
macro_rules! assert_faster_than {
    ($elapsed:expr, $limit:expr, $($context:tt)+) => {{
        let (elapsed, limit): (std::time::Duration, std::time::Duration) = ($elapsed, $limit);
        match rtlat_testkit::emulation::emulated() {
            Some(emulator) if elapsed >= limit => skip_note!(
                "SKIPPED a time check (emulated: {emulator}; emulated runs do not keep native \
                 times): took {elapsed:?}, natively under {limit:?}: {}",
                function_name!()
            ),
            Some(_) => {}
            None => assert!(elapsed < limit, $($context)+),
        }
    }};
}

/// Returns from the calling test, saying so on stderr, when the C reference
/// tool is not installed.
macro_rules! require_c_cyclictest {
    () => {
        if !$crate::support::has_c_cyclictest() {
            skip_note!(
                "SKIPPED (needs {}): {}",
                $crate::support::C_CYCLICTEST,
                function_name!()
            );
            return;
        }
    };
}

pub const C_CYCLICTEST: &str = "/usr/bin/cyclictest";

/// The rtlat binary cargo built for this test run.
pub fn rtlat_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin("rtlat")
}

/// `rtlat` with no arguments yet; text for a person is wrapped to 80
/// columns, whatever `COLUMNS` the tests were started with.
pub fn rtlat() -> Command {
    let mut cmd = Command::new(rtlat_path());
    // The dialect is the default (2.4) unless a test sets it.
    cmd.stdin(Stdio::null())
        .env_remove("COLUMNS")
        .env_remove("RTLAT_RT_TESTS");
    cmd
}

/// `rtlat TOOL ARGS...`, standard input from /dev/null.
pub fn rtlat_tool(
    tool: &str,
    args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>,
) -> Command {
    let mut cmd = rtlat();
    cmd.arg(tool).args(args);
    cmd
}

/// Whether `cmd` may have `rtlat` run `rtlat-plot` (`rtlat plot ...`,
/// `rtlat plot --help`, `rtlat --generate ...`, which reads its options):
/// an argument `plot` or `--generate`. A file named `plot` counts too,
/// which costs only the check that `rtlat-plot` is fresh. Every child a
/// test starts is checked ([`spawn::SpawnChecked`]), so that no test
/// depends on another having built it first: `rtlat --help` of each
/// tool, run with plain [`rtlat`], failed so in `cargo test -p rtlat`.
pub fn runs_rtlat_plot(cmd: &Command) -> bool {
    cmd.get_program() == rtlat_path().as_os_str()
        && cmd
            .get_args()
            .any(|arg| arg == "plot" || arg.as_encoded_bytes().starts_with(b"--generate"))
}

/// `rtlat-plot`, the binary of the rtlat-plot package, beside `rtlat`
/// (where `rtlat plot` and `rtlat --generate` look for it), up to date.
/// `cargo test --workspace` builds it; `cargo test -p rtlat`, `cargo test
/// --test integration` or a name filter do not, and an older build may be
/// there. So the first caller in a test process has cargo build it, with
/// the cargo, target directory, target and profile of this test run (a
/// no-op when it is fresh): [`rtlat_plot_build`]. Panics with cargo's
/// output and the command if that fails.
pub fn rtlat_plot_path() -> PathBuf {
    static BUILT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    match BUILT.get_or_init(|| {
        let plotter = rtlat_path().with_file_name("rtlat-plot");
        let mut build = rtlat_plot_build();
        let shown = format!("{build:?}");
        let output = build
            .output_checked()
            .map_err(|e| format!("cannot start {shown}: {e}"))?;
        if !output.status.success() || !plotter.is_file() {
            return Err(format!(
                "{shown} failed ({}), so `rtlat plot` cannot be tested; its output:\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        Ok(plotter)
    }) {
        Ok(path) => path.clone(),
        Err(why) => panic!("{why}"),
    }
}

/// The command that builds `rtlat-plot` where this test run's `rtlat` is:
/// `$CARGO test --workspace --no-run --test plot`, rtlat-plot's own test,
/// which needs the binary, built as `cargo test --workspace` builds it:
/// with the features of the whole workspace and its dev-dependencies
/// (`cargo build -p rtlat-plot` resolves them otherwise, and built
/// rtlat-args, rtlat-plot and their dependencies again, a minute and a
/// half of an i686 CI run, where `cargo test --workspace` had built them
/// already). `--target-dir`, `--target` (when the binaries are under
/// `<target dir>/<triple>/`: a cargo run with `--target`) and the profile
/// are read off the path of `rtlat` (`<target dir>[/<triple>]/<profile
/// dir>/rtlat`). The environment is this process's, which cargo gave it:
/// a cross build's linker and runner variables included.
pub fn rtlat_plot_build() -> Command {
    let rtlat = rtlat_path();
    let profile_dir = rtlat.parent().expect("the directory of rtlat");
    let above = profile_dir
        .parent()
        .expect("the directory above the profile's");
    // With --target, cargo puts the profile's directory in one named
    // after the target, the one this code was built for.
    let triple = rtlat_args::version::TARGET;
    let (target_dir, triple) = if above.file_name().and_then(|n| n.to_str()) == Some(triple) {
        (above.parent().expect("the target directory"), Some(triple))
    } else {
        (above, None)
    };
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(["test", "-q", "--workspace", "--no-run", "--test", "plot"])
        .arg("--manifest-path")
        .arg(workspace)
        .arg("--target-dir")
        .arg(target_dir)
        .stdin(Stdio::null());
    // `cargo test`'s own profile builds in `debug`; another one in a
    // directory of its name (`release` for `--release`).
    match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => {}
        Some(other) => {
            cmd.args(["--profile", other]);
        }
    }
    if let Some(triple) = triple {
        cmd.args(["--target", triple]);
    }
    cmd
}

/// `rtlat cyclictest ARGS...`.
pub fn rtlat_cyclictest(args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>) -> Command {
    rtlat_tool("cyclictest", args)
}

/// `rtlat cyclictest --synthetic SEED ARGS...` (the run must be bounded by `-l` or `-D`).
pub fn synthetic<I, S>(seed: u64, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut cmd = rtlat();
    cmd.arg("cyclictest")
        .arg("--synthetic")
        .arg(seed.to_string())
        .args(args);
    cmd
}

/// The C reference tool, `/usr/bin/cyclictest`.
pub fn cyclictest_c() -> Command {
    let mut cmd = Command::new(C_CYCLICTEST);
    cmd.stdin(Stdio::null());
    cmd
}

pub fn has_c_cyclictest() -> bool {
    Path::new(C_CYCLICTEST).is_file()
}

pub(crate) fn proc_status_field(name: &str) -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .map(|rest| rest.trim().to_owned())
}

/// Effective uid 0 with CAP_SYS_NICE (bit 23) and CAP_IPC_LOCK (bit 14) in
/// the effective set: what SCHED_FIFO runs with `-m` need.
pub fn is_root() -> bool {
    let euid = proc_status_field("Uid:")
        .and_then(|v| v.split_whitespace().nth(1).map(str::to_owned))
        .and_then(|v| v.parse::<u32>().ok());
    let caps = proc_status_field("CapEff:").and_then(|v| u64::from_str_radix(&v, 16).ok());
    match (euid, caps) {
        (Some(0), Some(caps)) => caps & (1 << 23) != 0 && caps & (1 << 14) != 0,
        _ => false,
    }
}

/// The CPUs this process may run on (`Cpus_allowed_list`).
pub fn allowed_cpus() -> Vec<usize> {
    parse_cpu_list(&proc_status_field("Cpus_allowed_list:").expect("Cpus_allowed_list"))
}

/// A kernel CPU list (`0-3,8,10-11`) as CPU numbers, ascending.
pub fn parse_cpu_list(list: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let number = |n: &str| {
            n.parse::<usize>()
                .unwrap_or_else(|_| panic!("not a CPU list: {list:?}"))
        };
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(number(a)..=number(b)),
            None => cpus.push(number(part)),
        }
    }
    cpus
}

/// A temporary directory holding `cyclictest -> <rtlat>`; the directory
/// lives as long as this value.
#[derive(Debug)]
pub struct Symlinked {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Symlinked {
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.path);
        cmd.stdin(Stdio::null());
        cmd
    }
}

/// Creates a tempdir with a `cyclictest -> rtlat` symlink.
pub fn symlinked_cyclictest() -> Symlinked {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cyclictest");
    std::os::unix::fs::symlink(rtlat_path(), &path).expect("symlink");
    Symlinked { _dir: dir, path }
}

/// What a finished process left behind.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub pid: u32,
}

impl Run {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Panics with the whole run shown unless the exit status is `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.status.code(),
            Some(code),
            "expected exit status {code}\n{}",
            self.describe()
        );
        self
    }

    pub fn stderr_lines(&self) -> Vec<&str> {
        self.stderr.lines().collect()
    }

    pub fn describe(&self) -> String {
        format!(
            "status: {:?}, elapsed {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// A child process whose output is being collected.
#[derive(Debug)]
pub struct Running {
    child: Child,
    start: Instant,
    out: Option<Drained>,
    err: Option<Drained>,
}

/// One output of a child, read into a buffer as it comes: the test can
/// look at what has come so far ([`Running::wait_for_stdout`]).
#[derive(Debug)]
struct Drained {
    so_far: Arc<Mutex<Vec<u8>>>,
    reader: JoinHandle<()>,
}

impl Drained {
    fn start(r: Option<impl Read + Send + 'static>) -> Drained {
        let so_far = Arc::new(Mutex::new(Vec::new()));
        let buffer = Arc::clone(&so_far);
        let reader = std::thread::spawn(move || {
            let Some(mut r) = r else { return };
            let mut chunk = [0u8; 4096];
            loop {
                match r.read(&mut chunk) {
                    Ok(0) => return,
                    Ok(n) => buffer
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        });
        Drained { so_far, reader }
    }

    fn text_so_far(&self) -> String {
        String::from_utf8_lossy(&self.so_far.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// Everything, once the writer closed its end.
    fn finish(self) -> Vec<u8> {
        self.reader.join().expect("output reader");
        std::mem::take(&mut *self.so_far.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// `/dev/full` opened for writing, as a child's stdout or stderr: every
/// write to it fails with ENOSPC.
pub fn dev_full() -> Stdio {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("open /dev/full")
        .into()
}

/// Spawns `cmd` with stdout and stderr captured.
pub fn spawn(cmd: &mut Command) -> Running {
    spawn_with(cmd, Stdio::piped(), Stdio::piped())
}

/// Spawns `cmd` with the given stdout and stderr; those that are
/// `Stdio::piped()` are captured, the others read as empty.
pub fn spawn_with(cmd: &mut Command, stdout: Stdio, stderr: Stdio) -> Running {
    cmd.stdout(stdout).stderr(stderr);
    let start = Instant::now();
    let mut child = cmd
        .spawn_checked()
        .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
    let out = Some(Drained::start(child.stdout.take()));
    let err = Some(Drained::start(child.stderr.take()));
    Running {
        child,
        start,
        out,
        err,
    }
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The child's standard input, when `cmd` had `Stdio::piped()` for it
    /// (to feed it from the test; dropping it closes it).
    pub fn take_stdin(&mut self) -> Option<std::process::ChildStdin> {
        self.child.stdin.take()
    }

    /// What the child wrote to its standard output so far.
    pub fn stdout_so_far(&self) -> String {
        self.out
            .as_ref()
            .map(Drained::text_so_far)
            .unwrap_or_default()
    }

    /// What the child wrote to its standard error so far.
    pub fn stderr_so_far(&self) -> String {
        self.err
            .as_ref()
            .map(Drained::text_so_far)
            .unwrap_or_default()
    }

    /// Waits until the standard output so far satisfies `done` (a line
    /// the test waits for), within the safety net of `limit`; panics
    /// with what came, and what `/proc` says of the child, if it does not.
    pub fn wait_for_stdout(&self, limit: Duration, what: &str, done: impl FnMut(&str) -> bool) {
        self.wait_for_output(limit, what, "stdout", Self::stdout_so_far, done);
    }

    /// [`Running::wait_for_stdout`] for the standard error.
    pub fn wait_for_stderr(&self, limit: Duration, what: &str, done: impl FnMut(&str) -> bool) {
        self.wait_for_output(limit, what, "stderr", Self::stderr_so_far, done);
    }

    fn wait_for_output(
        &self,
        limit: Duration,
        what: &str,
        which: &str,
        so_far: fn(&Self) -> String,
        mut done: impl FnMut(&str) -> bool,
    ) {
        let seen = wait_until(limit, || done(&so_far(self)));
        assert!(
            seen,
            "{what}: not on {which} within {limit:?}\n--- stdout so far ---\n{}\n--- stderr so \
             far ---\n{}\n--- the process ---\n{}",
            self.stdout_so_far(),
            self.stderr_so_far(),
            describe_process(self.pid())
        );
    }

    /// Sends a signal by name (`INT`, `TERM`, `HUP`, `USR1`) with kill(1).
    pub fn signal(&self, name: &str) {
        send_signal(self.pid(), name);
    }

    /// Waits at most `limit` from now (a safety net against a hang, never
    /// a measure: [`safety_net`] widens it under emulation); on time-out
    /// kills the child and panics.
    pub fn wait(mut self, limit: Duration) -> Run {
        let limit = safety_net(limit);
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                let elapsed = self.start.elapsed();
                let stdout = self.out.take().unwrap().finish();
                let stderr = self.err.take().unwrap().finish();
                realtime_check::assert_kept_to_its_lease(self.child.id());
                return Run {
                    status,
                    stdout: String::from_utf8_lossy(&stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&stderr).into_owned(),
                    elapsed,
                    pid: self.child.id(),
                };
            }
            if Instant::now() > deadline {
                let what = describe_process(self.child.id());
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "process {} still running after {limit:?}; killed it. It was: {what}",
                    self.child.id()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A test that panicked before `wait` must not leave a real-time
        // child behind.
        if self.out.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Whether `done` holds within `limit`, looking every 5 ms. `limit` is a
/// safety net ([`safety_net`]: wider under emulation), never a measure.
pub fn wait_until(limit: Duration, done: impl FnMut() -> bool) -> bool {
    poll_until(limit, || std::thread::sleep(Duration::from_millis(5)), done)
}

/// [`wait_until`] without a pause between looks (only a yield), so that
/// the first moment `done` holds is seen.
pub fn wait_until_spinning(limit: Duration, done: impl FnMut() -> bool) -> bool {
    poll_until(limit, std::thread::yield_now, done)
}

/// Whether `done` holds within the safety net of `limit`, calling `pause`
/// between looks.
fn poll_until(limit: Duration, pause: impl Fn(), mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + safety_net(limit);
    loop {
        if done() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        pause();
    }
}

/// Waits until the run `pid` and the processes it started have `count`
/// threads under a real-time policy (SCHED_FIFO or SCHED_RR): the sign
/// that a run started with `-p` is set up, since every tool installs its
/// stop-signal handlers before it starts its measuring threads or its
/// sides. A signal sent some time after this sign is answered as the test
/// expects even under emulation, where the start alone takes a large and
/// varying part of a second (and a fork-mode side another one). Panics,
/// describing the run, if the sign has not come within a safety net of
/// 10 s.
pub fn wait_for_realtime_threads(pid: u32, count: usize) {
    let found = wait_until(Duration::from_secs(10), || {
        std::iter::once(pid)
            .chain(children_of(pid))
            .map(realtime_threads)
            .sum::<usize>()
            >= count
    });
    assert!(
        found,
        "not {count} threads under a real-time policy in run {pid} and its children: {}",
        describe_process(pid)
    );
}

/// A `/proc/.../stat` line: the command name, and the fields after it
/// (the first of them is the state, field 3 of proc(5)).
pub fn proc_stat(path: &Path) -> Option<(String, Vec<String>)> {
    let text = std::fs::read_to_string(path).ok()?;
    let (before, after) = text.rsplit_once(')')?;
    let (_, name) = before.split_once('(')?;
    let fields = after.split_whitespace().map(str::to_owned).collect();
    Some((name.to_owned(), fields))
}

/// The processes whose parent is `pid`.
pub(crate) fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&child| {
            proc_stat(&PathBuf::from(format!("/proc/{child}/stat")))
                .and_then(|(_, f)| f.get(1)?.parse::<u32>().ok())
                == Some(pid)
        })
        .collect()
}

/// How many threads of `pid` run under SCHED_FIFO (1) or SCHED_RR (2):
/// field 41 of proc(5)'s `stat`.
pub(crate) fn realtime_threads(pid: u32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|task| {
            proc_stat(&task.path().join("stat"))
                .is_some_and(|(_, f)| matches!(f.get(38).map(String::as_str), Some("1" | "2")))
        })
        .count()
}

/// What `/proc` says of a process that outlived its safety net: the
/// program it runs (a forked child that never reached exec is still the
/// test binary), its command line, and each thread's name, state and
/// wait channel.
pub fn describe_process(pid: u32) -> String {
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let exe = std::fs::read_link(proc_dir.join("exe"))
        .map(|p| p.display().to_string())
        .unwrap_or_else(|e| format!("(exe: {e})"));
    let cmdline = std::fs::read(proc_dir.join("cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .replace('\0', " ")
                .trim()
                .to_string()
        })
        .unwrap_or_default();
    let mut threads = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(proc_dir.join("task")) {
        for task in tasks.flatten() {
            let read = |name: &str| {
                std::fs::read_to_string(task.path().join(name))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default()
            };
            let state = read("status")
                .lines()
                .find_map(|l| l.strip_prefix("State:"))
                .map(|s| s.trim().to_string())
                .unwrap_or_default();
            threads.push(format!(
                "{} '{}' {state} in {}",
                task.file_name().to_string_lossy(),
                read("comm"),
                read("wchan")
            ));
        }
    }
    format!("{exe} [{cmdline}]; threads: {}", threads.join(", "))
}

pub fn send_signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status_checked()
        .expect("kill(1)");
    assert!(status.success(), "kill -{name} {pid} failed");
}

/// Why a test that runs real-time threads at several priorities in one
/// process says SKIPPED under emulation: qemu-user's translated code takes
/// spin locks of the emulator's own, and a SCHED_FIFO thread spinning on
/// one that a lower-priority thread holds keeps that thread from running
/// to release it: runs of `sigwaittest -p 80 -i 200 -l 300` under load
/// hung until killed, 1 in 40 with two pairs (priorities 80 and 79), 1 in
/// 50 with three, none in 50 with one pair.
pub const SEVERAL_PRIORITIES_EMULATED: &str = "real-time threads at several priorities can \
     livelock on the emulator's own spin locks (a higher-priority thread spins while the holder \
     cannot run)";

/// How much longer a safety net waits under qemu-user, where starting a
/// process and its first code take seconds and parallel tests share two
/// emulated CPUs (an audit of a fake tree passed its 10 s net there).
pub const EMULATED_SLOWDOWN: u32 = 6;

/// `limit` as a safety net: as it is natively, [`EMULATED_SLOWDOWN`] times
/// it under emulation. Tests that assert how fast something ends say
/// SKIPPED under emulation instead (`skip_if_emulated!`).
pub fn safety_net(limit: Duration) -> Duration {
    if rtlat_testkit::emulation::emulated().is_some() {
        limit * EMULATED_SLOWDOWN
    } else {
        limit
    }
}

/// Runs `cmd` to completion, killing it and panicking after `limit`.
pub fn run_with_timeout(cmd: &mut Command, limit: Duration) -> Run {
    spawn(cmd).wait(limit)
}

/// Runs `cmd` (bounded by the caller's `-l`/`-D`) with a 10 s safety net.
pub fn run(cmd: &mut Command) -> Run {
    run_with_timeout(cmd, Duration::from_secs(10))
}

/// The names of the files in `dir`, sorted, shown lossily.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `rtlat cyclictest ARGS --json=<temp file>`, expects exit 0 and
/// returns the run with the JSON document it wrote.
pub fn run_with_json(args: &[&str]) -> (Run, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("run.json");
    let mut cmd = rtlat_cyclictest(args);
    cmd.arg(format!("--json={}", json_path.display()));
    let r = run(&mut cmd);
    r.expect_code(0);
    let json = read_json(&json_path);
    (r, json)
}

// ---------------------------------------------------------------------------
// `# Thread N: max ... us, due ... s into the run, woke ... s; due at ...
// UTC` lines

/// One line of the time of a thread's maximum (`--percentiles`,
/// `--verdict`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaxTimeLine {
    pub thread: usize,
    /// The maximum, µs (three decimals).
    pub max_us: f64,
    /// When, ms since the Unix epoch (the line's UTC time: the deadline,
    /// or the reception of a signal).
    pub unix_ms: i64,
    /// Whole seconds into the run of the time kept (the deadline, or the
    /// reception of a signal).
    pub into_s: u64,
    /// The two instants into the run, µs: deadline and wake-up (or
    /// sending and reception).
    pub instants_us: (i64, i64),
    /// `sent`/`received` rather than `due`/`woke`.
    pub signal: bool,
}

/// `12.345678` (seconds, six decimals) as µs.
fn seconds_as_us(text: &str) -> Option<i64> {
    let (whole, fraction) = text.split_once('.')?;
    (fraction.len() == 6).then_some(())?;
    Some(whole.parse::<i64>().ok()? * 1_000_000 + fraction.parse::<i64>().ok()?)
}

/// Parses `# Thread 0: max 42.317 us, due 65.123456 s into the run, woke
/// 65.123499 s; due at 2026-11-25 14:03:22.123 UTC` (or `sent ... s into
/// the run, received ... s; received at ...`); `None` for any other line.
pub fn parse_max_time_line(line: &str) -> Option<MaxTimeLine> {
    let rest = line.strip_prefix("# Thread ")?;
    let (thread, rest) = rest.split_once(": max ")?;
    let (max, rest) = rest.split_once(" us, ")?;
    let signal = rest.starts_with("sent ");
    let (start_word, end_word) = if signal {
        ("sent ", "received ")
    } else {
        ("due ", "woke ")
    };
    let (start, rest) = rest
        .strip_prefix(start_word)?
        .split_once(" s into the run, ")?;
    let (end, rest) = rest.strip_prefix(end_word)?.split_once(" s; ")?;
    let kept_word = if signal { "received at " } else { "due at " };
    let date = rest.strip_prefix(kept_word)?.strip_suffix(" UTC")?;
    let stamp: jiff::Timestamp = format!("{}Z", date.replace(' ', "T")).parse().ok()?;
    let instants_us = (seconds_as_us(start)?, seconds_as_us(end)?);
    let kept_us = if signal { instants_us.1 } else { instants_us.0 };
    Some(MaxTimeLine {
        thread: thread.parse().ok()?,
        max_us: max.parse().ok()?,
        unix_ms: stamp.as_millisecond(),
        into_s: u64::try_from(kept_us / 1_000_000).ok()?,
        instants_us,
        signal,
    })
}

/// Every max-time line of `text`, in order, each put back together when
/// it was wrapped to 80 columns (its continuation starts `#   `).
pub fn max_time_lines(text: &str) -> Vec<MaxTimeLine> {
    joined_thread_lines(text)
        .iter()
        .filter_map(|l| parse_max_time_line(l))
        .collect()
}

/// The lines of `text`, a `# Thread ` or `# Pair ` line's wrapped
/// continuation (`#   ...`) joined back onto it.
pub fn joined_thread_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        match (line.strip_prefix("#   "), lines.last_mut()) {
            (Some(rest), Some(last))
                if last.starts_with("# Thread ") || last.starts_with("# Pair ") =>
            {
                last.push(' ');
                last.push_str(rest);
            }
            _ => lines.push(line.to_string()),
        }
    }
    lines
}

/// The audit check `id` of `rtlat audit`'s text, its wrapped lines (those
/// that start with spaces) joined back onto its first, one space apart.
pub fn audit_check_text(stdout: &str, id: &str) -> Option<String> {
    let mut lines = stdout
        .lines()
        .skip_while(|l| l.starts_with(' ') || l.split_whitespace().nth(1) != Some(id));
    let mut text = lines.next()?.trim_end().to_string();
    for line in lines.take_while(|l| l.starts_with(' ')) {
        text.push(' ');
        text.push_str(line.trim());
    }
    Some(text)
}

/// Checks a max-time line against its thread's JSON object: the value is
/// `max_ns`, the time `max_time` (Unix seconds, rounded to the µs)
/// truncated to the ms, and the two instants are the maximum apart (each
/// truncated to the µs), unless the first is before the run's start (shown
/// as 0).
pub fn check_max_time_line(line: &MaxTimeLine, thread: &serde_json::Value) {
    let max_ns = thread["max_ns"].as_i64().expect("max_ns");
    assert_eq!(
        format!("{:.3}", line.max_us),
        format!("{:.3}", max_ns as f64 / 1000.0),
        "{line:?} {thread}"
    );
    let max_time_us = (thread["max_time"].as_f64().expect("max_time") * 1e6).round() as i64;
    // The line truncates the time to the ms; max_time rounds it to the µs.
    let behind_us = max_time_us - line.unix_ms * 1000;
    assert!((0..=1000).contains(&behind_us), "{line:?} {thread}");
    let (start_us, end_us) = line.instants_us;
    if start_us > 0 {
        let apart = (end_us - start_us) as f64;
        assert!((apart - line.max_us).abs() <= 1.0, "{line:?}");
    }
}

// ---------------------------------------------------------------------------
// `T:` status lines

/// One `T:` line: `T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusLine {
    pub index: i64,
    pub tid: i64,
    pub prio: i64,
    pub interval: i64,
    pub cycles: i64,
    pub min: i64,
    pub act: i64,
    pub avg: i64,
    pub max: i64,
}

/// The integer right after `label` (spaces after the label skipped).
pub fn int_after(line: &str, label: &str) -> Option<i64> {
    let at = line.find(label)? + label.len();
    let rest = line[at..].trim_start_matches(' ');
    let end = rest
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(rest.len(), |(i, _)| i);
    rest[..end].parse().ok()
}

/// Parses one `T:` line; `None` if the line is not one.
pub fn parse_status_line(line: &str) -> Option<StatusLine> {
    let line = line.strip_prefix("T:")?;
    let line = format!(" {line}");
    Some(StatusLine {
        index: int_after(&line, " ")?,
        tid: int_after(&line, "(")?,
        prio: int_after(&line, " P:")?,
        interval: int_after(&line, " I:")?,
        cycles: int_after(&line, " C:")?,
        min: int_after(&line, " Min:")?,
        act: int_after(&line, " Act:")?,
        avg: int_after(&line, " Avg:")?,
        max: int_after(&line, " Max:")?,
    })
}

/// Every `T:` status line of `text`, in order (`--spike` lines, `T:%2d
/// Spike:`, are not status lines); panics on a `T:` line that does not parse.
pub fn parse_status_lines(text: &str) -> Vec<StatusLine> {
    text.lines()
        .filter(|l| l.starts_with("T:") && !l.contains(" Spike:"))
        .map(|l| parse_status_line(l).unwrap_or_else(|| panic!("bad T: line {l:?}")))
        .collect()
}

/// min <= act <= max and min <= avg <= max for every line with samples.
pub fn check_status_invariants(lines: &[StatusLine]) {
    for l in lines {
        assert!(l.cycles >= 0, "{l:?}");
        if l.cycles > 0 {
            assert!(l.min <= l.avg && l.avg <= l.max, "min <= avg <= max: {l:?}");
            assert!(l.min <= l.act && l.act <= l.max, "min <= act <= max: {l:?}");
        }
    }
}

// ---------------------------------------------------------------------------
// Histogram block

/// The v2.4 histogram block (`-h`/`-H`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    /// `counts[bucket][thread]`, sum column excluded.
    pub counts: Vec<Vec<u64>>,
    /// The `-H` sum column, one per bucket, when printed.
    pub bucket_sums: Option<Vec<u64>>,
    pub total: Vec<u64>,
    pub total_sum: Option<u64>,
    pub min: Vec<i64>,
    pub avg: Vec<i64>,
    pub max: Vec<i64>,
    pub max_all: Option<i64>,
    pub overflows: Vec<u64>,
    pub overflows_sum: Option<u64>,
    /// Logged overflow cycle numbers, per thread.
    pub overflow_cycles: Vec<Vec<u64>>,
    /// The `# NNNNN others` count, per thread, when printed.
    pub overflow_others: Vec<Option<u64>>,
}

impl Histogram {
    pub fn threads(&self) -> usize {
        self.min.len()
    }
    pub fn buckets(&self) -> usize {
        self.counts.len()
    }
}

fn numbers(text: &str) -> Vec<i64> {
    text.split_whitespace()
        .map(|w| {
            w.parse()
                .unwrap_or_else(|_| panic!("not a number {w:?} in {text:?}"))
        })
        .collect()
}

/// Splits `values` (threads, maybe one extra) into per-thread values and the extra one.
fn split_extra<T: Copy>(values: Vec<T>, threads: usize, what: &str) -> (Vec<T>, Option<T>) {
    match values.len() {
        n if n == threads => (values, None),
        n if n == threads + 1 && threads > 1 => {
            let extra = values[threads];
            (values[..threads].to_vec(), Some(extra))
        }
        n => panic!("{what}: {n} values for {threads} threads"),
    }
}

/// Parses the histogram block of `text`; `None` if there is no `# Histogram` line.
pub fn parse_histogram(text: &str) -> Option<Histogram> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| *l == "# Histogram")?;
    let labelled = |label: &str| -> Vec<i64> {
        let line = lines[start..]
            .iter()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("no {label:?} line in histogram block"));
        numbers(line)
    };
    let min = labelled("# Min Latencies:");
    let threads = min.len();
    assert!(threads > 0, "no threads in Min Latencies");
    let avg = labelled("# Avg Latencies:");
    assert_eq!(avg.len(), threads, "Avg Latencies");
    let (max, max_all) = split_extra(labelled("# Max Latencies:"), threads, "Max");
    let as_u64 = |v: Vec<i64>| v.into_iter().map(|x| x as u64).collect::<Vec<_>>();
    let (total, total_sum) = split_extra(as_u64(labelled("# Total:")), threads, "Total");
    let (overflows, overflows_sum) = split_extra(
        as_u64(labelled("# Histogram Overflows:")),
        threads,
        "Overflows",
    );

    let mut counts = Vec::new();
    let mut sums = Vec::new();
    let mut with_sum = None;
    let mut i = start + 1;
    while !lines[i].starts_with("# Total:") {
        let line = lines[i];
        let (bucket, rest) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("bad bucket line {line:?}"));
        assert_eq!(bucket.len(), 6, "bucket index width in {line:?}");
        assert_eq!(
            bucket.parse::<usize>().unwrap(),
            counts.len(),
            "buckets out of order at {line:?}"
        );
        let cols: Vec<u64> = rest
            .split('\t')
            .map(|c| {
                assert_eq!(c.len(), 6, "count width in {line:?}");
                c.parse().unwrap()
            })
            .collect();
        let (row, sum) = split_extra(cols, threads, line);
        match with_sum {
            None => with_sum = Some(sum.is_some()),
            Some(w) => assert_eq!(w, sum.is_some(), "sum column comes and goes: {line:?}"),
        }
        counts.push(row);
        sums.extend(sum);
        i += 1;
    }
    let bucket_sums = with_sum.unwrap_or(false).then_some(sums);

    let header = lines[i..]
        .iter()
        .position(|l| *l == "# Histogram Overflow at cycle number:")
        .expect("no overflow-at line")
        + i;
    let mut overflow_cycles = Vec::new();
    let mut overflow_others = Vec::new();
    for t in 0..threads {
        let line = lines[header + 1 + t];
        let prefix = format!("# Thread {t}:");
        let rest = line
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("expected {prefix:?}, got {line:?}"));
        let (logged, others) = match rest.split_once(" # ") {
            Some((logged, others)) => {
                let n = others
                    .strip_suffix(" others")
                    .unwrap_or_else(|| panic!("bad others in {line:?}"));
                (logged, Some(n.parse::<u64>().unwrap()))
            }
            None => (rest, None),
        };
        overflow_cycles.push(as_u64(numbers(logged)));
        overflow_others.push(others);
    }
    Some(Histogram {
        counts,
        bucket_sums,
        total,
        total_sum,
        min,
        avg,
        max,
        max_all,
        overflows,
        overflows_sum,
        overflow_cycles,
        overflow_others,
    })
}

/// The histogram's own consistency, and with `cycles` (one per thread):
/// total + overflows = cycles.
pub fn check_histogram_invariants(h: &Histogram, cycles: Option<&[u64]>) {
    let threads = h.threads();
    let nb = h.buckets();
    for t in 0..threads {
        let sum: u64 = h.counts.iter().map(|row| row[t]).sum();
        assert_eq!(sum, h.total[t], "thread {t}: buckets sum to # Total");
        let samples = h.total[t] + h.overflows[t];
        if samples > 0 {
            assert!(
                h.min[t] <= h.avg[t] && h.avg[t] <= h.max[t],
                "thread {t}: min <= avg <= max: {} {} {}",
                h.min[t],
                h.avg[t],
                h.max[t]
            );
            // The extreme buckets agree with Min/Max.
            if h.min[t] >= 0 && (h.min[t] as usize) < nb {
                let m = h.min[t] as usize;
                assert!(h.counts[m][t] > 0, "thread {t}: min bucket {m} is empty");
                assert!(
                    h.counts[..m].iter().all(|row| row[t] == 0),
                    "thread {t}: a bucket below min {m} is used"
                );
            }
            if h.max[t] >= 0 && (h.max[t] as usize) < nb {
                let m = h.max[t] as usize;
                assert!(h.counts[m][t] > 0, "thread {t}: max bucket {m} is empty");
                assert!(
                    h.counts[m + 1..].iter().all(|row| row[t] == 0),
                    "thread {t}: a bucket above max {m} is used"
                );
                assert_eq!(h.overflows[t], 0, "thread {t}: overflows below max");
            } else if h.max[t] >= nb as i64 {
                assert!(
                    h.overflows[t] > 0,
                    "thread {t}: max {} but no overflow",
                    h.max[t]
                );
            }
        }
        let logged = h.overflow_cycles[t].len() as u64;
        assert!(
            logged <= nb as u64,
            "thread {t}: more logged overflows than buckets"
        );
        assert_eq!(
            logged + h.overflow_others[t].unwrap_or(0),
            h.overflows[t],
            "thread {t}: logged overflows + others = overflows"
        );
        assert!(
            h.overflow_cycles[t].windows(2).all(|w| w[0] < w[1]),
            "thread {t}: overflow cycle numbers increase"
        );
        if let Some(cycles) = cycles {
            assert_eq!(
                h.total[t] + h.overflows[t],
                cycles[t],
                "thread {t}: # Total + overflows = cycles"
            );
            if let Some(&last) = h.overflow_cycles[t].last() {
                assert!(last < cycles[t], "thread {t}: overflow at cycle {last}");
            }
        }
    }
    if let Some(sums) = &h.bucket_sums {
        for (b, (row, sum)) in h.counts.iter().zip(sums).enumerate() {
            assert_eq!(row.iter().sum::<u64>(), *sum, "bucket {b}: sum column");
        }
    }
    if let Some(s) = h.total_sum {
        assert_eq!(h.total.iter().sum::<u64>(), s, "# Total sum column");
    }
    if let Some(s) = h.overflows_sum {
        assert_eq!(h.overflows.iter().sum::<u64>(), s, "overflow sum column");
    }
    if let Some(m) = h.max_all {
        assert_eq!(h.max.iter().copied().max().unwrap(), m, "max-of-max column");
    }
}

// ---------------------------------------------------------------------------
// Shapes and JSON

/// The shape of a line: every number (digits, with a leading `-`) becomes
/// `N`, runs of spaces collapse to one, and the padding space between `:`
/// or `(` and a number disappears, so `P: 0`, `P:80`, `( 5423)` and
/// `(11611)` have the same shape. No regex: one char scan.
pub fn shape(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_number = c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()));
        if starts_number {
            if out.ends_with(' ') {
                let before = out.trim_end_matches(' ');
                if before.ends_with(':') || before.ends_with('(') {
                    out.truncate(before.len());
                }
            }
            if c == '-' {
                out.push('-');
                i += 1;
            }
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            out.push('N');
        } else if c == ' ' {
            if !out.ends_with(' ') {
                out.push(' ');
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Every key path of a JSON value: `a`, `a.b`, ...; thread objects keyed
/// by index become `*`, and the contents of `histogram` (bucket numbers) are
/// data, not keys.
pub fn json_key_paths(value: &serde_json::Value) -> BTreeSet<String> {
    fn walk(v: &serde_json::Value, prefix: &str, out: &mut BTreeSet<String>) {
        if let serde_json::Value::Object(map) = v {
            for (k, child) in map {
                let k = if k.parse::<u64>().is_ok() {
                    "*"
                } else {
                    k.as_str()
                };
                let path = if prefix.is_empty() {
                    k.to_owned()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(path.clone());
                if k != "histogram" {
                    walk(child, &path, out);
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(value, "", &mut out);
    out
}

/// Reads and parses a JSON file, with the text in the panic message.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON ({e}):\n{text}", path.display()))
}

/// `thread.<i>.<key>` as i64 for every thread, in index order.
pub fn json_thread_ints(json: &serde_json::Value, key: &str) -> Vec<i64> {
    let threads = json["thread"].as_object().expect("thread object");
    (0..threads.len())
        .map(|i| {
            threads[&i.to_string()][key]
                .as_i64()
                .unwrap_or_else(|| panic!("thread {i}: {key} is not an integer"))
        })
        .collect()
}

#[test]
fn shape_hides_numbers_and_padding() {
    assert_eq!(
        shape("T: 0 ( 5423) P:80 I:500 C:   1000 Min:     18 Act:   24 Avg:   36 Max:    4841"),
        shape("T: 1 (15529) P: 0 I:1000 C:    515 Min:      3 Act:  126 Avg:   31 Max:      56"),
    );
    assert_eq!(shape("# Total: 000000745 000000708"), "# Total:N N");
    assert_eq!(shape("000001 000002\t000003"), "N N\tN");
    assert_ne!(shape("# Total: 1 2"), shape("# Total: 1 2 3"));
    assert_eq!(shape("I:-100"), "I:-N");
}

#[test]
fn status_line_parser_reads_every_field() {
    let l = parse_status_line(
        "T: 1 ( 5529) P:80 I:1000 C:    515 Min:     13 Act:   26 Avg:   31 Max:      56",
    )
    .unwrap();
    assert_eq!(
        l,
        StatusLine {
            index: 1,
            tid: 5529,
            prio: 80,
            interval: 1000,
            cycles: 515,
            min: 13,
            act: 26,
            avg: 31,
            max: 56
        }
    );
    let n = parse_status_line(
        "T: 0 ( 5566) P: 0 I:1000 C:    500 Min:  18065 Act:   36308 Avg:   29266 Max:   50053",
    )
    .unwrap();
    assert_eq!((n.prio, n.min, n.max), (0, 18065, 50053));
    assert_eq!(parse_status_line("# Total: 1"), None);
}

#[test]
fn histogram_parser_reads_the_reference_block() {
    let text = "# Histogram\n\
                000000 000000\t000001\t000001\n\
                000001 000002\t000000\t000002\n\
                # Total: 000000002 000000001 000000003\n\
                # Min Latencies: 00001 00000\n\
                # Avg Latencies: 00003 00000\n\
                # Max Latencies: 00007 00000 00007\n\
                # Histogram Overflows: 00003 00000 00003\n\
                # Histogram Overflow at cycle number:\n\
                # Thread 0: 00000 00003 # 00001 others\n\
                # Thread 1:\n\n";
    let h = parse_histogram(text).unwrap();
    assert_eq!(h.threads(), 2);
    assert_eq!(h.counts, [[0, 1], [2, 0]]);
    assert_eq!(h.bucket_sums, Some(vec![1, 2]));
    assert_eq!(h.total_sum, Some(3));
    assert_eq!(h.overflow_cycles, [vec![0, 3], vec![]]);
    assert_eq!(h.overflow_others, [Some(1), None]);
    check_histogram_invariants(&h, Some(&[5, 1]));
}

#[test]
fn the_realtime_sign_counts_the_threads_of_the_run_and_its_children() {
    require_root!();
    let lease = cpus::CpuLease::one();
    let plain = spawn(Command::new("sleep").arg("10"));
    let realtime = spawn(lease.pinned("chrt").args(["-f", "1", "sleep", "10"]));
    let parent = spawn(
        lease
            .pinned("sh")
            .args(["-c", "chrt -f 1 sleep 10 & chrt -r 1 sleep 10 & wait"]),
    );
    wait_for_realtime_threads(realtime.pid(), 1);
    wait_for_realtime_threads(parent.pid(), 2);
    assert_eq!(
        realtime_threads(parent.pid()),
        0,
        "sh itself is not real-time"
    );
    assert_eq!(realtime_threads(plain.pid()), 0);
    assert!(children_of(plain.pid()).is_empty());
    for child in children_of(parent.pid()) {
        send_signal(child, "KILL");
    }
    for run in [plain, realtime, parent] {
        run.signal("KILL");
        let _ = run.wait(Duration::from_secs(5));
    }
}

#[macro_use]
pub(crate) mod nobody;
// After the macros, which their tests use.
pub(crate) mod cpus;
pub(crate) mod machine_lock;
#[macro_use]
pub(crate) mod newer;
pub(crate) mod realtime_check;
pub(crate) mod spawn;
pub(crate) mod spinner;
pub(crate) mod tracefs;

pub use spawn::SpawnChecked;

/// Runs `rtlat ARGS` (one shell line after the binary's path) with stdout
/// and stderr on a pseudo-terminal: `script -qec`, which copies what the
/// terminal shows to its own stdout. `env` sets up the command (its
/// environment) before it starts; bounded by 15 s. `None`, with a SKIPPED
/// line naming `test`, unless `ran` sees that the tool ran: `script` could
/// not give it a terminal.
pub fn on_a_pseudo_terminal(
    args: &str,
    env: impl FnOnce(&mut Command),
    ran: impl FnOnce(&Run) -> bool,
    test: &str,
) -> Option<Run> {
    let line = format!("{} {args}", rtlat_path().display());
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"]).stdin(Stdio::null());
    env(&mut cmd);
    let r = spawn_with(&mut cmd, Stdio::piped(), Stdio::piped()).wait(Duration::from_secs(15));
    if !ran(&r) {
        skip_note!(
            "SKIPPED (script(1) gave no terminal: {}): {test}",
            r.describe()
        );
        return None;
    }
    Some(r)
}
