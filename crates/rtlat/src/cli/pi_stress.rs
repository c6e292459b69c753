//! The `rtlat pi_stress` command line: pi_stress 2.4's options, read the
//! way its getopt reads them (`+hD:vqi:g:rs:pdVum` and the long names),
//! turned into validated [`Settings`].
//!
//! Unlike C, every value is checked and a bad one is a one-line
//! [`UsageError`] naming the option, the value and what is accepted
//! (C reads `-g x` as 0 groups and ignores a bad `-s` with a message).

use std::ffi::OsString;

use rtlat_args::UsageError;
use rtlat_args::options::{self, Layout, Manual, Page, Pages, Part, Read, pick};
use rtlat_args::values::{SystemView, int_in, invalid};
use rtlat_core::SchedPolicy;
use rtlat_core::inversion::{DeadlineSched, RoleSched};

use super::shared::{HasShared, Measure, SharedArgs};
use crate::pi_stress::settings::Settings;

mod flags;

use flags::{FLAGS, name};

/// What `rtlat pi_stress` is for, in one line.
pub const SUMMARY: &str = "priority-inheritance stress: inversion groups on PI mutexes";

/// What the command line asks for: [`help_text`], or to run.
pub type Invocation = rtlat_args::Invocation<Measure<Box<Settings>>>;

/// The raw state while the command line is read.
#[derive(Default)]
pub(super) struct Raw {
    debug: bool,
    groups: Option<String>,
    inversions: Option<String>,
    mlockall: bool,
    prompt: bool,
    quiet: bool,
    rr: bool,
    sched: Vec<String>,
    uniprocessor: bool,
    verbose: bool,
    version: bool,
    stuck_group: Option<String>,
    shared: SharedArgs,
}

impl HasShared for Raw {
    fn shared(&mut self) -> &mut SharedArgs {
        &mut self.shared
    }
}

/// The lowest priority of the thread kinds (pi_stress: the policy's
/// minimum, low = min, med = min + 1, high = min + 2, admin = min + 3).
const PRIO_MIN: u8 = 1;

/// Reads the `rtlat pi_stress` command line (`args` without the program
/// name); `cmdline` is kept for the JSON output.
pub fn parse(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    let settings = build(raw, cmdline, system)?;
    Ok(Invocation::Run(Measure {
        settings: Box::new(settings),
        warnings: Vec::new(),
    }))
}

fn build(raw: Raw, cmdline: String, system: &SystemView) -> Result<Settings, UsageError> {
    let mut allowed = system.allowed_cpus.clone();
    allowed.sort_unstable();
    allowed.dedup();
    if allowed.is_empty() {
        allowed.push(0);
    }
    let policy = if raw.rr {
        SchedPolicy::RoundRobin
    } else {
        SchedPolicy::Fifo
    };
    let role = |offset: u8| RoleSched {
        policy,
        priority: PRIO_MIN + offset,
    };
    let mut settings = Settings {
        version_only: raw.version,
        group_cpus: Vec::new(),
        admin_cpu: allowed[0],
        one_cpu: raw.uniprocessor || allowed.len() == 1,
        duration: None,
        inversions: None,
        low: role(0),
        medium: role(1),
        high: role(2),
        high_deadline: None,
        admin: role(3),
        quiet: raw.quiet,
        verbose: raw.verbose,
        debug: raw.debug,
        prompt: raw.prompt,
        mlockall: raw.mlockall,
        json: None,
        rt_tests: rtlat_core::RtTests::DEFAULT,
        cmdline,
        stuck_group: None,
    };
    settings.rt_tests = raw.shared.rt_tests(name)?;
    if raw.version {
        // C prints its version as soon as it reads -V.
        return Ok(settings);
    }
    settings.duration = raw.shared.stop(name)?.duration;
    let groups = match &raw.groups {
        Some(text) => int_in(
            name("groups"),
            text,
            1..=allowed.len() as i64,
            "a number of inversion groups (at most one per CPU this process may use)",
        )? as usize,
        None => (allowed.len() - 1).max(1),
    };
    settings.inversions = match &raw.inversions {
        Some(text) => Some(int_in(
            name("inversions"),
            text,
            1..=i64::MAX,
            "a number of inversions per group (leave -i out for no limit)",
        )? as u64),
        None => None,
    };
    for text in &raw.sched {
        let (id, sched, deadline) = sched_line(text, policy)?;
        match id {
            Kind::Low => settings.low = sched,
            Kind::Medium => settings.medium = sched,
            Kind::High => {
                settings.high = sched;
                settings.high_deadline = deadline;
            }
        }
    }
    settings.json = match &raw.shared.outputs.json {
        Some(text) => Some(crate::cli::output_options::output_target(
            name("json"),
            text,
        )?),
        None => None,
    };
    settings.stuck_group = match &raw.stuck_group {
        Some(text) => Some(int_in(
            name("stuck-group"),
            text,
            0..=groups as i64 - 1,
            "a group's index",
        )? as usize),
        None => None,
    };
    settings.group_cpus = if settings.one_cpu {
        vec![allowed[0]; groups]
    } else {
        // The admin thread has the first CPU, the groups the others, in
        // turn (C wraps round to CPU 0, the admin's, whether or not this
        // process may use it).
        let test = &allowed[1..];
        (0..groups).map(|g| test[g % test.len()]).collect()
    };
    Ok(settings)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Low,
    Medium,
    High,
}

