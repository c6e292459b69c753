//! The janitor: a small process that removes what a run created in a
//! namespace of the machine (SysV semaphore sets, files such as
//! `/dev/shm/cyclictest<pid>` and a `-F` FIFO, tracefs instances such as
//! `instances/rtlat-<pid>`), and puts back the machine
//! settings it changed (the cpuidle `disable` files of
//! `--deepest-idle-state`), when the run dies without doing it itself:
//! after SIGKILL, the OOM killer, a crash.
//!
//! Most of a run's kernel objects cannot outlive it by construction: its
//! helper processes die with it (parent death signal), the fork-mode
//! shared memory is an anonymous memfd, POSIX message queues and the `io`
//! load's files are unlinked as soon as they are open. What has a name
//! anyone can look up must be removed by some process that survives the
//! run: a SysV semaphore set cannot be made to disappear with its creator.
//!
//! How it works:
//! - [`start`] spawns the rtlat binary as `rtlat-janitor`
//!   ([`HelperRole::Janitor`]): not real-time, the stop signals blocked, in
//!   a process group of its own (a `kill -KILL` of the run's group does not
//!   reach it), without a parent death signal, its standard input a pipe
//!   from the run. Only runs that create such objects start one
//!   (svsematest, cyclictest); measured, it costs one process of 2.5 MB
//!   resident (150 kB of its own) and about 2 ms per run: spawned at the
//!   start, waited for at the end.
//! - Each object is announced over the pipe right after it is created
//!   ([`keep_semaphore_set`], [`keep_file`], [`keep_trace_instance`]); the
//!   returned [`Kept`] is
//!   released just BEFORE the owner removes the object, which tells the
//!   janitor to forget it. The owner removes its objects itself, exactly
//!   when it did without a janitor.
//! - A setting ([`keep_setting`]: a sysfs file and its previous value) is
//!   announced BEFORE it is changed, and forgotten right after the owner
//!   writes it back: the janitor writing back a value the file still
//!   holds is harmless, so no kill leaves a setting changed.
//! - When the pipe reaches end of file (the run has exited, however it
//!   ended), the janitor removes whatever is still announced and exits.
//!   At a normal end nothing is left and [`finish`] only waits for it.
//!
//! Why "forget before removing": the kernel hands a removed set's id, and
//! the file system a removed file's name, to whoever asks next. Were the
//! janitor told after the removal, a run killed in between would leave it
//! listing an id that may by then be another program's set. Told before,
//! the worst a kill in between does is leave that one object behind (a
//! window of a few microseconds at the end of the run, as between creating
//! an object and announcing it). Files are announced with their device and
//! inode and removed only if the name still leads to that very file; so
//! are tracefs instance directories.
//!
//! Each record goes to the pipe in one `write` of less than `PIPE_BUF`
//! bytes, so a killed run never leaves half a record.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rtlat_sys::Errno;
use rtlat_sys::ipc::sysv::{self, SemSet};
use rtlat_sys::process::{ChildProcess, Stdio};

use crate::helper::HelperRole;

/// The janitor of this process, once started.
static LINK: Mutex<Option<Link>> = Mutex::new(None);

/// The running janitor and the pipe to it.
#[derive(Debug)]
struct Link {
    child: ChildProcess,
    pipe: File,
    next_token: u32,
}

fn link() -> MutexGuard<'static, Option<Link>> {
    LINK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How long [`finish`] waits for the janitor to exit.
const FINISH_LIMIT: Duration = Duration::from_secs(2);

/// The longest path a record carries (`PATH_MAX`). Records are written
/// by one `write` each, whole: below `PIPE_BUF` bytes (4 KiB) they are
/// atomic; a longer one cut by a kill is the last, and ignored.
const MAX_PATH: usize = 4096;

/// Starts the janitor, `program` being the rtlat binary, unless it runs
/// already. Until it is started, [`keep_semaphore_set`] and [`keep_file`]
/// do nothing (as in `rtlat-core`'s own tests).
pub fn start(program: &Path) -> io::Result<()> {
    let mut link = link();
    if link.is_some() {
        return Ok(());
    }
    let mut child = HelperRole::Janitor
        .spawn(program)
        .stdout(Stdio::Null)
        .own_process_group()
        .spawn()?;
    let pipe = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("the janitor has no input"))?;
    *link = Some(Link {
        child,
        pipe,
        next_token: 0,
    });
    Ok(())
}

/// Whether a janitor runs for this process.
pub(crate) fn is_running() -> bool {
    link().is_some()
}

