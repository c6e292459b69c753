//! `rtlat ssdd`: the ptrace single-step stress of rt-tests' ssdd 2.4.
//! The main process forks the tracers (`rtlat_sys::singlestep`, where
//! everything a forked process runs lives), waits for them and says
//! whether all passed. A stop signal ends the run early: the tracers left
//! are killed (their tracees die with them) and the run fails, status 1.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use rtlat_results::passfail::SsddMembers;
use rtlat_sys::singlestep::{Tracees, TracerPlan, WaitState, fork_tracer, kill_child, wait_child};

use crate::host::Host;
use crate::output::{OutputTarget, Stdout, end_run, write_to};
use crate::report::json::write_unjudged;
use crate::run_audit;
use crate::signals::SignalFlags;

/// How often the main process looks at its tracers and the signals.
const POLL: Duration = Duration::from_millis(2);

/// Everything `rtlat ssdd` needs to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `-f`: tracers.
    pub forks: u32,
    /// `-i`: single steps per tracer.
    pub steps: u32,
    /// `-q`: only the final line.
    pub quiet: bool,
    /// `--json`, if requested.
    pub json: Option<OutputTarget>,
    /// `--rt-tests` (or `$RTLAT_RT_TESTS`): the release whose JSON version
    /// string is written (the text and keys are the same in every one).
    pub rt_tests: rtlat_core::RtTests,
    /// The command line as given, for the JSON `cmdline:` key.
    pub cmdline: String,
}

/// Runs the tracers; returns the exit status (0 all passed, 1 not).
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let host = Host::Real;
    let start_time = host.timestamp();
    let mut out = Stdout::new(false);
    let pid = rtlat_sys::system::current_pid();
    let audit = run_audit::audit_run(
        host,
        settings.json.is_some(),
        None,
        &run_audit::request(std::iter::empty(), None, None),
    );
    let signals = SignalFlags::install()?;
    if !settings.quiet {
        out.emit(|w| {
            write!(
                w,
                "#main : {pid}\n#forks: {}\n#steps: {}\n\n",
                settings.forks, settings.steps
            )
        });
    }
    // The tracers write to the same stdout, unbuffered: ours first.
    out.flush();
    // A tracee whose tracer is killed at a stop (below) dies by its parent
    // death signal; as their subreaper rtlat is given it and reaps it, so
    // that none is left when rtlat ends. It knows each tracee's pid
    // (`tracees`) and reaps no other child.
    if let Err(e) = rtlat_sys::process::become_subreaper() {
        anyhow::bail!(
            "cannot become the tracees' subreaper: {}",
            rtlat_sys::strerror(e.raw_os_error())
        );
    }
    let tracees = match Tracees::new(settings.forks) {
        Ok(tracees) => tracees,
        Err(e) => anyhow::bail!(
            "cannot map the tracees' pids: {}",
            rtlat_sys::strerror(e.raw_os_error())
        ),
    };
    // Each tracer's pid and number.
    let mut running = BTreeMap::new();
    for id in 0..settings.forks {
        let plan = TracerPlan {
            id,
            steps: settings.steps,
            quiet: settings.quiet,
            parent: pid,
        };
        match fork_tracer(plan, &tracees) {
            Ok(tracer) => {
                running.insert(tracer, id);
            }
            Err(e) => {
                end_tracers(&running, &tracees);
                anyhow::bail!(
                    "cannot fork tracer {id}: {}",
                    rtlat_sys::strerror(e.raw_os_error())
                );
            }
        }
    }
    let mut error = false;
    let mut stopped = false;
    while !running.is_empty() {
        if signals.stop_requested() {
            stopped = true;
            end_tracers(&running, &tracees);
            error = true;
            break;
        }
        let mut changed = false;
        for (&tracer, &id) in running.clone().iter() {
            if let Some((_, state)) = wait_child(tracer, true)? {
                // A stopped tracer is not an end (it goes on when
                // continued); any end but exit 0 is a failure.
                if matches!(state, WaitState::Stopped(_)) {
                    continue;
                }
                error |= state != WaitState::Exited;
                // One that died before it reaped its tracee left it.
                tracees.reap(id);
                running.remove(&tracer);
                changed = true;
            }
        }
        if !changed {
            std::thread::sleep(POLL);
        }
    }
    let left = running.len();
    out.emit(|w| {
        writeln!(
            w,
            "{}.",
            if error {
                "One or more tests FAILED"
            } else {
                "All tests PASSED"
            }
        )
    });
    let status = u8::from(error);
    let written = match &settings.json {
        Some(target) => {
            let meta = host.run_meta(
                &settings.cmdline,
                settings.rt_tests,
                start_time,
                status,
                audit,
            );
            write_to(target, &mut out, "--json", |mut w| {
                write_unjudged(&mut w, &meta, &SsddMembers {})
            })
        }
        None => Ok(()),
    };
    let failure = stopped.then(|| {
        format!(
            "stopped by a signal: {left} of {} tracers had not finished",
            settings.forks
        )
    });
    end_run(&mut out, written, failure, status)
}

/// Kills the tracers (their tracees die with them) and reaps them, then
/// the tracees they had not reaped, which the kernel gives to rtlat,
/// their subreaper, as their tracers die: when it returns, no tracer and
/// no tracee is left, and no other child was waited for.
fn end_tracers(tracers: &BTreeMap<i32, u32>, tracees: &Tracees) {
    for &tracer in tracers.keys() {
        kill_child(tracer);
    }
    for (&tracer, &id) in tracers {
        let _ = wait_child(tracer, false);
        tracees.reap(id);
    }
}
