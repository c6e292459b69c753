//! The calling thread's own disturbance counters: involuntary context
//! switches and page faults (`getrusage(RUSAGE_THREAD)`) and CPU
//! migrations (`se.nr_migrations` of `/proc/thread-self/sched`).
//!
//! A measuring thread reads them just before its first wait and just after
//! its last sample; the difference says what disturbed it in between. The
//! reading allocates nothing (the sched file is read into a stack buffer),
//! so it may run on a thread whose memory is locked and pre-faulted.
#![allow(unsafe_code)]

use std::mem::MaybeUninit;

use rustix::fd::OwnedFd;
use rustix::fs::{Mode, OFlags};

/// The counters of the calling thread at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadCounters {
    /// Involuntary context switches (`ru_nivcsw`).
    pub involuntary_switches: u64,
    /// Minor page faults (`ru_minflt`).
    pub minor_faults: u64,
    /// Major page faults (`ru_majflt`).
    pub major_faults: u64,
    /// CPU migrations (`se.nr_migrations`); `None` where the kernel has no
    /// `/proc/thread-self/sched` (built without `CONFIG_SCHED_DEBUG`).
    pub migrations: Option<u64>,
}

impl ThreadCounters {
    /// The calling thread's counters now; `None` if `getrusage` fails
    /// (it does not on Linux since 2.6.26).
    pub fn of_current_thread() -> Option<ThreadCounters> {
        let usage = thread_rusage()?;
        Some(ThreadCounters {
            involuntary_switches: non_negative(usage.ru_nivcsw),
            minor_faults: non_negative(usage.ru_minflt),
            major_faults: non_negative(usage.ru_majflt),
            migrations: current_thread_migrations(),
        })
    }
}

fn non_negative(count: libc::c_long) -> u64 {
    u64::try_from(count).unwrap_or(0)
}

fn thread_rusage() -> Option<libc::rusage> {
    let mut usage = MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: `usage` is valid for writes of one `rusage`; getrusage fills
    // it completely when it returns 0, and we read it only then.
    let filled = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) == 0 };
    // SAFETY: initialised by the successful call above.
    filled.then(|| unsafe { usage.assume_init() })
}

/// The CPU time the calling thread has used so far
/// (`CLOCK_THREAD_CPUTIME_ID`).
pub fn current_thread_cpu_time() -> std::time::Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    std::time::Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// The line of the sched file that counts migrations.
const MIGRATIONS_KEY: &[u8] = b"se.nr_migrations";

/// `se.nr_migrations` of the calling thread; `None` when the file is
/// absent or has no such line in its first kilobytes (where it always is:
/// it is the fourth field).
pub fn current_thread_migrations() -> Option<u64> {
    let file: OwnedFd = rustix::fs::open(
        c"/proc/thread-self/sched",
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut buffer = [0u8; 2048];
    let mut filled = 0;
    while filled < buffer.len() {
        match rustix::io::read(&file, &mut buffer[filled..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    migrations_in(&buffer[..filled])
}

/// The value of the `se.nr_migrations` line in the text of a sched file.
pub fn migrations_in(text: &[u8]) -> Option<u64> {
    let line = text
        .split(|&b| b == b'\n')
        .find(|line| line.starts_with(MIGRATIONS_KEY))?;
    let value = &line[line.iter().position(|&b| b == b':')? + 1..];
    // `str::parse` allocates nothing.
    std::str::from_utf8(value.trim_ascii()).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_migrations_line_is_found_and_parsed() {
        let text = b"head (8955, #threads: 1)\n----\n\
            se.exec_start      :   6660218.297625\n\
            se.nr_migrations   :                   17\n\
            nr_switches        :                    3\n";
        assert_eq!(migrations_in(text), Some(17));
    }

    #[test]
    fn a_file_without_the_line_or_with_garbage_gives_none() {
        assert_eq!(migrations_in(b"nr_switches : 3\n"), None);
        assert_eq!(migrations_in(b"se.nr_migrations : x1\n"), None);
        assert_eq!(migrations_in(b"se.nr_migrations :\n"), None);
        assert_eq!(migrations_in(b"se.nr_migrations\n"), None);
    }

    #[test]
    fn the_current_thread_reads_its_counters() {
        let before = ThreadCounters::of_current_thread().expect("getrusage");
        // Touch fresh memory: at least one minor fault on this thread (40
        // MiB: above glibc's largest mmap threshold, so new pages).
        let pages = vec![1u8; 40 << 20];
        std::hint::black_box(&pages);
        let after = ThreadCounters::of_current_thread().expect("getrusage");
        assert!(
            after.minor_faults > before.minor_faults,
            "{before:?} {after:?}"
        );
        if std::path::Path::new("/proc/thread-self/sched").exists() {
            assert!(after.migrations.is_some());
        }
    }
}
