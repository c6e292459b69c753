//! Facts about the host that every tool's output carries (CPU counts, load
//! average, `uname`, wall-clock timestamps), read from the machine for real
//! runs and pinned to fixed values for synthetic ones, so that a synthetic
//! run prints the same bytes on every machine.

use rtlat_core::ClockInstant;
use rtlat_core::SYNTHETIC_START;
use rtlat_core::{Running, sys_clock, time};
use rtlat_sys::clock::{self, Clock};
use rtlat_sys::system;

use crate::report::run_clock::Timeline;
use crate::report::{RunMeta, SysInfo};

/// Where the host facts come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// This machine.
    Real,
    /// Fixed values (the synthetic test seam).
    Pinned,
}

/// The wall-clock format rt-tests uses in its JSON (`%a, %d %b %Y %T %z`).
const TIMESTAMP_FORMAT: &str = "%a, %d %b %Y %T %z";

impl Host {
    /// Now, as rt-tests formats its JSON timestamps, in local time.
    pub fn timestamp(self) -> String {
        match self {
            Host::Real => jiff::Zoned::now().strftime(TIMESTAMP_FORMAT).to_string(),
            Host::Pinned => "Thu, 01 Jan 1970 00:00:00 +0000".to_string(),
        }
    }

    /// Now, in nanoseconds since the Unix epoch (the epoch itself when
    /// pinned, as [`Host::timestamp`]).
    pub fn unix_time_ns(self) -> i128 {
        match self {
            Host::Real => {
                match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
                    Ok(since) => since.as_nanos() as i128,
                    Err(before) => -(before.duration().as_nanos() as i128),
                }
            }
            Host::Pinned => 0,
        }
    }

    /// How the run's `clock` maps to the wall clock, read now (once the
    /// measuring threads have started): `clock` and then the wall clock.
    /// Pinned: a synthetic clock's `synthetic_origin` is the Unix epoch
    /// (as [`Host::unix_time_ns`]).
    pub fn timeline(self, clock: Clock, synthetic_origin: ClockInstant) -> Timeline {
        let at = match self {
            Host::Real => ClockInstant(time::to_nanos(&clock::now(clock))),
            Host::Pinned => synthetic_origin,
        };
        Timeline {
            clock: at,
            unix_ns: self.unix_time_ns(),
            start: None,
        }
    }

    /// [`Host::timeline`] of a cyclic run (cyclictest, latency) whose
    /// threads have started: its clock, and its synthetic threads' start.
    pub fn cyclic_timeline(self, running: &Running) -> Timeline {
        let origin = ClockInstant(time::to_nanos(&SYNTHETIC_START));
        self.timeline(sys_clock(running.config().clock), origin)
    }

    /// The text of `/proc/loadavg`.
    pub fn load_average(self) -> String {
        match self {
            Host::Real => system::load_average_text(),
            Host::Pinned => "0.00 0.00 0.00 1/100 1000".to_string(),
        }
    }

    /// (configured, online) CPU counts.
    pub fn cpu_counts(self) -> (usize, usize) {
        match self {
            Host::Real => (system::configured_cpus(), system::online_cpus()),
            Host::Pinned => (2, 2),
        }
    }

    /// The facts of a run ending now with exit status `status`, for the
    /// JSON envelope, with the `audit` made before its first sample; its
    /// JSON written as `rt_tests` writes it.
    pub fn run_meta(
        self,
        cmdline: &str,
        rt_tests: rtlat_core::RtTests,
        start_time: String,
        status: u8,
        audit: Option<rtlat_audit::Audit>,
    ) -> RunMeta {
        RunMeta {
            cmdline: cmdline.to_owned(),
            start_time,
            end_time: self.timestamp(),
            return_code: i32::from(status),
            sysinfo: self.sysinfo(),
            audit,
            blocks: Vec::new(),
            projection: rtlat_stats::projection::Request::default(),
            rt_tests,
        }
    }

    /// `uname` and the real-time kernel flag.
    pub fn sysinfo(self) -> SysInfo {
        match self {
            Host::Real => {
                let k = system::kernel_identity();
                SysInfo {
                    sysname: k.sysname,
                    nodename: k.nodename,
                    release: k.release,
                    version: k.version,
                    machine: k.machine,
                    realtime: system::is_realtime_kernel(),
                }
            }
            Host::Pinned => SysInfo {
                sysname: "Linux".into(),
                nodename: "synthetic".into(),
                release: "0.0.0".into(),
                version: "#1".into(),
                machine: "x86_64".into(),
                realtime: false,
            },
        }
    }
}
