//! What the command line of `rtlat svsematest`, `pmqtest`, `ptsematest`
//! and `sigwaittest` keeps while it is read ([`Raw`], before validation)
//! and the bounds its modules share: the bottom of `cli/ipc/`, which every
//! sibling may use and which uses none.

use crate::cli::shared::{HasShared, SharedArgs};
use crate::cli::verdict_options::HasVerdictStyle;
use crate::report::verdict::text::Style;

/// The largest interval, distance product and `-b` value (µs).
pub(super) const MAX_US: i64 = i32::MAX as i64;
/// The most pairs a run may have (C 2.4: 255).
pub(super) const MAX_PAIRS: i64 = 1024;

#[derive(Default)]
pub(super) struct Raw {
    /// `Some(None)`: `-a` alone.
    pub(super) affinity: Option<Option<String>>,
    pub(super) breaktrace: Option<String>,
    pub(super) distance: Option<String>,
    /// `Some(None)`: `-f` alone (fork mode).
    pub(super) fork: Option<Option<String>>,
    pub(super) force_timeout: Option<String>,
    pub(super) interval: Option<String>,
    pub(super) priority: Option<String>,
    pub(super) quiet: bool,
    pub(super) smp: bool,
    pub(super) threads: Option<Option<String>>,
    pub(super) timeout: Option<String>,
    pub(super) nsecs: bool,
    pub(super) verdict: Option<Style>,
    pub(super) shared: SharedArgs,
}

impl HasShared for Raw {
    fn shared(&mut self) -> &mut SharedArgs {
        &mut self.shared
    }
}

impl HasVerdictStyle for Raw {
    fn verdict_style(&mut self) -> &mut Option<Style> {
        &mut self.verdict
    }
}
