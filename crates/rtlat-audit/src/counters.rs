//! System-wide counters read at the start and at the end of a run, whose
//! difference says what disturbed the measured CPUs while it ran, beyond
//! what each measuring thread counts itself:
//! - steal time of the measured CPUs (`proc/stat`: the hypervisor ran
//!   something else on them);
//! - thermal-throttle events (`sys/devices/system/cpu/cpuN/thermal_throttle/*_count`);
//! - RT throttling (`sched: RT throttling activated` in the kernel log,
//!   `dev/kmsg`, read from the position it had at the start).
//!
//! Every path is read under a root directory (`/`, or a small fixture tree
//! in tests). A counter that cannot be read is `None`, "not checked",
//! never zero.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// What the kernel logs when it throttles real-time tasks
/// (`kernel/sched/rt.c`).
pub const RT_THROTTLING_MESSAGE: &str = "sched: RT throttling activated";

/// The time of some CPUs in `proc/stat`, in the kernel's clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// Ticks stolen by the hypervisor (the 8th value of a `cpu` line).
    pub steal: u64,
    /// All ticks (the sum of the line's values but guest time, which is
    /// already counted in user time).
    pub total: u64,
}

impl CpuTicks {
    /// What passed between `self` (earlier) and `later`.
    pub fn since(self, earlier: CpuTicks) -> CpuTicks {
        CpuTicks {
            steal: self.steal.saturating_sub(earlier.steal),
            total: self.total.saturating_sub(earlier.total),
        }
    }

    /// The stolen part of the time, 0 to 1; `None` when no time passed.
    pub fn steal_share(self) -> Option<f64> {
        (self.total > 0).then(|| self.steal as f64 / self.total as f64)
    }
}

/// The ticks of `cpus` summed (`None`: the `cpu` line of all CPUs), from
/// `proc/stat` under `root`; `None` when the file or a CPU's line cannot be
/// read.
pub fn cpu_ticks(root: &Path, cpus: Option<&[usize]>) -> Option<CpuTicks> {
    let text = std::fs::read_to_string(root.join("proc/stat")).ok()?;
    let line_of = |name: &str| {
        text.lines().find_map(|line| {
            let mut fields = line.split_ascii_whitespace();
            (fields.next() == Some(name)).then(|| parse_cpu_line(fields))?
        })
    };
    match cpus {
        None => line_of("cpu"),
        Some(cpus) => cpus.iter().try_fold(CpuTicks::default(), |sum, cpu| {
            let ticks = line_of(&format!("cpu{cpu}"))?;
            Some(CpuTicks {
                steal: sum.steal + ticks.steal,
                total: sum.total + ticks.total,
            })
        }),
    }
}

/// `user nice system idle iowait irq softirq steal [guest guest_nice]`.
fn parse_cpu_line<'a>(fields: impl Iterator<Item = &'a str>) -> Option<CpuTicks> {
    let values: Vec<u64> = fields
        .map(|f| f.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    let counted = values.get(..8)?;
    Some(CpuTicks {
        steal: counted[7],
        total: counted.iter().sum(),
    })
}

/// The thermal-throttle events of `cpus` so far: the sum of every
/// `*_count` file in their `thermal_throttle` directories (core and
/// package, and their power-limit counts). `None` when none of the CPUs
/// has such a directory (no driver, not an Intel CPU, a virtual machine).
pub fn thermal_throttle_events(root: &Path, cpus: &[usize]) -> Option<u64> {
    let mut seen = false;
    let mut total = 0u64;
    for cpu in cpus {
        let dir = root.join(format!("sys/devices/system/cpu/cpu{cpu}/thermal_throttle"));
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        seen = true;
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().ends_with("_count")
                && let Ok(text) = std::fs::read_to_string(entry.path())
                && let Ok(count) = text.trim().parse::<u64>()
            {
                total = total.saturating_add(count);
            }
        }
    }
    seen.then_some(total)
}

/// The kernel log from a point on: opened non-blocking at the start of a
/// run and moved to its end, read at the end of the run for what came
/// since.
#[derive(Debug)]
pub struct KernelLogWatch {
    log: Result<File, String>,
}

/// What the kernel log said during a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelLogFinding {
    /// It could not be read (why: `dev/kmsg: Permission denied`).
    NotChecked(String),
    /// It was read; whether RT throttling was activated, and whether
    /// records were lost (overwritten before they were read), in which
    /// case a throttling message may have been missed.
    Read {
        /// `sched: RT throttling activated` came.
        rt_throttling: bool,
        /// Records were overwritten before they could be read.
        records_lost: bool,
    },
}

