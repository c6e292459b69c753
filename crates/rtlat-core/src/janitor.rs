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
//! The rule: announce, then change. The janitor learns of every object
//! BEFORE it exists, of every setting BEFORE it changes, so that no
//! moment of a run, its start included, leaves something it does not
//! know of:
//! - a file, FIFO or tracefs instance is announced by name
//!   ([`announce_named`]), then, once made, confirmed by device and inode
//!   ([`Kept::confirm`]): from then on the janitor removes the name only
//!   while it leads to that very object. Killed in between, the run leaves
//!   the janitor a name without identity: it removes an object of that
//!   kind found there, if the name is still the run's (the names carry the
//!   run's pid, or are the `-F` path the run replaces anyway) and the
//!   run's pid is not another process's by now (its start time, read when
//!   the janitor started, differs). An object announced and never made is
//!   simply not there;
//! - a SysV set ([`KeptSemSet::create`]) is announced by a random key no
//!   set has, made under it with `IPC_EXCL`, then confirmed by its id;
//! - a process group ([`keep_process_group`]: a workload the run started,
//!   `--load-command`) is announced once its leader exists and before it
//!   runs anything, with the leader's start time; the janitor ends the
//!   group (SIGTERM, then SIGKILL) unless the leader's pid is another
//!   process's by then;
//! - a setting ([`keep_setting`]: a sysfs file and its previous value) is
//!   announced before it is changed, and forgotten right after the owner
//!   writes it back: the janitor writing back a value the file still
//!   holds is harmless.
//!
//! The returned [`Kept`] is released just BEFORE the owner removes the
//! object, which tells the janitor to forget it. The owner removes its
//! objects itself, exactly when it did without a janitor.
//!
//! How it runs:
//! - [`start`] spawns the rtlat binary as `rtlat-janitor`
//!   ([`HelperRole::Janitor`]): not real-time, the stop signals blocked, in
//!   a process group of its own (a `kill -KILL` of the run's group does not
//!   reach it), without a parent death signal, its standard input a pipe
//!   from the run. Only runs that create such objects start one
//!   (svsematest, cyclictest, `--explain`); measured, it costs one process
//!   of 2.5 MB resident (150 kB of its own) and about 2 ms per run:
//!   spawned at the start, waited for at the end.
//! - When the pipe reaches end of file (the run has exited, however it
//!   ended), the janitor removes whatever is still announced and exits.
//!   At a normal end nothing is left and [`finish`] only waits for it.
//! - The run watches its janitor: a thread of the run, not real-time and
//!   nowhere near the measuring loop, blocks in `poll` on the write end of
//!   the pipe, which reports an error the moment the janitor dies (no
//!   reader left). It then starts a new janitor, tells it every record
//!   still alive (the run keeps a copy of each) and prints one warning
//!   line. If no janitor can be started, it stops the run as SIGTERM
//!   would (the owners remove their objects) and [`finish`] makes the
//!   exit status 1.
//!
//! What a kill leaves (the decision, and what docs/processes.md promises):
//! the
//! run alone, or its whole process group: nothing, the janitor cleans up;
//! the janitor alone: nothing, it is replaced; the janitor and then the
//! run, after the replacement: nothing. Both at once (`pkill -9 -f
//! rtlat`, which matches `rtlat-janitor`: it does not hide its name from
//! a user who kills every rtlat process): nobody is left to clean, and the
//! objects may stay; `--explain` removes the trace instances of gone runs
//! before making its own (the costly leftover: a ring buffer recording
//! until reboot), docs/processes.md says how to remove the rest by hand.
//!
//! Why "forget before removing": the kernel hands a removed set's id, and
//! the file system a removed file's name, to whoever asks next. Were the
//! janitor told after the removal, a run killed in between would leave it
//! listing an id that may by then be another program's set. Told before,
//! the worst a kill in between does is leave that one object behind (a
//! window of a few microseconds at the end of the run).
//!
//! Each record goes to the pipe in one `write` of less than `PIPE_BUF`
//! bytes, so a killed run never leaves half a record.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtlat_sys::Errno;
use rtlat_sys::ipc::sysv::{self, SemSet};
use rtlat_sys::process::{ChildProcess, PipeWatch, Stdio};

use crate::helper::HelperRole;

/// The janitor of this process, once started.
static LINK: Mutex<Option<Link>> = Mutex::new(None);

/// Set when the janitor died and no new one could be started: the run
/// was stopped, and [`finish`] says so.
static LOST: AtomicBool = AtomicBool::new(false);

