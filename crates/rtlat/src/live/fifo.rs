//! cyclictest's `-F`/`--fifo`: a named pipe that serves the status lines.
//!
//! A non-real-time thread keeps trying to open the pipe for writing without
//! blocking. Whenever a reader has it open, the thread writes one `T:` line
//! per measuring thread, closes it, and starts over a moment later: a
//! reader that reopens the pipe gets a fresh snapshot each time.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use rtlat_core::Resolution;
use rtlat_core::Shared;
use rtlat_core::ThreadPlan;
use rtlat_core::janitor::{Kept, NamedKind, announce_named};
use rtlat_sys::fifo::{make_fifo, open_fifo_writer_nonblocking};

use crate::live::text::write_status_lines;

/// How long the server waits before retrying when nobody reads; also the
/// longest it takes to notice a stop request.
const NO_READER_RETRY: Duration = Duration::from_millis(100);
/// Pause between two snapshots served to readers.
const BETWEEN_SNAPSHOTS: Duration = Duration::from_micros(250);

/// The running FIFO server. Stopping it (or dropping it) ends the thread
/// and removes the FIFO; if the process is killed, the janitor removes it
/// (`rtlat_core::janitor`, when the run has started one).
#[derive(Debug)]
pub struct FifoServer {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    kept: Option<Kept>,
}

impl FifoServer {
    /// Creates the FIFO at `path` (replacing an old FIFO, refusing to
    /// replace anything else: `AlreadyExists`) and starts the thread that
    /// serves it. Errors are the operating system's, as is (errno intact,
    /// no path).
    pub fn start(
        path: PathBuf,
        shared: Arc<Shared>,
        plans: Vec<ThreadPlan>,
        resolution: Resolution,
    ) -> io::Result<FifoServer> {
        // Announced before it is made: the janitor removes a FIFO it finds
        // at that name if the run dies before confirming it (the run would
        // have replaced it anyway).
        let mut kept = announce_named(NamedKind::Fifo, &path).ok();
        make_fifo(&path).map_err(io::Error::from)?;
        if let Some(Err(_)) = kept.as_mut().map(Kept::confirm) {
            kept = None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let served = Served {
            path: path.clone(),
            stop: Arc::clone(&stop),
            shared,
            plans,
            resolution,
        };
        let spawned = std::thread::Builder::new()
            .name("rtlat-fifo".to_string())
            .spawn(move || served.serve());
        match spawned {
            Ok(thread) => Ok(FifoServer {
                path,
                stop,
                thread: Some(thread),
                kept,
            }),
            Err(e) => {
                drop(kept);
                remove_fifo(&path);
                Err(e)
            }
        }
    }

    /// Stops the thread, waits for it (at most about 100 ms) and removes
    /// the FIFO.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            // A panic in the server thread only loses the FIFO output.
            let _ = thread.join();
            if let Some(kept) = &mut self.kept {
                kept.release();
            }
            remove_fifo(&self.path);
        }
    }
}