/// One `-s` value: `key=value` pairs separated by commas (C splits on
/// both `,` and `=`), `id` required. `policy=deadline` (the high thread
/// only) takes `runtime=` and `deadline=` in ns, and `period=` (the
/// deadline if left out).
fn sched_line(
    text: &str,
    default_policy: SchedPolicy,
) -> Result<(Kind, RoleSched, Option<DeadlineSched>), UsageError> {
    let bad = |what: &str| invalid(name("sched"), text, what);
    let mut id = None;
    let mut policy = default_policy;
    let mut priority = None;
    let mut deadline = false;
    let (mut dl_runtime, mut dl_deadline, mut dl_period) = (None, None, None);
    let words: Vec<&str> = text.split([',', '=']).collect();
    if !words.len().is_multiple_of(2) {
        return Err(bad(
            "KEY=VALUE pairs separated by commas, id=low|med|high first",
        ));
    }
    let nanos = |v: &str, key: &str| match rtlat_args::values::int::<u64>(v) {
        Some(n) if (1024..1 << 63).contains(&n) => Ok(n),
        _ => Err(invalid(
            name("sched"),
            v,
            format_args!("expected {key}=NS, in ns, at least 1024 (the kernel's least runtime)"),
        )),
    };
    for pair in words.chunks(2) {
        let (k, v) = (pair[0], pair[1]);
        match k {
            "id" => {
                id = Some(match v {
                    "low" => Kind::Low,
                    "med" => Kind::Medium,
                    "high" => Kind::High,
                    _ => return Err(bad("id is low, med or high")),
                })
            }
            "policy" => match v {
                "fifo" => policy = SchedPolicy::Fifo,
                "rr" => policy = SchedPolicy::RoundRobin,
                "deadline" => deadline = true,
                _ => return Err(bad("policy is fifo, rr or deadline")),
            },
            "priority" => {
                priority = Some(int_in(
                    name("sched"),
                    v,
                    1..=99,
                    "a real-time priority (priority=1 to 99)",
                )? as u8)
            }
            "runtime" => dl_runtime = Some(nanos(v, k)?),
            "deadline" => dl_deadline = Some(nanos(v, k)?),
            "period" => dl_period = Some(nanos(v, k)?),
            _ => {
                return Err(bad(
                    "the keys are id, policy, priority, and runtime, deadline and period \
                     with policy=deadline",
                ));
            }
        }
    }
    let Some(id) = id else {
        return Err(bad("id=low, id=med or id=high is required"));
    };
    let default_priority = PRIO_MIN
        + match id {
            Kind::Low => 0,
            Kind::Medium => 1,
            Kind::High => 2,
        };
    let role = RoleSched {
        policy,
        priority: priority.unwrap_or(default_priority),
    };
    if !deadline {
        if dl_runtime.or(dl_deadline).or(dl_period).is_some() {
            return Err(bad("runtime, deadline and period go with policy=deadline"));
        }
        return Ok((id, role, None));
    }
    if id != Kind::High {
        return Err(bad(
            "policy=deadline is for id=high only (pi_stress 2.4 gives a low or med \
             'deadline' thread the main thread's SCHED_FIFO priority, above the high one)",
        ));
    }
    if priority.is_some() {
        return Err(bad("priority goes with policy=fifo or rr, not deadline"));
    }
    let (Some(runtime), Some(deadline)) = (dl_runtime, dl_deadline) else {
        return Err(bad(
            "policy=deadline needs runtime=NS and deadline=NS (period=NS is the deadline \
             if left out)",
        ));
    };
    let period = dl_period.unwrap_or(deadline);
    if !(runtime <= deadline && deadline <= period) {
        return Err(bad("runtime <= deadline <= period is required"));
    }
    Ok((
        id,
        role,
        Some(DeadlineSched {
            runtime,
            deadline,
            period,
        }),
    ))
}

