//! What the whole machine did while a load ran, from `/proc/stat`: the
//! share of CPU time that was busy, and context switches and interrupts
//! per second. Two readings, one before and one after, give the figures.

use std::time::Duration;

/// The counters of one `/proc/stat` reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// Clock ticks of all CPUs spent neither idle nor waiting for I/O.
    pub busy_ticks: u64,
    /// Clock ticks of all CPUs in every state.
    pub total_ticks: u64,
    /// Context switches since boot (`ctxt`).
    pub context_switches: u64,
    /// Interrupts since boot (the first number of `intr`).
    pub interrupts: u64,
}

/// Machine-wide activity between two readings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Activity {
    /// Busy share of all CPUs' time, 0 to 100.
    pub cpu_busy_percent: f64,
    /// Context switches per second.
    pub context_switches_per_sec: f64,
    /// Interrupts per second.
    pub interrupts_per_sec: f64,
}

impl ProcStat {
    /// Reads `/proc/stat`.
    pub fn read() -> std::io::Result<ProcStat> {
        let text = std::fs::read_to_string("/proc/stat")?;
        ProcStat::parse(&text).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "/proc/stat lacks the cpu, ctxt or intr line",
            )
        })
    }

    /// The counters of a `/proc/stat` text; `None` if a line is missing.
    /// The `cpu` line's columns are user, nice, system, idle, iowait, irq,
    /// softirq, steal (guest time is already inside user and nice).
    pub fn parse(text: &str) -> Option<ProcStat> {
        let (mut cpu, mut ctxt, mut intr) = (None, None, None);
        for line in text.lines() {
            let mut words = line.split_ascii_whitespace();
            match words.next() {
                Some("cpu") => {
                    let ticks: Vec<u64> = words.take(8).map_while(|w| w.parse().ok()).collect();
                    if ticks.len() >= 4 {
                        let total: u64 = ticks.iter().sum();
                        let idle = ticks[3] + ticks.get(4).copied().unwrap_or(0);
                        cpu = Some((total - idle, total));
                    }
                }
                Some("ctxt") => ctxt = words.next().and_then(|w| w.parse().ok()),
                Some("intr") => intr = words.next().and_then(|w| w.parse().ok()),
                _ => {}
            }
        }
        let (busy_ticks, total_ticks) = cpu?;
        Some(ProcStat {
            busy_ticks,
            total_ticks,
            context_switches: ctxt?,
            interrupts: intr?,
        })
    }

    /// The activity from `earlier` to this reading, `elapsed` apart.
    pub fn since(&self, earlier: &ProcStat, elapsed: Duration) -> Activity {
        let secs = elapsed.as_secs_f64();
        let rate = |now: u64, then: u64| {
            if secs > 0.0 {
                now.saturating_sub(then) as f64 / secs
            } else {
                0.0
            }
        };
        let total = self.total_ticks.saturating_sub(earlier.total_ticks);
        let busy = self.busy_ticks.saturating_sub(earlier.busy_ticks);
        Activity {
            cpu_busy_percent: if total > 0 {
                100.0 * busy as f64 / total as f64
            } else {
                0.0
            },
            context_switches_per_sec: rate(self.context_switches, earlier.context_switches),
            interrupts_per_sec: rate(self.interrupts, earlier.interrupts),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "cpu  100 5 50 800 20 3 2 1 0 0
cpu0 50 2 25 400 10 1 1 0 0 0
intr 12345 0 7 0
ctxt 67890
btime 1700000000
processes 4242
";

    #[test]
    fn parses_the_machine_lines() {
        let s = ProcStat::parse(SAMPLE).unwrap();
        assert_eq!(s.total_ticks, 981);
        assert_eq!(s.busy_ticks, 981 - 820);
        assert_eq!((s.context_switches, s.interrupts), (67890, 12345));
        assert_eq!(ProcStat::parse("cpu 1 2 3 4\nctxt 5\n"), None);
    }

    #[test]
    fn activity_between_two_readings() {
        let a = ProcStat {
            busy_ticks: 100,
            total_ticks: 1000,
            context_switches: 1000,
            interrupts: 500,
        };
        let b = ProcStat {
            busy_ticks: 150,
            total_ticks: 1200,
            context_switches: 3000,
            interrupts: 1500,
        };
        let act = b.since(&a, Duration::from_secs(2));
        assert_eq!(act.cpu_busy_percent, 25.0);
        assert_eq!(act.context_switches_per_sec, 1000.0);
        assert_eq!(act.interrupts_per_sec, 500.0);
    }

    #[test]
    fn this_machine_has_a_proc_stat() {
        let s = ProcStat::read().expect("/proc/stat");
        assert!(s.total_ticks > 0 && s.context_switches > 0);
    }
}