/// Closes the pipe to the janitor and waits (up to 2 s) for it to exit:
/// at the end of a run, once every object has been removed, so that no
/// process of the run is left behind. It removes whatever is still
/// announced first.
pub fn finish() {
    let Some(Link {
        mut child, pipe, ..
    }) = link().take()
    else {
        return;
    };
    drop(pipe);
    let deadline = Instant::now() + FINISH_LIMIT;
    while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// An object announced to the janitor. [`Kept::release`] (or dropping it)
/// tells the janitor to forget it: do it right before removing the object.
#[derive(Debug)]
#[must_use = "dropping it at once makes the janitor forget the object"]
pub struct Kept(Option<u32>);

impl Kept {
    /// Tells the janitor to forget the object (once).
    pub fn release(&mut self) {
        if let (Some(token), Some(link)) = (self.0.take(), link().as_mut()) {
            write(link, &Record::Forget { token });
        }
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.release();
    }
}

/// Writes `record` to the janitor, if one runs. A janitor that is gone
/// cannot be helped: the owners still remove their objects at a normal end.
fn write(link: &mut Link, record: &Record) {
    let _ = link.pipe.write_all(&record.encode());
}

/// Announces the object `make` describes with a fresh token; the token,
/// if a janitor runs.
fn announce(make: impl FnOnce(u32) -> Record) -> Option<u32> {
    let mut link = link();
    let link = link.as_mut()?;
    let token = link.next_token;
    link.next_token += 1;
    write(link, &make(token));
    Some(token)
}

/// Announces the SysV semaphore set `id`.
pub fn keep_semaphore_set(id: i32) -> Kept {
    Kept(announce(|token| Record::SemaphoreSet { token, id }))
}

/// Announces the file at `path` (made absolute against the current
/// directory), which must exist: its device and inode are recorded, and
/// the janitor removes the name only if it still leads to that file.
pub fn keep_file(path: &Path) -> io::Result<Kept> {
    if !is_running() {
        return Ok(Kept(None));
    }
    let (device, inode, path) = identify(path)?;
    Ok(Kept(announce(|token| Record::File {
        token,
        device,
        inode,
        path,
    })))
}

/// Announces the tracefs instance directory `dir` (absolute, as
/// [`rtlat_sys::trace_instance::TraceInstance::dir`] gives it), which must
/// exist: the janitor turns it off and removes it, if the name still leads
/// to that very directory. Release the returned [`Kept`] right before
/// removing the instance.
pub fn keep_trace_instance(dir: &Path) -> io::Result<Kept> {
    if !is_running() {
        return Ok(Kept(None));
    }
    let (device, inode, path) = identify(dir)?;
    Ok(Kept(announce(|token| Record::TraceInstance {
        token,
        device,
        inode,
        path,
    })))
}

/// The device, inode and absolute path of the file or directory at `path`.
fn identify(path: &Path) -> io::Result<(u64, u64, PathBuf)> {
    let path = std::path::absolute(path)?;
    if path.as_os_str().len() > MAX_PATH {
        return Err(Errno::NAMETOOLONG.into());
    }
    let meta = std::fs::symlink_metadata(&path)?;
    Ok((meta.dev(), meta.ino(), path))
}

/// The longest setting value a record carries.
const MAX_VALUE: usize = 64;

/// Announces a setting this process changed: the file at `path` (a sysfs
/// or procfs setting) held `previous` before. Should the process die
/// before it releases the returned [`Kept`], the janitor writes `previous`
/// back. Announce it BEFORE changing the setting, and release it right
/// AFTER restoring the setting yourself: a second write of the same value
/// is harmless, while a kill in between must not leave the setting
/// changed.
pub fn keep_setting(path: &Path, previous: &[u8]) -> io::Result<Kept> {
    if !is_running() {
        return Ok(Kept(None));
    }
    let path = std::path::absolute(path)?;
    if path.as_os_str().len() > MAX_PATH || previous.len() > MAX_VALUE {
        return Err(Errno::NAMETOOLONG.into());
    }
    Ok(Kept(announce(|token| Record::Setting {
        token,
        path,
        previous: previous.to_vec(),
    })))
}

/// A private SysV semaphore set the janitor removes if this process dies
/// first; dereferences to the set.
#[derive(Debug)]
pub struct KeptSemSet {
    kept: Kept,
    set: SemSet,
}

impl KeptSemSet {
    /// [`SemSet::create_private`], announced.
    pub fn create_private(count: u16) -> Result<KeptSemSet, Errno> {
        let set = SemSet::create_private(count)?;
        Ok(KeptSemSet {
            kept: keep_semaphore_set(set.id()),
            set,
        })
    }
}

impl std::ops::Deref for KeptSemSet {
    type Target = SemSet;

    fn deref(&self) -> &SemSet {
        &self.set
    }
}

impl Drop for KeptSemSet {
    fn drop(&mut self) {
        // Forgotten first; the set is removed when the field drops next.
        self.kept.release();
    }
}

/// One message to the janitor.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Record {
    /// A SysV semaphore set was created.
    SemaphoreSet { token: u32, id: i32 },
    /// A file was created at `path`.
    File {
        token: u32,
        device: u64,
        inode: u64,
        path: PathBuf,
    },
    /// A tracefs instance directory was created at `path`.
    TraceInstance {
        token: u32,
        device: u64,
        inode: u64,
        path: PathBuf,
    },
    /// A setting was changed: `path` held `previous`.
    Setting {
        token: u32,
        path: PathBuf,
        previous: Vec<u8>,
    },
    /// The object is about to be removed by its owner (or the setting
    /// has been restored).
    Forget { token: u32 },
}

