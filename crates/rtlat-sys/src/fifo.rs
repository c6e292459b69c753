//! Named pipes for cyclictest's `-F`/`--fifo` status server.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags};

use crate::Errno;

/// Creates a FIFO at `path` with mode 0600 (whatever the umask). An
/// existing FIFO there is replaced; any other kind of file is left alone and
/// the call fails with `EEXIST`.
pub fn make_fifo(path: &Path) -> Result<(), Errno> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_fifo() => {
            std::fs::remove_file(path).map_err(|e| errno_of(&e))?;
        }
        Ok(_) => return Err(Errno::EXIST),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(errno_of(&e)),
    }
    let mode = Mode::from_raw_mode(0o600);
    rustix::fs::mknodat(rustix::fs::CWD, path, FileType::Fifo, mode, 0)?;
    // mknod applies the umask; set the mode exactly.
    rustix::fs::chmod(path, mode)
}

/// Opens the FIFO at `path` for writing without blocking. `Ok(None)` when
/// no process has it open for reading yet (`ENXIO`). Fails with `EEXIST` if
/// `path` is not a FIFO (so a regular file put there is never written to).
pub fn open_fifo_writer_nonblocking(path: &Path) -> Result<Option<File>, Errno> {
    let flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NXIO) => return Ok(None),
        Err(e) => return Err(e),
    };
    let stat = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Fifo {
        return Err(Errno::EXIST);
    }
    Ok(Some(File::from(fd)))
}

fn errno_of(e: &io::Error) -> Errno {
    e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    use std::path::PathBuf;

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let dir = std::env::temp_dir()
                .join(format!("rtlat-sys-{tag}-{}-{nanos}", std::process::id()));
            std::fs::create_dir(&dir).expect("create temp dir");
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn assert_fifo_0600(path: &Path) {
        let meta = std::fs::symlink_metadata(path).expect("stat fifo");
        assert!(meta.file_type().is_fifo());
        assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
    }

    #[test]
    fn creates_and_replaces_a_fifo_but_not_a_regular_file() {
        let dir = TempDir::new("fifo");
        let path = dir.0.join("status");
        make_fifo(&path).expect("create");
        assert_fifo_0600(&path);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        make_fifo(&path).expect("replace");
        assert_fifo_0600(&path);

        let file = dir.0.join("regular");
        std::fs::write(&file, b"keep me").unwrap();
        assert_eq!(make_fifo(&file), Err(Errno::EXIST));
        assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
    }

    #[test]
    fn writer_opens_only_with_a_reader() {
        let dir = TempDir::new("writer");
        let path = dir.0.join("status");
        make_fifo(&path).expect("create");
        assert!(matches!(open_fifo_writer_nonblocking(&path), Ok(None)));

        // A non-blocking reader lets the writer open.
        let mut reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .expect("open reader");
        let mut writer = open_fifo_writer_nonblocking(&path)
            .expect("open writer")
            .expect("a reader exists");
        writer.write_all(b"hello").unwrap();
        drop(writer);
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        assert_eq!(text, "hello");

        let file = dir.0.join("regular");
        std::fs::write(&file, b"keep me").unwrap();
        assert_eq!(
            open_fifo_writer_nonblocking(&file).map(|f| f.is_some()),
            Err(Errno::EXIST)
        );
        assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
    }
}