/// The running janitor, the pipe to it and what it has been told.
#[derive(Debug)]
struct Link {
    program: PathBuf,
    child: ChildProcess,
    pipe: File,
    next_token: u32,
    /// Every record of the objects still announced, in the order sent:
    /// what a new janitor is told when the first one dies.
    live: Vec<(u32, Vec<u8>)>,
    /// Where the run's warnings go (one line each).
    notify: fn(&str),
    /// Dropped by [`finish`]: ends the watcher's wait.
    stop_watching: Option<io::PipeWriter>,
    watcher: Option<JoinHandle<()>>,
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

/// The watcher's stack: it formats a line and spawns a process, no more;
/// a run that has locked its memory (`mlockall`) locks all of it, so it
/// is small (the default is 2 MiB).
const WATCHER_STACK: usize = 128 * 1024;

/// Spawns a janitor (`program` being the rtlat binary) and returns it
/// with the write end of its pipe.
fn spawn_janitor(program: &Path) -> io::Result<(ChildProcess, File)> {
    let mut child = HelperRole::Janitor
        .spawn(program)
        .stdout(Stdio::Null)
        .own_process_group()
        .spawn()?;
    let pipe = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("the janitor has no input"))?;
    Ok((child, pipe))
}

/// Starts the janitor, `program` being the rtlat binary, unless it runs
/// already, and the thread that watches it (see the module
/// documentation); `notify` prints one warning line (a restart). Until it
/// is started, the announcements do nothing (as in `rtlat-core`'s own
/// tests).
pub fn start(program: &Path, notify: fn(&str)) -> io::Result<()> {
    let mut guard = link();
    if guard.is_some() {
        return Ok(());
    }
    let (child, pipe) = spawn_janitor(program)?;
    let (stop_reader, stop_writer) = io::pipe()?;
    // Dropped on an error below: the janitor reads the end of its input
    // at once, with nothing to do, and exits.
    let mut new = Link {
        program: program.to_path_buf(),
        child,
        pipe,
        next_token: 0,
        live: Vec::new(),
        notify,
        stop_watching: Some(stop_writer),
        watcher: None,
    };
    new.watcher = Some(
        std::thread::Builder::new()
            .name("rtlat-janitor-watch".to_string())
            .stack_size(WATCHER_STACK)
            .spawn(move || watch(&stop_reader))?,
    );
    *guard = Some(new);
    Ok(())
}

/// The watcher: a thread of the run, not real-time, blocked in `poll`
/// on the pipe to the janitor. The janitor's death closes the pipe's read
/// end, which wakes it at once: it starts a new janitor and tells it
/// everything still announced. If no new janitor can be started, the run
/// is stopped as by SIGTERM (its owners remove their objects) and
/// [`finish`] reports the loss (exit status 1).
fn watch(stop: &io::PipeReader) {
    loop {
        let watched = match link().as_ref().map(|l| l.pipe.try_clone()) {
            Some(Ok(pipe)) => pipe,
            _ => return,
        };
        match rtlat_sys::process::wait_for_reader_gone(watched.as_fd(), stop.as_fd()) {
            Ok(PipeWatch::ReaderGone) => {}
            Ok(PipeWatch::Stopped) | Err(_) => return,
        }
        // Our copy must not keep the dead janitor's pipe open.
        drop(watched);
        let mut guard = link();
        let Some(link) = guard.as_mut() else { return };
        let old = link.child.id();
        let how = match link.child.wait() {
            Ok(status) => describe_end(status),
            Err(e) => e.to_string(),
        };
        match replace_janitor(link) {
            Ok(()) => (link.notify)(&format!(
                "WARN: rtlat's janitor (pid {old}) died ({how}); a new one (pid {}) \
                 now removes what this run leaves if it is killed",
                link.child.id()
            )),
            Err(e) => {
                (link.notify)(&format!(
                    "rtlat's janitor (pid {old}) died ({how}) and cannot be restarted \
                     ({e}): stopping the run"
                ));
                LOST.store(true, Ordering::SeqCst);
                let own = rtlat_sys::system::current_pid();
                let _ = rtlat_sys::signals::signal_process(own, rtlat_sys::signals::SIGTERM);
                return;
            }
        }
    }
}

/// How a janitor ended, in words.
fn describe_end(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => status.to_string(),
    }
}

/// Starts a new janitor in place of the dead one of `link` and tells it
/// every object still announced, in the order they were announced.
fn replace_janitor(link: &mut Link) -> io::Result<()> {
    let (child, mut pipe) = spawn_janitor(&link.program)?;
    for (_, record) in &link.live {
        pipe.write_all(record)?;
    }
    link.child = child;
    link.pipe = pipe;
    Ok(())
}

/// Whether a janitor runs for this process.
pub(crate) fn is_running() -> bool {
    link().is_some()
}

/// The janitor died during the run and no new one could be started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the janitor died and could not be restarted")]
pub struct JanitorLost;

