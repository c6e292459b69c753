//! Thin, safe wrappers over the Linux calls rtlat needs.
//!
//! This is the only crate of the workspace allowed to contain `unsafe` code.
//! Most calls go through `rustix` (safe, errno-typed, vDSO clock reads); the
//! few that rustix does not offer (the POSIX scheduler calls, signal masks,
//! `pthread_kill`, `sysconf`, `poll` over a list kept from call to call)
//! go through `libc`, each `unsafe` block in its own small function with a
//! `// SAFETY:` line.
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod affinity;
pub mod clock;
pub mod counter;
pub mod cpuidle;
pub mod deadline;
pub mod fifo;
pub mod fs;
pub mod ipc;
pub mod load;
pub mod memory;
pub mod msr;
pub mod nonblocking;
pub mod pi;
pub mod poll;
pub mod power;
pub mod process;
pub mod sched;
pub mod signals;
pub mod singlestep;
pub mod system;
pub mod thread;
mod time64;
pub mod timer;
pub mod timerfd;
pub mod trace_instance;
pub mod tracefs;
pub mod tsc;
pub mod usage;
pub mod workers;

pub use rtlat_base::{io_strerror, strerror};
pub use rustix::io::Errno;

/// The errno the last failing libc call left (EINVAL if none is set).
pub(crate) fn last_errno() -> Errno {
    Errno::from_raw_os_error(
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL),
    )
}
