//! Carries out one `rtlat pi_stress` run: the privilege check, `-m`, the
//! main (admin) thread raised and pinned, the groups started, `-p`, the
//! banner, then the reporter loop of C (a check every 0.75 s: the count,
//! the duration, a signal, the watchdog), then the summary and the JSON.
//!
//! Every way a run ends (duration, `-i`, SIGINT/SIGTERM/SIGHUP, a stuck
//! group, a thread's error) goes through the same summary and JSON. C
//! ends on SIGINT by sending SIGTERM to its whole process group, without
//! its summary; on SIGTERM it dies at once.

use std::io::{BufRead, Write};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use rtlat_core::inversion::{
    DeadlineSched, InversionPlan, InversionRun, Role, RoleError, RoleStep,
};
use rtlat_core::sys_policy;
use rtlat_results::pi_stress::PiStressMembers;
use rtlat_sys::{affinity, sched};

use super::output::{write_banner, write_count, write_json, write_stopping, write_summary};
use super::settings::Settings;
use crate::host::Host;
use crate::output::{OutputTarget, Stdout, end_run, write_to};
use crate::rtsetup::setattr_cause;
use crate::rtsetup::{check_realtime_privilege, lock_memory, pin_failure, policy_failure};
use crate::run_audit;
use crate::signals::SignalFlags;
use rtlat_args::stdio::tell;

/// How often the reporter wakes (pi_stress: 0.75 s).
const REPORT_INTERVAL: Duration = Duration::from_millis(750);
/// How long the end waits for the groups' threads to leave.
const PATIENCE: Duration = Duration::from_secs(2);

/// Runs pi_stress as `settings` say; returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let mut out = Stdout::new(true);
    if settings.version_only {
        // As C: no newline.
        let version = settings.rt_tests.json_version();
        out.emit(|w| write!(w, "pi_stress v{version} "));
        return end_run(&mut out, Ok(()), None, 0);
    }
    let max_priority = settings.admin.priority;
    check_realtime_privilege(
        settings.admin.policy,
        max_priority,
        Some(&[settings.admin_cpu]),
        "",
    )
    .map_err(no_realtime_mode)?;
    let info = |line: &str| {
        if settings.verbose {
            eprintln!("INFO: {line}");
        }
    };
    let host = Host::Real;
    let audit = run_audit::audit_run(
        host,
        settings.json.is_some(),
        None,
        &run_audit::request(
            settings.group_cpus.iter().map(|&c| Some(c)),
            Some(max_priority),
            None,
        ),
    );
    if settings.mlockall {
        lock_memory()?;
    }
    let signals = SignalFlags::install()?;
    // The admin thread: the main thread, above every group's threads.
    affinity::pin_current_thread(&[settings.admin_cpu]).map_err(|e| {
        anyhow::anyhow!(pin_failure(
            "the main thread",
            settings.admin_cpu,
            &rtlat_sys::strerror(e.raw_os_error())
        ))
    })?;
    if settings.one_cpu {
        info("admin and test threads running on one processor");
    } else {
        info(&format!(
            "Admin thread running on processor: {}",
            settings.admin_cpu
        ));
        info(&test_cpus_line(&settings.group_cpus));
    }
    sched::set_current_thread(
        sys_policy(settings.admin.policy),
        i32::from(settings.admin.priority),
    )
    .map_err(|e| {
        anyhow::anyhow!(policy_failure(
            "the main thread",
            settings.admin.policy,
            settings.admin.priority,
            &rtlat_sys::strerror(e.raw_os_error())
        ))
    })?;
    info(&format!(
        "Creating {} test groups",
        settings.group_cpus.len()
    ));
    let plan = InversionPlan {
        group_cpus: settings.group_cpus.iter().map(|&c| Some(c)).collect(),
        low: settings.low,
        medium: settings.medium,
        high: settings.high,
        high_deadline: settings.high_deadline,
        // Every CPU (C: 0 to the online count - 1, which misses a CPU
        // above an offline one; the kernel leaves out the offline ones).
        deadline_cpus: (0..rtlat_sys::system::configured_cpus()).collect(),
        inversions: settings.inversions,
        debug: settings.debug,
        stuck_group: settings.stuck_group,
    };
    let mut groups = InversionRun::start(plan).context("starting the inversion groups")?;
    if settings.prompt {
        out.emit(|w| write!(w, "Press return to start test: "));
        out.flush();
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
    }
    if !settings.quiet {
        out.emit(|w| write_banner(w, settings));
    }
    let start_time = host.timestamp();
    let start = wall_seconds();
    info("Releasing all threads");
    if let Err(e) = groups.release() {
        let allowed = groups.deadline_affinity();
        groups.finish(PATIENCE);
        anyhow::bail!(describe(e, settings, &allowed));
    }

    let outcome = report(&mut groups, settings, &signals, &mut out, start, &info);
    if !settings.quiet {
        out.emit(write_stopping);
    }
    groups.stop();
    info("setting shutdown flag");
    let thread_error = groups.error();
    info("waiting for all threads to complete");
    // The rounds under way when the stop came are counted, as in C.
    // A stuck group's threads never leave: do not wait for them.
    let patience = if outcome.stuck.is_empty() {
        PATIENCE
    } else {
        Duration::from_millis(50)
    };
    let (all_left, total) = groups.finish(patience);
    if all_left {
        info("All threads terminated!");
    }
    let finish = wall_seconds();
    let failed = !outcome.stuck.is_empty() || thread_error.is_some();
    let status = u8::from(failed);
    out.emit(|w| write_summary(w, total, finish.saturating_sub(start)));
    let mut written = Ok(());
    if let Some(target) = &settings.json {
        let meta = host.run_meta(
            &settings.cmdline,
            settings.rt_tests,
            start_time,
            status,
            audit,
        );
        let members = PiStressMembers {
            inversion: total,
            groups: settings.group_cpus.len(),
            stuck_groups: outcome.stuck.clone(),
        };
        written = write_target(target, &mut out, |w| write_json(w, &meta, &members));
    }
    let failure = thread_error.map(|e| describe(e, settings, &[]));
    end_run(&mut out, written, failure, status)
}