impl Record {
    /// `S token id`, `F token dev ino len path`, `T token dev ino len
    /// path`, `W token len path len value`, `X token`; integers
    /// little-endian.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Record::SemaphoreSet { token, id } => {
                out.push(b'S');
                out.extend_from_slice(&token.to_le_bytes());
                out.extend_from_slice(&id.to_le_bytes());
            }
            Record::File {
                token,
                device,
                inode,
                path,
            }
            | Record::TraceInstance {
                token,
                device,
                inode,
                path,
            } => {
                let bytes = path.as_os_str().as_bytes();
                let tag = if matches!(self, Record::File { .. }) {
                    b'F'
                } else {
                    b'T'
                };
                out.push(tag);
                out.extend_from_slice(&token.to_le_bytes());
                out.extend_from_slice(&device.to_le_bytes());
                out.extend_from_slice(&inode.to_le_bytes());
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                out.extend_from_slice(bytes);
            }
            Record::Setting {
                token,
                path,
                previous,
            } => {
                let bytes = path.as_os_str().as_bytes();
                out.push(b'W');
                out.extend_from_slice(&token.to_le_bytes());
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                out.extend_from_slice(bytes);
                out.extend_from_slice(&(previous.len() as u32).to_le_bytes());
                out.extend_from_slice(previous);
            }
            Record::Forget { token } => {
                out.push(b'X');
                out.extend_from_slice(&token.to_le_bytes());
            }
        }
        out
    }

    /// The next record; `None` at the end of the input, or at anything
    /// that is not a whole record (a cut record cannot come from one
    /// `write`, so the input is not a run's).
    fn decode(input: &mut impl Read) -> Option<Record> {
        fn bytes<const N: usize>(input: &mut impl Read) -> Option<[u8; N]> {
            let mut b = [0u8; N];
            input.read_exact(&mut b).ok()?;
            Some(b)
        }
        fn counted(input: &mut impl Read, limit: usize) -> Option<Vec<u8>> {
            let len = u32::from_le_bytes(bytes(input)?) as usize;
            if len > limit {
                return None;
            }
            let mut data = vec![0u8; len];
            input.read_exact(&mut data).ok()?;
            Some(data)
        }
        let u32_of = |b: [u8; 4]| u32::from_le_bytes(b);
        let [tag] = bytes::<1>(input)?;
        let token = u32_of(bytes(input)?);
        Some(match tag {
            b'S' => Record::SemaphoreSet {
                token,
                id: i32::from_le_bytes(bytes(input)?),
            },
            b'F' | b'T' => {
                let device = u64::from_le_bytes(bytes(input)?);
                let inode = u64::from_le_bytes(bytes(input)?);
                let path = PathBuf::from(OsString::from_vec(counted(input, MAX_PATH)?));
                if tag == b'F' {
                    Record::File {
                        token,
                        device,
                        inode,
                        path,
                    }
                } else {
                    Record::TraceInstance {
                        token,
                        device,
                        inode,
                        path,
                    }
                }
            }
            b'W' => Record::Setting {
                token,
                path: PathBuf::from(OsString::from_vec(counted(input, MAX_PATH)?)),
                previous: counted(input, MAX_VALUE)?,
            },
            b'X' => Record::Forget { token },
            _ => return None,
        })
    }

    fn token(&self) -> u32 {
        match self {
            Record::SemaphoreSet { token, .. }
            | Record::File { token, .. }
            | Record::TraceInstance { token, .. }
            | Record::Setting { token, .. }
            | Record::Forget { token } => *token,
        }
    }

    /// Removes the object; `Ok` also when it is gone already.
    fn remove(&self) -> Result<(), String> {
        match self {
            Record::SemaphoreSet { id, .. } => match sysv::remove_set(*id) {
                Ok(()) | Err(Errno::INVAL) => Ok(()),
                Err(e) => Err(format!("cannot remove SysV semaphore set {id}: {e}")),
            },
            Record::File {
                device,
                inode,
                path,
                ..
            } => match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.dev() == *device && meta.ino() == *inode => {
                    std::fs::remove_file(path)
                        .map_err(|e| format!("cannot remove '{}': {e}", path.display()))
                }
                // Gone, or another file by now: not ours to remove.
                _ => Ok(()),
            },
            Record::TraceInstance {
                device,
                inode,
                path,
                ..
            } => match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.dev() == *device && meta.ino() == *inode => {
                    remove_instance_when_released(path).map_err(|e| {
                        format!("cannot remove trace instance '{}': {e}", path.display())
                    })
                }
                // Gone, or another instance by now: not ours to remove.
                _ => Ok(()),
            },
            Record::Setting { path, previous, .. } => std::fs::write(path, previous)
                .map_err(|e| format!("cannot restore '{}': {e}", path.display())),
            Record::Forget { .. } => Ok(()),
        }
    }
}

