//! The `rtlat evaluate` command line, turned into validated [`Settings`]:
//! every bad value (an unknown phase, a duration too short to split, an
//! output directory that cannot be written) is one line before the first
//! phase.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, OPT_NUM, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, name_of, pick,
};
use rtlat_args::values::{OptionName, SystemView, duration_option, int_in, invalid};
use rtlat_core::{format_cpu_list, parse_cpu_list};

use crate::evaluate::compare::load_base;
use crate::evaluate::plan::{self, PhaseRequest};
use crate::evaluate::{FailOn, Settings};

/// What `rtlat evaluate` is for, in one line (at most 65 characters).
pub const SUMMARY: &str = "qualify a machine: audit, idle and loaded phases, one answer";

/// `rtlat evaluate`'s options, each defined once.
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::new(Some('D'), "duration", REQ, "DURATION")
            .help(rtlat_args::lines![
                "the whole evaluation's measuring time, split evenly",
                "over the phases --phase does not fix (10m)",
            ])
            .apply(|r: &mut Raw, v| {
                r.duration = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("phase", REQ, "NAME:DURATION")
            .help(rtlat_args::lines![
                "",
                "this phase measures DURATION (0: left out);",
                "repeat for several phases",
            ])
            .apply(|r: &mut Raw, v| {
                r.phases.push(v.text()?);
                Ok(())
            }),
        Flag::new_long("load", REQ, "LIST")
            .help(rtlat_args::lines![
                "the loaded phases, one per load of LIST joined by",
                "commas, or none (cpu,memory,cache,io,fork,timers)",
            ])
            .apply(|r: &mut Raw, v| {
                r.loads = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("load-on", REQ, "WHERE")
            .help(rtlat_args::lines![
                "where the loads run: all (every CPU, the measured",
                "ones too), measured, or others (all)",
            ])
            .apply(|r: &mut Raw, v| {
                r.load_on = Some(v.text()?);
                Ok(())
            }),
        Flag::new(Some('a'), "cpus", REQ, "LIST")
            .help(rtlat_args::lines![
                "measure on the CPUs of LIST, one thread each",
                "(default: every CPU rtlat may use)",
            ])
            .apply(|r: &mut Raw, v| {
                r.cpus = Some(v.text()?);
                Ok(())
            }),
        Flag::new(Some('t'), "threads", REQ, "N")
            .help(rtlat_args::lines![
                "N measuring threads, on the CPUs of -a in turn",
                "(default: one per CPU)",
            ])
            .apply(|r: &mut Raw, v| {
                r.threads = Some(v.text()?);
                Ok(())
            }),
        Flag::new(Some('p'), "priority", REQ, "PRIO")
            .help(rtlat_args::lines![
                "SCHED_FIFO priority of the measuring threads"
            ])
            .default("80")
            .apply(|r: &mut Raw, v| {
                r.priority = Some(v.text()?);
                Ok(())
            }),
        Flag::new(Some('i'), "interval", REQ, "US")
            .help(rtlat_args::lines!["the measuring threads' period"])
            .default("1000")
            .apply(|r: &mut Raw, v| {
                r.interval = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("deadline", REQ, "US")
            .help(rtlat_args::lines![
                "the budget to qualify against: each phase's",
                "samples beyond it, and its projection",
            ])
            .apply(|r: &mut Raw, v| {
                r.deadline = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("load-command", REQ, "CMD")
            .help(rtlat_args::lines![
                "a phase 'command' runs CMD (sh -c) beside the",
                "measurement; its process group ends with it",
            ])
            .apply(|r: &mut Raw, v| {
                r.load_command = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("explain", OPT_NUM, "N")
            .help(rtlat_args::lines![
                "explain each phase's N worst samples (default 3,",
                "where tracefs allows)",
            ])
            .apply(|r: &mut Raw, v| {
                r.explain = Some(v.optional()?);
                Ok(())
            }),
        Flag::new_long("no-explain", NO, "")
            .help(rtlat_args::lines!["explain nothing"])
            .apply(|r: &mut Raw, _| {
                r.no_explain = true;
                Ok(())
            }),
        Flag::new_long("fail-on", REQ, "WHAT")
            .help(rtlat_args::lines![
                "exit status 3 when WHAT happened: not-ready (the",
                "machine, in a phase), deadline (a phase's maximum",
                "beyond --deadline), regression (a phase worse than",
                "in --compare's BASE); several joined by commas",
            ])
            .apply(|r: &mut Raw, v| {
                r.fail_on = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("compare", REQ, "BASE")
            .help(rtlat_args::lines![
                "judge each phase against the phase of the same",
                "name in BASE, an earlier evaluation's directory",
                "or its report.json, as rtlat compare does",
            ])
            .apply(|r: &mut Raw, v| {
                r.compare = Some(v.os());
                Ok(())
            }),
        Flag::new(Some('o'), "output", REQ, "DIR")
            .help(rtlat_args::lines![
                "the report's directory, made if needed",
                "(default rtlat-evaluation)",
            ])
            .apply(|r: &mut Raw, v| {
                r.output = Some(v.os());
                Ok(())
            }),
        Flag::new(Some('q'), "quiet", NO, "")
            .help(rtlat_args::lines!["print nothing while it runs"])
            .apply(|r: &mut Raw, _| {
                r.quiet = true;
                Ok(())
            }),
        // The deterministic seam of the benchmarks and tests, as the
        // measuring tools have it: each phase a synthetic run of SEED.
        Flag::new_long("synthetic", REQ, "SEED")
            .hidden()
            .apply(|r: &mut Raw, v| {
                r.synthetic = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("help", NO, "")
            .help(rtlat_args::lines!["print this help"])
            .shows_help(),
    ]
});

fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// The command line as given; a repeated option keeps its last value
/// (`--phase` accumulates).
#[derive(Default)]
struct Raw {
    duration: Option<String>,
    phases: Vec<String>,
    loads: Option<String>,
    load_on: Option<String>,
    cpus: Option<String>,
    threads: Option<String>,
    priority: Option<String>,
    interval: Option<String>,
    deadline: Option<String>,
    load_command: Option<String>,
    explain: Option<Option<String>>,
    no_explain: bool,
    output: Option<OsString>,
    quiet: bool,
    fail_on: Option<String>,
    synthetic: Option<String>,
    compare: Option<OsString>,
}

/// What the command line asks for.
pub type Invocation = rtlat_args::Invocation<Settings>;

/// The default directory of the report.
const DEFAULT_OUTPUT: &str = "rtlat-evaluation";

/// Reads the `rtlat evaluate` command line (`args` without the program
/// name).
pub fn parse(args: &[OsString], system: &SystemView) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    let total = match &raw.duration {
        Some(text) => match duration_option(name("duration"), text)? {
            Some(d) => Some(d),
            None => return Err(invalid(name("duration"), text, "a duration above 0")),
        },
        None => None,
    };
    let requests: Vec<PhaseRequest> = raw
        .phases
        .iter()
        .map(|text| plan::parse_request(text).map_err(|e| invalid(name("phase"), text, e)))
        .collect::<Result<_, _>>()?;
    let loads = match &raw.loads {
        Some(text) => plan::parse_loads(text).map_err(|e| invalid(name("load"), text, e))?,
        None => plan::DEFAULT_LOADS.to_vec(),
    };
    let kinds = plan::phases_of(&loads, raw.load_command.is_some());
    let phases = plan::plan(&kinds, &requests, total).map_err(|e| {
        let option = if requests.is_empty() {
            "duration"
        } else {
            "phase"
        };
        UsageError(format!("{}: {}", name(option).spelling(), e.0))
    })?;
    let cpus = match &raw.cpus {
        Some(text) => parse_cpu_list(text, &system.allowed_cpus, system.configured_cpus)
            .map_err(|e| invalid(name("cpus"), text, e))?,
        None => system.allowed_cpus.clone(),
    };
    let threads = match &raw.threads {
        Some(text) => {
            Some(int_in(name("threads"), text, 1..=1024, "a number of threads")? as usize)
        }
        None => None,
    };
    let thread_cpus: Vec<usize> = (0..threads.unwrap_or(cpus.len()))
        .map(|t| cpus[t % cpus.len()])
        .collect();
    let load_cpus = match raw.load_on.as_deref() {
        None | Some("all") => None,
        Some("measured") => Some(format_cpu_list(&cpus)),
        Some(text @ "others") => {
            let others: Vec<usize> = system
                .allowed_cpus
                .iter()
                .copied()
                .filter(|cpu| !cpus.contains(cpu))
                .collect();
            if others.is_empty() {
                return Err(invalid(
                    name("load-on"),
                    text,
                    "every CPU is measured (-a): no other CPU to load",
                ));
            }
            Some(format_cpu_list(&others))
        }
        Some(text) => {
            return Err(invalid(
                name("load-on"),
                text,
                "expected all, measured or others",
            ));
        }
    };
    let priority = match &raw.priority {
        Some(text) => int_in(name("priority"), text, 1..=99, "a SCHED_FIFO priority")? as u8,
        None => 80,
    };
    let interval_us = match &raw.interval {
        Some(text) => int_in(name("interval"), text, 50..=1_000_000, "a period in µs")? as u32,
        None => 1000,
    };
    let deadline_us = match &raw.deadline {
        Some(text) => {
            Some(int_in(name("deadline"), text, 1..=10_000_000, "a budget in µs")? as u32)
        }
        None => None,
    };
    let explain = match (&raw.explain, raw.no_explain) {
        (Some(_), true) => {
            return Err(UsageError(format!(
                "{} and {} together: choose one",
                name("explain").spelling(),
                name("no-explain").spelling()
            )));
        }
        (_, true) => None,
        (Some(Some(text)), false) => {
            Some(int_in(name("explain"), text, 1..=100, "a number of samples")? as u32)
        }
        (Some(None) | None, false) => Some(3),
    };
    // The base is read whole now: a base that cannot be compared is
    // refused before the first phase.
    let compare = match &raw.compare {
        Some(path) => Some(
            load_base(Path::new(path))
                .map_err(|e| invalid(name("compare"), &Path::new(path).display().to_string(), e))?,
        ),
        None => None,
    };
    let fail_on = match &raw.fail_on {
        Some(text) => fail_on(text, deadline_us.is_some(), compare.is_some())
            .map_err(|e| invalid(name("fail-on"), text, e))?,
        None => Vec::new(),
    };
    let output = raw
        .output
        .map_or_else(|| PathBuf::from(DEFAULT_OUTPUT), PathBuf::from);
    crate::evaluate::check_output_dir(&output)
        .map_err(|e| invalid(name("output"), &output.display().to_string(), e))?;
    Ok(Invocation::Run(Settings {
        phases,
        cpus: format_cpu_list(&cpus),
        cpu_numbers: cpus,
        threads,
        thread_cpus,
        load_cpus,
        priority,
        priority_given: raw.priority.is_some(),
        interval_us,
        deadline_us,
        load_command: raw.load_command,
        explain,
        explain_given: raw.explain.is_some(),
        output,
        quiet: raw.quiet,
        fail_on,
        synthetic: match &raw.synthetic {
            Some(text) => Some(int_in(name("synthetic"), text, 0..=i64::MAX, "a seed")? as u64),
            None => None,
        },
        compare,
    }))
}

/// `--fail-on not-ready,deadline,regression`.
fn fail_on(text: &str, has_deadline: bool, has_compare: bool) -> Result<Vec<FailOn>, String> {
    let mut out = Vec::new();
    for word in text.split(',') {
        let what = match word {
            "not-ready" => FailOn::NotReady,
            "deadline" if has_deadline => FailOn::Deadline,
            "deadline" => return Err("deadline needs --deadline US".to_owned()),
            "regression" if has_compare => FailOn::Regression,
            "regression" => return Err("regression needs --compare BASE".to_owned()),
            _ => {
                return Err(
                    "expected not-ready, deadline or regression, several joined by commas"
                        .to_owned(),
                );
            }
        };
        if !out.contains(&what) {
            out.push(what);
        }
    }
    Ok(out)
}

/// The options and the help of `rtlat evaluate`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    let group = |longs: &[&str]| pick(&FLAGS, longs);
    Page {
        title: rtlat_args::tools::help_title("evaluate", SUMMARY),
        usage: vec!["rtlat evaluate [-D DURATION] [--deadline US] [-o DIR] [OPTIONS]".to_owned()],
        layout: Layout::spaced(27),
        parts: vec![
            Part::Paragraph(
                "\
Audits the machine, then measures as rtlat cyclictest does in phases: idle,
then beside each of rtlat's loads (cpu, memory, cache, io, fork, timers),
then beside your own command if you give one. Each phase writes its result
(DIR/PHASE.json, DIR/PHASE.hgrm) and its exact command line; the answer
comes last, and DIR/report.json holds it all."
                    .to_owned(),
            ),
            Part::Heading("Phases"),
            group(&["duration", "phase", "load", "load-on", "load-command"]),
            Part::Heading("Measurement"),
            group(&[
                "cpus",
                "threads",
                "priority",
                "interval",
                "deadline",
                "explain",
                "no-explain",
            ]),
            Part::Heading("Comparison"),
            group(&["compare"]),
            Part::Heading("Output"),
            group(&["output", "quiet", "fail-on", "help"]),
        ],
    }
}
