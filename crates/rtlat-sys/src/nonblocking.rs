//! Output files that are not regular files (FIFOs, pipes such as
//! `/dev/fd/63`, devices): opened without blocking, so that a FIFO nobody
//! reads cannot hold a run in `open`, and waited on for a bounded time when
//! a write would block, so that a reader that stopped reading cannot hold
//! it in `write` (through [`crate::poll`]).

use std::fs::File;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};

use crate::Errno;
use crate::poll::{Watched, poll};

/// Opens `path` for writing with `O_NONBLOCK` (and `O_TRUNC`, which FIFOs
/// and devices ignore). A FIFO or pipe that no process has open for
/// reading fails with `ENXIO` at once instead of waiting for a reader. The
/// descriptor stays non-blocking: a write that would wait fails with
/// `EAGAIN` (see [`wait_writable`]).
pub fn open_for_writing(path: &Path) -> Result<File, Errno> {
    let flags =
        OFlags::WRONLY | OFlags::NONBLOCK | OFlags::TRUNC | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::open(path, flags, Mode::empty())?;
    Ok(File::from(fd))
}

/// Opens `path` for reading with `O_NONBLOCK`: a read with nothing to
/// give fails with `EAGAIN` instead of waiting (tracefs' `trace_pipe`),
/// and a FIFO opens without waiting for a writer.
pub fn open_for_reading(path: &Path) -> Result<File, Errno> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::open(path, flags, Mode::empty())?;
    Ok(File::from(fd))
}

/// Waits up to `limit` until `fd` takes more bytes (or its reader has
/// gone, which the next write reports as `EPIPE`). `Ok(false)` when the
/// time ran out; a signal that interrupts the wait does not shorten it.
pub fn wait_writable(fd: impl AsFd, limit: Duration) -> Result<bool, Errno> {
    let deadline = Instant::now() + limit;
    let mut list = [Watched::writable(&fd.as_fd())];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let ready = poll(&mut list, Some(left))
            .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))?;
        if ready > 0 {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::time::Instant;

    #[test]
    fn a_fifo_without_a_reader_is_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("rtlat-sys-nb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("pipe");
        crate::fifo::make_fifo(&fifo).unwrap();
        let began = Instant::now();
        assert_eq!(open_for_writing(&fifo).err(), Some(Errno::NXIO));
        assert!(began.elapsed() < Duration::from_secs(1));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_full_pipe_times_out_then_drains() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let path = format!("/proc/self/fd/{}", writer.as_raw_fd());
        let mut out = open_for_writing(Path::new(&path)).unwrap();
        // Fill it: a non-blocking write stops with EAGAIN.
        let chunk = [b'x'; 4096];
        loop {
            match out.write(&chunk) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        let began = Instant::now();
        assert_eq!(wait_writable(&out, Duration::from_millis(100)), Ok(false));
        assert!(began.elapsed() >= Duration::from_millis(90));
        let mut buf = vec![0u8; 1 << 20];
        let _ = reader.read(&mut buf).unwrap();
        assert_eq!(wait_writable(&out, Duration::from_secs(5)), Ok(true));
    }
}