/// The options and the help of `rtlat pi_stress`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    let group = |longs: &[&str]| pick(&FLAGS, longs);
    Page {
        title: rtlat_args::tools::help_title("pi_stress", SUMMARY),
        usage: vec!["rtlat pi_stress [OPTIONS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
Each inversion group is a low, a medium and a high priority thread on one
CPU around one priority-inheritance mutex: the low thread takes the mutex,
the high one blocks on it and lends the low one its priority, which lets
the low one run ahead of the medium one and release the mutex. Each round
is one inversion. A group that makes no progress for five checks, 0.75 s
apart, is stuck: the run ends with exit status 1. The running count is
printed every 0.75 s; the options are those of rt-tests pi_stress 2.4."
                    .to_owned(),
            ),
            Part::Heading("Groups and scheduling"),
            group(&[
                "groups",
                "inversions",
                "rr",
                "sched",
                "uniprocessor",
                "mlockall",
            ]),
            Part::Heading("When to stop (by default the run goes on until Ctrl-C)"),
            group(&["duration"]),
            Part::Heading("Output"),
            group(&[
                "quiet", "verbose", "debug", "json", "rt-tests", "prompt", "version", "help",
            ]),
            Part::Paragraph("Example: one group for 5 seconds, summary only:".to_owned()),
            Part::Example("rtlat pi_stress -g 1 -D 5 -q"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::OutputTarget;
    use rtlat_core::Nanos;
    use rtlat_testkit::parsing::{os_words, two_cpus};

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        parse(&os_words(words), "pi_stress".into(), &two_cpus())
    }

    rtlat_testkit::measured_parser_checks!();

    #[test]
    fn defaults_like_c() {
        let s = settings(&[]);
        assert_eq!(s.group_cpus, [1]);
        assert_eq!(s.admin_cpu, 0);
        assert_eq!(
            (s.low.priority, s.medium.priority, s.high.priority),
            (1, 2, 3)
        );
        assert_eq!(s.admin.priority, 4);
        assert_eq!(s.low.policy, SchedPolicy::Fifo);
        assert_eq!((s.duration, s.inversions, s.json), (None, None, None));
        assert!(!s.quiet && !s.verbose && !s.one_cpu && !s.version_only);
    }

    #[test]
    fn the_help_lists_every_visible_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rtlat_args::options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }

    #[test]
    fn spelling_table() {
        type Check = fn(&Settings) -> bool;
        let table: &[(&[&str], Check)] = &[
            (&["-d"], |s| s.debug),
            (&["--debug"], |s| s.debug),
            (&["-D", "2"], |s| s.duration == Some(Nanos::from_secs(2))),
            (&["-D2m"], |s| s.duration == Some(Nanos::from_secs(120))),
            (&["--duration=1h"], |s| {
                s.duration == Some(Nanos::from_secs(3600))
            }),
            (&["--dur", "3"], |s| s.duration == Some(Nanos::from_secs(3))),
            (&["-g", "2"], |s| s.group_cpus == [1, 1]),
            (&["-g1"], |s| s.group_cpus.len() == 1),
            (&["--groups=2"], |s| s.group_cpus.len() == 2),
            (&["--gr", "1"], |s| s.group_cpus.len() == 1),
            (&["-i", "100"], |s| s.inversions == Some(100)),
            (&["--inversions=5"], |s| s.inversions == Some(5)),
            (&["--json=x.json"], |s| {
                s.json == Some(OutputTarget::File("x.json".into()))
            }),
            (&["--js", "-"], |s| s.json == Some(OutputTarget::Stdout)),
            (&["-m"], |s| s.mlockall),
            (&["-p"], |s| s.prompt),
            (&["--prompt"], |s| s.prompt),
            (&["-q"], |s| s.quiet),
            (&["-r"], |s| {
                s.low.policy == SchedPolicy::RoundRobin && s.admin.policy == SchedPolicy::RoundRobin
            }),
            (&["--rr"], |s| s.high.policy == SchedPolicy::RoundRobin),
            (&["-s", "id=high,priority=50"], |s| {
                s.high.priority == 50 && s.high.policy == SchedPolicy::Fifo
            }),
            (&["--sched=id=low,policy=rr"], |s| {
                s.low.policy == SchedPolicy::RoundRobin && s.low.priority == 1
            }),
            (
                &["-s", "id=med,priority=7", "-s", "id=low,priority=6"],
                |s| s.medium.priority == 7 && s.low.priority == 6,
            ),
            (&["-u"], |s| s.one_cpu && s.group_cpus == [0]),
            (&["-ug", "2"], |s| s.group_cpus == [0, 0]),
            (&["-v"], |s| s.verbose),
            (&["-qv"], |s| s.verbose && !s.quiet),
            (&["-vq"], |s| s.quiet && !s.verbose),
            (&["-V"], |s| s.version_only),
            (&["--version"], |s| s.version_only),
            (&["-V", "-g", "x"], |s| s.version_only),
            (&["--stuck-group=0"], |s| s.stuck_group == Some(0)),
        ];
        for (words, check) in table {
            let s = settings(words);
            assert!(check(&s), "{words:?}: {s:?}");
        }
    }

    #[test]
    fn one_allowed_cpu_puts_everything_on_it() {
        let one = SystemView {
            allowed_cpus: vec![1],
            configured_cpus: 2,
        };
        let inv = parse(&os_words(&[]), String::new(), &one).unwrap();
        let rtlat_args::Invocation::Run(m) = inv else {
            panic!()
        };
        assert!(m.settings.one_cpu);
        assert_eq!(
            (m.settings.admin_cpu, m.settings.group_cpus.clone()),
            (1, vec![1])
        );
    }

    #[test]
    fn bad_values_name_the_option() {
        for (words, prefix) in [
            (&["-g", "0"][..], "-g/--groups: invalid value '0'"),
            (&["-g", "3"], "-g/--groups: invalid value '3'"),
            (&["-g", "x"], "-g/--groups: invalid value 'x'"),
            (&["-i", "0"], "-i/--inversions: invalid value '0'"),
            (&["-i", "-1"], "-i/--inversions: invalid value '-1'"),
            (&["-D", "-5"], "-D/--duration: invalid value '-5'"),
            (&["-D", "x"], "-D/--duration: invalid value 'x'"),
            (
                &["-s", "priority=5"],
                "-s/--sched: invalid value 'priority=5'",
            ),
            (&["-s", "id=top"], "-s/--sched: invalid value 'id=top'"),
            (&["-s", "id=low,policy=other"], "-s/--sched: invalid value"),
            (
                &["-s", "id=low,priority=100"],
                "-s/--sched: invalid value '100'",
            ),
            (&["-s", "id=low,nice"], "-s/--sched: invalid value"),
            (&["-s", "id=low,color=red"], "-s/--sched: invalid value"),
            (
                &["-s", "id=high,policy=deadline,runtime=100,deadline=5000"],
                "-s/--sched: invalid value '100'",
            ),
            (
                &["-s", "id=high,policy=deadline,runtime=5000"],
                "-s/--sched: invalid value 'id=high,policy=deadline,runtime=5000': policy=deadline needs",
            ),
            (
                &["-s", "id=high,policy=deadline,runtime=5000,deadline=2000"],
                "-s/--sched: invalid value 'id=high,policy=deadline,runtime=5000,deadline=2000': runtime <=",
            ),
            (
                &[
                    "-s",
                    "id=high,policy=deadline,runtime=2000,deadline=5000,period=x",
                ],
                "-s/--sched: invalid value 'x'",
            ),
            (
                &["-s", "id=low,policy=deadline,runtime=2000,deadline=5000"],
                "-s/--sched: invalid value 'id=low,policy=deadline,runtime=2000,deadline=5000': policy=deadline is",
            ),
            (
                &["-s", "id=high,runtime=2000"],
                "-s/--sched: invalid value 'id=high,runtime=2000': runtime, deadline",
            ),
            (&["--json=/nonexistent/x.json"], "--json: cannot write"),
            (&["--stuck-group=1"], "--stuck-group: invalid value '1'"),
            (&["-x"], "unrecognized option '-x'"),
            (&["--bogus"], "unrecognized option '--bogus'"),
            (&["--ver"], "option '--ver' is ambiguous"),
            (&["-g"], "option '-g' requires a value"),
            (&["extra"], "unexpected argument 'extra'"),
        ] {
            let e = error(words);
            assert!(e.starts_with(prefix), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{words:?}: one line: {e}");
        }
    }
}
