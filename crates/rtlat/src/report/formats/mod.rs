//! The final outputs of every command, one [`Format`] per file. A
//! measuring tool's run is written in the order of [`FORMATS`]: the JSON
//! document, the C tools' text, the histogram block, `.hgrm` files, the
//! percentiles table, the closing lines (load, explanations, verdict,
//! times of the maxima), ...
//!
//! Each tool fills one [`Finished`]: its report, what its command line
//! asked for ([`Asked`]), and its own writers ([`ToolOutputs`]: its JSON
//! document, the text only it writes); [`write_all`] then goes down the
//! list, and each format writes itself when the run asks for it. Every
//! format is attempted even when an earlier one failed; the first failure
//! is returned. A file is written whole or not at all, and a file that is
//! stdout or stderr is written through it, in its place
//! ([`crate::output::write_to`]); the tools check every file writable
//! before the first sample. The closing lines (load, explanations,
//! verdict, times of the maxima) are for a person: each is wrapped to the
//! width of [`rtlat_args::columns`] (80 when stdout is not a terminal), a
//! `#` on every continuation line.
//!
//! The [`Format`] trait is generic over what a list's formats see, and
//! every list is walked by [`write_list`]: [`FORMATS`] see the
//! [`Finished`] run, before stdout is flushed and the run's end is told;
//! the gate's `GATE_FORMATS` (the JUnit report, `gate/run.rs`) see the
//! gates' outcomes (`Judged`), after stdout is flushed and before the
//! broken limits' stderr lines, as always; [`DOCUMENT_FORMATS`] (the text,
//! then the same [`json::Json`]) see the [`Document`] of a command that
//! does not measure (`rtlat compare`, `rtlat audit`, `rtlat load`).
//!
//! Adding a format: a file here with a type that implements [`Format`],
//! one line in its list (its place in the order), and, when the
//! command line asks for it, a field of [`Asked`] that the tools fill.

mod breaktrace;
mod document;
mod explain;
mod hgrm;
mod histogram;
mod json;
mod load;
mod max_times;
mod own_text;
mod percentiles;
mod spikes;
mod verdict;

use std::io::{self, Write};

use rtlat_core::{RtTests, RunReport};

pub use document::Document;

use super::json::Extras;
use super::sample_time::SampleInstants;
use super::verdict::text::Style;
use crate::explain::ExplainPlan;
use crate::output::{FirstFailure, OutputTarget, Stdout};

/// Every final output, in the order they are written: JSON first (so
/// `--json=-` comes before the text, as in C; signaltest's `T:` lines
/// before it), the closing lines last.
pub static FORMATS: &[&dyn for<'a> Format<Finished<'a>>] = &[
    &own_text::OwnText(Place::First),
    &json::Json,
    &own_text::OwnText(Place::AfterJson),
    &spikes::Spikes,
    &histogram::Histogram,
    &percentiles::Percentiles,
    &hgrm::Hgrm,
    &breaktrace::Breaktrace,
    &load::Load,
    &explain::Explain,
    &verdict::Verdict,
    &max_times::MaxTimes,
];

/// The final outputs of a command whose result is one [`Document`]
/// (`rtlat compare`, `rtlat audit`, `rtlat load`), in order: the text,
/// then the JSON (the same format as a run's).
pub static DOCUMENT_FORMATS: &[&dyn for<'a> Format<dyn Document + 'a>] =
    &[&document::Text, &json::Json];

/// One final output of a stage whose outputs see `Run` (a
/// [`Finished`] run, or the gates' outcomes).
pub trait Format<Run: ?Sized>: Sync {
    /// Writes it to `out` or to its file if `run` asks for it; a file
    /// that cannot be written is the error returned.
    fn write(&self, run: &Run, out: &mut Stdout) -> anyhow::Result<()>;
}

/// A finished run, as the formats see it.
pub struct Finished<'a> {
    /// The run's threads (for the IPC tools: their receivers).
    pub report: &'a RunReport,
    /// The load beside it, the verdict, the explanations, the timeline.
    pub extras: Extras<'a, 'a>,
    /// What the command line asked for.
    pub asked: &'a Asked<'a>,
    /// The tool's own writers.
    pub tool: &'a dyn ToolOutputs,
}

/// What a tool writes its own way: its JSON document, and the text only
/// it writes (C's lines), at one of the [`Place`]s among the others.
pub trait ToolOutputs {
    /// The `--json` document.
    fn write_document(&self, w: &mut dyn Write) -> io::Result<()>;

    /// The tool's own text at `place`, if it has any there.
    fn write_text(&self, place: Place, out: &mut Stdout) -> anyhow::Result<()> {
        let _ = (place, out);
        Ok(())
    }
}

/// Where a tool's own text goes among the shared formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Before everything (signaltest's `T:` lines).
    First,
    /// Right after the JSON (cyclictest's `-q` summary; latency's
    /// histograms, gnuplot file and summary).
    AfterJson,
}

