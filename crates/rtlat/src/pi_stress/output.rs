//! pi_stress's own output formats, byte for byte as 2.4 writes them: the
//! banner, the running count (`ESC[1A` then `Current Inversions: N`), the
//! stop line and the summary; and its JSON document.

use std::io::{self, Write};

use rtlat_core::SchedPolicy;
use rtlat_core::inversion::RoleSched;
use rtlat_results::pi_stress::PiStressMembers;

use super::settings::Settings;
use crate::report::RunMeta;
use crate::report::json::write_unjudged;

/// Moves the cursor up one line.
const UP_ONE: &str = "\x1b[1A";
/// Moves the cursor down one line.
const DOWN_ONE: &str = "\x1b[1B";

fn policy_name(policy: SchedPolicy) -> &'static str {
    match policy {
        SchedPolicy::RoundRobin => "SCHED_RR",
        SchedPolicy::Fifo => "SCHED_FIFO",
        SchedPolicy::Other => "SCHED_OTHER",
        SchedPolicy::Batch => "SCHED_BATCH",
        SchedPolicy::Idle => "SCHED_IDLE",
    }
}

fn thread_line(w: &mut impl Write, name: &str, s: RoleSched) -> io::Result<()> {
    writeln!(
        w,
        "    {name:>6} thread {} priority {}",
        policy_name(s.policy),
        s.priority
    )
}

/// The banner `pi_stress` prints before the run (without `-q`).
pub fn write_banner(w: &mut impl Write, s: &Settings) -> io::Result<()> {
    let groups = s.group_cpus.len();
    writeln!(w, "Starting PI Stress Test")?;
    writeln!(w, "Number of thread groups: {groups}")?;
    match s.duration {
        Some(d) => writeln!(
            w,
            "Duration of test run: {} seconds",
            d.as_nanos() / 1_000_000_000
        )?,
        None => writeln!(w, "Duration of test run: infinite")?,
    }
    match s.inversions {
        Some(n) => writeln!(w, "Number of inversions per group: {n}")?,
        None => writeln!(w, "Number of inversions per group: unlimited")?,
    }
    thread_line(w, "Admin", s.admin)?;
    writeln!(w, "{groups} groups of 3 threads will be created")?;
    match s.high_deadline {
        Some(dl) => writeln!(
            w,
            "    {:>6} thread SCHED_DEADLINE runtime {} deadline {} period {}",
            "High", dl.runtime, dl.deadline, dl.period
        )?,
        None => thread_line(w, "High", s.high)?,
    }
    thread_line(w, "Med", s.medium)?;
    thread_line(w, "Low", s.low)?;
    writeln!(w)
}

/// The running count, over the line above.
pub fn write_count(w: &mut impl Write, total: u64) -> io::Result<()> {
    writeln!(w, "{UP_ONE}Current Inversions: {total}")
}

/// The line after the last count (without `-q`).
pub fn write_stopping(w: &mut impl Write) -> io::Result<()> {
    writeln!(w, "{DOWN_ONE}Stopping test")
}

/// The summary: the inversions and the run's length in whole seconds
/// (`time()` at the start and at the end, as C).
pub fn write_summary(w: &mut impl Write, total: u64, seconds: u64) -> io::Result<()> {
    writeln!(w, "Total inversion performed: {total}")?;
    writeln!(
        w,
        "Test Duration: {} days, {} hours, {} minutes, {} seconds",
        seconds / 86_400,
        seconds / 3600 % 24,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// The JSON document: the envelope, `inversion`, then ours.
pub fn write_json(
    mut w: &mut dyn Write,
    meta: &RunMeta,
    members: &PiStressMembers,
) -> io::Result<()> {
    write_unjudged(&mut w, meta, members)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_core::inversion::RoleSched;

    fn fifo(priority: u8) -> RoleSched {
        RoleSched {
            policy: SchedPolicy::Fifo,
            priority,
        }
    }

    fn settings() -> Settings {
        Settings {
            version_only: false,
            group_cpus: vec![1],
            admin_cpu: 0,
            one_cpu: false,
            duration: Some(rtlat_core::Nanos::from_secs(2)),
            inversions: None,
            low: fifo(1),
            medium: fifo(2),
            high: fifo(3),
            high_deadline: None,
            admin: fifo(4),
            quiet: false,
            verbose: false,
            debug: false,
            prompt: false,
            mlockall: false,
            json: None,
            rt_tests: rtlat_core::RtTests::DEFAULT,
            cmdline: String::new(),
            stuck_group: None,
        }
    }

    /// `pi_stress -D 2 -g 1` 2.4, captured on the reference machine.
    #[test]
    fn the_banner_byte_for_byte() {
        let mut out = Vec::new();
        write_banner(&mut out, &settings()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Starting PI Stress Test\n\
             Number of thread groups: 1\n\
             Duration of test run: 2 seconds\n\
             Number of inversions per group: unlimited\n\
             \x20    Admin thread SCHED_FIFO priority 4\n\
             1 groups of 3 threads will be created\n\
             \x20     High thread SCHED_FIFO priority 3\n\
             \x20      Med thread SCHED_FIFO priority 2\n\
             \x20      Low thread SCHED_FIFO priority 1\n\
             \n"
        );
    }

    #[test]
    fn count_stop_and_summary_byte_for_byte() {
        let mut out = Vec::new();
        write_count(&mut out, 90650).unwrap();
        write_stopping(&mut out).unwrap();
        write_summary(&mut out, 184684, 3).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\x1b[1ACurrent Inversions: 90650\n\
             \x1b[1BStopping test\n\
             Total inversion performed: 184684\n\
             Test Duration: 0 days, 0 hours, 0 minutes, 3 seconds\n"
        );
        let mut out = Vec::new();
        write_summary(&mut out, 0, 90_061).unwrap();
        assert!(
            String::from_utf8(out)
                .unwrap()
                .ends_with("1 days, 1 hours, 1 minutes, 1 seconds\n")
        );
    }

    #[test]
    fn round_robin_and_no_limit() {
        let mut s = settings();
        s.duration = None;
        s.inversions = Some(10);
        s.admin.policy = SchedPolicy::RoundRobin;
        let mut out = Vec::new();
        write_banner(&mut out, &s).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Duration of test run: infinite\n"));
        assert!(text.contains("Number of inversions per group: 10\n"));
        assert!(text.contains("     Admin thread SCHED_RR priority 4\n"));
    }

    /// `-s id=high,policy=deadline,runtime=100000,deadline=1000000,
    /// period=1000000`, as 2.4 prints it.
    #[test]
    fn a_deadline_high_thread() {
        let mut s = settings();
        s.high_deadline = Some(rtlat_core::inversion::DeadlineSched {
            runtime: 100_000,
            deadline: 1_000_000,
            period: 1_000_000,
        });
        let mut out = Vec::new();
        write_banner(&mut out, &s).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(
            "\n      High thread SCHED_DEADLINE runtime 100000 deadline 1000000 period 1000000\n"
        ));
    }
}