/// Stops the watcher, closes the pipe to the janitor and waits (up to
/// 2 s) for it to exit: at the end of a run, once every object has been
/// removed, so that no process of the run is left behind. It removes
/// whatever is still announced first. `Err` when the janitor died during
/// the run and could not be replaced (the run was stopped for it).
pub fn finish() -> Result<(), JanitorLost> {
    let taken = link().take();
    if let Some(mut link) = taken {
        drop(link.stop_watching.take());
        if let Some(watcher) = link.watcher.take() {
            let _ = watcher.join();
        }
        let Link {
            mut child, pipe, ..
        } = link;
        drop(pipe);
        let deadline = Instant::now() + FINISH_LIMIT;
        while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    if LOST.load(Ordering::SeqCst) {
        Err(JanitorLost)
    } else {
        Ok(())
    }
}

/// An object announced to the janitor. [`Kept::release`] (or dropping it)
/// tells the janitor to forget it: do it right before removing the object.
/// An object announced by name before it exists is confirmed with
/// [`Kept::confirm`] once it does.
#[derive(Debug)]
#[must_use = "dropping it at once makes the janitor forget the object"]
pub struct Kept {
    token: Option<u32>,
    /// The name of an object announced before it exists.
    path: Option<PathBuf>,
}

impl Kept {
    const NONE: Kept = Kept {
        token: None,
        path: None,
    };

    /// Tells the janitor the identity (device and inode) of the object
    /// announced by name, now that it exists: from then on it is removed
    /// only if its name still leads to that very object.
    pub fn confirm(&mut self) -> io::Result<()> {
        let (Some(token), Some(path)) = (self.token, self.path.as_ref()) else {
            return Ok(());
        };
        let meta = std::fs::symlink_metadata(path)?;
        if let Some(link) = link().as_mut() {
            write(
                link,
                &Record::Confirm {
                    token,
                    device: meta.dev(),
                    inode: meta.ino(),
                },
            );
        }
        Ok(())
    }

    /// Tells the janitor to forget the object (once).
    pub fn release(&mut self) {
        if let (Some(token), Some(link)) = (self.token.take(), link().as_mut()) {
            write(link, &Record::Forget { token });
        }
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.release();
    }
}

/// Writes `record` to the janitor and keeps it (or, for a
/// [`Record::Forget`], drops what was kept of its object) for a janitor
/// that replaces this one. A janitor that is gone is replaced by the
/// watcher, which tells the new one what is kept.
fn write(link: &mut Link, record: &Record) {
    let bytes = record.encode();
    match record {
        Record::Forget { token } => link.live.retain(|(t, _)| t != token),
        _ => link.live.push((record.token(), bytes.clone())),
    }
    let _ = link.pipe.write_all(&bytes);
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

/// Announces, BEFORE it is made, the object of `kind` to be made at
/// `path` (made absolute against the current directory). Call
/// [`Kept::confirm`] once it exists. Should the run die in between, the
/// janitor removes an object of that kind found at that name: the name
/// must be the run's own (its pid in it), or one the run replaces anyway
/// (`-F`).
pub fn announce_named(kind: NamedKind, path: &Path) -> io::Result<Kept> {
    if !is_running() {
        return Ok(Kept::NONE);
    }
    let path = std::path::absolute(path)?;
    if path.as_os_str().len() > MAX_PATH {
        return Err(Errno::NAMETOOLONG.into());
    }
    let token = announce(|token| Record::Named {
        token,
        kind,
        path: path.clone(),
    });
    Ok(Kept {
        token,
        path: Some(path),
    })
}

/// The kinds of object announced by name ([`announce_named`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamedKind {
    /// A regular file (`/dev/shm/cyclictest<pid>`).
    File,
    /// A FIFO (`-F`).
    Fifo,
    /// A tracefs instance directory (`instances/rtlat-<pid>`), turned off
    /// and removed.
    TraceInstance,
}

impl NamedKind {
    fn tag(self) -> u8 {
        match self {
            NamedKind::File => b'f',
            NamedKind::Fifo => b'p',
            NamedKind::TraceInstance => b'i',
        }
    }

    fn of_tag(tag: u8) -> Option<NamedKind> {
        [NamedKind::File, NamedKind::Fifo, NamedKind::TraceInstance]
            .into_iter()
            .find(|k| k.tag() == tag)
    }

    /// Whether `meta` is of this kind.
    fn matches(self, meta: &std::fs::Metadata) -> bool {
        let file_type = meta.file_type();
        match self {
            NamedKind::File => file_type.is_file(),
            NamedKind::Fifo => file_type.is_fifo(),
            NamedKind::TraceInstance => file_type.is_dir(),
        }
    }
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
        return Ok(Kept::NONE);
    }
    let path = std::path::absolute(path)?;
    if path.as_os_str().len() > MAX_PATH || previous.len() > MAX_VALUE {
        return Err(Errno::NAMETOOLONG.into());
    }
    Ok(Kept {
        token: announce(|token| Record::Setting {
            token,
            path,
            previous: previous.to_vec(),
        }),
        path: None,
    })
}

/// Announces a process group this process started (a workload): should
/// the process die before it releases the returned [`Kept`], the janitor
/// ends the group, SIGTERM then, after [`GROUP_GRACE`], SIGKILL. `pgid`
/// is the group's leader, alive now: its start time tells the janitor
/// whether the pid is still its. Announce it before the leader runs
/// anything (it waits for a word from us), and release it after the group
/// is ended and BEFORE the leader is reaped: until then its pid, and the
/// group's id, cannot be another's.
pub fn keep_process_group(pgid: i32) -> io::Result<Kept> {
    if !is_running() {
        return Ok(Kept::NONE);
    }
    if pgid < 2 {
        return Err(Errno::INVAL.into());
    }
    let start_time = start_time(pgid).ok_or(Errno::SRCH)?;
    Ok(Kept {
        token: announce(|token| Record::ProcessGroup {
            token,
            pgid,
            start_time,
        }),
        path: None,
    })
}

