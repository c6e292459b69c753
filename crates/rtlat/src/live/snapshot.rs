//! cyclictest's running-status file, `/dev/shm/cyclictest<pid>`: SIGUSR2
//! writes the current status block into it, and rt-tests'
//! `get_cyclictest_snapshot` lists and prints these files.
//!
//! Unlike the C tool, the file starts empty (not 30 NUL bytes), holds
//! exactly the last block written (no NUL padding in front of it) and is
//! removed whenever the value is dropped, not only at a normal exit; if
//! the process is killed, the janitor removes it (`rtlat_core::janitor`,
//! when the run has started one: told before the file is made).

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rtlat_core::janitor::{Kept, NamedKind, announce_named};

/// Where the status files live.
const SHM_DIR: &str = "/dev/shm";

/// The open status file of this process; removed on drop.
#[derive(Debug)]
pub struct StatusSnapshotFile {
    path: PathBuf,
    file: File,
    kept: Option<Kept>,
}

impl StatusSnapshotFile {
    /// Creates `/dev/shm/cyclictest<pid>`, empty, mode 0644, replacing a
    /// file left behind by an earlier process with the same pid. Errors
    /// are the operating system's, as is (errno intact, no path).
    pub fn create(pid: i32) -> io::Result<StatusSnapshotFile> {
        let path = PathBuf::from(format!("{SHM_DIR}/cyclictest{pid}"));
        // Announced before it is made (the name is this process's own):
        // a kill at any moment from here on leaves nothing behind.
        let mut kept = announce_named(NamedKind::File, &path).ok();
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&path)?;
        if let Some(Err(_)) = kept.as_mut().map(Kept::confirm) {
            kept = None;
        }
        // The umask may have taken bits away: set the mode exactly.
        let created = StatusSnapshotFile { path, file, kept };
        created
            .file
            .set_permissions(fs::Permissions::from_mode(0o644))?;
        Ok(created)
    }

    /// Makes the file hold exactly `text`.
    pub fn replace_contents(&mut self, text: &[u8]) -> io::Result<()> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.write_all_at(text, 0))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StatusSnapshotFile {
    fn drop(&mut self) {
        if let Some(kept) = &mut self.kept {
            kept.release();
        }
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pid no live process has (pid_max is at most 2^22), unique per test.
    fn fake_pid(test: i32) -> i32 {
        let own = i32::try_from(std::process::id() % 10_000).unwrap_or(0);
        999_000_000 + own * 100 + test
    }

    #[test]
    fn holds_exactly_the_last_text_and_is_removed_on_drop() {
        let pid = fake_pid(1);
        let mut snapshot = StatusSnapshotFile::create(pid).expect("create");
        let path = snapshot.path().to_path_buf();
        assert_eq!(path, PathBuf::from(format!("/dev/shm/cyclictest{pid}")));
        assert_eq!(fs::read(&path).unwrap(), b"");
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o644);

        let long = b"#---------------------------\nT: 0 ( 1234) a long line\n";
        snapshot.replace_contents(long).unwrap();
        assert_eq!(fs::read(&path).unwrap(), long);
        let short = b"T: 0\n";
        snapshot.replace_contents(short).unwrap();
        assert_eq!(fs::read(&path).unwrap(), short);

        drop(snapshot);
        assert!(!path.exists());
    }

    #[test]
    fn a_stale_file_is_replaced() {
        let pid = fake_pid(2);
        let path = PathBuf::from(format!("/dev/shm/cyclictest{pid}"));
        fs::write(&path, b"\0\0\0stale").unwrap();
        let snapshot = StatusSnapshotFile::create(pid).expect("create over stale");
        assert_eq!(fs::read(&path).unwrap(), b"");
        drop(snapshot);
        assert!(!path.exists());
    }
}
