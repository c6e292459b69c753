//! The hand-off mechanisms of the IPC latency tools (svsematest, pmqtest,
//! ptsematest, sigwaittest) and the shared memory of their fork mode.
//!
//! - [`sysv`]: a private SysV semaphore set (`IPC_PRIVATE`, so two runs
//!   never share one);
//! - [`mqueue`]: POSIX message queues, unlinked as soon as they are open;
//! - [`futex`]: a binary semaphore on a futex word;
//! - [`shm`]: an anonymous shared mapping (`memfd`) a re-executed child
//!   process maps too.
//!
//! Signals (sigwaittest) go through [`crate::signals`].

pub mod futex;
pub mod mqueue;
pub mod shm;
pub mod sysv;

pub(crate) use crate::last_errno;

/// SIGUSR1: releases sigwaittest's sender.
pub const SIGUSR1: i32 = libc::SIGUSR1;
/// SIGUSR2: wakes sigwaittest's receiver.
pub const SIGUSR2: i32 = libc::SIGUSR2;