/// How long the janitor gives a workload's process group to end on
/// SIGTERM before it sends SIGKILL.
pub const GROUP_GRACE: Duration = Duration::from_secs(1);

/// A SysV semaphore set of this process's only, that the janitor removes
/// if this process dies first; dereferences to the set.
#[derive(Debug)]
pub struct KeptSemSet {
    kept: Kept,
    set: SemSet,
}

/// How many fresh keys [`KeptSemSet::create`] tries before it gives up.
const KEY_TRIES: u32 = 64;

impl KeptSemSet {
    /// A new set of `count` semaphores (at 0, this user's only). With a
    /// janitor, it is announced BEFORE it is made: under a random key no
    /// set has (checked first), made with `IPC_EXCL`, then confirmed by
    /// its id; a run killed in between leaves the janitor the key, which
    /// finds the set. Without one, a private set (`IPC_PRIVATE`). Keys
    /// never collide: a key in use is never taken.
    pub fn create(count: u16) -> Result<KeptSemSet, Errno> {
        if !is_running() {
            return Ok(KeptSemSet {
                kept: Kept::NONE,
                set: SemSet::create_private(count)?,
            });
        }
        for _ in 0..KEY_TRIES {
            let key = random_key();
            if sysv::set_of_key(key).is_ok() {
                continue;
            }
            let mut kept = Kept {
                token: announce(|token| Record::SemaphoreKey { token, key }),
                path: None,
            };
            match SemSet::create_exclusive(key, count) {
                Ok(set) => {
                    if let (Some(token), Some(link)) = (kept.token, link().as_mut()) {
                        write(
                            link,
                            &Record::SemaphoreSet {
                                token,
                                id: set.id(),
                            },
                        );
                    }
                    return Ok(KeptSemSet { kept, set });
                }
                // Taken between the check and the creation.
                Err(Errno::EXIST) => kept.release(),
                Err(e) => return Err(e),
            }
        }
        Err(Errno::EXIST)
    }
}

/// A random SysV key, never `IPC_PRIVATE` (0).
fn random_key() -> i32 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::hash::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    let key = hasher.finish() as i32;
    if key == 0 { 1 } else { key }
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
    /// A SysV semaphore set was created (or, for the token of a
    /// [`Record::SemaphoreKey`], the set of that key was: its id).
    SemaphoreSet { token: u32, id: i32 },
    /// A SysV semaphore set is about to be made under `key`.
    SemaphoreKey { token: u32, key: i32 },
    /// An object of `kind` is about to be made at `path`.
    Named {
        token: u32,
        kind: NamedKind,
        path: PathBuf,
    },
    /// The object announced by name under `token` exists: this is its
    /// identity.
    Confirm { token: u32, device: u64, inode: u64 },
    /// A setting is about to be changed: `path` holds `previous`.
    Setting {
        token: u32,
        path: PathBuf,
        previous: Vec<u8>,
    },
    /// A process group runs: its leader `pgid`, started at `start_time`
    /// (clock ticks after boot, `/proc/<pid>/stat` field 22).
    ProcessGroup {
        token: u32,
        pgid: i32,
        start_time: u64,
    },
    /// The object is about to be removed by its owner (or the setting
    /// has been restored).
    Forget { token: u32 },
}

impl Record {
    /// `S token id`, `K token key`, `N token kind len path`, `C token
    /// dev ino`, `W token len path len value`, `G token pgid start`,
    /// `X token`; integers
    /// little-endian.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let counted = |out: &mut Vec<u8>, bytes: &[u8]| {
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(bytes);
        };
        match self {
            Record::SemaphoreSet { token, id } => {
                out.push(b'S');
                out.extend_from_slice(&token.to_le_bytes());
                out.extend_from_slice(&id.to_le_bytes());
            }
            Record::SemaphoreKey { token, key } => {
                out.push(b'K');
                out.extend_from_slice(&token.to_le_bytes());
                out.extend_from_slice(&key.to_le_bytes());
            }
            Record::Named { token, kind, path } => {
                out.push(b'N');
                out.extend_from_slice(&token.to_le_bytes());
                out.push(kind.tag());
                counted(&mut out, path.as_os_str().as_bytes());
            }
            Record::Confirm {
                token,
                device,
                inode,
            } => {
                out.push(b'C');
                out.extend_from_slice(&token.to_le_bytes());
                out.extend_from_slice(&device.to_le_bytes());
                out.extend_from_slice(&inode.to_le_bytes());
            }
            Record::Setting {
                token,
                path,
                previous,
            } => {
                out.push(b'W');
                out.extend_from_slice(&token.to_le_bytes());
                counted(&mut out, path.as_os_str().as_bytes());
                counted(&mut out, previous);
            }
            Record::ProcessGroup {
                token,
                pgid,
                start_time,
            } => {
                out.push(b'G');
                out.extend_from_slice(&token.to_le_bytes());
                out.extend_from_slice(&pgid.to_le_bytes());
                out.extend_from_slice(&start_time.to_le_bytes());
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
        let path_of = |b: Vec<u8>| PathBuf::from(OsString::from_vec(b));
        let [tag] = bytes::<1>(input)?;
        let token = u32::from_le_bytes(bytes(input)?);
        Some(match tag {
            b'S' => Record::SemaphoreSet {
                token,
                id: i32::from_le_bytes(bytes(input)?),
            },
            b'K' => Record::SemaphoreKey {
                token,
                key: i32::from_le_bytes(bytes(input)?),
            },
            b'N' => {
                let [kind] = bytes::<1>(input)?;
                Record::Named {
                    token,
                    kind: NamedKind::of_tag(kind)?,
                    path: path_of(counted(input, MAX_PATH)?),
                }
            }
            b'C' => Record::Confirm {
                token,
                device: u64::from_le_bytes(bytes(input)?),
                inode: u64::from_le_bytes(bytes(input)?),
            },
            b'W' => Record::Setting {
                token,
                path: path_of(counted(input, MAX_PATH)?),
                previous: counted(input, MAX_VALUE)?,
            },
            b'G' => Record::ProcessGroup {
                token,
                pgid: i32::from_le_bytes(bytes(input)?),
                start_time: u64::from_le_bytes(bytes(input)?),
            },
            b'X' => Record::Forget { token },
            _ => return None,
        })
    }

    fn token(&self) -> u32 {
        match self {
            Record::SemaphoreSet { token, .. }
            | Record::SemaphoreKey { token, .. }
            | Record::Named { token, .. }
            | Record::Confirm { token, .. }
            | Record::Setting { token, .. }
            | Record::ProcessGroup { token, .. }
            | Record::Forget { token } => *token,
        }
    }
}