impl Drop for FifoServer {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// Whether [`FifoServer::start`] can make its FIFO at `path`, found out
/// before the run without making it there (a reader must never open a FIFO
/// that goes away again): nothing but a FIFO is in the way
/// (`AlreadyExists`), and a file can be made in its directory (a probe
/// file, made and removed: `EROFS`, `EACCES`, ...).
pub fn check(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_fifo() => {
            return Err(io::ErrorKind::AlreadyExists.into());
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    rtlat_args::output_file::probe(rtlat_args::output_file::directory_of(path))
}

/// Removes the FIFO at `path`, but never a file of another kind that
/// someone put there since.
fn remove_fifo(path: &Path) {
    use std::os::unix::fs::FileTypeExt;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
        let _ = std::fs::remove_file(path);
    }
}

/// What the server thread owns.
struct Served {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    shared: Arc<Shared>,
    plans: Vec<ThreadPlan>,
    resolution: Resolution,
}

impl Served {
    fn serve(self) {
        let mut text = Vec::new();
        while !self.stop.load(Ordering::Acquire) {
            match open_fifo_writer_nonblocking(&self.path) {
                Ok(Some(mut fifo)) => {
                    text.clear();
                    // Writing into a Vec cannot fail.
                    let _ =
                        write_status_lines(&mut text, &self.shared, &self.plans, self.resolution);
                    // The reader may be gone (EPIPE) or slow (EAGAIN): this
                    // snapshot is lost, the next one is served as usual.
                    let _ = fifo.write_all(&text);
                    drop(fifo);
                    std::thread::sleep(BETWEEN_SNAPSHOTS);
                }
                // No reader yet, or the FIFO is gone or replaced: retry
                // later. `stop` unparks the thread to end the wait early.
                Ok(None) | Err(_) => std::thread::park_timeout(NO_READER_RETRY),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    use std::sync::mpsc;
    use std::time::Instant;

    use rtlat_core::Engine;
    use rtlat_core::Nanos;
    use rtlat_core::{CyclicConfig, RunConfig, SchedPolicy, TimeSourceKind};

    fn two_thread_config() -> CyclicConfig {
        let plan = |index: usize| ThreadPlan {
            index,
            interval: Nanos::from_micros(1000 + 500 * i64::try_from(index).unwrap()),
            policy: SchedPolicy::Other,
            priority: 0,
            cpu: None,
        };
        CyclicConfig {
            run: RunConfig {
                resolution: Resolution::Micros,
                loops: Some(10),
                duration: None,
                source: TimeSourceKind::Synthetic { seed: 1 },
                ..RunConfig::default()
            },
            ..CyclicConfig::new(vec![plan(0), plan(1)])
        }
    }

    #[test]
    fn serves_status_lines_and_stops_quickly() {
        let config = two_thread_config();
        let plans = config.threads.clone();
        let shared = Engine::new(config).expect("engine").shared().clone();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cyclictest.fifo");
        let server =
            FifoServer::start(path.clone(), shared, plans, Resolution::Micros).expect("start");
        assert!(
            std::fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_fifo()
        );

        // Read in a helper thread so a broken server fails the test instead
        // of hanging it.
        let (sender, receiver) = mpsc::channel();
        let reader_path = path.clone();
        std::thread::spawn(move || {
            let mut collected = String::new();
            while collected.lines().filter(|l| l.starts_with("T:")).count() < 2 {
                let mut fifo = std::fs::File::open(&reader_path).expect("open for reading");
                let mut chunk = String::new();
                fifo.read_to_string(&mut chunk).expect("read fifo");
                collected.push_str(&chunk);
            }
            let _ = sender.send(collected);
        });
        let text = receiver
            .recv_timeout(Duration::from_secs(5))
            .expect("two T: lines within 5 s");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("T: 0 ("), "{text:?}");
        assert!(lines[1].starts_with("T: 1 ("), "{text:?}");
        assert!(lines[1].contains("I:1500"), "{text:?}");

        let started = Instant::now();
        server.stop();
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(!path.exists());
    }

    #[test]
    fn drop_cleans_up_without_a_reader() {
        let config = two_thread_config();
        let plans = config.threads.clone();
        let shared = Engine::new(config).expect("engine").shared().clone();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("status");
        let server =
            FifoServer::start(path.clone(), shared, plans, Resolution::Nanos).expect("start");
        // The duration is the point: the server is in its wait for a
        // reader by then, which the drop must end at once.
        std::thread::sleep(Duration::from_millis(20));
        let started = Instant::now();
        drop(server);
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(!path.exists());
    }

    #[test]
    fn check_finds_what_start_would_refuse_and_makes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("status");
        check(&path).expect("a new FIFO");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        make_fifo(&path).unwrap();
        check(&path).expect("an old FIFO is replaced");
        let taken = dir.path().join("taken");
        std::fs::write(&taken, "keep").unwrap();
        assert_eq!(
            check(&taken).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert_eq!(std::fs::read_to_string(&taken).unwrap(), "keep");
        assert_eq!(
            check(&dir.path().join("no/such/dir/f")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn refuses_to_replace_a_regular_file() {
        let config = two_thread_config();
        let plans = config.threads.clone();
        let shared = Engine::new(config).expect("engine").shared().clone();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("precious");
        std::fs::write(&path, "keep").unwrap();
        let err = FifoServer::start(path.clone(), shared, plans, Resolution::Micros)
            .expect_err("not a fifo");
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(err.raw_os_error(), Some(17));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep");
    }
}
