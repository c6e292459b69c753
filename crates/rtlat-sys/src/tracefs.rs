//! ftrace control for cyclictest's `-b` (stop the kernel trace at the first
//! sample above a threshold) and `--tracemark` (leave a marker in the trace).
//!
//! `-b` uses only an already-mounted tracing directory (rt-tests 2.4 ran
//! `mount -t debugfs` through `system()`); `--explain`, which cannot work
//! without one, mounts tracefs at its usual place ([`mount_tracefs`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The usual mount points of the tracing directory, newest first.
const WELL_KNOWN_DIRS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The ftrace directory of this machine, if one is mounted: the first of
/// `/sys/kernel/tracing` and `/sys/kernel/debug/tracing` that holds a
/// `tracing_on` file, else a `tracefs` mount (the directory itself) or a
/// `debugfs` mount (its `tracing` subdirectory) listed in `/proc/mounts`.
pub fn tracing_dir() -> Option<PathBuf> {
    let well_known = WELL_KNOWN_DIRS.iter().map(PathBuf::from);
    let mounts = fs::read_to_string("/proc/mounts").unwrap_or_default();
    let mounted = tracing_dirs_in_mounts(&mounts);
    well_known
        .chain(mounted)
        .find(|dir| dir.join("tracing_on").exists())
}

/// Mounts tracefs at `/sys/kernel/tracing` (which the kernel provides as
/// an empty directory when tracefs is built in) and returns that
/// directory.
#[allow(unsafe_code)]
pub fn mount_tracefs() -> io::Result<PathBuf> {
    let target = PathBuf::from(WELL_KNOWN_DIRS[0]);
    let source = c"tracefs";
    let path = std::ffi::CString::new(WELL_KNOWN_DIRS[0]).map_err(io::Error::other)?;
    // SAFETY: every pointer is a NUL-terminated string that outlives the
    // call; the data argument may be null for tracefs.
    let done = unsafe {
        libc::mount(
            source.as_ptr(),
            path.as_ptr(),
            source.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(target)
}

/// Candidate tracing directories from the text of `/proc/mounts`: tracefs
/// mounts first, then debugfs mounts + `tracing`, in file order.
fn tracing_dirs_in_mounts(mounts: &str) -> Vec<PathBuf> {
    let entries: Vec<(&str, PathBuf)> = mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let _source = fields.next()?;
            let target = fields.next()?;
            let fstype = fields.next()?;
            Some((fstype, PathBuf::from(unescape_mount_field(target))))
        })
        .collect();
    let tracefs = entries
        .iter()
        .filter(|(fstype, _)| *fstype == "tracefs")
        .map(|(_, dir)| dir.clone());
    let debugfs = entries
        .iter()
        .filter(|(fstype, _)| *fstype == "debugfs")
        .map(|(_, dir)| dir.join("tracing"));
    tracefs.chain(debugfs).collect()
}

