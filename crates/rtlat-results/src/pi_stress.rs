//! pi_stress's JSON document: rt-tests' envelope, pi_stress 2.4's one
//! member `inversion` (every group's inversions together), then rtlat's:
//! `groups`, `stuck_groups` (the groups the watchdog found stuck, the
//! failure that makes `return_code` 1), and the machine's `environment`
//! and `audit` (`null` where none was made).

use serde::{Deserialize, Serialize};

/// pi_stress's members, after the envelope.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiStressMembers {
    /// Inversions done by all groups together (pi_stress 2.4's key).
    pub inversion: u64,
    /// The number of inversion groups (ours).
    pub groups: usize,
    /// The groups found stuck, by index (ours; empty on success).
    pub stuck_groups: Vec<usize>,
}