/// How long the janitor waits for a killed run's trace files to close.
const INSTANCE_RELEASE_WAIT: Duration = Duration::from_secs(3);

/// Removes a trace instance whose files a killed run may still be closing:
/// the run's pipe closes while its exit is still closing its other files,
/// and the kernel refuses to remove an instance with an open file (EBUSY);
/// tried again every 10 ms for at most [`INSTANCE_RELEASE_WAIT`].
fn remove_instance_when_released(path: &Path) -> io::Result<()> {
    let give_up = Instant::now() + INSTANCE_RELEASE_WAIT;
    loop {
        match rtlat_sys::trace_instance::remove_instance_dir(path) {
            Err(e)
                if e.raw_os_error() == Some(Errno::BUSY.raw_os_error())
                    && Instant::now() < give_up =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            done => return done,
        }
    }
}

/// What is still announced once `input` ends, in announcement order.
fn left_over(input: impl Read) -> Vec<Record> {
    let mut input = BufReader::new(input);
    let mut kept: Vec<Record> = Vec::new();
    while let Some(record) = Record::decode(&mut input) {
        match record {
            Record::Forget { token } => kept.retain(|r| r.token() != token),
            announced => kept.push(announced),
        }
    }
    kept
}

/// The janitor process ([`HelperRole::Janitor`]): reads the announcements
/// on standard input until it ends, then removes what is left. Exit status
/// 0, or 1 after one line per object it failed to remove.
pub(crate) fn janitor_main() -> u8 {
    clean_up(io::stdin().lock(), &mut io::stderr())
}