/// The final outputs a command line asked for (a tool fills what it has
/// options for; the rest stays off).
#[derive(Default)]
pub struct Asked<'a> {
    /// `--json`.
    pub json: Option<&'a OutputTarget>,
    /// `-h`/`-H`/`--histfile` (`--histogram` for the IPC tools).
    pub histogram: Option<HistogramAsked<'a>>,
    /// `--hgrm`.
    pub hgrm: Option<HgrmAsked<'a>>,
    /// `--percentiles`: the table.
    pub percentiles: bool,
    /// `-b`: the break's lines.
    pub breaktrace: bool,
    /// `--explain`'s plan (its `--explain-trace` file).
    pub explain: Option<&'a ExplainPlan>,
    /// `--verdict`: the verdict's lines in this style.
    pub verdict: Option<Style>,
    /// What the verdict's lines call each subject (`Thread`, `Pair`).
    pub subject: &'static str,
    /// The times of the maxima, with which instants of a sample.
    pub max_times: Option<SampleInstants>,
}

/// The histogram block asked for.
pub struct HistogramAsked<'a> {
    /// Stdout, or the file.
    pub target: &'a OutputTarget,
    /// `-H`: the all-threads sum column.
    pub summary_column: bool,
    /// The rt-tests release whose block it is (`--rt-tests`).
    pub rt_tests: RtTests,
}

impl<'a> HistogramAsked<'a> {
    /// The block to `target`, without the sum column (every tool but
    /// cyclictest), as rt-tests 2.4 writes it.
    pub fn to(target: &'a OutputTarget) -> Self {
        HistogramAsked {
            target,
            summary_column: false,
            rt_tests: RtTests::default(),
        }
    }

    /// The same block as rt-tests `rt_tests` writes it.
    pub fn in_dialect(self, rt_tests: RtTests) -> Self {
        HistogramAsked { rt_tests, ..self }
    }
}

/// The `.hgrm` files asked for.
pub struct HgrmAsked<'a> {
    /// All threads together: a file, or stdout.
    pub target: &'a OutputTarget,
    /// Also one file per thread.
    pub per_thread: bool,
}

/// Writes every format of [`FORMATS`] that `run` asks for, in order;
/// all are attempted, the first failure is returned.
pub fn write_all(run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
    write_list(FORMATS, run, out)
}

/// Writes every format of [`DOCUMENT_FORMATS`] that `document` asks for,
/// in order; all are attempted, the first failure is returned.
pub fn write_document(document: &dyn Document, out: &mut Stdout) -> anyhow::Result<()> {
    write_list(DOCUMENT_FORMATS, document, out)
}

/// Writes every format of `list` that `run` asks for, in order; all are
/// attempted, the first failure is returned.
pub fn write_list<Run: ?Sized>(
    list: &[&dyn Format<Run>],
    run: &Run,
    out: &mut Stdout,
) -> anyhow::Result<()> {
    let mut failures = FirstFailure::default();
    for format in list {
        failures.keep(format.write(run, out));
    }
    failures.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{ThreadFixture, meta, run};
    use crate::report::verdict;
    use rtlat_core::Resolution;

    /// A tool whose document is `{}`.
    struct EmptyDocument;

    impl ToolOutputs for EmptyDocument {
        fn write_document(&self, w: &mut dyn Write) -> io::Result<()> {
            w.write_all(b"{}\n")
        }
    }

    #[test]
    fn a_file_that_cannot_be_written_stops_no_other_output() {
        let report = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .samples(&[5, 7, 9], Resolution::Micros, 100, Some(20))
                    .distribution(&[5_100, 7_100, 9_100])
                    .build(),
            ],
        );
        let meta = meta("rtlat cyclictest");
        let verdict = verdict::judge(&report, &meta, None);
        let dir = tempfile::tempdir().unwrap();
        let json = OutputTarget::File(dir.path().join("no such dir/run.json"));
        let histogram = OutputTarget::File(dir.path().join("run.hist"));
        let hgrm = OutputTarget::File(dir.path().join("run.hgrm"));
        let asked = Asked {
            json: Some(&json),
            histogram: Some(HistogramAsked::to(&histogram)),
            hgrm: Some(HgrmAsked {
                target: &hgrm,
                per_thread: false,
            }),
            subject: "Thread",
            ..Asked::default()
        };
        let finished = Finished {
            report: &report,
            extras: Extras {
                load: None,
                verdict: &verdict,
                explain: None,
                timeline: None,
            },
            asked: &asked,
            tool: &EmptyDocument,
        };
        let mut out = Stdout::new(false);
        let error = write_all(&finished, &mut out).unwrap_err();
        out.finish().unwrap();
        assert!(
            format!("{error:#}").starts_with("--json: cannot write"),
            "{error:#}"
        );
        let histogram = std::fs::read_to_string(dir.path().join("run.hist")).unwrap();
        assert!(histogram.contains("# Total:"), "{histogram}");
        let hgrm = std::fs::read_to_string(dir.path().join("run.hgrm")).unwrap();
        assert!(!hgrm.is_empty());
    }
}
