//! `rtlat audit --json`: the audit as one document, `{"rtlat_version",
//! "checks": [{"id", "status", "fact", "why", "fix"}], "environment":
//! {...}, "suggested_command"}`. The checks and the environment are crate
//! `rtlat-audit`'s types (the parameters `C` and `E`), as in a result
//! document's `"audit"` and `"environment"`.

use serde::Serialize;

/// The document's top level, in the order written.
#[derive(Clone, Debug, Serialize)]
pub struct AuditDocument<'a, C, E> {
    /// rtlat's version.
    pub rtlat_version: &'a str,
    /// Each check's finding.
    pub checks: C,
    /// The machine's facts.
    pub environment: E,
    /// The command line the audit suggests for the machine.
    pub suggested_command: &'a str,
}