impl KernelLogWatch {
    /// Opens `dev/kmsg` under `root` and moves to its end, so that only
    /// what the kernel logs from now on is read.
    pub fn start(root: &Path) -> KernelLogWatch {
        let path = root.join("dev/kmsg");
        let log = open_at_end(&path).map_err(|e| format!("{}: {}", path.display(), reason(&e)));
        KernelLogWatch { log }
    }

    /// Reads what came since the start.
    pub fn finish(self) -> KernelLogFinding {
        let mut file = match self.log {
            Ok(file) => file,
            Err(why) => return KernelLogFinding::NotChecked(why),
        };
        let mut text = Vec::new();
        let mut records_lost = false;
        // /dev/kmsg returns one record per read; a regular file (a fixture)
        // returns what fits.
        let mut buf = vec![0u8; 8192];
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => text.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // EPIPE: records were overwritten; the next read goes on
                // with the oldest one left.
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => records_lost = true,
                Err(e) => return KernelLogFinding::NotChecked(reason(&e)),
            }
        }
        let text = String::from_utf8_lossy(&text);
        KernelLogFinding::Read {
            rt_throttling: text.contains(RT_THROTTLING_MESSAGE),
            records_lost,
        }
    }
}

fn open_at_end(path: &Path) -> io::Result<File> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    file.seek(SeekFrom::End(0))?;
    Ok(file)
}

/// The error's text without Rust's ` (os error N)`.
fn reason(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The counters of a run at its start, with the kernel log watched from
/// there.
#[derive(Debug)]
pub struct RunWatch {
    root: PathBuf,
    cpus: Option<Vec<usize>>,
    ticks: Option<CpuTicks>,
    thermal: Option<u64>,
    log: KernelLogWatch,
}

/// What the system-wide counters saw over a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemDisturbances {
    /// The measured CPUs (`None`: the threads were not pinned, and the
    /// whole machine was looked at).
    pub cpus: Option<Vec<usize>>,
    /// Their ticks over the run; `None` where `proc/stat` was unreadable.
    pub ticks: Option<CpuTicks>,
    /// Thermal-throttle events on them; `None` where not counted.
    pub thermal_throttle_events: Option<u64>,
    /// The kernel log.
    pub kernel_log: KernelLogFinding,
}

impl RunWatch {
    /// Reads the counters of `cpus` (`None`: all of them) under `root`
    /// and starts watching the kernel log, before the first sample.
    pub fn start(root: &Path, cpus: Option<Vec<usize>>) -> RunWatch {
        let ticks = cpu_ticks(root, cpus.as_deref());
        let thermal = thermal_throttle_events(root, &thermal_cpus(root, cpus.as_deref()));
        RunWatch {
            root: root.to_path_buf(),
            log: KernelLogWatch::start(root),
            cpus,
            ticks,
            thermal,
        }
    }

    /// Reads them again after the last sample: what changed.
    pub fn finish(self) -> SystemDisturbances {
        let ticks_now = cpu_ticks(&self.root, self.cpus.as_deref());
        let thermal_now =
            thermal_throttle_events(&self.root, &thermal_cpus(&self.root, self.cpus.as_deref()));
        SystemDisturbances {
            ticks: self.ticks.zip(ticks_now).map(|(then, now)| now.since(then)),
            thermal_throttle_events: self
                .thermal
                .zip(thermal_now)
                .map(|(then, now)| now.saturating_sub(then)),
            kernel_log: self.log.finish(),
            cpus: self.cpus,
        }
    }
}

