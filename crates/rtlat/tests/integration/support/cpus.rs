//! CPU leases: how real-time tests keep off each other's CPUs.
//!
//! A test that runs a SCHED_FIFO/RR thread or process (the tool under test
//! with `-p`, a spinner, a `chrt` competitor) or a CPU-bound load (stress-ng,
//! `--load`) first takes a [`CpuLease`] and keeps what it starts on the
//! leased CPUs (`-a`, [`CpuLease::pinned`]); a test that needs the whole
//! machine (unpinned real-time threads, one thread per CPU) takes every
//! CPU with [`CpuLease::all`]. Two real-time tests then never measure on
//! the same CPU at the same time, in this test process or any other on
//! the machine: a lease is an exclusive `flock(2)` on one file per CPU in
//! a directory every test process shares ([`LEASE_DIR`]), so that two
//! suites run at once (a native one and an i686 one) keep apart too.
//!
//! Taking a lease waits for it without a time limit: the holders are
//! tests, each bounded by its own safety net. Every taker goes through
//! one turnstile (another locked file) while it collects its CPUs, so a
//! test waiting for every CPU is not overtaken by tests that want one:
//! it holds the turnstile and the first CPUs while it waits for the
//! last. A thread holds one lease at a time (a second one while holding
//! the first could wait for ever on a test waiting for the first); a
//! test that needs several CPUs asks for them at once.
//!
//! What a test starts is checked against its lease while it runs
//! ([`super::realtime_check`]): a real-time thread outside the CPUs of
//! the lease its test held when it started it fails the test.

use std::cell::RefCell;
use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::machine_lock::{lock, open_lock_file, try_lock};

/// The directory of the lease files, shared by every test process of the
/// machine (under `$TMPDIR`, `/tmp` by default).
pub fn lease_dir() -> PathBuf {
    std::env::temp_dir().join(LEASE_DIR)
}

/// The name of [`lease_dir`] under the temporary directory.
pub const LEASE_DIR: &str = "rtlat-test-cpu-leases";