/// Undoes the octal escapes (`\040` for a space, ...) the kernel uses in
/// `/proc/mounts` fields.
fn unescape_mount_field(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|digits| bytes[i] == b'\\' && digits.iter().all(|d| (b'0'..=b'7').contains(d)));
        match octal {
            Some(digits) => {
                let value = digits
                    .iter()
                    .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Open handles on `tracing_on` and, optionally, `trace_marker`.
///
/// Both write methods take `&self` and never allocate, so a measuring
/// thread may call them on its exit path.
#[derive(Debug)]
pub struct TraceControl {
    tracing_on: File,
    marker: Option<File>,
    snapshot: Option<File>,
}

impl TraceControl {
    /// Opens `<dir>/tracing_on` for writing and, if `with_marker`,
    /// `<dir>/trace_marker` too. The error is the operating system's, as
    /// is (its errno intact), without the path.
    pub fn open(dir: &Path, with_marker: bool) -> io::Result<TraceControl> {
        let open_for_writing = |name: &str| OpenOptions::new().write(true).open(dir.join(name));
        let tracing_on = open_for_writing("tracing_on")?;
        let marker = if with_marker {
            Some(open_for_writing("trace_marker")?)
        } else {
            None
        };
        Ok(TraceControl {
            tracing_on,
            marker,
            snapshot: None,
        })
    }

    /// Also opens `<dir>/snapshot` for [`TraceControl::freeze`], when the
    /// kernel has one (CONFIG_TRACER_SNAPSHOT); without it a freeze stops
    /// the trace instead.
    pub fn with_snapshot(mut self, dir: &Path) -> io::Result<TraceControl> {
        let path = dir.join("snapshot");
        if path.exists() {
            self.snapshot = Some(OpenOptions::new().write(true).open(path)?);
        }
        Ok(self)
    }

    /// Whether [`TraceControl::freeze`] takes a snapshot (rather than
    /// stopping the trace).
    pub fn has_snapshot(&self) -> bool {
        self.snapshot.is_some()
    }

    /// Freezes the trace as it is now: writes `marker` (if the marker file
    /// is open), then copies the live buffer into the snapshot buffer while
    /// tracing goes on (each freeze replaces the previous copy), or, without
    /// a snapshot buffer, stops the trace. Two `write(2)` calls, no
    /// allocation.
    pub fn freeze(&self, marker: &[u8]) -> io::Result<()> {
        self.write_marker(marker)?;
        match &self.snapshot {
            Some(snapshot) => (&*snapshot).write_all(b"1\n"),
            None => self.stop_tracing(),
        }
    }

    /// Writes `text` to `trace_marker` in one `write(2)` (the kernel makes
    /// one trace event of it, truncating an oversized text). Does nothing
    /// when the marker file was not opened.
    pub fn write_marker(&self, text: &[u8]) -> io::Result<()> {
        match &self.marker {
            Some(marker) => (&*marker).write(text).map(|_| ()),
            None => Ok(()),
        }
    }

    /// Stops the kernel trace: writes `0\n` to `tracing_on`.
    pub fn stop_tracing(&self) -> io::Result<()> {
        (&self.tracing_on).write_all(b"0\n")
    }

    /// Whether `trace_marker` was opened.
    pub fn marker_enabled(&self) -> bool {
        self.marker.is_some()
    }
}

/// Held by the unit tests that change the global trace state
/// (`tracing_on` of the top directory) or check that something else left
/// it alone: they run in parallel threads of one process.
#[cfg(test)]
pub(crate) static GLOBAL_TRACE_STATE: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Errno;

    #[test]
    fn mounts_are_parsed_tracefs_first() {
        let mounts = "sysfs /sys sysfs rw 0 0\n\
                      debugfs /sys/kernel/debug debugfs rw 0 0\n\
                      tracefs /mnt/my\\040trace tracefs rw 0 0\n";
        assert_eq!(
            tracing_dirs_in_mounts(mounts),
            vec![
                PathBuf::from("/mnt/my trace"),
                PathBuf::from("/sys/kernel/debug/tracing"),
            ]
        );
        assert_eq!(unescape_mount_field("a\\134b\\0"), "a\\b\\0");
    }

    fn read_trimmed(path: &Path) -> String {
        fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
            .trim()
            .to_string()
    }

    /// Puts `tracing_on` back to its value at creation when dropped, even
    /// if an assertion fails first.
    struct RestoreTracingOn {
        path: PathBuf,
        previous: String,
    }

    impl Drop for RestoreTracingOn {
        fn drop(&mut self) {
            if let Err(e) = fs::write(&self.path, format!("{}\n", self.previous)) {
                eprintln!("could not restore {}: {e}", self.path.display());
            }
        }
    }

    /// Marker and stop in one test: both touch the global `tracing_on`.
    #[test]
    fn marker_reaches_the_trace_and_stop_turns_tracing_off() {
        let Some(dir) = tracing_dir() else {
            eprintln!("SKIPPED (no tracefs)");
            return;
        };
        let control = match TraceControl::open(&dir, true) {
            Ok(control) => control,
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                eprintln!("SKIPPED (no permission on {}: {e})", dir.display());
                return;
            }
            Err(e) => panic!("open {}: {e}", dir.display()),
        };
        assert!(control.marker_enabled());
        let _global = GLOBAL_TRACE_STATE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let on_path = dir.join("tracing_on");
        let _restore = RestoreTracingOn {
            previous: read_trimmed(&on_path),
            path: on_path.clone(),
        };
        fs::write(&on_path, "1\n").expect("enable tracing");

        let text = format!("rtlat test marker {}", std::process::id());
        control.write_marker(text.as_bytes()).expect("write marker");
        let trace = fs::read_to_string(dir.join("trace")).expect("read trace");
        assert!(trace.contains(&text), "marker {text:?} not in the trace");

        control.stop_tracing().expect("stop tracing");
        assert_eq!(read_trimmed(&on_path), "0");

        let without = TraceControl::open(&dir, false).expect("open without marker");
        assert!(!without.marker_enabled());
        without.write_marker(b"ignored").expect("no-op marker");
    }

    #[test]
    fn open_fails_cleanly_on_a_missing_dir() {
        let err = TraceControl::open(Path::new("/nonexistent/rtlat/tracing"), true)
            .expect_err("no such dir");
        assert_eq!(err.raw_os_error(), Some(Errno::NOENT.raw_os_error()));
    }
}