/// An object still announced when the run's pipe ends.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LeftOver {
    record: Record,
    /// For an object announced by name: its device and inode, once
    /// confirmed.
    identity: Option<(u64, u64)>,
}

/// Whether the run whose objects the janitor removes is gone for good
/// from the janitor's point of view: its pid free, or still its own (a
/// zombie). `false` when another process has its pid by now: then a name
/// with the run's pid in it may be that process's.
#[derive(Clone, Copy, Debug)]
struct RunIdentity {
    pid: i32,
    /// The run's start time (`/proc/<pid>/stat`, field 22) when the
    /// janitor started; `None` if it could not be read.
    start_time: Option<u64>,
}

impl RunIdentity {
    fn of(pid: i32) -> RunIdentity {
        RunIdentity {
            pid,
            start_time: start_time(pid),
        }
    }

    /// Whether the run's pid now belongs to another process.
    fn pid_reused(&self) -> bool {
        match (start_time(self.pid), self.start_time) {
            (None, _) => false,
            (Some(now), Some(then)) => now != then,
            // Unknown then, someone now: it may be another process.
            (Some(_), None) => true,
        }
    }
}

/// The start time of process `pid` (clock ticks after boot), if it
/// exists.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the name, which may hold spaces and parentheses: field 3 on.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

impl LeftOver {
    /// Removes the object (or puts the setting back); `Ok` also when it is
    /// gone already, never made, or not ours.
    fn remove(&self, run: &RunIdentity) -> Result<(), String> {
        match &self.record {
            Record::SemaphoreSet { id, .. } => match sysv::remove_set(*id) {
                Ok(()) | Err(Errno::INVAL) => Ok(()),
                Err(e) => Err(format!("cannot remove SysV semaphore set {id}: {e}")),
            },
            // Killed between making it and confirming it, or before making
            // it: the key was new when announced, so a set with it now is
            // the run's.
            Record::SemaphoreKey { key, .. } => match sysv::set_of_key(*key) {
                Ok(id) => match sysv::remove_set(id) {
                    Ok(()) | Err(Errno::INVAL) => Ok(()),
                    Err(e) => Err(format!("cannot remove SysV semaphore set {id}: {e}")),
                },
                Err(_) => Ok(()),
            },
            Record::Named { kind, path, .. } => {
                let Ok(meta) = std::fs::symlink_metadata(path) else {
                    // Never made, or gone already.
                    return Ok(());
                };
                let ours = match self.identity {
                    Some((device, inode)) => meta.dev() == device && meta.ino() == inode,
                    // Killed between making it and confirming it: the name
                    // is the run's while its pid is not another's.
                    None => kind.matches(&meta) && !run.pid_reused(),
                };
                if !ours {
                    return Ok(());
                }
                match kind {
                    NamedKind::TraceInstance => remove_instance_when_released(path).map_err(|e| {
                        format!("cannot remove trace instance '{}': {e}", path.display())
                    }),
                    NamedKind::File | NamedKind::Fifo => std::fs::remove_file(path)
                        .map_err(|e| format!("cannot remove '{}': {e}", path.display())),
                }
            }
            Record::Setting { path, previous, .. } => std::fs::write(path, previous)
                .map_err(|e| format!("cannot restore '{}': {e}", path.display())),
            Record::ProcessGroup {
                pgid, start_time, ..
            } => end_process_group(*pgid, *start_time),
            Record::Confirm { .. } | Record::Forget { .. } => Ok(()),
        }
    }
}