thread_local! {
    /// The CPUs of the lease this thread holds (empty: none).
    static HELD_BY_THIS_THREAD: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The CPUs of the lease the calling thread holds, ascending; empty when
/// it holds none.
pub fn held_by_this_thread() -> Vec<usize> {
    HELD_BY_THIS_THREAD.with(|held| held.borrow().clone())
}

/// Exclusive use of some CPUs for real-time work, until dropped.
#[derive(Debug)]
pub struct CpuLease {
    cpus: Vec<usize>,
    /// The locked files, one per CPU; closing them releases the locks.
    _locks: Vec<File>,
}

/// What a taker asks for.
enum Wanted {
    /// Any one CPU of the allowed ones.
    AnyOne,
    /// These CPUs, all of them.
    These(Vec<usize>),
}

impl CpuLease {
    /// One CPU, whichever is free first.
    pub fn one() -> CpuLease {
        CpuLease::take(Wanted::AnyOne)
    }

    /// Every CPU this process may run on: the whole machine, for a test
    /// whose real-time threads are not pinned or need one CPU each.
    pub fn all() -> CpuLease {
        CpuLease::take(Wanted::These(super::allowed_cpus()))
    }

    /// `count` CPUs (the lowest allowed ones), or `None` when this process
    /// may run on fewer (the caller says SKIPPED).
    pub fn several(count: usize) -> Option<CpuLease> {
        let cpus = super::allowed_cpus();
        (cpus.len() >= count).then(|| CpuLease::take(Wanted::These(cpus[..count].to_vec())))
    }

    /// The leased CPUs, ascending.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// The first leased CPU (the only one of [`CpuLease::one`]).
    pub fn cpu(&self) -> usize {
        self.cpus[0]
    }

    /// The leased CPUs as a list for `-a` and `taskset -c`: `1`, `0,1`.
    pub fn list(&self) -> String {
        self.cpus
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `taskset -c LIST PROGRAM`: a program kept on the leased CPUs (its
    /// real-time policy, if any, set after the affinity: `chrt` as the
    /// program, not around `taskset`).
    pub fn pinned(&self, program: &str) -> Command {
        let mut cmd = Command::new("taskset");
        cmd.args(["-c", &self.list(), program])
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// One CPU, this one.
    pub fn of(cpu: usize) -> CpuLease {
        CpuLease::take(Wanted::These(vec![cpu]))
    }

    fn take(wanted: Wanted) -> CpuLease {
        CpuLease::take_in(&lease_dir(), wanted)
    }

    fn take_in(dir: &Path, wanted: Wanted) -> CpuLease {
        let already = held_by_this_thread();
        assert!(
            already.is_empty(),
            "this test already holds a lease of CPUs {already:?}: take one lease for every CPU \
             the test needs, at once (a second lease could wait for ever)"
        );
        create_shared_dir(dir);
        let turnstile = open_lock_file(&dir.join("turnstile"));
        lock(&turnstile);
        let (cpus, locks) = match wanted {
            Wanted::These(cpus) => {
                assert!(!cpus.is_empty(), "a lease of no CPU");
                let locks = cpus
                    .iter()
                    .map(|&cpu| {
                        let file = open_lock_file(&cpu_file(dir, cpu));
                        lock(&file);
                        file
                    })
                    .collect();
                (cpus, locks)
            }
            Wanted::AnyOne => {
                let (cpu, file) = first_free(dir, &super::allowed_cpus());
                (vec![cpu], vec![file])
            }
        };
        drop(turnstile);
        HELD_BY_THIS_THREAD.with(|held| *held.borrow_mut() = cpus.clone());
        CpuLease {
            cpus,
            _locks: locks,
        }
    }
}

impl Drop for CpuLease {
    fn drop(&mut self) {
        HELD_BY_THIS_THREAD.with(|held| held.borrow_mut().clear());
        // The files close after this, which releases their locks.
    }
}

/// The first CPU of `cpus` whose lock is free, taken, with its file. The
/// caller holds the turnstile, so nobody else is collecting CPUs: this
/// waits only for holders to give theirs back, looking every millisecond
/// (a lock held elsewhere gives no sign of its release but itself).
fn first_free(dir: &Path, cpus: &[usize]) -> (usize, File) {
    let mut files: Vec<(usize, File)> = cpus
        .iter()
        .map(|&cpu| (cpu, open_lock_file(&cpu_file(dir, cpu))))
        .collect();
    loop {
        if let Some(free) = files.iter().position(|(_, file)| try_lock(file)) {
            return files.swap_remove(free);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn cpu_file(dir: &Path, cpu: usize) -> PathBuf {
    dir.join(format!("cpu{cpu}"))
}

/// The lease directory, made writable by every user (sticky, as `/tmp`),
/// since a suite may run as root or not.
fn create_shared_dir(dir: &Path) {
    if dir.is_dir() {
        return;
    }
    match std::fs::create_dir(dir) {
        Ok(()) => {
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777));
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => panic!("creating the CPU lease directory {}: {e}", dir.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;

    /// Whether `/proc/locks` shows a request waiting (`->`) for the lock
    /// of `file`: the sign that a taker is blocked on it.
    fn someone_waits_for(file: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let inode = std::fs::metadata(file).unwrap().ino();
        std::fs::read_to_string("/proc/locks")
            .unwrap()
            .lines()
            .filter(|l| l.contains("->"))
            .any(|l| {
                l.split_whitespace()
                    .any(|field| field.rsplit(':').next() == Some(&inode.to_string()))
            })
    }

    fn wait_for_a_waiter(file: &Path) {
        assert!(
            super::super::wait_until(Duration::from_secs(10), || someone_waits_for(file)),
            "nobody came to wait for {}",
            file.display()
        );
    }

    #[test]
    fn two_takers_of_the_same_cpu_hold_it_one_after_the_other() {
        let dir = tempfile::tempdir().unwrap();
        let cpu = super::super::allowed_cpus()[0];
        let first = CpuLease::take_in(dir.path(), Wanted::These(vec![cpu]));
        let released = Arc::new(AtomicBool::new(false));
        let (taken_tx, taken_rx) = mpsc::channel();
        let second = {
            let (dir, released) = (dir.path().to_owned(), Arc::clone(&released));
            std::thread::spawn(move || {
                let lease = CpuLease::take_in(&dir, Wanted::These(vec![cpu]));
                taken_tx
                    .send((lease.cpus().to_vec(), released.load(Ordering::SeqCst)))
                    .unwrap();
            })
        };
        wait_for_a_waiter(&cpu_file(dir.path(), cpu));
        // Another process is kept out as well (flock(1) of util-linux).
        let busy = Command::new("flock")
            .arg("--nonblock")
            .arg(cpu_file(dir.path(), cpu))
            .arg("true")
            .status()
            .expect("flock(1)");
        assert_eq!(busy.code(), Some(1), "flock(1) took a leased CPU");
        released.store(true, Ordering::SeqCst);
        drop(first);
        let (cpus, after_release) = taken_rx.recv().unwrap();
        second.join().unwrap();
        assert_eq!(cpus, [cpu]);
        assert!(
            after_release,
            "the second taker got the CPU while the first held it"
        );
        let free = Command::new("flock")
            .arg("--nonblock")
            .arg(cpu_file(dir.path(), cpu))
            .arg("true")
            .status()
            .expect("flock(1)");
        assert!(
            free.success(),
            "the CPU stayed locked after both leases ended"
        );
    }

    #[test]
    fn a_taker_of_every_cpu_waits_for_the_others_and_is_not_overtaken() {
        let dir = tempfile::tempdir().unwrap();
        let cpus = super::super::allowed_cpus();
        let last = *cpus.last().unwrap();
        let one = CpuLease::take_in(dir.path(), Wanted::These(vec![last]));
        let one_released = Arc::new(AtomicBool::new(false));
        let all_released = Arc::new(AtomicBool::new(false));
        let (report_tx, report) = mpsc::channel();
        let (go_tx, go) = mpsc::channel::<()>();
        let every = {
            let (dir, cpus, report_tx) = (dir.path().to_owned(), cpus.clone(), report_tx.clone());
            let (one_released, all_released) =
                (Arc::clone(&one_released), Arc::clone(&all_released));
            std::thread::spawn(move || {
                let lease = CpuLease::take_in(&dir, Wanted::These(cpus));
                let after = one_released.load(Ordering::SeqCst);
                report_tx
                    .send(("every", lease.cpus().to_vec(), after))
                    .unwrap();
                go.recv().unwrap();
                all_released.store(true, Ordering::SeqCst);
                drop(lease);
            })
        };
        // The taker of every CPU holds the turnstile and waits for `last`.
        wait_for_a_waiter(&cpu_file(dir.path(), last));
        // A late taker of any one CPU waits at the turnstile, even when a
        // CPU is free now (on a machine of several).
        let late = {
            let (dir, all_released) = (dir.path().to_owned(), Arc::clone(&all_released));
            std::thread::spawn(move || {
                let lease = CpuLease::take_in(&dir, Wanted::AnyOne);
                let after = all_released.load(Ordering::SeqCst);
                report_tx
                    .send(("one", lease.cpus().to_vec(), after))
                    .unwrap();
            })
        };
        wait_for_a_waiter(&dir.path().join("turnstile"));
        one_released.store(true, Ordering::SeqCst);
        drop(one);
        let (who, got, after) = report.recv().unwrap();
        assert_eq!(
            who, "every",
            "the late taker overtook the taker of every CPU"
        );
        assert_eq!(got, cpus);
        assert!(after, "every CPU taken while one was still leased");
        go_tx.send(()).unwrap();
        every.join().unwrap();
        let (who, got, after) = report.recv().unwrap();
        late.join().unwrap();
        assert_eq!((who, got.len()), ("one", 1));
        assert!(after, "a CPU taken while another test held every CPU");
    }

    #[test]
    fn a_second_lease_in_one_thread_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _first = CpuLease::take_in(dir.path(), Wanted::AnyOne);
        let second = std::panic::catch_unwind(|| CpuLease::take_in(dir.path(), Wanted::AnyOne));
        let message = *second.unwrap_err().downcast::<String>().unwrap();
        assert!(message.contains("already holds a lease"), "{message}");
    }
}
