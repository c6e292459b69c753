//! `--fail-if LIMITS` and `--junit FILE`, the same in every measuring
//! tool's command line: their rows, raw values, validation and the help
//! line of `--junit`.

use std::ffi::{OsStr, OsString};

use crate::gate::{GatePlan, parse};
use rtlat_args::UsageError;
use rtlat_args::getopt::REQ;
use rtlat_args::options::Flag;

use rtlat_args::values::{DirReport, OptionName, new_file_path};

/// A tool's raw state that keeps the raw values of --fail-if and --junit (every
/// tool's through its shared values: `cli::shared`).
pub trait HasGates {
    /// Where they go.
    fn gate_args(&mut self) -> &mut GateArgs;
}

/// The definitions of `--fail-if` and `--junit` (ours: `--j` stays 2.4's
/// --json, `--f` stays what it was; `--fa`, `--ju` reach these).
pub fn flags<R: HasGates>() -> Vec<Flag<R>> {
    vec![
        Flag::new_long("fail-if", REQ, "LIMITS")
            .help(rtlat_args::lines![
                "fail when a limit is broken by any thread or by all",
                "threads together: comma-separated METRIC OP VALUE,",
                "METRIC one of min avg max p50 p90 p99 p99.9 p99.99",
                "p99.999 overruns, OP one of > >= < <= (the",
                "failing condition), VALUE with ns, us, ms or s",
                "(us if none): 'max>100us,p99.9>40us'; and",
                "verdict=LEVEL (required) or verdict!=LEVEL",
                "(refused), LEVEL trustworthy, caveats or",
                "untrustworthy (see --verdict); measurement=LEVEL,",
                "measurement!=LEVEL (valid, doubtful, invalid),",
                "machine=LEVEL, machine!=LEVEL (ready, caveats,",
                "not-ready): a part of the verdict",
            ])
            .apply(|r: &mut R, v| {
                r.gate_args().fail_if = Some(v.text()?);
                Ok(())
            }),
        junit(),
    ]
}

/// The definition of `--junit FILE`.
fn junit<R: HasGates>() -> Flag<R> {
    Flag::new_long("junit", REQ, "FILE")
        .help(rtlat_args::lines![
            "with --fail-if: a JUnit XML report of the limits"
        ])
        .apply(|r: &mut R, v| {
            r.gate_args().junit = Some(v.os());
            Ok(())
        })
}

/// The raw values as the parser collects them (the last one wins).
#[derive(Clone, Debug, Default)]
pub struct GateArgs {
    /// `--fail-if`.
    pub fail_if: Option<String>,
    /// `--junit`, any bytes.
    pub junit: Option<OsString>,
}

impl GateArgs {
    /// The gates of a run ([`gate_plan`]); `name` spells an option of
    /// the tool by its long name.
    pub fn validate<O: OptionName>(
        &self,
        name: impl Fn(&str) -> O,
    ) -> Result<Option<GatePlan>, UsageError> {
        gate_plan(
            (name("fail-if"), self.fail_if.as_deref()),
            (name("junit"), self.junit.as_deref()),
        )
    }
}

/// `--fail-if EXPR` (option `fail_if`) and `--junit FILE` (option
/// `junit`): the gates of a run, or `None` without `--fail-if`. `--junit`
/// alone is a usage error: a report needs limits.
pub fn gate_plan<O: OptionName>(
    fail_if: (O, Option<&str>),
    junit: (O, Option<&OsStr>),
) -> Result<Option<GatePlan>, UsageError> {
    let junit_path = match junit.1 {
        Some(text) => Some(new_file_path(junit.0, text, "write", DirReport::Detailed)?),
        None => None,
    };
    match (fail_if.1, junit_path) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(UsageError(format!(
            "{} needs {} LIMITS: the report has one test case per thread and limit",
            junit.0.spelling(),
            fail_if.0.spelling()
        ))),
        (Some(text), junit) => Ok(Some(GatePlan {
            limits: parse(text).map_err(|e| UsageError(e.to_string()))?,
            junit,
        })),
    }
}

/// A `--fail-if` limit on a percentile, refused where a run keeps none
/// (`why`: `a fork-mode run (-f)`).
pub fn refuse_percentiles<O: OptionName>(
    plan: Option<&GatePlan>,
    fail_if: O,
    why: &str,
) -> Result<(), UsageError> {
    match plan
        .iter()
        .flat_map(|g| &g.limits)
        .find(|l| l.metric.is_percentile())
    {
        Some(limit) => Err(UsageError(format!(
            "{}: '{limit}': {why} keeps no percentiles; min, avg, max and overruns can be \
             checked",
            fail_if.spelling()
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::shared::tests::name;

    fn gates(fail_if: Option<&str>, junit: Option<&str>) -> Result<Option<GatePlan>, String> {
        let args = GateArgs {
            fail_if: fail_if.map(str::to_owned),
            junit: junit.map(Into::into),
        };
        args.validate(name).map_err(|e| e.0)
    }

    #[test]
    fn limits_with_or_without_a_report() {
        assert_eq!(gates(None, None), Ok(None));
        let plan = gates(Some("max>100us,p99>40us"), Some("j.xml"))
            .unwrap()
            .unwrap();
        assert_eq!(plan.limits.len(), 2);
        assert_eq!(plan.junit, Some("j.xml".into()));
        assert_eq!(
            refuse_percentiles(Some(&plan), name("fail-if"), "a fork-mode run (-f)")
                .unwrap_err()
                .0,
            "--fail-if: 'p99 > 40us': a fork-mode run (-f) keeps no percentiles; min, avg, max \
             and overruns can be checked"
        );
        let plan = gates(Some("max>1s"), None).unwrap().unwrap();
        assert!(refuse_percentiles(Some(&plan), name("fail-if"), "x").is_ok());
    }

    #[test]
    fn bad_values_are_one_line() {
        assert!(
            gates(None, Some("j.xml"))
                .unwrap_err()
                .starts_with("--junit needs --fail-if LIMITS")
        );
        let e = gates(Some("bogus>1"), None).unwrap_err();
        assert!(!e.contains('\n') && !e.is_empty(), "{e}");
        let e = gates(Some("max>1s"), Some("/nonexistent/j.xml")).unwrap_err();
        assert!(e.starts_with("--junit: cannot write"), "{e}");
    }
}
