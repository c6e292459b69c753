//! The output files and blocks several tools share: `--json FILE`, the
//! end-of-run histogram (`-h/--histogram N`, cyclictest's `-H/--histofall
//! N`), `--histfile PATH` and `--hgrm FILE` (with `--hgrm-per-thread`):
//! their rows, raw values, validation (the same message for the same bad
//! value in every tool) and help lines.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::output::OutputTarget;
use crate::report::hgrm::{HgrmOutput, per_thread_path};
use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, OptSpec, REQ};
use rtlat_args::options::Flag;

use rtlat_args::values::{DirReport, OptionName, int_in, new_file_path};

/// A tool's raw state that keeps the raw values of --json, the histogram and --histfile (every
/// tool's through its shared values: `cli::shared`).
pub trait HasOutputs {
    /// Where they go.
    fn output_args(&mut self) -> &mut OutputArgs;
}

/// `--json` of a C tool (2.4 has it).
pub const JSON: OptSpec<()> = OptSpec::c((), None, "json", REQ);
/// `--json` of a tool whose C version has none (latency).
pub const JSON_NEW: OptSpec<()> = OptSpec::new_long((), "json", REQ);
/// cyclictest's `-h/--histogram` (2.4).
pub const HISTOGRAM_C: OptSpec<()> = OptSpec::c((), Some('h'), "histogram", REQ);
/// cyclictest's `-H/--histofall` (2.4).
pub const HISTOFALL_C: OptSpec<()> = OptSpec::c((), Some('H'), "histofall", REQ);
/// cyclictest's `--histfile` (2.4).
pub const HISTFILE_C: OptSpec<()> = OptSpec::c((), None, "histfile", REQ);
/// `--histogram` of a tool whose `-h` is help (ours, long only).
pub const HISTOGRAM: OptSpec<()> = OptSpec::new_long((), "histogram", REQ);
/// `--histfile` of those tools (ours, long only).
pub const HISTFILE: OptSpec<()> = OptSpec::new_long((), "histfile", REQ);

/// The most one-unit buckets a histogram may have.
pub const MAX_BUCKETS: i64 = 1_000_000;

/// The definition of `--json FILE` (`row`: [`JSON`] or [`JSON_NEW`]).
pub fn json<R: HasOutputs>(row: &OptSpec<()>) -> Flag<R> {
    Flag::from_row(row, "FILE")
        .help(rtlat_args::lines![
            "write the results as JSON to FILE (- for stdout)"
        ])
        .apply(|r: &mut R, v| {
            r.output_args().json = Some(v.os());
            Ok(())
        })
}

/// The definition of `--histfile PATH` (`row`: [`HISTFILE_C`] or
/// [`HISTFILE`]).
pub fn histfile<R: HasOutputs>(row: &OptSpec<()>) -> Flag<R> {
    Flag::from_row(row, "PATH")
        .help(rtlat_args::lines![
            "write the histogram to PATH instead of stdout"
        ])
        .apply(|r: &mut R, v| {
            r.output_args().histfile = Some(v.os());
            Ok(())
        })
}

/// The definition of the histogram's option (`row`: [`HISTOGRAM_C`] or
/// [`HISTOGRAM`]); `help` says what the tool's histogram counts.
pub fn histogram<R: HasOutputs>(row: &OptSpec<()>, help: &'static str) -> Flag<R> {
    Flag::from_row(row, "US").help(help).apply(|r: &mut R, v| {
        r.output_args().histogram = Some(("histogram", v.text()?));
        Ok(())
    })
}

/// The definition of cyclictest's `-H/--histofall N`.
pub fn histofall<R: HasOutputs>() -> Flag<R> {
    Flag::from_row(&HISTOFALL_C, "US")
        .help(rtlat_args::lines![
            "like -h, plus a column summing all threads"
        ])
        .apply(|r: &mut R, v| {
            let outputs = &mut r.output_args();
            outputs.histogram = Some(("histofall", v.text()?));
            outputs.histofall = true;
            Ok(())
        })
}

/// The definition of `--hgrm FILE` (ours, long only).
pub fn hgrm<R: HasOutputs>() -> Flag<R> {
    Flag::new_long("hgrm", REQ, "FILE")
        .help(rtlat_args::lines![
            "write the distribution of all threads in",
            "HdrHistogram's .hgrm percentile format (- for",
            "stdout)",
        ])
        .apply(|r: &mut R, v| {
            r.output_args().hgrm = Some(v.os());
            Ok(())
        })
}

