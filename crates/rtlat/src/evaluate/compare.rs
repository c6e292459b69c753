//! `rtlat evaluate --compare BASE`: each phase of this evaluation against
//! the phase of the same name in an earlier one, by `rtlat compare`'s
//! reading and comparison of evaluations ([`crate::compare::evaluation`])
//! and its default noise rule; nothing here judges a figure.
//!
//! BASE is an evaluation's directory or its `report.json`, read whole
//! before the first phase ([`load_base`]); what comes out
//! ([`against`]) is report.json's `"compare"` and one line of the answer.

use std::path::Path;

pub use crate::compare::evaluation::{Evaluation as Base, against};

/// What `--compare` takes, for the end of its refusals.
const WANTED: &str =
    "--compare takes the directory of an earlier rtlat evaluate, or its report.json";

/// Reads the evaluation at `path` (a directory: its `report.json`) and
/// each of its phases' result. The error is the reason, for `--compare:
/// invalid value 'PATH': REASON`.
pub fn load_base(path: &Path) -> Result<Base, String> {
    Base::load(path, WANTED)
}
