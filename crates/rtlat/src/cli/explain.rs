//! `--explain[=N]`, `--explain-threshold US` and `--explain-trace FILE`, the
//! same in every tool that explains its worst samples from kernel events
//! (`cyclictest`, `latency`).

use std::ffi::OsStr;

use rtlat_core::ExplainTrigger;

use crate::explain::ExplainPlan;
use rtlat_args::UsageError;
use rtlat_args::getopt::{OPT_NUM, REQ};
use rtlat_args::options::Flag;
use rtlat_args::values::{DirReport, OptionName, int, invalid, new_file_path};

/// The most samples one run explains.
pub const MAX_EXPLAINED: usize = 100;
/// Explained samples when `--explain` has no number.
pub const DEFAULT_EXPLAINED: usize = 3;
/// The largest `--explain-threshold`: one hour, in µs.
const MAX_THRESHOLD_US: i64 = 3_600_000_000;

/// The raw values of the explain options.
#[derive(Clone, Debug, Default)]
pub struct ExplainArgs {
    /// `Some(None)`: `--explain` without a number.
    pub explain: Option<Option<String>>,
    /// `--explain-threshold`.
    pub threshold: Option<String>,
    /// `--explain-trace`.
    pub trace: Option<std::ffi::OsString>,
}

/// A tool's raw state that keeps the explain group's raw values.
pub trait HasExplain {
    /// The explain group's raw values.
    fn explain(&mut self) -> &mut ExplainArgs;
}