/// The definition of `--hgrm-per-thread` (ours, long only).
pub fn hgrm_per_thread<R: HasOutputs>() -> Flag<R> {
    Flag::new_long("hgrm-per-thread", NO, "")
        .help(rtlat_args::lines![
            "with --hgrm: also one file per thread (FILE with",
            ".N before its extension)",
        ])
        .apply(|r: &mut R, _| {
            r.output_args().hgrm_per_thread = true;
            Ok(())
        })
}

/// The raw values as the parser collects them (the last one wins).
#[derive(Clone, Debug, Default)]
pub struct OutputArgs {
    /// `--json`, any bytes.
    pub json: Option<OsString>,
    /// The bucket count and the option that gave it last (its long
    /// name: `histogram` or `histofall`).
    pub histogram: Option<(&'static str, String)>,
    /// `-H` was given (its column stays with a later `-h`, as in C).
    pub histofall: bool,
    /// `--histfile`, any bytes.
    pub histfile: Option<OsString>,
    /// `--hgrm`, any bytes.
    pub hgrm: Option<OsString>,
    /// `--hgrm-per-thread`.
    pub hgrm_per_thread: bool,
}

/// The validated outputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outputs {
    /// Where the JSON goes.
    pub json: Option<OutputTarget>,
    /// The histogram's one-unit buckets.
    pub buckets: Option<usize>,
    /// `-H`: a column summing all threads.
    pub histofall: bool,
    /// Where the histogram goes: `--histfile`, else stdout (with buckets).
    pub histogram: Option<OutputTarget>,
    /// Complete stderr lines to print before the run.
    pub warnings: Vec<String>,
}

impl OutputArgs {
    /// The outputs, their files checked writable now; `name` spells an
    /// option of the tool by its long name, `unit` names the histogram's
    /// unit (`microseconds`).
    pub fn validate<O: OptionName>(
        &self,
        name: impl Fn(&str) -> O,
        unit: &str,
    ) -> Result<Outputs, UsageError> {
        let buckets = match &self.histogram {
            Some((which, text)) => Some(int_in(
                name(which),
                text,
                1..=MAX_BUCKETS,
                &format!("a number of one-unit histogram buckets ({unit})"),
            )? as usize),
            None => None,
        };
        let mut warnings = Vec::new();
        let histfile = match &self.histfile {
            Some(text) => {
                let path = output_path(name("histfile"), text)?;
                if buckets.is_none() {
                    warnings.push(format!(
                        "WARN: {} given without {}; no histogram is written",
                        name("histfile").spelling(),
                        name("histogram").spelling()
                    ));
                }
                Some(path)
            }
            None => None,
        };
        let json = match &self.json {
            Some(text) => Some(output_target(name("json"), text)?),
            None => None,
        };
        Ok(Outputs {
            json,
            buckets,
            histofall: self.histofall,
            histogram: buckets.map(|_| histfile.map_or(OutputTarget::Stdout, OutputTarget::File)),
            warnings,
        })
    }
}

impl OutputArgs {
    /// `--hgrm` and `--hgrm-per-thread` of a run of `nthreads` threads,
    /// the files checked writable now. The per-thread files are named
    /// after FILE, so it must be a file, and the longest name must fit.
    pub fn hgrm<O: OptionName>(
        &self,
        name: impl Fn(&str) -> O,
        nthreads: usize,
    ) -> Result<Option<HgrmOutput>, UsageError> {
        let target = match &self.hgrm {
            Some(text) => Some(output_target(name("hgrm"), text)?),
            None => None,
        };
        if let (true, Some(OutputTarget::File(all))) = (self.hgrm_per_thread, &target) {
            let last = per_thread_path(all, nthreads.saturating_sub(1));
            rtlat_args::output_file::check_name(&last).map_err(|why| {
                UsageError(format!(
                    "{}: cannot write '{}': {why}",
                    name("hgrm-per-thread").spelling(),
                    last.display()
                ))
            })?;
        }
        if self.hgrm_per_thread && !matches!(target, Some(OutputTarget::File(_))) {
            return Err(UsageError(format!(
                "{} needs {} FILE{}: the per-thread files are named after it",
                name("hgrm-per-thread").spelling(),
                name("hgrm").spelling(),
                if target.is_some() {
                    ", not - (standard output)"
                } else {
                    ""
                }
            )));
        }
        Ok(target.map(|target| HgrmOutput {
            target,
            per_thread: self.hgrm_per_thread,
        }))
    }
}

