//! The `hwlat` tracer's files in tracefs: where they are, whether the
//! kernel has the tracer, and a [`Session`] that changes them for a run
//! and puts every one back on every path: at the end, on an error (its
//! `Drop`), and, through rtlat's janitor, when rtlat is killed.
//!
//! The rule of the janitor: announce, then change. Every file the run may
//! change is announced with its value before the first write, in the
//! order the values must be written back: `current_tracer` first (which
//! stops the tracer's thread), `tracing_on`, `tracing_thresh`, the window
//! and the width (in the order the kernel accepts: the width must stay
//! below the window), `tracing_cpumask`.

use std::io;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use rtlat_core::janitor::{self, Kept};

use crate::rtsetup::io_strerror;
use rtlat_args::stdio::note;

/// `tracing_on`.
pub const TRACING_ON: &str = "tracing_on";
/// `current_tracer`.
pub const CURRENT_TRACER: &str = "current_tracer";
/// `tracing_thresh` (µs).
pub const THRESHOLD: &str = "tracing_thresh";
/// The sampling window (µs).
pub const WINDOW: &str = "hwlat_detector/window";
/// The sampled part of each window (µs).
pub const WIDTH: &str = "hwlat_detector/width";
/// The CPUs the tracer's thread moves across.
pub const CPUMASK: &str = "tracing_cpumask";

/// Every file a run may change.
const CHANGED: [&str; 6] = [
    CURRENT_TRACER,
    TRACING_ON,
    THRESHOLD,
    WINDOW,
    WIDTH,
    CPUMASK,
];

