//! Output files: checked before a run, written whole or not at all.
//!
//! Every file a tool writes goes through this module (`--json`,
//! `--histfile`, `--hgrm`, `--junit`, `latency -g`, `plot -o`, and the
//! streamed `--stats-file`), so that a run's result is never lost to a file
//! found unwritable at the end, nor left half written:
//!
//! - [`check`], before the first sample, refuses a name longer than its file
//!   system takes, a full file system, and a directory or file this process
//!   cannot write: a probe file is created in the directory (and removed),
//!   which is what finds a read-only file system, a missing permission or a
//!   full disk for sure;
//! - [`write_whole`], at the end, writes a regular file to a temporary file
//!   in the same directory (a short name, so never longer than the target's
//!   own), flushes and fsyncs it, and renames it over the target: a full
//!   disk or an error leaves the old file (or none) and removes the
//!   temporary one, and a symbolic link at the target is replaced, not
//!   followed. The new file gets the usual permissions, 0666 less the umask.
//!
//! What is not a regular file is written in place ([`Way::InPlace`]):
//! character devices, FIFOs and sockets, and anything under `/dev` (but
//! `/dev/shm`), `/proc` or `/sys`, where rtlat never creates or renames a
//! file: `--json=/dev/stdout` writes through whatever standard output is,
//! even a regular file. Such a file can block, and nothing may hold a run
//! for good: it is opened without blocking (a FIFO that nobody has open
//! for reading is waited for [`READER_WAIT`] at most, then given up), and
//! written through [`Bounded`], which gives up once the reader has taken
//! nothing for [`STALL_LIMIT`]. A pipe that has its reader, such as
//! `--json=>(jq .)` (`/dev/fd/63`), is written as before.
//!
//! Files that are replaced whole at every update (the monitor's textfile
//! and checkpoint) must be regular files: [`check_replaceable`] refuses
//! anything else before the run. A run killed while it writes leaves its
//! temporary file; [`remove_stale_temporaries`] removes those of earlier
//! runs.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime};

use rtlat_sys::Errno;
use rtlat_sys::fs::Room;

/// How an output reaches its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// Opened and written where it is: a device, FIFO or socket, or a path
    /// in a system tree.
    InPlace,
    /// A temporary file beside it, renamed over it once complete.
    Replace,
}

/// Trees where files are written in place only, never created or renamed
/// (devtmpfs, procfs, sysfs); `/dev/shm` is an ordinary tmpfs.
const SYSTEM_TREES: [&str; 3] = ["/dev", "/proc", "/sys"];
const ORDINARY_UNDER_DEV: &str = "/dev/shm";

/// The directory `path` is (or would be) in: its parent, `.` for a bare
/// name.
pub fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Whether `dir` (symbolic links resolved) lies in a system tree.
fn in_system_tree(dir: &Path) -> bool {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    !dir.starts_with(ORDINARY_UNDER_DEV) && SYSTEM_TREES.iter().any(|t| dir.starts_with(t))
}

/// How `path` is written, from what is there now.
pub fn way(path: &Path) -> Way {
    if in_system_tree(directory_of(path)) {
        return Way::InPlace;
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            let kind = meta.file_type();
            if kind.is_file() || kind.is_symlink() || kind.is_dir() {
                Way::Replace
            } else {
                Way::InPlace
            }
        }
        Err(_) => Way::Replace,
    }
}

/// Why an output path was refused before the run; the text completes
/// `cannot write 'PATH': ...`.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The file name is longer than the file system takes.
    #[error("its name is {length} bytes long; this file system takes at most {max}")]
    NameTooLong {
        /// The name's length in bytes.
        length: usize,
        /// NAME_MAX of the directory's file system.
        max: u64,
    },
    /// Not one block free.
    #[error("the file system is full (no space left on device)")]
    Full,
    /// Missing in a tree where rtlat creates nothing.
    #[error("it does not exist, and rtlat creates no file under /dev, /proc or /sys")]
    NotInSystemTree,
    /// Not a regular file where one is replaced whole at every update.
    #[error(
        "it is {0}, and this file is replaced whole by renaming a new one over it: give a \
         regular file or a new name"
    )]
    NotRegular(&'static str),
    /// What the system said when the file, or a probe file beside it, was
    /// tried.
    #[error("{}", rtlat_sys::strerror(.0.raw_os_error()))]
    System(Errno),
}