/// The definitions of `--explain[=N]`, `--explain-threshold US` and
/// `--explain-trace FILE` (ours: no 2.4 name starts with `ex`).
pub fn flags<R: HasExplain>() -> Vec<Flag<R>> {
    vec![
        Flag::new_long("explain", OPT_NUM, "N")
            .help(rtlat_args::lines![
                "record kernel events on the measured CPUs in a",
                "tracefs instance of the run's own and explain the N",
                "worst samples [3]: IRQ latency, timer handler to",
                "wake-up, thread latency, return to user, each with",
                "what ran meanwhile; '# Explain' lines after the",
                "summary, \"explain\" in the JSON",
            ])
            .apply(|r: &mut R, v| {
                r.explain().explain = Some(v.optional()?);
                Ok(())
            }),
        Flag::new_long("explain-threshold", REQ, "US")
            .help(rtlat_args::lines![
                "with --explain: every sample above US is a",
                "candidate (default: each new maximum of a thread)",
            ])
            .apply(|r: &mut R, v| {
                r.explain().threshold = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("explain-trace", REQ, "FILE")
            .help(rtlat_args::lines![
                "with --explain: write the kernel events behind",
                "each explanation to FILE, as text",
            ])
            .apply(|r: &mut R, v| {
                r.explain().trace = Some(v.os());
                Ok(())
            }),
    ]
}

/// The option ids of the explain group in a tool's table.
#[derive(Clone, Copy, Debug)]
pub struct ExplainIds<O> {
    /// `--explain`.
    pub explain: O,
    /// `--explain-threshold`.
    pub threshold: O,
    /// `--explain-trace`.
    pub trace: O,
}

impl<O> ExplainIds<O> {
    /// The group's options as the tool's `name` spells them (by long name).
    pub fn named(name: impl Fn(&str) -> O) -> Self {
        ExplainIds {
            explain: name("explain"),
            threshold: name("explain-threshold"),
            trace: name("explain-trace"),
        }
    }
}

/// What the run would need that `--explain` cannot have.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExplainObstacles<'a> {
    /// The run is synthetic (`--synthetic`): there are no kernel events.
    pub synthetic: bool,
    /// The deadlines are on a clock other than CLOCK_MONOTONIC (the trace
    /// clock): the option that chose it.
    pub other_clock: Option<&'a str>,
}

/// Validates the explain group: `None` without `--explain`.
pub fn explain_plan<O: OptionName + Copy>(
    ids: ExplainIds<O>,
    args: &ExplainArgs,
    obstacles: ExplainObstacles<'_>,
    cpus: Vec<usize>,
) -> Result<Option<ExplainPlan>, UsageError> {
    let Some(count) = &args.explain else {
        for (given, id) in [
            (args.threshold.is_some(), ids.threshold),
            (args.trace.is_some(), ids.trace),
        ] {
            if given {
                return Err(UsageError(format!(
                    "{} needs {}: it says which samples are explained, or where",
                    id.spelling(),
                    ids.explain.spelling()
                )));
            }
        }
        return Ok(None);
    };
    let keep = match count {
        None => DEFAULT_EXPLAINED,
        Some(text) => match int::<usize>(text) {
            Some(n @ 1..=MAX_EXPLAINED) => n,
            _ => {
                return Err(invalid(
                    ids.explain,
                    text,
                    format_args!(
                        "expected the number of samples to explain, 1 to {MAX_EXPLAINED} \
                         (default {DEFAULT_EXPLAINED})"
                    ),
                ));
            }
        },
    };
    if obstacles.synthetic {
        return Err(UsageError(format!(
            "{}: not with --synthetic: a synthetic run has no kernel events to explain it",
            ids.explain.spelling()
        )));
    }
    if let Some(clock) = obstacles.other_clock {
        return Err(UsageError(format!(
            "{}: not with {clock}: kernel events are timed on CLOCK_MONOTONIC, so the \
             deadlines must be too",
            ids.explain.spelling()
        )));
    }
    let trigger = match &args.threshold {
        None => ExplainTrigger::NewMaximum,
        Some(text) => match int::<i64>(text) {
            Some(us @ 0..=MAX_THRESHOLD_US) => ExplainTrigger::Above(us * 1000),
            _ => {
                return Err(invalid(
                    ids.threshold,
                    text,
                    format_args!(
                        "expected a latency in microseconds, 0 to {MAX_THRESHOLD_US}: every \
                         sample above it is a candidate"
                    ),
                ));
            }
        },
    };
    let trace = match &args.trace {
        Some(path) => Some(trace_path(ids.trace, path)?),
        None => None,
    };
    Ok(Some(ExplainPlan {
        keep,
        trigger,
        trace,
        cpus,
    }))
}

fn trace_path<O: OptionName>(id: O, raw: &OsStr) -> Result<std::path::PathBuf, UsageError> {
    if raw == "-" {
        return Err(invalid(
            id,
            "-",
            "expected a file name (the evidence is long; it is not written to standard output)",
        ));
    }
    new_file_path(id, raw, "write", DirReport::Detailed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug)]
    enum Id {
        Explain,
        Threshold,
        Trace,
    }

    impl OptionName for Id {
        fn spelling(self) -> String {
            match self {
                Id::Explain => "--explain",
                Id::Threshold => "--explain-threshold",
                Id::Trace => "--explain-trace",
            }
            .to_owned()
        }
    }

    const IDS: ExplainIds<Id> = ExplainIds {
        explain: Id::Explain,
        threshold: Id::Threshold,
        trace: Id::Trace,
    };

    fn plan(args: ExplainArgs) -> Result<Option<ExplainPlan>, UsageError> {
        explain_plan(IDS, &args, ExplainObstacles::default(), vec![1])
    }

    fn explain(count: Option<&str>) -> ExplainArgs {
        ExplainArgs {
            explain: Some(count.map(str::to_owned)),
            ..ExplainArgs::default()
        }
    }

    #[test]
    fn counts_and_thresholds() {
        let p = plan(explain(None)).unwrap().unwrap();
        assert_eq!((p.keep, p.trigger), (3, ExplainTrigger::NewMaximum));
        assert_eq!(plan(explain(Some("7"))).unwrap().unwrap().keep, 7);
        let p = plan(ExplainArgs {
            threshold: Some("150".into()),
            ..explain(None)
        })
        .unwrap()
        .unwrap();
        assert_eq!(p.trigger, ExplainTrigger::Above(150_000));
        assert!(plan(ExplainArgs::default()).unwrap().is_none());
    }

    #[test]
    fn bad_values_name_the_option_and_what_is_accepted() {
        for bad in ["0", "x", "101", "-1", ""] {
            let e = plan(explain(Some(bad))).unwrap_err().0;
            assert!(
                e.starts_with(&format!("--explain: invalid value '{bad}'")),
                "{e}"
            );
            assert!(e.contains("1 to 100"), "{e}");
        }
        for bad in ["-1", "x", "3600000001"] {
            let e = plan(ExplainArgs {
                threshold: Some(bad.into()),
                ..explain(None)
            })
            .unwrap_err()
            .0;
            assert!(
                e.starts_with(&format!("--explain-threshold: invalid value '{bad}'")),
                "{e}"
            );
        }
        let e = plan(ExplainArgs {
            trace: Some("-".into()),
            ..explain(None)
        })
        .unwrap_err()
        .0;
        assert!(e.starts_with("--explain-trace: invalid value '-'"), "{e}");
    }

    #[test]
    fn companions_need_explain_and_obstacles_are_refused() {
        let e = plan(ExplainArgs {
            threshold: Some("5".into()),
            ..ExplainArgs::default()
        })
        .unwrap_err()
        .0;
        assert!(e.starts_with("--explain-threshold needs --explain"), "{e}");
        let synthetic = ExplainObstacles {
            synthetic: true,
            ..ExplainObstacles::default()
        };
        let e = explain_plan(IDS, &explain(None), synthetic, vec![0])
            .unwrap_err()
            .0;
        assert!(e.contains("not with --synthetic"), "{e}");
        let realtime = ExplainObstacles {
            other_clock: Some("--clock 1"),
            ..ExplainObstacles::default()
        };
        let e = explain_plan(IDS, &explain(None), realtime, vec![0])
            .unwrap_err()
            .0;
        assert!(e.contains("not with --clock 1"), "{e}");
    }
}
