//! What the `rtlat signaltest` command line keeps while it is read
//! ([`Raw`], before validation) and the bounds its modules share: the
//! bottom of `cli/signaltest/`, which every sibling may use and which uses
//! none.

use crate::cli::shared::{HasShared, SharedArgs};
use crate::cli::verdict_options::HasVerdictStyle;
use crate::report::verdict::text::Style;

pub(super) const MAX_THREADS: i64 = 65_536;

#[derive(Default)]
pub(super) struct Raw {
    /// `Some(None)`: `-a` without a set.
    pub(super) affinity: Option<Option<String>>,
    pub(super) breaktrace: Option<String>,
    pub(super) mlockall: bool,
    pub(super) priority: Option<String>,
    pub(super) quiet: bool,
    pub(super) smp: bool,
    pub(super) threads: Option<String>,
    pub(super) verbose: bool,
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