/// Whether `path` can be written when the run ends, found out now (see the
/// module documentation). Its directory must exist; a directory at `path`
/// is the caller's to refuse.
pub fn check(path: &Path) -> Result<(), Refusal> {
    let dir = directory_of(path);
    let room = rtlat_sys::fs::room(dir).ok();
    name_fits(path, room)?;
    match way(path) {
        Way::InPlace => rtlat_sys::fs::may_write(path).map_err(|e| match e {
            Errno::NOENT if in_system_tree(dir) => Refusal::NotInSystemTree,
            e => Refusal::System(e),
        }),
        Way::Replace => {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
                // An existing file that this process may not write is not
                // replaced behind its owner's back.
                rtlat_sys::fs::may_write(path).map_err(Refusal::System)?;
            }
            if room.is_some_and(|r| r.is_full()) {
                return Err(Refusal::Full);
            }
            probe(dir).map_err(|e| Refusal::System(errno_of(&e)))
        }
    }
}

/// Whether the file system of `path`'s directory takes its name (NAME_MAX).
pub fn check_name(path: &Path) -> Result<(), Refusal> {
    name_fits(path, rtlat_sys::fs::room(directory_of(path)).ok())
}

/// [`check`] for a file replaced whole at every update (a checkpoint, a
/// node_exporter textfile): it must be a regular file, a symbolic link
/// (replaced, not followed) or a new name, outside `/dev`, `/proc` and
/// `/sys`. A FIFO or a device there is refused rather than written in
/// place, where a rename cannot reach and a writer could block.
pub fn check_replaceable(path: &Path) -> Result<(), Refusal> {
    if way(path) == Way::InPlace {
        let what = match std::fs::symlink_metadata(path).map(|m| m.file_type()) {
            Ok(kind) if kind.is_fifo() => "a FIFO",
            Ok(kind) if kind.is_char_device() => "a character device",
            Ok(kind) if kind.is_block_device() => "a block device",
            Ok(kind) if kind.is_socket() => "a socket",
            _ => "a file under /dev, /proc or /sys",
        };
        return Err(Refusal::NotRegular(what));
    }
    check(path)
}

/// Whether `path`'s name fits the NAME_MAX of `room` (its directory's file
/// system, when known).
fn name_fits(path: &Path, room: Option<Room>) -> Result<(), Refusal> {
    match (path.file_name(), room) {
        (Some(name), Some(room)) if name.len() as u64 > room.name_max => {
            Err(Refusal::NameTooLong {
                length: name.len(),
                max: room.name_max,
            })
        }
        _ => Ok(()),
    }
}

/// Creates a file in `dir`, writes a byte to it and removes it.
pub fn probe(dir: &Path) -> io::Result<()> {
    let mut temp = TempFile::create_in(dir)?;
    temp.file.write_all(b"\n")?;
    Ok(())
}

/// Writes `path` whole or not at all with `write` (see the module
/// documentation).
pub fn write_whole(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    match way(path) {
        Way::InPlace => {
            let mut w = BufWriter::new(open_in_place(path)?);
            write(&mut w)?;
            w.flush()
        }
        Way::Replace => replace_whole(path, write),
    }
}

/// Writes `path` whole or not at all with `write` through a temporary
/// file renamed over it, whatever is there now: the files rewritten at
/// every update ([`check_replaceable`] before the run), so that a FIFO
/// put in their place during the run is replaced, never waited on.
pub fn replace_whole(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let temp = TempFile::create_in(directory_of(path))?;
    let mut w = BufWriter::new(&temp.file);
    write(&mut w)?;
    w.flush()?;
    drop(w);
    temp.file.sync_all()?;
    temp.rename_to(path)
}