/// Reads the announcements from `input` until it ends, then removes what
/// is left; one line to `errors` per object it failed to remove. Exit
/// status 0, or 1 after such a line.
fn clean_up(input: impl Read, errors: &mut impl Write) -> u8 {
    let mut status = 0;
    for record in left_over(input) {
        if let Err(message) = record.remove() {
            let _ = writeln!(errors, "rtlat-janitor: {message}");
            status = 1;
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(records: &[Record]) -> Vec<u8> {
        records.iter().flat_map(Record::encode).collect()
    }

    #[test]
    fn records_survive_the_pipe() {
        let records = [
            Record::SemaphoreSet { token: 0, id: 12 },
            Record::File {
                token: 1,
                device: 1 << 40,
                inode: 99,
                path: PathBuf::from("/dev/shm/cyclictest1"),
            },
            Record::Setting {
                token: 2,
                path: PathBuf::from("/sys/devices/system/cpu/cpu1/cpuidle/state1/disable"),
                previous: b"0".to_vec(),
            },
            Record::TraceInstance {
                token: 3,
                device: 13,
                inode: 738574,
                path: PathBuf::from("/sys/kernel/tracing/instances/rtlat-4242"),
            },
            Record::Forget { token: 0 },
        ];
        let bytes = stream(&records);
        let mut input = &bytes[..];
        for want in &records {
            assert_eq!(Record::decode(&mut input).as_ref(), Some(want));
        }
        assert_eq!(Record::decode(&mut input), None);
    }

    #[test]
    fn forgotten_objects_are_not_left_over_and_a_cut_record_is_ignored() {
        let mut bytes = stream(&[
            Record::SemaphoreSet { token: 0, id: 5 },
            Record::SemaphoreSet { token: 1, id: 6 },
            Record::Forget { token: 0 },
        ]);
        let cut = Record::SemaphoreSet { token: 2, id: 7 }.encode();
        bytes.extend_from_slice(&cut[..cut.len() - 1]);
        assert_eq!(
            left_over(&bytes[..]),
            [Record::SemaphoreSet { token: 1, id: 6 }]
        );
    }

    #[test]
    fn left_over_objects_are_removed_and_a_replaced_file_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours");
        let replaced = dir.path().join("replaced");
        std::fs::write(&ours, b"").unwrap();
        std::fs::write(&replaced, b"").unwrap();
        let meta = |p: &Path| std::fs::metadata(p).unwrap();
        let file_record = |token, p: &Path| Record::File {
            token,
            device: meta(p).dev(),
            inode: meta(p).ino(),
            path: p.to_path_buf(),
        };
        let records = [file_record(0, &ours), file_record(1, &replaced)];
        // Someone else's file now has the name (made while ours existed,
        // so it is another inode).
        let theirs = dir.path().join("theirs");
        std::fs::write(&theirs, b"theirs").unwrap();
        std::fs::rename(&theirs, &replaced).unwrap();
        let set = SemSet::create_private(1).unwrap();
        let id = set.id();
        std::mem::forget(set);
        let set_record = Record::SemaphoreSet { token: 2, id };
        for r in records.iter().chain([&set_record]) {
            r.remove().unwrap();
        }
        assert!(!ours.exists());
        assert_eq!(std::fs::read(&replaced).unwrap(), b"theirs");
        assert_eq!(sysv::remove_set(id), Err(Errno::INVAL), "removed");
        // A setting is written back.
        let setting = dir.path().join("disable");
        std::fs::write(&setting, b"1").unwrap();
        Record::Setting {
            token: 3,
            path: setting.clone(),
            previous: b"0".to_vec(),
        }
        .remove()
        .unwrap();
        assert_eq!(std::fs::read(&setting).unwrap(), b"0");
        // Removing what is gone already is no error.
        set_record.remove().unwrap();
        records[0].remove().unwrap();
    }

    #[test]
    fn an_announced_trace_instance_is_removed_once_the_pipe_closes() {
        use rtlat_sys::trace_instance::{InstanceSpec, TraceInstance};
        let test = "an_announced_trace_instance_is_removed";
        if rtlat_sys::system::effective_uid() != 0 {
            println!("SKIPPED {test}: not root");
            return;
        }
        let Some(tracing) = rtlat_sys::tracefs::tracing_dir() else {
            println!("SKIPPED {test}: no tracefs is mounted");
            return;
        };
        let mut spec = InstanceSpec::for_run(&[0], 16);
        spec.name = format!("rtlat-{}-janitor-test", std::process::id());
        let instance = TraceInstance::create(&tracing, &spec).unwrap();
        let dir = instance.dir().to_path_buf();
        let meta = std::fs::metadata(&dir).unwrap();
        let kept = Record::TraceInstance {
            token: 0,
            device: meta.dev(),
            inode: meta.ino(),
            path: dir.clone(),
        };
        // As after a SIGKILL: announced, never forgotten nor removed.
        std::mem::forget(instance);
        let (reader, mut writer) = io::pipe().unwrap();
        let janitor = std::thread::spawn(move || {
            let mut errors = Vec::new();
            (clean_up(reader, &mut errors), errors)
        });
        writer.write_all(&kept.encode()).unwrap();
        // The duration is the point: a janitor that removed it before the
        // pipe's end would have done so by then.
        std::thread::sleep(Duration::from_millis(50));
        assert!(dir.exists(), "kept while the pipe is open");
        drop(writer);
        let (status, errors) = janitor.join().unwrap();
        assert_eq!((status, String::from_utf8_lossy(&errors)), (0, "".into()));
        assert!(!dir.exists(), "removed at the end of the pipe");
        // Gone already: no error.
        kept.remove().unwrap();
    }

    #[test]
    fn a_trace_instance_of_another_inode_is_not_removed() {
        let dir = tempfile::tempdir().unwrap();
        let meta = std::fs::metadata(dir.path()).unwrap();
        Record::TraceInstance {
            token: 0,
            device: meta.dev(),
            inode: meta.ino() + 1,
            path: dir.path().to_path_buf(),
        }
        .remove()
        .unwrap();
        assert!(dir.path().exists());
    }
}
