//! `poll(2)` over a reusable list of descriptors: rtlat-sys's one call of
//! it, for the monitor's HTTP server (one thread that waits on its
//! listening socket, a wake-up socket and every client at once, without
//! blocking on any of them), the janitor's watcher and the bounded writes
//! of outputs that are not regular files.
//!
//! The list holds raw descriptor numbers, not borrows, so that the server
//! can keep one list and refill it each round instead of allocating one:
//! a descriptor closed meanwhile is no memory hazard (the kernel answers
//! `POLLNVAL` for it).
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// One descriptor to wait on and what happened to it.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Watched(libc::pollfd);

impl std::fmt::Debug for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watched")
            .field("fd", &self.0.fd)
            .field("events", &self.0.events)
            .field("revents", &self.0.revents)
            .finish()
    }
}

impl Watched {
    /// Waits for `fd` to have something to read (or a hang-up or error).
    pub fn readable(fd: &impl AsRawFd) -> Watched {
        Watched::new(fd.as_raw_fd(), libc::POLLIN)
    }

    /// Waits for `fd` to take more to write (or a hang-up or error).
    pub fn writable(fd: &impl AsRawFd) -> Watched {
        Watched::new(fd.as_raw_fd(), libc::POLLOUT)
    }

    /// Waits for nothing but an error or a hang-up of `fd`, which poll
    /// always reports: the write end of a pipe whose readers are gone.
    pub fn errors_only(fd: &impl AsRawFd) -> Watched {
        Watched::new(fd.as_raw_fd(), 0)
    }

    fn new(fd: RawFd, events: libc::c_short) -> Watched {
        Watched(libc::pollfd {
            fd,
            events,
            revents: 0,
        })
    }

    /// Whether the last [`poll`] found it ready for what it was watched
    /// for, or hung up, failed or closed: in each case the next read or
    /// write returns at once.
    pub fn ready(&self) -> bool {
        self.0.revents != 0
    }
}

/// Waits until a descriptor of `list` is ready or `timeout` has passed
/// (`None`: no limit); returns how many are ready (0 on the timeout). A
/// signal that interrupts the wait counts as a timeout: the caller looks
/// at its deadlines and waits again.
pub fn poll(list: &mut [Watched], timeout: Option<Duration>) -> io::Result<usize> {
    let millis = match timeout {
        None => -1,
        // Rounded up: a deadline 0.4 ms away is not a busy loop.
        Some(t) => libc::c_int::try_from(t.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX),
    };
    for w in list.iter_mut() {
        w.0.revents = 0;
    }
    // SAFETY: `Watched` is a transparent `pollfd`, so the pointer and
    // length describe `list.len()` valid, writable pollfd structures that
    // outlive the call; the kernel writes only their `revents`.
    let rc = unsafe {
        libc::poll(
            list.as_mut_ptr().cast::<libc::pollfd>(),
            list.len() as libc::nfds_t,
            millis,
        )
    };
    if rc >= 0 {
        return Ok(rc as usize);
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::Interrupted {
        Ok(0)
    } else {
        Err(e)
    }
}

/// Whether `e` (of `accept`, say) says the process or the system is out
/// of descriptors or of memory for socket buffers: EMFILE, ENFILE,
/// ENOBUFS, ENOMEM. Closing a descriptor may then let the next call work.
pub fn out_of_descriptors(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// The soft RLIMIT_NOFILE: how many descriptors this process may have
/// open (`None`: no limit).
pub fn descriptor_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::time::Instant;

    #[test]
    fn waits_for_the_ready_one_and_times_out() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let (_c, d) = UnixStream::pair().unwrap();
        let mut list = [Watched::readable(&b), Watched::readable(&d)];
        let began = Instant::now();
        assert_eq!(poll(&mut list, Some(Duration::from_millis(50))).unwrap(), 0);
        assert!(began.elapsed() >= Duration::from_millis(50));
        assert!(!list[0].ready() && !list[1].ready());
        a.write_all(b"x").unwrap();
        assert_eq!(poll(&mut list, None).unwrap(), 1);
        assert!(list[0].ready() && !list[1].ready());
        let mut write = [Watched::writable(&a)];
        assert_eq!(poll(&mut write, Some(Duration::ZERO)).unwrap(), 1);
        assert!(write[0].ready());
    }

    #[test]
    fn a_hang_up_is_ready() {
        let (a, b) = UnixStream::pair().unwrap();
        drop(a);
        let mut list = [Watched::readable(&b)];
        assert_eq!(poll(&mut list, Some(Duration::from_secs(5))).unwrap(), 1);
        assert!(list[0].ready());
    }

    #[test]
    fn the_descriptor_limit_is_read() {
        let limit = descriptor_limit();
        assert!(limit.is_none_or(|n| n >= 3), "{limit:?}");
    }
}
