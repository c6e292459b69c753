//! `rtlat compare BASE NEW`: two runs' JSON results (`rtlat cyclictest
//! --json`, or the C cyclictest's with a `-h` histogram) side by side. Per thread (matched by index) and for all
//! threads together: min, p50, p99, p99.9 and max in µs, the change in
//! percent of BASE and a verdict (better, worse, within noise) by the
//! noise rule of [`judge`]; what differs between the two machines (their
//! results' `"environment"`: [`environment`]); then one verdict line per
//! row.
//! `--fail-on-regression` makes any "worse" exit 3; `--json` writes the
//! same as JSON ([`json`]).
//!
//! `input` reads and checks a file (a bad one is a one-line usage error
//! naming it, exit 2) into the rows' `figures`, `judge` holds the noise
//! rule, `render` the comparison and its text.

pub mod environment;
pub mod evaluation;
pub mod figures;
#[cfg(test)]
pub mod fixtures;
pub mod input;
pub mod json;
pub mod judge;
pub mod render;

use std::io::{self, Write};

use crate::output::OutputTarget;
use crate::report::formats::{self, Document};
use judge::NoiseRule;
use rtlat_args::stdio::{Stdout, tell};
use rtlat_results::file::StdinOr;

/// What `rtlat compare` was asked.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The reference run (a file, or standard input).
    pub base: StdinOr,
    /// The run judged against it (a file, or standard input; not both).
    pub new: StdinOr,
    /// The noise rule.
    pub rule: NoiseRule,
    /// `--fail-on-regression`: exit 3 when anything is worse.
    pub fail_on_regression: bool,
    /// `--json`: where the comparison goes as JSON, if anywhere.
    pub json: Option<OutputTarget>,
}

/// `rtlat compare`: reads both files, prints the comparison. Returns the
/// exit status: 0, or 3 with `--fail-on-regression` when a verdict is
/// "worse".
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let base = input::load(&settings.base)?;
    let new = input::load(&settings.new)?;
    let comparison = render::compare(&base, &new, settings.rule);
    // A closed pipe (`| head`) ends the output quietly; the status still
    // tells.
    let mut out = Stdout::new(false);
    let written = formats::write_document(
        &Compared {
            comparison: &comparison,
            json: settings.json.as_ref(),
        },
        &mut out,
    );
    out.finish()?;
    written?;
    if settings.fail_on_regression && comparison.any_worse() {
        for line in comparison.regressions() {
            tell!("--fail-on-regression: {line}");
        }
        return Ok(3);
    }
    Ok(0)
}

/// The comparison as the final outputs see it: the text, wrapped to
/// stdout's width, and the `--json` document.
struct Compared<'a> {
    comparison: &'a render::Comparison<'a>,
    json: Option<&'a OutputTarget>,
}

impl Document for Compared<'_> {
    fn write_text(&self, w: &mut dyn Write) -> io::Result<()> {
        let width = rtlat_args::columns::width(rtlat_args::columns::Stream::Stdout);
        render::write_text(w, self.comparison, width)
    }

    fn json_target(&self) -> Option<&OutputTarget> {
        self.json
    }

    fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        json::write_json(w, self.comparison)
    }
}