/// The CPUs whose thermal counters are read: the measured ones, or every
/// CPU that has a directory under `sys/devices/system/cpu`.
fn thermal_cpus(root: &Path, cpus: Option<&[usize]>) -> Vec<usize> {
    if let Some(cpus) = cpus {
        return cpus.to_vec();
    }
    let Ok(entries) = std::fs::read_dir(root.join("sys/devices/system/cpu")) else {
        return Vec::new();
    };
    let mut all: Vec<usize> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
        .collect();
    all.sort_unstable();
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Write;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    const STAT_BEFORE: &str = "cpu  100 0 50 1000 0 0 0 30 0 0\n\
        cpu0 50 0 25 500 0 0 0 10 0 0\n\
        cpu1 50 0 25 500 0 0 0 20 7 0\n\
        intr 1 2 3\n";
    const STAT_AFTER: &str = "cpu  200 0 100 2000 0 0 0 90 0 0\n\
        cpu0 100 0 50 1000 0 0 0 20 0 0\n\
        cpu1 100 0 50 1000 0 0 0 70 9 0\n\
        intr 1 2 3\n";

    #[test]
    fn steal_of_the_measured_cpus() {
        let root = tempfile::tempdir().unwrap();
        write(root.path(), "proc/stat", STAT_BEFORE);
        let cpu1 = cpu_ticks(root.path(), Some(&[1])).unwrap();
        // guest (7) is not added: user time already holds it.
        assert_eq!(
            cpu1,
            CpuTicks {
                steal: 20,
                total: 595
            }
        );
        let both = cpu_ticks(root.path(), Some(&[0, 1])).unwrap();
        assert_eq!(
            both,
            CpuTicks {
                steal: 30,
                total: 1180
            }
        );
        assert_eq!(cpu_ticks(root.path(), None).unwrap().steal, 30);
        assert_eq!(cpu_ticks(root.path(), Some(&[2])), None, "no cpu2 line");

        let watch = RunWatch::start(root.path(), Some(vec![1]));
        write(root.path(), "proc/stat", STAT_AFTER);
        let seen = watch.finish();
        let ticks = seen.ticks.unwrap();
        // cpu1: 50 + 25 + 500 + 50 more ticks, 50 of them stolen.
        assert_eq!(
            ticks,
            CpuTicks {
                steal: 50,
                total: 625
            }
        );
        assert_eq!(ticks.steal_share(), Some(0.08));
        assert_eq!(CpuTicks::default().steal_share(), None);
    }

    #[test]
    fn unreadable_counters_are_not_zero() {
        let root = tempfile::tempdir().unwrap();
        let seen = RunWatch::start(root.path(), Some(vec![0])).finish();
        assert_eq!(seen.ticks, None);
        assert_eq!(seen.thermal_throttle_events, None);
        match seen.kernel_log {
            KernelLogFinding::NotChecked(why) => {
                assert!(why.contains("dev/kmsg"), "{why}");
                assert!(why.contains("No such file"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn thermal_events_counted_over_the_run() {
        let root = tempfile::tempdir().unwrap();
        let dir = "sys/devices/system/cpu/cpu1/thermal_throttle";
        write(root.path(), &format!("{dir}/core_throttle_count"), "4\n");
        write(
            root.path(),
            &format!("{dir}/package_throttle_count"),
            "10\n",
        );
        write(
            root.path(),
            &format!("{dir}/core_throttle_max_time_ms"),
            "99\n",
        );
        fs::create_dir_all(root.path().join("sys/devices/system/cpu/cpu0")).unwrap();
        assert_eq!(thermal_throttle_events(root.path(), &[1]), Some(14));
        assert_eq!(thermal_throttle_events(root.path(), &[0]), None);

        let watch = RunWatch::start(root.path(), None);
        write(root.path(), &format!("{dir}/core_throttle_count"), "6\n");
        let seen = watch.finish();
        assert_eq!(seen.thermal_throttle_events, Some(2));
        assert_eq!(seen.cpus, None);
    }

    #[test]
    fn rt_throttling_logged_during_the_run_only() {
        let root = tempfile::tempdir().unwrap();
        let before = format!("6,100,5,-;{RT_THROTTLING_MESSAGE}\n");
        write(root.path(), "dev/kmsg", &before);
        let quiet = KernelLogWatch::start(root.path());
        assert_eq!(
            quiet.finish(),
            KernelLogFinding::Read {
                rt_throttling: false,
                records_lost: false
            },
            "a message from before the start does not count"
        );

        let watch = KernelLogWatch::start(root.path());
        let mut log = fs::OpenOptions::new()
            .append(true)
            .open(root.path().join("dev/kmsg"))
            .unwrap();
        writeln!(log, "6,101,6,-;eth0: link up").unwrap();
        writeln!(log, "4,102,7,-;{RT_THROTTLING_MESSAGE}").unwrap();
        assert_eq!(
            watch.finish(),
            KernelLogFinding::Read {
                rt_throttling: true,
                records_lost: false
            }
        );
    }

    #[test]
    fn the_real_kernel_log_is_read_or_said_unreadable() {
        // Whatever the privileges, the watch ends (non-blocking) with an
        // answer; as root the log is readable.
        let finding = KernelLogWatch::start(Path::new("/")).finish();
        let root = running_as_root();
        match finding {
            KernelLogFinding::Read { .. } => {}
            KernelLogFinding::NotChecked(why) => {
                if root && Path::new("/dev/kmsg").exists() {
                    panic!("root could not read /dev/kmsg: {why}");
                }
                println!("SKIPPED: /dev/kmsg not readable here ({why})");
            }
        }
    }

    /// Whether this process runs as root, from `/proc/self/status`.
    fn running_as_root() -> bool {
        fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Uid:"))
                    .map(|uids| uids.split_whitespace().nth(1) == Some("0"))
            })
            .unwrap_or(false)
    }
}