/// Ends the process group `pgid` whose leader started at `start_time`:
/// SIGTERM, then SIGKILL if some of it is left after [`GROUP_GRACE`].
/// Nothing is sent when the pid is another process's by now (its start
/// time differs); a leader that is gone while its group lives on keeps
/// the group's id from being reused, so the group is still the run's.
fn end_process_group(pgid: i32, start_time: u64) -> Result<(), String> {
    use rtlat_sys::signals::{SIGKILL, SIGTERM, signal_process_group};
    if let Some(now) = self::start_time(pgid)
        && now != start_time
    {
        return Ok(());
    }
    let gone = |r: Result<(), Errno>| matches!(r, Err(Errno::SRCH));
    match signal_process_group(pgid, SIGTERM) {
        Err(Errno::SRCH) => return Ok(()),
        Err(e) => return Err(format!("cannot end process group {pgid}: {e}")),
        Ok(()) => {}
    }
    let give_up = Instant::now() + GROUP_GRACE;
    while Instant::now() < give_up {
        if gone(signal_process_group(pgid, 0)) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    match signal_process_group(pgid, SIGKILL) {
        Ok(()) | Err(Errno::SRCH) => Ok(()),
        Err(e) => Err(format!("cannot kill process group {pgid}: {e}")),
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
fn left_over(input: impl Read) -> Vec<LeftOver> {
    let mut input = BufReader::new(input);
    let mut kept: Vec<LeftOver> = Vec::new();
    while let Some(record) = Record::decode(&mut input) {
        match record {
            Record::Forget { token } => kept.retain(|r| r.record.token() != token),
            Record::Confirm {
                token,
                device,
                inode,
            } => {
                if let Some(named) = kept.iter_mut().find(|r| r.record.token() == token) {
                    named.identity = Some((device, inode));
                }
            }
            // The id of a set announced by its key replaces the key.
            Record::SemaphoreSet { token, id }
                if kept.iter().any(|r| r.record.token() == token) =>
            {
                for r in kept.iter_mut().filter(|r| r.record.token() == token) {
                    r.record = Record::SemaphoreSet { token, id };
                }
            }
            announced => kept.push(LeftOver {
                record: announced,
                identity: None,
            }),
        }
    }
    kept
}

/// The janitor process ([`HelperRole::Janitor`]) of the run `parent`:
/// reads the announcements on standard input until it ends, then removes
/// what is left. Exit status 0, or 1 after one line per object it failed
/// to remove.
pub(crate) fn janitor_main(parent: i32) -> u8 {
    let run = RunIdentity::of(parent);
    clean_up(io::stdin().lock(), &run, &mut io::stderr())
}

/// Reads the announcements from `input` until it ends, then removes what
/// is left; one line to `errors` per object it failed to remove. Exit
/// status 0, or 1 after such a line.
fn clean_up(input: impl Read, run: &RunIdentity, errors: &mut impl Write) -> u8 {
    let mut status = 0;
    for object in left_over(input) {
        if let Err(message) = object.remove(run) {
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

    /// This test process as the run: alive, its pid its own.
    fn this_run() -> RunIdentity {
        RunIdentity::of(rtlat_sys::system::current_pid())
    }

    fn left(record: Record, identity: Option<(u64, u64)>) -> LeftOver {
        LeftOver { record, identity }
    }

    #[test]
    fn records_survive_the_pipe() {
        let records = [
            Record::SemaphoreSet { token: 0, id: 12 },
            Record::Named {
                token: 1,
                kind: NamedKind::File,
                path: PathBuf::from("/dev/shm/cyclictest1"),
            },
            Record::Confirm {
                token: 1,
                device: 1 << 40,
                inode: 99,
            },
            Record::Setting {
                token: 2,
                path: PathBuf::from("/sys/devices/system/cpu/cpu1/cpuidle/state1/disable"),
                previous: b"0".to_vec(),
            },
            Record::Named {
                token: 3,
                kind: NamedKind::TraceInstance,
                path: PathBuf::from("/sys/kernel/tracing/instances/rtlat-4242"),
            },
            Record::Named {
                token: 4,
                kind: NamedKind::Fifo,
                path: PathBuf::from("/tmp/status"),
            },
            Record::ProcessGroup {
                token: 3,
                pgid: 4242,
                start_time: 1 << 33,
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
    fn forgotten_objects_are_not_left_over_confirmations_apply_and_a_cut_record_is_ignored() {
        let named = Record::Named {
            token: 2,
            kind: NamedKind::Fifo,
            path: PathBuf::from("/tmp/f"),
        };
        let mut bytes = stream(&[
            Record::SemaphoreSet { token: 0, id: 5 },
            Record::SemaphoreSet { token: 1, id: 6 },
            Record::Forget { token: 0 },
            named.clone(),
            Record::Confirm {
                token: 2,
                device: 3,
                inode: 4,
            },
        ]);
        let cut = Record::SemaphoreSet { token: 9, id: 7 }.encode();
        bytes.extend_from_slice(&cut[..cut.len() - 1]);
        assert_eq!(
            left_over(&bytes[..]),
            [
                left(Record::SemaphoreSet { token: 1, id: 6 }, None),
                left(named, Some((3, 4)))
            ]
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
        let file = |token, p: &Path| {
            left(
                Record::Named {
                    token,
                    kind: NamedKind::File,
                    path: p.to_path_buf(),
                },
                Some((meta(p).dev(), meta(p).ino())),
            )
        };
        let objects = [file(0, &ours), file(1, &replaced)];
        // Someone else's file now has the name (made while ours existed,
        // so it is another inode).
        let theirs = dir.path().join("theirs");
        std::fs::write(&theirs, b"theirs").unwrap();
        std::fs::rename(&theirs, &replaced).unwrap();
        let set = SemSet::create_private(1).unwrap();
        let id = set.id();
        std::mem::forget(set);
        let set_left = left(Record::SemaphoreSet { token: 2, id }, None);
        let run = this_run();
        for r in objects.iter().chain([&set_left]) {
            r.remove(&run).unwrap();
        }
        assert!(!ours.exists());
        assert_eq!(std::fs::read(&replaced).unwrap(), b"theirs");
        assert_eq!(sysv::remove_set(id), Err(Errno::INVAL), "removed");
        // A setting is written back.
        let setting = dir.path().join("disable");
        std::fs::write(&setting, b"1").unwrap();
        left(
            Record::Setting {
                token: 3,
                path: setting.clone(),
                previous: b"0".to_vec(),
            },
            None,
        )
        .remove(&run)
        .unwrap();
        assert_eq!(std::fs::read(&setting).unwrap(), b"0");
        // Removing what is gone already is no error.
        set_left.remove(&run).unwrap();
        objects[0].remove(&run).unwrap();
    }

    #[test]
    fn an_object_announced_but_never_confirmed_is_removed_if_of_its_kind() {
        let dir = tempfile::tempdir().unwrap();
        let named = |kind, name: &str| {
            left(
                Record::Named {
                    token: 0,
                    kind,
                    path: dir.path().join(name),
                },
                None,
            )
        };
        let run = this_run();
        // Never made: nothing to do.
        named(NamedKind::Fifo, "never").remove(&run).unwrap();
        // Made, not yet confirmed when the run died.
        rtlat_sys::fifo::make_fifo(&dir.path().join("fifo")).unwrap();
        named(NamedKind::Fifo, "fifo").remove(&run).unwrap();
        assert!(!dir.path().join("fifo").exists());
        std::fs::write(dir.path().join("file"), b"").unwrap();
        named(NamedKind::File, "file").remove(&run).unwrap();
        assert!(!dir.path().join("file").exists());
        // Another kind of object at the name is not ours.
        std::fs::write(dir.path().join("regular"), b"keep").unwrap();
        named(NamedKind::Fifo, "regular").remove(&run).unwrap();
        named(NamedKind::TraceInstance, "regular")
            .remove(&run)
            .unwrap();
        assert_eq!(std::fs::read(dir.path().join("regular")).unwrap(), b"keep");
        // Nor anything, once the run's pid is another process's.
        let reused = RunIdentity {
            start_time: this_run().start_time.map(|t| t + 1),
            ..this_run()
        };
        assert!(reused.pid_reused() && !run.pid_reused());
        named(NamedKind::File, "regular").remove(&reused).unwrap();
        assert!(dir.path().join("regular").exists());
        // A pid nobody has is not reused.
        let gone = RunIdentity {
            pid: i32::MAX,
            start_time: Some(1),
        };
        assert!(!gone.pid_reused());
    }

    #[test]
    fn a_set_announced_by_key_is_found_by_its_key_or_removed_by_its_id() {
        let key = random_key();
        assert_eq!(sysv::set_of_key(key), Err(Errno::NOENT), "a fresh key");
        let by_key = |token| Record::SemaphoreKey { token, key };
        // Never made: nothing to do.
        left(by_key(0), None).remove(&this_run()).unwrap();
        // Made, the run killed before it told the id.
        let set = SemSet::create_exclusive(key, 2).unwrap();
        let id = set.id();
        std::mem::forget(set);
        assert_eq!(
            SemSet::create_exclusive(key, 2).map(|s| s.id()),
            Err(Errno::EXIST)
        );
        let bytes = stream(&[by_key(0)]);
        let left_now = left_over(&bytes[..]);
        assert_eq!(left_now, [left(by_key(0), None)]);
        left_now[0].remove(&this_run()).unwrap();
        assert_eq!(sysv::remove_set(id), Err(Errno::INVAL), "removed");
        // Confirmed: the id replaces the key.
        let bytes = stream(&[by_key(1), Record::SemaphoreSet { token: 1, id: 77 }]);
        assert_eq!(
            left_over(&bytes[..]),
            [left(Record::SemaphoreSet { token: 1, id: 77 }, None)]
        );
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
        let dir = tracing.join("instances").join(&spec.name);
        let (reader, mut writer) = io::pipe().unwrap();
        let janitor = std::thread::spawn(move || {
            let mut errors = Vec::new();
            (clean_up(reader, &this_run(), &mut errors), errors)
        });
        // Announced before it is made, as a run does; as after a SIGKILL
        // before the confirmation: never confirmed, forgotten nor removed.
        let named = Record::Named {
            token: 0,
            kind: NamedKind::TraceInstance,
            path: dir.clone(),
        };
        writer.write_all(&named.encode()).unwrap();
        let instance = TraceInstance::create(&tracing, &spec).unwrap();
        assert_eq!(instance.dir(), dir);
        std::mem::forget(instance);
        // The duration is the point: a janitor that removed it before the
        // pipe's end would have done so by then.
        std::thread::sleep(Duration::from_millis(50));
        assert!(dir.exists(), "kept while the pipe is open");
        drop(writer);
        let (status, errors) = janitor.join().unwrap();
        assert_eq!((status, String::from_utf8_lossy(&errors)), (0, "".into()));
        assert!(!dir.exists(), "removed at the end of the pipe");
        // Gone already: no error.
        left(named, None).remove(&this_run()).unwrap();
    }

    #[test]
    fn a_trace_instance_of_another_inode_is_not_removed() {
        let dir = tempfile::tempdir().unwrap();
        let meta = std::fs::metadata(dir.path()).unwrap();
        left(
            Record::Named {
                token: 0,
                kind: NamedKind::TraceInstance,
                path: dir.path().to_path_buf(),
            },
            Some((meta.dev(), meta.ino() + 1)),
        )
        .remove(&this_run())
        .unwrap();
        assert!(dir.path().exists());
    }

    /// A process group of `script` (`sh -c`, its own group): the leader
    /// and its pgid.
    fn group_of(script: &str) -> (std::process::Child, i32) {
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new("sh")
            .args(["-c", script])
            .process_group(0)
            .spawn()
            .expect("sh");
        let pgid = child.id() as i32;
        (child, pgid)
    }

    /// The processes of group `pgid` still running, waiting up to 5 s for
    /// none to be left.
    fn members_left(pgid: i32) -> Vec<i32> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let members = rtlat_sys::process::group_members(pgid);
            if members.is_empty() || Instant::now() > deadline {
                return members;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until group `pgid` has `count` running members.
    fn wait_for_members(pgid: i32, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while rtlat_sys::process::group_members(pgid).len() < count {
            assert!(
                Instant::now() < deadline,
                "group {pgid} never had {count} members"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_process_group_left_running_is_ended_children_included() {
        let (mut leader, pgid) = group_of("sleep 30 & sleep 30 & wait");
        wait_for_members(pgid, 3);
        let record = Record::ProcessGroup {
            token: 0,
            pgid,
            start_time: start_time(pgid).unwrap(),
        };
        let mut errors = Vec::new();
        assert_eq!(
            clean_up(&stream(&[record])[..], &this_run(), &mut errors),
            0
        );
        assert!(errors.is_empty(), "{}", String::from_utf8_lossy(&errors));
        let status = leader.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(rtlat_sys::signals::SIGTERM));
        assert_eq!(members_left(pgid), Vec::<i32>::new());
    }

    #[test]
    fn a_group_that_ignores_sigterm_is_killed_after_the_grace() {
        let (mut leader, pgid) = group_of("trap '' TERM; sleep 30 & sleep 30 & wait");
        wait_for_members(pgid, 3);
        let record = Record::ProcessGroup {
            token: 0,
            pgid,
            start_time: start_time(pgid).unwrap(),
        };
        let started = Instant::now();
        assert_eq!(
            clean_up(&stream(&[record])[..], &this_run(), &mut Vec::new()),
            0
        );
        assert!(
            started.elapsed() >= GROUP_GRACE,
            "SIGKILL only after the grace"
        );
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            leader.wait().unwrap().signal(),
            Some(rtlat_sys::signals::SIGKILL)
        );
        assert_eq!(members_left(pgid), Vec::<i32>::new());
    }

    #[test]
    fn a_group_forgotten_or_of_a_reused_pid_is_left_alone() {
        let (mut leader, pgid) = group_of("sleep 30 & wait");
        wait_for_members(pgid, 2);
        let start = start_time(pgid).unwrap();
        // Another process's pid by now (another start time); then a group
        // its owner ended itself (forgotten).
        for records in [
            vec![Record::ProcessGroup {
                token: 0,
                pgid,
                start_time: start + 1,
            }],
            vec![
                Record::ProcessGroup {
                    token: 0,
                    pgid,
                    start_time: start,
                },
                Record::Forget { token: 0 },
            ],
        ] {
            assert_eq!(
                clean_up(&stream(&records)[..], &this_run(), &mut Vec::new()),
                0
            );
            assert_eq!(leader.try_wait().unwrap(), None, "{records:?}");
        }
        rtlat_sys::signals::signal_process_group(pgid, rtlat_sys::signals::SIGKILL).unwrap();
        leader.wait().unwrap();
        assert_eq!(members_left(pgid), Vec::<i32>::new());
    }

    #[test]
    fn no_group_below_2_is_ever_signalled() {
        for pgid in [-1, 0, 1] {
            assert_eq!(
                rtlat_sys::signals::signal_process_group(pgid, 0),
                Err(Errno::INVAL)
            );
        }
    }
}