/// The machine's tracing directory, or the fixture's; one line and exit
/// status 1 when it cannot be used: not root (as the script), tracefs not
/// mounted, no `hwlat` tracer in the kernel.
pub fn locate(fixture: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match fixture {
        Some(dir) => dir.to_path_buf(),
        None => {
            if rtlat_sys::system::effective_uid() != 0 {
                bail!(
                    "must be root: the hwlat tracer is set up through tracefs, which only root \
                     may change"
                );
            }
            rtlat_sys::tracefs::tracing_dir().ok_or_else(|| {
                anyhow!(
                    "tracefs is not mounted (neither /sys/kernel/tracing nor debugfs' tracing \
                     directory): mount it with 'mount -t tracefs nodev /sys/kernel/tracing'"
                )
            })?
        }
    };
    let available = std::fs::read_to_string(dir.join("available_tracers")).map_err(|e| {
        anyhow!(
            "cannot read {}: {}",
            dir.join("available_tracers").display(),
            io_strerror(&e)
        )
    })?;
    if !available.split_whitespace().any(|t| t == "hwlat") || !dir.join(WIDTH).exists() {
        bail!(
            "the kernel has no hwlat tracer (available_tracers: {}): build it with \
             CONFIG_HWLAT_TRACER=y (Kernel hacking > Tracers > Hardware Latency Detector)",
            available.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    Ok(dir)
}

/// Reads one setting, without its line end.
pub fn read(dir: &Path, file: &str) -> anyhow::Result<String> {
    let path = dir.join(file);
    std::fs::read_to_string(&path)
        .map(|s| s.trim_end().to_owned())
        .map_err(|e| anyhow!("cannot read {}: {}", path.display(), io_strerror(&e)))
}

/// Reads one setting as a number.
pub fn read_number(dir: &Path, file: &str) -> anyhow::Result<u64> {
    let text = read(dir, file)?;
    text.trim()
        .parse()
        .map_err(|_| anyhow!("{} holds '{text}', not a number", dir.join(file).display()))
}

fn write(dir: &Path, file: &str, value: &str) -> io::Result<()> {
    std::fs::write(dir.join(file), value.as_bytes())
}

/// One file's value before the run, and its announcement to the janitor.
#[derive(Debug)]
struct Saved {
    file: &'static str,
    previous: String,
    kept: Option<Kept>,
}

/// The tracer's settings as the run found them, written back when it is
/// [`Session::restore`]d or dropped.
#[derive(Debug)]
pub struct Session {
    dir: PathBuf,
    /// In the order they are written back.
    saved: Vec<Saved>,
    restored: bool,
}

impl Session {
    /// Reads every setting the run may change and announces each to the
    /// janitor, in the order they are to be written back; `final_width`
    /// is the width the run will leave (the width must stay below the
    /// window at every step of the way back).
    pub fn open(dir: &Path, final_width: impl FnOnce(u64, u64) -> u64) -> anyhow::Result<Session> {
        let mut values = Vec::new();
        for file in CHANGED {
            values.push((file, read(dir, file)?));
        }
        let number = |file: &str| -> u64 {
            values
                .iter()
                .find(|(f, _)| *f == file)
                .and_then(|(_, v)| v.trim().parse().ok())
                .unwrap_or(0)
        };
        let (window, width) = (number(WINDOW), number(WIDTH));
        // The width left is below the window found: the window goes back
        // first; otherwise the width first.
        if final_width(window, width) >= window {
            let w = values.iter().position(|(f, _)| *f == WINDOW).unwrap_or(0);
            let d = values.iter().position(|(f, _)| *f == WIDTH).unwrap_or(0);
            values.swap(w, d);
        }
        let mut saved = Vec::new();
        for (file, previous) in values {
            // current_tracer reads "nop"; tracing_cpumask "ff" or
            // "ffffffff,ffffffff": each written back as read.
            let kept = match janitor::keep_setting(&dir.join(file), previous.as_bytes()) {
                Ok(kept) => Some(kept),
                Err(e) => {
                    note!(
                        "WARN: cannot hand {} to rtlat's janitor ({e}): if this run is killed, \
                         it stays changed",
                        dir.join(file).display()
                    );
                    None
                }
            };
            saved.push(Saved {
                file,
                previous,
                kept,
            });
        }
        Ok(Session {
            dir: dir.to_path_buf(),
            saved,
            restored: false,
        })
    }

    /// The tracing directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `value` to `file`: an error names both.
    pub fn set(&self, file: &str, value: &str) -> anyhow::Result<()> {
        write(&self.dir, file, value).map_err(|e| {
            anyhow!(
                "cannot write '{value}' to {}: {}",
                self.dir.join(file).display(),
                io_strerror(&e)
            )
        })
    }

    /// Writes every setting back as it was, in order, and tells the
    /// janitor to forget each once written; a write the kernel refused
    /// (the width and the window check each other) is tried once more
    /// after the others. One line per setting that could not be restored.
    pub fn restore(&mut self) -> Vec<String> {
        self.restored = true;
        let mut failed = Vec::new();
        for (i, saved) in self.saved.iter().enumerate() {
            if write(&self.dir, saved.file, &saved.previous).is_err() {
                failed.push(i);
            }
        }
        let mut errors = Vec::new();
        for i in failed {
            let saved = &self.saved[i];
            if let Err(e) = write(&self.dir, saved.file, &saved.previous) {
                errors.push(format!(
                    "cannot restore {} to '{}': {}",
                    self.dir.join(saved.file).display(),
                    saved.previous,
                    io_strerror(&e)
                ));
            }
        }
        for saved in &mut self.saved {
            if let Some(mut kept) = saved.kept.take() {
                kept.release();
            }
        }
        errors
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if !self.restored {
            for line in self.restore() {
                note!("{line}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("hwlat_detector")).unwrap();
        for (file, value) in [
            (CURRENT_TRACER, "nop\n"),
            (TRACING_ON, "1\n"),
            (THRESHOLD, "0\n"),
            (WINDOW, "1000000\n"),
            (WIDTH, "500000\n"),
            (CPUMASK, "3\n"),
        ] {
            std::fs::write(dir.path().join(file), value).unwrap();
        }
        dir
    }

    fn order(session: &Session) -> Vec<&'static str> {
        session.saved.iter().map(|s| s.file).collect()
    }

    /// The kernel keeps the width below the window: a width left below
    /// the window found lets the window go back first; a width at or
    /// above it must shrink first.
    #[test]
    fn the_width_and_the_window_go_back_in_an_order_the_kernel_takes() {
        let dir = tree();
        let mut narrow = Session::open(dir.path(), |_, _| 50_000).unwrap();
        assert_eq!(
            order(&narrow),
            [
                CURRENT_TRACER,
                TRACING_ON,
                THRESHOLD,
                WINDOW,
                WIDTH,
                CPUMASK
            ]
        );
        narrow.restore();
        let mut wide = Session::open(dir.path(), |window, _| window).unwrap();
        assert_eq!(
            order(&wide),
            [
                CURRENT_TRACER,
                TRACING_ON,
                THRESHOLD,
                WIDTH,
                WINDOW,
                CPUMASK
            ]
        );
        wide.set(WIDTH, "2000000").unwrap();
        wide.set(WINDOW, "4000000").unwrap();
        wide.set(CURRENT_TRACER, "hwlat").unwrap();
        assert!(wide.restore().is_empty());
        assert_eq!(read(dir.path(), WIDTH).unwrap(), "500000");
        assert_eq!(read(dir.path(), WINDOW).unwrap(), "1000000");
        assert_eq!(read(dir.path(), CURRENT_TRACER).unwrap(), "nop");
    }

    #[test]
    fn a_session_dropped_puts_the_settings_back() {
        let dir = tree();
        {
            let session = Session::open(dir.path(), |_, w| w).unwrap();
            session.set(TRACING_ON, "0").unwrap();
            session.set(THRESHOLD, "25").unwrap();
        }
        assert_eq!(read(dir.path(), TRACING_ON).unwrap(), "1");
        assert_eq!(read(dir.path(), THRESHOLD).unwrap(), "0");
    }
}
