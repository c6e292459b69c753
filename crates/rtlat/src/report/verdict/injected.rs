//! The test seam of the verdict: disturbances injected into a synthetic
//! run (`--inject-disturbances=LIST`, hidden, valid only with
//! `--synthetic`), so that whole runs show how each one is judged. A
//! synthetic run counts nothing of its own; these stand in for what a real
//! run would have counted.
//!
//! LIST is comma-separated items: `switches=N`, `migrations=N`,
//! `minor-faults=N`, `major-faults=N` (each measuring thread's, between
//! its first and last sample), `steal=PERCENT` (of the measured CPUs'
//! time), `thermal=N` (throttle events), `rt-throttling` (the kernel log
//! said so), `log-lost` (kernel log records lost), `log-unread` (the
//! kernel log could not be read).

use rtlat_audit::counters::{CpuTicks, KernelLogFinding, SystemDisturbances};
use rtlat_core::{Disturbances, RunReport};

/// What LIST injects: each thread's counters, the system's, or both.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Injected {
    thread: Option<Disturbances>,
    system: Option<SystemDisturbances>,
}

/// The ticks a `steal=PERCENT` is spread over (a hundredth of a percent
/// each).
const TICKS: u64 = 10_000;

impl Injected {
    /// Parses LIST; the error says which item is wrong and what is
    /// accepted.
    pub fn parse(list: &str) -> Result<Injected, String> {
        let mut injected = Injected::default();
        for item in list.split(',') {
            let (name, value) = match item.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (item, None),
            };
            let count = || -> Result<u64, String> {
                value
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or_else(|| format!("'{item}': {name} expects =N, a whole number"))
            };
            match (name, value) {
                ("switches", _) => injected.thread().involuntary_switches = count()?,
                ("migrations", _) => injected.thread().migrations = Some(count()?),
                ("minor-faults", _) => injected.thread().minor_faults = count()?,
                ("major-faults", _) => injected.thread().major_faults = count()?,
                ("steal", _) => {
                    let percent = value
                        .and_then(|v| v.parse::<f64>().ok())
                        .filter(|p| (0.0..=100.0).contains(p))
                        .ok_or_else(|| format!("'{item}': steal expects =PERCENT, 0 to 100"))?;
                    injected.system().ticks = Some(CpuTicks {
                        steal: (percent * TICKS as f64 / 100.0).round() as u64,
                        total: TICKS,
                    });
                }
                ("thermal", _) => injected.system().thermal_throttle_events = Some(count()?),
                ("rt-throttling", None) => injected.log(true, false),
                ("log-lost", None) => injected.log(false, true),
                ("log-unread", None) => {
                    injected.system().kernel_log =
                        KernelLogFinding::NotChecked("injected (--inject-disturbances)".into());
                }
                _ => {
                    return Err(format!(
                        "'{item}': expected switches=N, migrations=N, minor-faults=N, \
                         major-faults=N, steal=PERCENT, thermal=N, rt-throttling, log-lost \
                         or log-unread"
                    ));
                }
            }
        }
        Ok(injected)
    }

    fn thread(&mut self) -> &mut Disturbances {
        self.thread.get_or_insert(Disturbances {
            migrations: Some(0),
            ..Disturbances::default()
        })
    }

    fn system(&mut self) -> &mut SystemDisturbances {
        self.system.get_or_insert(SystemDisturbances {
            cpus: None,
            ticks: Some(CpuTicks::default()),
            thermal_throttle_events: None,
            kernel_log: KernelLogFinding::Read {
                rt_throttling: false,
                records_lost: false,
            },
        })
    }

    fn log(&mut self, rt_throttling: bool, records_lost: bool) {
        let log = &mut self.system().kernel_log;
        let (was_throttling, was_lost) = match log {
            KernelLogFinding::Read {
                rt_throttling,
                records_lost,
            } => (*rt_throttling, *records_lost),
            KernelLogFinding::NotChecked(_) => (false, false),
        };
        *log = KernelLogFinding::Read {
            rt_throttling: rt_throttling || was_throttling,
            records_lost: records_lost || was_lost,
        };
    }

    /// Puts the injected counters where a real run's would be: in each
    /// thread of `report`, and in `system`.
    pub fn apply(&self, report: &mut RunReport, system: &mut Option<SystemDisturbances>) {
        if let Some(d) = self.thread {
            for thread in &mut report.threads {
                thread.disturbances = Some(d);
            }
        }
        if let Some(s) = &self.system {
            *system = Some(s.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_fill_the_thread_and_the_system() {
        let i = Injected::parse("switches=3,major-faults=1,steal=12.5,rt-throttling").unwrap();
        assert_eq!(
            i.thread,
            Some(Disturbances {
                involuntary_switches: 3,
                migrations: Some(0),
                minor_faults: 0,
                major_faults: 1,
            })
        );
        let system = i.system.unwrap();
        assert_eq!(system.ticks.unwrap().steal_share(), Some(0.125));
        assert_eq!(
            system.kernel_log,
            KernelLogFinding::Read {
                rt_throttling: true,
                records_lost: false
            }
        );
        let only_thread = Injected::parse("migrations=2").unwrap();
        assert!(only_thread.system.is_none());
    }

    #[test]
    fn a_bad_item_is_named_with_what_is_accepted() {
        for (list, said) in [
            ("switches", "'switches': switches expects =N"),
            ("switches=-1", "'switches=-1': switches expects =N"),
            ("steal=101", "'steal=101': steal expects =PERCENT, 0 to 100"),
            ("rt-throttling=1", "'rt-throttling=1': expected switches=N"),
            ("", "'': expected switches=N"),
            ("gremlins=1", "'gremlins=1': expected"),
        ] {
            let error = Injected::parse(list).unwrap_err();
            assert!(error.starts_with(said), "{list}: {error}");
        }
    }
}
