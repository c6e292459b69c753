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
//! BASE and NEW may instead both be evaluations (`rtlat evaluate`'s
//! directory or its `report.json`): then each of NEW's phases is compared
//! so with BASE's phase of the same name, under a heading, the
//! environments' differences said once ([`evaluation`]); `--json` writes
//! one document with each phase's comparison, `--fail-on-regression`
//! exits 3 when any phase is worse. One evaluation and one run is a
//! usage error.
//!
//! `input` reads and checks a file (a bad one is a one-line usage error
//! naming it, exit 2) into the rows' `figures`, `judge` holds the noise
//! rule, `render` the comparison and its text, `evaluation` reads an
//! evaluation and compares two phase by phase.

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
use evaluation::Evaluation;
use judge::NoiseRule;
use rtlat_args::UsageError;
use rtlat_args::escape::Escaped;
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

/// `rtlat compare`: reads both files (or both evaluations), prints the
/// comparison. Returns the exit status: 0, or 3 with
/// `--fail-on-regression` when a verdict (of any phase) is "worse".
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let (base, new) = match (side(&settings.base)?, side(&settings.new)?) {
        (Side::Run(base), Side::Run(new)) => (*base, *new),
        (Side::Evaluation(base), Side::Evaluation(new)) => {
            return run_evaluations(settings, &base, &new);
        }
        (side, _) => {
            let (base, new) = (("BASE", &settings.base), ("NEW", &settings.new));
            let ((e_tag, evaluation), (r_tag, run)) = match side {
                Side::Evaluation(_) => (base, new),
                Side::Run(_) => (new, base),
            };
            return Err(UsageError(format!(
                "{e_tag} '{}' is an evaluation and {r_tag} '{}' a run's result: compare takes \
                 two evaluations or two results, not one of each",
                evaluation.name(),
                run.name()
            ))
            .into());
        }
    };
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

/// What one side of the command line is.
enum Side {
    /// A run's result (boxed: it is the larger by far).
    Run(Box<input::RunFile>),
    /// An evaluation.
    Evaluation(Evaluation),
}

/// What compare takes, for the end of the refusal of an evaluation.
const WANTED: &str = "compare takes two evaluations (each its directory or its report.json) or \
                      two results of 'rtlat cyclictest --json'";

/// Reads `source`: a directory is an evaluation; a file is one when it
/// is an evaluation's report, else a run's result, read as before
/// evaluations were ([`input::load`]: the same refusals). Standard input
/// is a run's result (an evaluation's phases are files beside its
/// report).
fn side(source: &StdinOr) -> Result<Side, UsageError> {
    let path = match source {
        StdinOr::Path(path) if path.is_dir() => {
            return Evaluation::load(path, WANTED)
                .map(Side::Evaluation)
                .map_err(UsageError);
        }
        StdinOr::Path(path) => Some(path),
        StdinOr::Stdin => None,
    };
    let text = input::read(source)?;
    if let Some(path) = path
        && let Some(loaded) = Evaluation::in_text(path, &text)
    {
        return loaded
            .map(Side::Evaluation)
            .map_err(|e| UsageError(format!("{}: {e}", path.display())));
    }
    input::parse_owned(&source.name(), text).map(|run| Side::Run(Box::new(run)))
}

/// `rtlat compare` of two evaluations: each of NEW's phases against
/// BASE's phase of the same name.
fn run_evaluations(settings: &Settings, base: &Evaluation, new: &Evaluation) -> anyhow::Result<u8> {
    let phases = evaluation::phases(base, &new.phases, settings.rule);
    let compared = evaluation::summary(base, &phases, settings.rule);
    let mut out = Stdout::new(false);
    let written = formats::write_document(
        &Evaluations {
            base,
            new,
            phases: &phases,
            compared: &compared,
            json: settings.json.as_ref(),
        },
        &mut out,
    );
    out.finish()?;
    written?;
    Ok(evaluations_status(settings.fail_on_regression, &phases))
}

/// The exit status of two evaluations compared: 3 with
/// `--fail-on-regression` when a phase is worse (its worse rows told on
/// stderr, each with its phase), else 0.
pub(crate) fn evaluations_status(fail_on_regression: bool, phases: &[evaluation::Phase<'_>]) -> u8 {
    let worse: Vec<(&str, &render::Comparison<'_>)> = phases
        .iter()
        .filter_map(|p| Some((p.name, p.compared.as_ref().ok()?)))
        .filter(|(_, c)| c.any_worse())
        .collect();
    if !fail_on_regression || worse.is_empty() {
        return 0;
    }
    for (name, c) in worse {
        for line in c.regressions() {
            tell!("--fail-on-regression: phase {}: {line}", Escaped(name));
        }
    }
    3
}

/// Two evaluations' comparison as the final outputs see it.
struct Evaluations<'a> {
    base: &'a Evaluation,
    new: &'a Evaluation,
    phases: &'a [evaluation::Phase<'a>],
    compared: &'a evaluation::Compared,
    json: Option<&'a OutputTarget>,
}

impl Document for Evaluations<'_> {
    fn write_text(&self, w: &mut dyn Write) -> io::Result<()> {
        let width = rtlat_args::columns::width(rtlat_args::columns::Stream::Stdout);
        evaluation::write_text(w, self.base, self.new, self.phases, self.compared, width)
    }

    fn json_target(&self) -> Option<&OutputTarget> {
        self.json
    }

    fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        evaluation::write_json(w, self.new, self.compared)
    }
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
