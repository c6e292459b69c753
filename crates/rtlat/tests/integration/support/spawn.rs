//! Starting child processes from the test process, under qemu-user too.
//!
//! qemu-user 7.2 (Debian 12's, which `ci/cross` runs the ARM suites
//! under) now and then deadlocks in a child forked by a multi-threaded
//! guest before the child reaches its exec: two threads of the child
//! wait on futexes forever, and the child is still the test binary
//! (`/proc/PID/cmdline` is the test's own). Seen in `cli::shared_options`
//! on aarch64: 2 runs in 30 with two test threads, each a test failing at
//! its safety net. The test process forks most, from many threads at
//! once, so under emulation every child the integration tests start goes
//! through [`SpawnChecked`]: a child still in the test's own image
//! [`EXEC_WITHIN`] after its fork never ran a line of what it was
//! started for, and is killed and started again (at most three times),
//! with a NOTE line on stderr.
//! Natively the methods are `spawn`, `output` and `status`, unchanged.

use std::io::{self, Write};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a child may stay in the test's image after its fork before
/// it counts as deadlocked: the exec follows the fork within
/// milliseconds, even emulated on a loaded machine.
pub const EXEC_WITHIN: Duration = Duration::from_secs(10);

/// How many times a child is started before the test fails.
const ATTEMPTS: u32 = 3;

/// `spawn`, `output` and `status` that start again a child caught by
/// qemu-user's fork deadlock (see the module's comment).
pub trait SpawnChecked {
    /// Like [`Command::spawn`].
    fn spawn_checked(&mut self) -> io::Result<Child>;
    /// Like [`Command::output`]: standard input from /dev/null, standard
    /// output and error captured.
    fn output_checked(&mut self) -> io::Result<Output>;
    /// Like [`Command::status`].
    fn status_checked(&mut self) -> io::Result<ExitStatus>;
}

impl SpawnChecked for Command {
    fn spawn_checked(&mut self) -> io::Result<Child> {
        if super::runs_rtlat_plot(self) {
            super::rtlat_plot_path();
        }
        let child = match rtlat_testkit::emulation::emulated() {
            Some(emulator) => spawn_leaving(
                self,
                &own_command_line(),
                EXEC_WITHIN,
                &emulator,
                // Straight to stderr (libtest captures eprintln!): seen in
                // every run.
                &mut io::stderr(),
            )?,
            None => self.spawn()?,
        };
        super::realtime_check::watch(child.id());
        Ok(child)
    }

    fn output_checked(&mut self) -> io::Result<Output> {
        let child = self
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn_checked()?;
        let pid = child.id();
        let output = child.wait_with_output()?;
        super::realtime_check::assert_kept_to_its_lease(pid);
        Ok(output)
    }

    fn status_checked(&mut self) -> io::Result<ExitStatus> {
        let mut child = self.spawn_checked()?;
        let status = child.wait()?;
        super::realtime_check::assert_kept_to_its_lease(child.id());
        Ok(status)
    }
}

/// This process's arguments as `/proc/PID/cmdline` holds them (each
/// followed by a NUL): what a child forked from it shows until its exec.
/// Under qemu-user the host sees the emulator's name before them.
fn own_command_line() -> Vec<u8> {
    let mut line = Vec::new();
    for arg in std::env::args_os() {
        line.extend_from_slice(arg.as_encoded_bytes());
        line.push(0);
    }
    line
}

/// Spawns `cmd`; a child whose command line still ends with `image`
/// `within` after its fork is killed and `cmd` spawned again, up to
/// [`ATTEMPTS`] times, each said on `notes` in a NOTE line.
fn spawn_leaving(
    cmd: &mut Command,
    image: &[u8],
    within: Duration,
    emulator: &str,
    notes: &mut dyn Write,
) -> io::Result<Child> {
    for attempt in 1..=ATTEMPTS {
        let mut child = cmd.spawn()?;
        if left_image(&mut child, image, within) {
            return Ok(child);
        }
        let pid = child.id();
        let _ = child.kill();
        let _ = child.wait();
        let _ = writeln!(
            notes,
            "NOTE (emulated: {emulator}): pid {pid}, started for {:?}, was still the test \
             binary {within:?} after its fork (qemu-user's fork deadlock); killed it \
             (attempt {attempt} of {ATTEMPTS})",
            cmd.get_program()
        );
    }
    panic!(
        "{:?}: {ATTEMPTS} children in a row never reached their exec",
        cmd.get_program()
    );
}

/// Whether `child` left `image` within `within`: its command line is
/// another program's, or it ended.
fn left_image(child: &mut Child, image: &[u8], within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        // An ended child is not stuck; its status stays with `child`.
        if !matches!(child.try_wait(), Ok(None)) {
            return true;
        }
        match std::fs::read(format!("/proc/{}/cmdline", child.id())) {
            // Empty while an exec sets up the new program's arguments.
            Ok(cmdline) if cmdline.is_empty() || cmdline.ends_with(image) => {}
            _ => return true,
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_execs_is_kept() {
        let mut child = spawn_leaving(
            Command::new("sleep").arg("5"),
            &own_command_line(),
            Duration::from_secs(5),
            "test",
            &mut Vec::new(),
        )
        .unwrap();
        // Empty for a moment after posix_spawn returns, while the exec
        // sets up the arguments.
        let mut cmdline = Vec::new();
        for _ in 0..1000 {
            cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap();
            if !cmdline.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(cmdline, b"sleep\x005\x00");
    }

    #[test]
    fn a_child_that_ends_in_the_image_counts_as_started() {
        let mut child = spawn_leaving(
            &mut Command::new("true"),
            b"true\x00",
            Duration::from_secs(5),
            "test",
            &mut Vec::new(),
        )
        .unwrap();
        assert!(child.wait().unwrap().success());
    }

    #[test]
    fn a_child_that_stays_in_the_image_is_started_again_then_fails() {
        skip_if_emulated!(
            "the stand-in for a stuck child is `sleep`, which under qemu-user shows the test's \
             own command line until its exec, so it is never seen stuck in its own"
        );
        // `sleep 30` stands for a child stuck in the test's image.
        let started = Instant::now();
        let mut notes = Vec::new();
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            spawn_leaving(
                Command::new("sleep").arg("30"),
                b"sleep\x0030\x00",
                Duration::from_millis(200),
                "stand-in",
                &mut notes,
            )
        }));
        let message = failed.unwrap_err().downcast::<String>().unwrap();
        assert!(
            message.contains("3 children in a row never reached their exec"),
            "{message}"
        );
        let notes = String::from_utf8(notes).unwrap();
        let lines: Vec<&str> = notes.lines().collect();
        assert_eq!(lines.len(), 3, "{notes}");
        for (attempt, line) in (1..).zip(&lines) {
            assert!(
                line.starts_with("NOTE (emulated: stand-in): pid ")
                    && line.ends_with(&format!("killed it (attempt {attempt} of 3)")),
                "{line}"
            );
        }
        // Three tries of 200 ms each, each child killed, not waited out.
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
