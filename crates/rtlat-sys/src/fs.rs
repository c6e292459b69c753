//! File-system facts that rtlat checks an output file against before a
//! run: how long a name the file system takes and whether it has any room
//! left (`statvfs`), whether a file may be written (`access`), and whether
//! a path names the file an open descriptor is (for `--json=/dev/stdout`).

use std::os::fd::AsFd;
use std::path::Path;

use rustix::fs::Access;

use crate::Errno;

/// What `statvfs` says about the file system holding a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room {
    /// The longest file name it takes, in bytes (`f_namemax`).
    pub name_max: u64,
    /// Its size in blocks (`f_blocks`); 0 for file systems without a size
    /// (procfs, some FUSE ones).
    pub blocks: u64,
    /// Blocks free for root (`f_bfree`).
    pub free_blocks: u64,
}

impl Room {
    /// Whether the file system has a size and not one block is free, for
    /// anyone: nothing can be written to it.
    pub fn is_full(&self) -> bool {
        self.blocks > 0 && self.free_blocks == 0
    }
}

/// `statvfs(dir)`.
pub fn room(dir: &Path) -> Result<Room, Errno> {
    let stat = rustix::fs::statvfs(dir)?;
    Ok(Room {
        name_max: stat.f_namemax,
        blocks: stat.f_blocks,
        free_blocks: stat.f_bfree,
    })
}

/// Whether this process may write `path` (`access(W_OK)`, symbolic links
/// followed): `EACCES`, `EROFS`, `ENOENT`, ... when not.
pub fn may_write(path: &Path) -> Result<(), Errno> {
    rustix::fs::access(path, Access::WRITE_OK)
}

/// Whether `path` (symbolic links followed) is the file open as `fd`: the
/// same device and inode. False when either cannot be looked at.
pub fn is_open_as(path: &Path, fd: impl AsFd) -> bool {
    match (rustix::fs::stat(path), rustix::fs::fstat(fd)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_of_a_directory_and_of_nothing() {
        let room = room(Path::new("/")).expect("statvfs /");
        assert!(room.name_max >= 14, "{room:?}");
        assert_eq!(
            super::room(Path::new("/no/such/dir/here")),
            Err(Errno::NOENT)
        );
        assert!(
            !Room {
                name_max: 255,
                blocks: 0,
                free_blocks: 0
            }
            .is_full()
        );
        assert!(
            Room {
                name_max: 255,
                blocks: 16,
                free_blocks: 0
            }
            .is_full()
        );
    }

    #[test]
    fn a_path_is_open_as_the_descriptor_of_its_file() {
        let path = std::env::temp_dir().join(format!("rtlat-sys-fs-{}", std::process::id()));
        let file = std::fs::File::create(&path).expect("create");
        assert!(is_open_as(&path, &file));
        assert!(!is_open_as(Path::new("/"), &file));
        assert!(!is_open_as(Path::new("/no/such/file"), &file));
        assert_eq!(may_write(&path), Ok(()));
        assert_eq!(may_write(Path::new("/no/such/file")), Err(Errno::NOENT));
        std::fs::remove_file(&path).unwrap();
    }
}