/// A file the run writes at its end, checked writable now (its directory
/// exists, the name fits, a file can be made there).
pub fn output_path(id: impl OptionName, raw: &std::ffi::OsStr) -> Result<PathBuf, UsageError> {
    new_file_path(id, raw, "write", DirReport::Detailed)
}

/// An output that may go to stdout: `-` or a file ([`output_path`]).
pub fn output_target(
    id: impl OptionName,
    raw: &std::ffi::OsStr,
) -> Result<OutputTarget, UsageError> {
    if raw == "-" {
        Ok(OutputTarget::Stdout)
    } else {
        output_path(id, raw).map(OutputTarget::File)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::shared::tests::{args, name};

    /// Validates options given as `(long name, value)`.
    fn outputs(words: &[(&str, &str)]) -> Result<Outputs, String> {
        let words: Vec<String> = words
            .iter()
            .flat_map(|(long, value)| [format!("--{long}"), (*value).to_owned()])
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        args(&words)
            .outputs
            .validate(name, "microseconds")
            .map_err(|e| e.0)
    }

    #[test]
    fn histogram_to_stdout_or_histfile() {
        let o = outputs(&[("histogram", "30")]).unwrap();
        assert_eq!(
            (o.buckets, o.histogram, o.histofall),
            (Some(30), Some(OutputTarget::Stdout), false)
        );
        let o = outputs(&[
            ("histofall", "5"),
            ("histogram", "7"),
            ("histfile", "h.txt"),
            ("json", "-"),
        ])
        .unwrap();
        assert_eq!(o.buckets, Some(7));
        assert!(o.histofall);
        assert_eq!(o.histogram, Some(OutputTarget::File("h.txt".into())));
        assert_eq!(o.json, Some(OutputTarget::Stdout));
        assert!(o.warnings.is_empty());
    }

    #[test]
    fn histfile_alone_warns() {
        let o = outputs(&[("histfile", "h.txt")]).unwrap();
        assert_eq!(o.histogram, None);
        assert_eq!(
            o.warnings,
            ["WARN: --histfile given without -h/--histogram; no histogram is written"]
        );
    }

    #[test]
    fn hgrm_to_a_file_or_stdout_and_per_thread_files_beside_a_file() {
        let hgrm = |words: &[&str]| args(words).outputs.hgrm(name, 2).map_err(|e| e.0);
        let file = |per_thread| HgrmOutput {
            target: OutputTarget::File("x.hgrm".into()),
            per_thread,
        };
        assert_eq!(hgrm(&[]), Ok(None));
        assert_eq!(hgrm(&["--hgrm", "x.hgrm"]), Ok(Some(file(false))));
        assert_eq!(
            hgrm(&["--hgrm", "x.hgrm", "--hgrm-per-thread"]),
            Ok(Some(file(true)))
        );
        assert_eq!(
            hgrm(&["--hgrm", "-"]).map(|h| h.map(|h| h.target)),
            Ok(Some(OutputTarget::Stdout))
        );
        for (words, want) in [
            (
                &["--hgrm", "/nonexistent/x.hgrm"][..],
                "--hgrm: cannot write '/nonexistent/x.hgrm': directory '/nonexistent' does not \
                 exist",
            ),
            (
                &["--hgrm-per-thread"],
                "--hgrm-per-thread needs --hgrm FILE: the per-thread files are named after it",
            ),
            (
                &["--hgrm", "-", "--hgrm-per-thread"],
                "--hgrm-per-thread needs --hgrm FILE, not - (standard output): the per-thread \
                 files are named after it",
            ),
        ] {
            assert_eq!(hgrm(words).unwrap_err(), want, "{words:?}");
        }
    }

    #[test]
    fn bad_values_are_one_line() {
        for (words, want) in [
            (
                &[("histogram", "0")][..],
                "-h/--histogram: invalid value '0': expected a number of one-unit histogram \
                 buckets (microseconds), 1 to 1000000",
            ),
            (&[("histofall", "x")], "-H/--histofall: invalid value 'x'"),
            (
                &[("json", "/nonexistent/x.json")],
                "--json: cannot write '/nonexistent/x.json': directory '/nonexistent' does not \
                 exist",
            ),
            (&[("histfile", "")], "--histfile: invalid value ''"),
        ] {
            let e = outputs(words).unwrap_err();
            assert!(e.starts_with(want), "{e}\nwanted: {want}");
        }
    }
}
