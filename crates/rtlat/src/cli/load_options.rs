//! `--load SPEC`, `--load-schedule SCHEDULE` and `--load-cpus LIST`, the
//! same in every measuring tool's command line: their rows, raw values,
//! the help line of `--load-cpus`, and their validation into a
//! [`LoadSchedule`] before anything starts.

use std::path::PathBuf;

use rtlat_core::Nanos;
use rtlat_core::load::{LoadPhase, LoadSchedule};
use rtlat_core::load::{LoadPlan, parse_spec};
use rtlat_core::parse_cpu_list;

use rtlat_args::UsageError;
use rtlat_args::getopt::REQ;
use rtlat_args::options::Flag;

use rtlat_args::values::{DurationError, OptionName, SystemView, duration, invalid};

/// A tool's raw state that keeps the raw values of --load, --load-schedule and --load-cpus (every
/// tool's through its shared values: `cli::shared`).
pub trait HasLoad {
    /// Where they go.
    fn load_args(&mut self) -> &mut LoadArgs;
}

/// The definitions of `--load`, `--load-schedule` and `--load-cpus` (ours,
/// long only).
pub fn flags<R: HasLoad>() -> Vec<Flag<R>> {
    vec![
        Flag::new_long("load", REQ, "SPEC")
            .help(rtlat_args::lines![
                "run load beside the measurement, from before the",
                "first sample to after the last: KIND[:WORKERS],...",
                "with KIND one of cpu memory cache io messaging",
                "hackbench syscalls timers fork; one line per kind at",
                "the end and a \"load\" object in the JSON",
            ])
            .apply(|r: &mut R, v| {
                r.load_args().load = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("load-schedule", REQ, "SCHEDULE")
            .help(rtlat_args::lines![
                "",
                "load in phases, LOAD=DURATION,... with LOAD idle or",
                "KIND[:WORKERS]+...: 'idle=30s,cpu=60s,cpu:1+",
                "messaging:2=60s'; the run ends with the schedule",
                "(or sooner with -l or -D); results per phase, also",
                "as \"phases\" in the JSON",
            ])
            .apply(|r: &mut R, v| {
                r.load_args().schedule = Some(v.text()?);
                Ok(())
            }),
        load_cpus(),
    ]
}

/// The definition of `--load-cpus LIST`.
fn load_cpus<R: HasLoad>() -> Flag<R> {
    Flag::new_long("load-cpus", REQ, "LIST")
        .help(rtlat_args::lines![
            "run the load on these CPUs only (0-3,8), one worker",
            "per CPU of LIST by default (else one per CPU)",
        ])
        .apply(|r: &mut R, v| {
            r.load_args().cpus = Some(v.text()?);
            Ok(())
        })
}

/// The raw values of the three options as a command line's parser
/// collects them (the last one wins).
#[derive(Clone, Debug, Default)]
pub struct LoadArgs {
    /// `--load SPEC`.
    pub load: Option<String>,
    /// `--load-schedule SCHEDULE`.
    pub schedule: Option<String>,
    /// `--load-cpus LIST`.
    pub cpus: Option<String>,
}

impl LoadArgs {
    /// The validated load ([`load_schedule`]); `name` spells an option of
    /// the tool by its long name. `io` makes its
    /// files in $TMPDIR or /tmp.
    pub fn validate<O: OptionName>(
        &self,
        name: impl Fn(&str) -> O,
        system: &SystemView,
    ) -> Result<Option<LoadSchedule>, UsageError> {
        load_schedule(
            LoadOptions {
                load: (name("load"), self.load.as_deref()),
                schedule: (name("load-schedule"), self.schedule.as_deref()),
                cpus: (name("load-cpus"), self.cpus.as_deref()),
            },
            system,
            std::env::temp_dir(),
        )
    }
}

/// The raw values of the three options, with the ids that spell them.
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions<'a, O> {
    /// `--load SPEC`.
    pub load: (O, Option<&'a str>),
    /// `--load-schedule SCHEDULE`.
    pub schedule: (O, Option<&'a str>),
    /// `--load-cpus LIST`.
    pub cpus: (O, Option<&'a str>),
}

/// The program `fork` workers start to fork in a process of their own:
/// this binary (see `rtlat_core::helper`).
pub const FORK_HELPER: &str = "/proc/self/exe";

/// What a schedule's phase lengths accept.
const PHASE_LENGTH_EXPECTED: &str = "a phase length is a whole number of seconds above 0, \
                                     optionally followed by s, m, h or d (30s, 10m)";

/// The load of a run, or `None` without `--load` and `--load-schedule`.
/// Workers go one per CPU of `--load-cpus` (pinned to them round-robin),
/// by default one per CPU the process may use (pinned the same way, so that
/// the measurement's `-a` never moves them); `temp_root` is where `io`
/// makes its files.
pub fn load_schedule<O: OptionName>(
    options: LoadOptions<'_, O>,
    system: &SystemView,
    temp_root: PathBuf,
) -> Result<Option<LoadSchedule>, UsageError> {
    let LoadOptions {
        load,
        schedule,
        cpus,
    } = options;
    let load_cpus = match cpus.1 {
        Some(text) => {
            let list = parse_cpu_list(text, &system.allowed_cpus, system.configured_cpus)
                .map_err(|e| invalid(cpus.0, text, e))?;
            Some(list)
        }
        None => None,
    };
    let cpus_for_load = load_cpus.unwrap_or_else(|| system.allowed_cpus.clone());
    let plan = |kinds: &str| -> Result<LoadPlan, String> {
        let requests = parse_spec(kinds).map_err(|e| e.to_string())?;
        Ok(LoadPlan {
            fork_helper: Some(PathBuf::from(FORK_HELPER)),
            ..LoadPlan::from_requests(
                &requests,
                cpus_for_load.len(),
                cpus_for_load.clone(),
                None,
                temp_root.clone(),
            )
        })
    };
    match (load.1, schedule.1) {
        (Some(_), Some(_)) => Err(UsageError(format!(
            "{} and {} cannot be combined: a constant load is a schedule of one phase",
            load.0.spelling(),
            schedule.0.spelling()
        ))),
        (None, None) if cpus.1.is_some() => Err(UsageError(format!(
            "{} needs {} or {}: it says where the load runs",
            cpus.0.spelling(),
            load.0.spelling(),
            schedule.0.spelling()
        ))),
        (None, None) => Ok(None),
        (Some(text), None) => {
            let plan = plan(text).map_err(|e| invalid(load.0, text, e))?;
            Ok(Some(LoadSchedule {
                text: text.to_string(),
                phases: vec![LoadPhase {
                    name: text.trim().to_string(),
                    plan: Some(plan),
                    length: None,
                }],
            }))
        }
        (None, Some(text)) => {
            let mut phases = Vec::new();
            for item in text.split(',') {
                let phase = parse_phase(item.trim(), &plan).map_err(|e| {
                    UsageError(format!(
                        "{}: invalid value '{text}': phase '{}': {e}",
                        schedule.0.spelling(),
                        item.trim()
                    ))
                })?;
                phases.push(phase);
            }
            Ok(Some(LoadSchedule {
                text: text.to_string(),
                phases,
            }))
        }
    }
}

/// One `LOAD=DURATION` of a schedule: LOAD is `idle` or kinds joined by
/// `+`, each with an optional `:WORKERS`.
fn parse_phase(
    item: &str,
    plan: &impl Fn(&str) -> Result<LoadPlan, String>,
) -> Result<LoadPhase, String> {
    let Some((load, length)) = item.split_once('=') else {
        return Err("expected LOAD=DURATION, LOAD being idle or KIND[:WORKERS][+KIND...]".into());
    };
    let load = load.trim();
    let length = match duration(length) {
        Ok(Some(l)) => l,
        Ok(None) => {
            return Err(format!(
                "length '{}': {PHASE_LENGTH_EXPECTED}",
                length.trim()
            ));
        }
        Err(DurationError::Malformed) => {
            return Err(format!(
                "length '{}': {PHASE_LENGTH_EXPECTED}",
                length.trim()
            ));
        }
        Err(DurationError::SecondsOverflow | DurationError::TooLong) => {
            return Err(format!(
                "length '{}': too long: at most 292 years",
                length.trim()
            ));
        }
    };
    let plan = if load == "idle" {
        None
    } else if load.contains(',') || load.is_empty() {
        return Err("expected idle or KIND[:WORKERS][+KIND[:WORKERS]...]".into());
    } else {
        Some(plan(&load.replace('+', ","))?)
    };
    Ok(LoadPhase {
        name: load.to_string(),
        plan,
        length: Some(length),
    })
}

/// The end of a run with a schedule: its `-D` limit, or the schedule's end
/// if that comes first (`--load-schedule` ends the run when it ends).
pub fn run_duration(duration: Option<Nanos>, schedule: Option<&LoadSchedule>) -> Option<Nanos> {
    let end = schedule
        .and_then(LoadSchedule::phase_plan)
        .map(|p| p.total());
    match (duration, end) {
        (Some(d), Some(e)) => Some(d.min(e)),
        (d, e) => d.or(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_core::load::LoadKind;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Opt {
        Load,
        Schedule,
        Cpus,
    }

    impl OptionName for Opt {
        fn spelling(self) -> String {
            match self {
                Opt::Load => "--load",
                Opt::Schedule => "--load-schedule",
                Opt::Cpus => "--load-cpus",
            }
            .to_string()
        }
    }

    fn parse(
        load: Option<&str>,
        schedule: Option<&str>,
        cpus: Option<&str>,
    ) -> Result<Option<LoadSchedule>, String> {
        let system = SystemView {
            allowed_cpus: vec![0, 1, 2, 3],
            configured_cpus: 4,
        };
        load_schedule(
            LoadOptions {
                load: (Opt::Load, load),
                schedule: (Opt::Schedule, schedule),
                cpus: (Opt::Cpus, cpus),
            },
            &system,
            PathBuf::from("/tmp"),
        )
        .map_err(|e| e.0)
    }

    #[test]
    fn a_constant_load_is_one_phase_on_every_cpu() {
        let s = parse(Some("cpu,io:1"), None, None).unwrap().unwrap();
        assert_eq!(s.phases.len(), 1);
        assert_eq!(s.phases[0].length, None);
        assert!(!s.is_staged() && s.phase_plan().is_none());
        let plan = s.phases[0].plan.as_ref().unwrap();
        assert_eq!(plan.cpus, vec![0, 1, 2, 3]);
        assert_eq!(
            plan.kinds
                .iter()
                .map(|k| (k.kind, k.workers))
                .collect::<Vec<_>>(),
            vec![(LoadKind::Cpu, 4), (LoadKind::Io, 1)]
        );
        let s = parse(Some("cpu"), None, Some("2-3")).unwrap().unwrap();
        let plan = s.phases[0].plan.as_ref().unwrap();
        assert_eq!((plan.cpus.clone(), plan.kinds[0].workers), (vec![2, 3], 2));
        assert_eq!(parse(None, None, None).unwrap(), None);
    }

    #[test]
    fn a_schedule_runs_phases_in_order() {
        let s = parse(None, Some("idle=30s, cpu=1m,cpu:1+messaging:2=60"), None)
            .unwrap()
            .unwrap();
        let names: Vec<&str> = s.phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["idle", "cpu", "cpu:1+messaging:2"]);
        assert!(s.phases[0].plan.is_none());
        let last = s.phases[2].plan.as_ref().unwrap();
        assert_eq!(
            last.kinds
                .iter()
                .map(|k| (k.kind, k.workers))
                .collect::<Vec<_>>(),
            vec![(LoadKind::Cpu, 1), (LoadKind::Messaging, 2)]
        );
        let ends: Vec<i64> = s
            .phase_plan()
            .unwrap()
            .ends
            .iter()
            .map(|e| e.as_nanos() / 1_000_000_000)
            .collect();
        assert_eq!(ends, [30, 90, 150]);
        assert_eq!(run_duration(None, Some(&s)), Some(Nanos(150_000_000_000)));
        assert_eq!(run_duration(Some(Nanos(10)), Some(&s)), Some(Nanos(10)));
        assert_eq!(run_duration(Some(Nanos(10)), None), Some(Nanos(10)));
    }

    #[test]
    fn bad_loads_and_schedules_are_one_line_each() {
        for (load, schedule, cpus, want) in [
            (
                Some("bogus"),
                None,
                None,
                "--load: invalid value 'bogus': unknown load kind 'bogus' (kinds: cpu, ",
            ),
            (
                Some("cpu:0"),
                None,
                None,
                "--load: invalid value 'cpu:0': worker count '0' of cpu: expected a whole number, 1 to 4096",
            ),
            (
                None,
                Some("cpu=x"),
                None,
                "--load-schedule: invalid value 'cpu=x': phase 'cpu=x': length 'x': a phase length is a whole number of seconds above 0",
            ),
            (
                None,
                Some("cpu=0"),
                None,
                "--load-schedule: invalid value 'cpu=0': phase 'cpu=0': length '0': a phase length",
            ),
            (
                None,
                Some("idle=5,cpu"),
                None,
                "--load-schedule: invalid value 'idle=5,cpu': phase 'cpu': expected LOAD=DURATION",
            ),
            (
                None,
                Some("cpu+bogus=5"),
                None,
                "--load-schedule: invalid value 'cpu+bogus=5': phase 'cpu+bogus=5': unknown load kind 'bogus'",
            ),
            (
                None,
                Some("cpu+cpu=5"),
                None,
                "phase 'cpu+cpu=5': load kind 'cpu' is given twice",
            ),
            (None, Some("=5"), None, "phase '=5': expected idle or KIND"),
            (
                None,
                Some("idle=5,,cpu=5"),
                None,
                "phase '': expected LOAD=DURATION",
            ),
            (
                Some("cpu"),
                Some("cpu=5"),
                None,
                "--load and --load-schedule cannot be combined",
            ),
            (
                None,
                None,
                Some("1"),
                "--load-cpus needs --load or --load-schedule",
            ),
            (
                Some("cpu"),
                None,
                Some("7"),
                "--load-cpus: invalid value '7': ",
            ),
        ] {
            let e = parse(load, schedule, cpus).unwrap_err();
            assert!(
                e.starts_with(want) || e.contains(want),
                "{e}\nwanted: {want}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