/// Creates `path` empty for a stream of lines written while the run goes
/// on (`--stats-file`): a regular file is made as a temporary file renamed
/// into place at once (so a symbolic link there is replaced, not followed);
/// a device or FIFO is opened where it is, without blocking, and written
/// with bounded waits (see the module documentation).
pub fn create_stream(path: &Path) -> io::Result<Bounded> {
    match way(path) {
        Way::InPlace => open_in_place(path),
        Way::Replace => {
            let temp = TempFile::create_in(directory_of(path))?;
            let file = temp.file.try_clone()?;
            temp.rename_to(path)?;
            Ok(Bounded { file })
        }
    }
}

/// How long a FIFO nobody has open for reading is waited for, at the end
/// of a run (or, for a stream, at its start): a reader started beside the
/// run (`rtlat ... --json f & cat f`) has that long to open it.
pub const READER_WAIT: Duration = Duration::from_secs(5);

/// How long a reader may take nothing before a write gives up.
pub const STALL_LIMIT: Duration = Duration::from_secs(5);

/// How often a missing reader is looked for again.
const READER_POLL: Duration = Duration::from_millis(20);

/// Opens a file written in place without blocking: a FIFO or pipe with no
/// reader is tried again for [`READER_WAIT`], then refused.
fn open_in_place(path: &Path) -> io::Result<Bounded> {
    let deadline = Instant::now() + READER_WAIT;
    loop {
        match rtlat_sys::nonblocking::open_for_writing(path) {
            Ok(file) => return Ok(Bounded { file }),
            Err(Errno::NXIO) if Instant::now() < deadline => std::thread::sleep(READER_POLL),
            Err(Errno::NXIO) => {
                return Err(io::Error::other(format!(
                    "nobody opened it for reading within {} s",
                    READER_WAIT.as_secs()
                )));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// A file whose writes never wait for good: a write that would block waits
/// for room at most [`STALL_LIMIT`], then fails. A regular file never
/// makes it wait.
#[derive(Debug)]
pub struct Bounded {
    file: File,
}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            match self.file.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !rtlat_sys::nonblocking::wait_writable(&self.file, STALL_LIMIT)? {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("its reader took nothing for {} s", STALL_LIMIT.as_secs()),
                        ));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                done => return done,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Whether `name` is one of this module's temporary files:
/// `.rtlat-` and eight lowercase hex digits, as the files it makes are named.
pub fn is_temp_name(name: &str) -> bool {
    name.strip_prefix(".rtlat-").is_some_and(|hex| {
        hex.len() == 8
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Removes from `dir` the temporary files that a run killed while it wrote
/// left behind: regular files of [`is_temp_name`]'s pattern last modified
/// before `before` (the start of this run: a file being written by a
/// concurrent run is newer). Nothing else is touched. Returns how many
/// were removed.
pub fn remove_stale_temporaries(dir: &Path, before: SystemTime) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        if !entry.file_name().to_str().is_some_and(is_temp_name) {
            continue;
        }
        let stale = entry
            .metadata()
            .is_ok_and(|m| m.file_type().is_file() && m.modified().is_ok_and(|at| at < before));
        if stale && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The errno of an I/O error (EIO if it has none).
fn errno_of(e: &io::Error) -> Errno {
    e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error)
}

/// A new file `.rtlat-XXXXXXXX` in a directory, removed when dropped unless
/// renamed into place.
struct TempFile {
    path: PathBuf,
    file: File,
    /// Renamed: nothing to remove.
    kept: bool,
}

impl TempFile {
    /// Creates a file of a name not taken yet in `dir`, mode 0666 less the
    /// umask.
    fn create_in(dir: &Path) -> io::Result<TempFile> {
        static MADE: AtomicU32 = AtomicU32::new(0);
        let mut tries = 0;
        loop {
            let made = MADE.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(temp_name(std::process::id(), made));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o666)
                .open(&path)
            {
                Ok(file) => {
                    return Ok(TempFile {
                        path,
                        file,
                        kept: false,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 100 => tries += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Renames the file to `target` (replacing what is there, a symbolic
    /// link itself rather than what it points to).
    fn rename_to(mut self, target: &Path) -> io::Result<()> {
        std::fs::rename(&self.path, target)?;
        self.kept = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `.rtlat-` and eight hex digits mixing the process id, a count of the
/// files this process made and the clock: 15 bytes, within any NAME_MAX.
fn temp_name(pid: u32, made: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mixed = pid.rotate_left(16) ^ made.wrapping_mul(0x9e37_79b9) ^ nanos;
    format!(".rtlat-{mixed:08x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn umask() -> u32 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
        u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
    }

    #[test]
    fn replaces_a_file_whole_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.json");
        std::fs::write(&out, "old").unwrap();
        write_whole(&out, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert_eq!(names(dir.path()), ["run.json"]);
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask());
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_removes_the_temporary_one() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.json");
        std::fs::write(&out, "old").unwrap();
        let err = write_whole(&out, |w| {
            w.write_all(&[b'x'; 100_000])?;
            Err(io::Error::from_raw_os_error(28))
        })
        .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28));
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["run.json"]);

        // No old file: none afterwards either.
        let fresh = dir.path().join("fresh.json");
        assert!(write_whole(&fresh, |_| Err(io::Error::other("stop"))).is_err());
        assert_eq!(names(dir.path()), ["run.json"]);

        // Renaming onto a directory fails: the temporary file goes too.
        let taken = dir.path().join("taken");
        std::fs::create_dir(&taken).unwrap();
        std::fs::write(taken.join("inside"), "x").unwrap();
        assert!(write_whole(&taken, |w| w.write_all(b"x")).is_err());
        assert_eq!(names(dir.path()), ["run.json", "taken"]);
    }

    #[test]
    fn a_symbolic_link_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("run.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_whole(&link, |w| w.write_all(b"{}")).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(std::fs::read(&link).unwrap(), b"{}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");

        // The same for a stream, made at the start.
        let stream_link = dir.path().join("s.jsonl");
        std::os::unix::fs::symlink(&target, &stream_link).unwrap();
        let mut stream = create_stream(&stream_link).unwrap();
        stream.write_all(b"line\n").unwrap();
        assert!(std::fs::symlink_metadata(&stream_link).unwrap().is_file());
        assert_eq!(std::fs::read(&stream_link).unwrap(), b"line\n");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    }

    #[test]
    fn devices_and_fifos_are_written_in_place() {
        assert_eq!(way(Path::new("/dev/null")), Way::InPlace);
        assert_eq!(way(Path::new("/dev/stdout")), Way::InPlace);
        assert_eq!(way(Path::new("/proc/self/fd/1")), Way::InPlace);
        assert_eq!(way(Path::new("/dev/shm/run.json")), Way::Replace);
        write_whole(Path::new("/dev/null"), |w| w.write_all(b"gone")).unwrap();

        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rtlat_sys::fifo::make_fifo(&fifo).unwrap();
        assert_eq!(way(&fifo), Way::InPlace);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_whole(&fifo, |w| w.write_all(b"through")).unwrap();
        assert_eq!(reader.join().unwrap(), b"through");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert_eq!(names(dir.path()), ["pipe"]);
    }

    #[test]
    fn check_refuses_long_names_and_missing_system_files() {
        let dir = tempfile::tempdir().unwrap();
        let long = dir.path().join("x".repeat(300));
        assert!(
            matches!(check(&long), Err(Refusal::NameTooLong { length: 300, .. })),
            "{:?}",
            check(&long)
        );
        let at_max = dir.path().join("y".repeat(255));
        check(&at_max).unwrap();
        assert!(matches!(
            check(Path::new("/dev/no-such-device-here")),
            Err(Refusal::NotInSystemTree)
        ));
        check(Path::new("/dev/null")).unwrap();
        check(&dir.path().join("run.json")).unwrap();
        // The probe leaves nothing behind.
        assert!(names(dir.path()).is_empty());
        assert_eq!(
            Refusal::System(Errno::ROFS).to_string(),
            "Read-only file system"
        );
    }

    #[test]
    fn a_fifo_nobody_reads_is_given_up_not_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rtlat_sys::fifo::make_fifo(&fifo).unwrap();
        let began = Instant::now();
        let err = write_whole(&fifo, |w| w.write_all(b"lost")).unwrap_err();
        let took = began.elapsed();
        assert!(
            err.to_string().contains("nobody opened it for reading"),
            "{err}"
        );
        assert!(took >= READER_WAIT && took < READER_WAIT * 2, "{took:?}");
        assert!(create_stream(&fifo).is_err());
    }

    #[test]
    fn a_reader_that_stops_reading_cannot_hold_the_writer() {
        let (reader, writer) = io::pipe().unwrap();
        let path = PathBuf::from(format!("/proc/self/fd/{}", {
            use std::os::fd::AsRawFd;
            writer.as_raw_fd()
        }));
        assert_eq!(way(&path), Way::InPlace);
        let began = Instant::now();
        // Far more than a pipe holds, and nobody reads.
        let err = write_whole(&path, |w| w.write_all(&vec![b'x'; 4 << 20])).unwrap_err();
        let took = began.elapsed();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err}");
        assert!(err.to_string().contains("took nothing"), "{err}");
        assert!(took >= STALL_LIMIT && took < STALL_LIMIT * 2, "{took:?}");
        drop(reader);
    }

    #[test]
    fn only_regular_files_are_replaceable() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rtlat_sys::fifo::make_fifo(&fifo).unwrap();
        for (path, what) in [
            (fifo.as_path(), "a FIFO"),
            (Path::new("/dev/null"), "a character device"),
            (
                Path::new("/proc/self/mem"),
                "a file under /dev, /proc or /sys",
            ),
        ] {
            let refusal = check_replaceable(path).unwrap_err().to_string();
            assert!(refusal.starts_with(&format!("it is {what}, ")), "{refusal}");
        }
        check_replaceable(&dir.path().join("new.prom")).unwrap();
        let file = dir.path().join("old.prom");
        std::fs::write(&file, "x").unwrap();
        check_replaceable(&file).unwrap();
        // A FIFO put there later is replaced, not waited on.
        replace_whole(&fifo, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&fifo).unwrap(), b"new");
    }

    #[test]
    fn stale_temporaries_go_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let start = SystemTime::now();
        let aged = |name: &str, when: SystemTime| {
            let path = dir.path().join(name);
            let file = File::create(&path).unwrap();
            file.set_modified(when).unwrap();
        };
        let hour = Duration::from_secs(3600);
        aged(".rtlat-0badc0de", start - hour);
        aged(".rtlat-12345678", start - hour);
        // A concurrent run's, written now.
        aged(".rtlat-9abcdef0", start + hour);
        // Not ours.
        aged(".rtlat-XYZ", start - hour);
        aged(".rtlat-0BADC0DE", start - hour);
        aged("state.json", start - hour);
        std::fs::create_dir(dir.path().join(".rtlat-aaaaaaaa")).unwrap();
        assert_eq!(remove_stale_temporaries(dir.path(), start), 2);
        assert_eq!(
            names(dir.path()),
            [
                ".rtlat-0BADC0DE",
                ".rtlat-9abcdef0",
                ".rtlat-XYZ",
                ".rtlat-aaaaaaaa",
                "state.json"
            ]
        );
    }

    #[test]
    fn temporary_names_are_short_and_distinct() {
        let a = temp_name(123, 0);
        let b = temp_name(123, 1);
        assert_ne!(a, b);
        assert!(is_temp_name(&a), "{a}");
        assert_eq!(a.len(), 15);
    }
}
