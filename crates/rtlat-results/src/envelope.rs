//! The whole document as rtlat writes it: rt-tests' envelope
//! ([`Header`]), a tool's own members flattened after it (cyclictest's
//! and signaltest's [`crate::members::ThreadMembers`], the IPC tools'
//! [`crate::ipc::IpcMembers`]), then rtlat's `environment` and `audit`
//! (the audit made before the first sample, `null` where none was made:
//! [`crate::environment`] and [`crate::audit`]) and, last, always, the
//! run's `verdict`.

use serde::Serialize;

use crate::audit::Finding;
use crate::document::Header;
use crate::environment::Environment;
use crate::verdict::Verdict;

/// The document, in the order written.
#[derive(Clone, Debug, Serialize)]
pub struct Document<'a, M> {
    /// Everything before the verdict.
    #[serde(flatten)]
    pub judged: UnjudgedDocument<'a, M>,
    /// The verdict on the run.
    pub verdict: &'a Verdict,
}

/// The document of a tool whose run is not judged (rt-migrate-test,
/// ssdd, hwlatdetect, pi_stress), in the order written; a judged one's
/// without `verdict`.
#[derive(Clone, Debug, Serialize)]
pub struct UnjudgedDocument<'a, M> {
    /// `file_version`, `"cmdline:"`, ... `sysinfo`.
    #[serde(flatten)]
    pub header: Header,
    /// The tool's members.
    #[serde(flatten)]
    pub members: &'a M,
    /// The machine's facts.
    pub environment: Option<&'a Environment>,
    /// The checks of the audit.
    pub audit: Option<&'a [Finding]>,
}