fn write_target(
    target: &OutputTarget,
    out: &mut Stdout,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    write_to(target, out, "--json", write)
}

/// What the reporter saw.
struct Outcome {
    /// The groups the watchdog found stuck.
    stuck: Vec<usize>,
}

/// pi_stress's reporter: every 0.75 s the count (without `-q`), then
/// the duration, a stop signal, the watchdog. Sleeps in short steps so
/// that a signal ends the run at once.
fn report(
    groups: &mut InversionRun,
    settings: &Settings,
    signals: &SignalFlags,
    out: &mut Stdout,
    start: u64,
    info: &dyn Fn(&str),
) -> Outcome {
    let end = settings
        .duration
        .map(|d| start + (d.as_nanos().max(1) as u64).div_ceil(1_000_000_000));
    let mut stuck = Vec::new();
    let interrupted = |groups: &InversionRun| {
        let next = Instant::now() + REPORT_INTERVAL;
        while Instant::now() < next {
            if signals.stop_requested() || groups.shutting_down() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    };
    // C sleeps once first, to let everything get going.
    let mut stop = interrupted(groups);
    info("Press Control-C to stop test\nCurrent Inversions: ");
    while !stop {
        stop = interrupted(groups);
        if !settings.quiet && !groups.shutting_down() {
            let total = groups.total();
            out.emit(|w| write_count(w, total));
        }
        if signals.stop_requested() {
            info("Keyboard Interrupt!");
            break;
        }
        if end.is_some_and(|end| wall_seconds() > end) {
            info(&format!(
                "duration reached ({} seconds)",
                settings
                    .duration
                    .map_or(0, |d| d.as_nanos() / 1_000_000_000)
            ));
            break;
        }
        if groups.shutting_down() {
            break;
        }
        stuck = groups.watchdog();
        if !stuck.is_empty() {
            out.flush();
            for g in &stuck {
                tell!("WATCHDOG triggered: group {g} is deadlocked!");
            }
            tell!("reporter stopping due to watchdog event");
            break;
        }
    }
    groups.stop();
    Outcome { stuck }
}

/// The privilege check's refusal without its advice to measure without
/// real-time priority: these tools have no such mode.
pub fn no_realtime_mode(e: anyhow::Error) -> anyhow::Error {
    let text = e.to_string();
    match text.split_once(", or measure without real-time priority") {
        Some((head, _)) => anyhow::anyhow!("{head} (the inversion needs real-time priorities)"),
        None => e,
    }
}

/// `time()`, as C measures the run's length.
fn wall_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn test_cpus_line(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() == 1 {
        format!("Test threads running on processor: {}", sorted[0])
    } else {
        format!(
            "Test threads running on processors: {}",
            rtlat_core::format_cpu_list(&sorted)
        )
    }
}

/// One line for a thread's failure; `allowed`: the CPUs a high thread
/// refused SCHED_DEADLINE was allowed on.
fn describe(e: RoleError, settings: &Settings, allowed: &[usize]) -> String {
    let who = format!("{}[{}]", e.role.name(), e.group);
    let why = rtlat_sys::strerror(e.errno);
    let sched = match e.role {
        Role::Low => settings.low,
        Role::Medium => settings.medium,
        Role::High => settings.high,
    };
    match e.step {
        RoleStep::Affinity => pin_failure(&who, settings.group_cpus[e.group], &why),
        RoleStep::Scheduler => policy_failure(&who, sched.policy, sched.priority, &why),
        RoleStep::Mutex => format!("{who}: the PI mutex failed: {why}"),
        RoleStep::DeadlineAffinity => {
            format!("{who}: cannot widen its affinity to every CPU for SCHED_DEADLINE: {why}")
        }
        RoleStep::Deadline => {
            let dl = settings.high_deadline.unwrap_or(DeadlineSched {
                runtime: 0,
                deadline: 0,
                period: 0,
            });
            let cause = setattr_cause(
                e.errno,
                allowed,
                "use fewer groups (-g) or less runtime per period",
                "change -s's runtime, deadline or period",
            );
            format!(
                "{who} (runtime {} ns, deadline {} ns, period {} ns): cannot take \
                 SCHED_DEADLINE: {why}: {cause}",
                dl.runtime, dl.deadline, dl.period
            )
        }
    }
}
