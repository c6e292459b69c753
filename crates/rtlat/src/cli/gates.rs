//! `--fail-if` and `--junit`, the same in every measuring tool's command
//! line.

use std::ffi::OsStr;

use crate::gate::{GatePlan, parse};
use rtlat_args::UsageError;
use rtlat_args::values::{DirReport, OptionName, new_file_path};

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
