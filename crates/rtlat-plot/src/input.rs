//! Reading the results `rtlat plot` draws: [`rtlat_results::Samples`],
//! whatever wrote them (rtlat's or rt-tests' JSON, the `-h` histogram
//! block), told from the content, not the file name; for the timeline
//! plot, [`rtlat_results::timeline::Timeline`]s (`--stats-file` lines or a
//! monitor checkpoint).
//!
//! An input may also be the `report.json` of `rtlat evaluate` (told apart
//! as [`rtlat_results::evaluation`] says): it stands for its phases, in
//! order, each read from its `"result"` file (latency and percentile
//! plots) or its `"stats"` file (timeline plot), both relative to the
//! report's directory. A phase is named after itself: its stem (what
//! legends show) is the phase's name, `idle`; its name (titles, and
//! legends where two inputs have the same stem) is the report's directory
//! and the phase, `eval/idle`. A report on standard input has no
//! directory to find its phases in: it is refused, rather than guessed
//! to be the current one.

use std::path::Path;

use rtlat_results::evaluation::{EvaluationReport, ReportPhase};
use rtlat_results::file::{InputError, StdinOr, read_text};
pub use rtlat_results::samples::{Bucket, Samples, ThreadSamples};
use rtlat_results::timeline::{self, Timeline};

/// What plot reads, for the messages of an input that is not text.
const EXPECTED: &str = "expected JSON or cyclictest -h output";

/// Reads and parses one input (bounded, a byte-order mark skipped: see
/// [`rtlat_results::file`]): its samples, or those of each phase of an
/// evaluation report.
pub fn read(source: &StdinOr) -> Result<Vec<Samples>, InputError> {
    let text = read_text(source, EXPECTED)?;
    if let Some(report) = EvaluationReport::detect(&text) {
        drop(text);
        return phases(source, report, &RESULTS);
    }
    let name = source.name();
    let stem = source.stem();
    let samples =
        Samples::parse_owned(&name, &stem, text, EXPECTED).map_err(|problem| InputError {
            file: name,
            problem,
        })?;
    Ok(vec![samples])
}

/// Reads and parses one input of the timeline plot: its lines, or those
/// of each phase of an evaluation report.
pub fn read_timeline(source: &StdinOr) -> Result<Vec<Timeline>, InputError> {
    let text = read_text(source, timeline::EXPECTED)?;
    if let Some(report) = EvaluationReport::detect(&text) {
        drop(text);
        return phases(source, report, &STATS);
    }
    let name = source.name();
    let stem = source.stem();
    let timeline = Timeline::parse(&name, &stem, &text).map_err(|problem| InputError {
        file: name,
        problem,
    })?;
    Ok(vec![timeline])
}

/// Which file of a phase a plot reads, and how.
struct PhaseFile<T> {
    /// The file, as the report names it.
    file: fn(&ReportPhase) -> Option<&str>,
    /// What it is, for a report that names none.
    what: &'static str,
    /// Reads it.
    read: fn(&StdinOr) -> Result<T, InputError>,
    /// Names what was read after its phase: (name, stem).
    rename: fn(&mut T, String, String),
}

/// The latency and percentile plots read each phase's `--json` result.
const RESULTS: PhaseFile<Samples> = PhaseFile {
    file: |p| Some(&p.result),
    what: "\"result\"",
    read: |source| Samples::read(source, EXPECTED),
    rename: |s, name, stem| {
        s.name = name;
        s.stem = stem;
    },
};

/// The timeline plot reads each phase's `--stats-file` lines.
const STATS: PhaseFile<Timeline> = PhaseFile {
    file: |p| p.stats.as_deref(),
    what: "\"stats\" (its --stats-file lines)",
    read: Timeline::read,
    rename: |t, name, stem| {
        t.name = name;
        t.stem = stem;
    },
};

/// Each phase of the report read from `source`, as `how` reads it; a
/// problem is one line naming the report, then the phase and its file.
fn phases<T>(
    source: &StdinOr,
    report: Result<EvaluationReport, String>,
    how: &PhaseFile<T>,
) -> Result<Vec<T>, InputError> {
    let fail = |problem: String| InputError {
        file: source.name(),
        problem,
    };
    let report = report.map_err(|problem| fail(format!("an evaluation report, {problem}")))?;
    let dir = match source {
        StdinOr::Path(path) => path.parent().unwrap_or(Path::new("")),
        StdinOr::Stdin => {
            return Err(fail(
                "an evaluation report names its phases' files relative to its directory, \
                 which standard input has not: give the report's path"
                    .to_string(),
            ));
        }
    };
    if report.phases.is_empty() {
        return Err(fail(
            "an evaluation report without phases (it ended before the first): nothing to draw"
                .to_string(),
        ));
    }
    report
        .phases
        .iter()
        .map(|phase| {
            let file = (how.file)(phase).ok_or_else(|| {
                fail(format!(
                    "phase \"{}\" names no {}, which this plot reads",
                    phase.name, how.what
                ))
            })?;
            let mut read = (how.read)(&StdinOr::Path(dir.join(file)))
                .map_err(|e| fail(format!("phase \"{}\": {e}", phase.name)))?;
            let name = dir.join(&phase.name).display().to_string();
            (how.rename)(&mut read, name, phase.name.clone());
            Ok(read)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// The cyclictest result the plot tests draw (2 threads).
    fn result_json() -> String {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/synthetic.json"),
        )
        .unwrap()
    }

    /// `--stats-file` lines of one thread, ending at `end` (Unix s).
    fn stats_lines(end: f64) -> String {
        (0..3)
            .map(|i| {
                format!(
                    "{{\"time\":{},\"elapsed\":{},\"thread\":0,\"interval\":{i},\"cycles\":10,\
                     \"min\":1.0,\"avg\":2.0,\"max\":{},\"p99\":3.0,\"overruns\":0}}\n",
                    end - 2.0 + f64::from(i),
                    f64::from(i + 1),
                    5.0 + f64::from(i)
                )
            })
            .collect()
    }

    /// An evaluation's directory: `report.json` naming `phases` (each
    /// with `name.json` and `name.stats.jsonl`), one second apart.
    fn evaluation(dir: &Path, phases: &[&str]) -> PathBuf {
        let mut items = Vec::new();
        for (i, name) in phases.iter().enumerate() {
            std::fs::write(dir.join(format!("{name}.json")), result_json()).unwrap();
            let end = 1_763_776_000.0 + 4.0 * i as f64;
            std::fs::write(dir.join(format!("{name}.stats.jsonl")), stats_lines(end)).unwrap();
            items.push(format!(
                "{{\"name\": \"{name}\", \"seconds\": 3.0, \"result\": \"{name}.json\", \
                 \"hgrm\": \"{name}.hgrm\", \"stats\": \"{name}.stats.jsonl\"}}"
            ));
        }
        let report = dir.join("report.json");
        std::fs::write(
            &report,
            format!(
                "{{\"rtlat_version\": \"0.1.0\", \"cut_short\": false, \"phases\": [{}], \
                 \"causes\": []}}",
                items.join(", ")
            ),
        )
        .unwrap();
        report
    }

    #[test]
    fn a_report_stands_for_its_phases_named_after_them() {
        let dir = tempfile::tempdir().unwrap();
        let report = evaluation(dir.path(), &["idle", "cpu", "io"]);
        let source = StdinOr::from_arg(&report);
        let runs = read(&source).unwrap();
        let stems: Vec<&str> = runs.iter().map(|r| r.stem.as_str()).collect();
        assert_eq!(stems, ["idle", "cpu", "io"]);
        assert_eq!(runs[1].name, dir.path().join("cpu").display().to_string());
        assert!(runs.iter().all(|r| r.threads.len() == 2), "{runs:?}");
        assert_eq!(runs[0].tool.as_deref(), Some("cyclictest"));

        let timelines = read_timeline(&source).unwrap();
        let stems: Vec<&str> = timelines.iter().map(|t| t.stem.as_str()).collect();
        assert_eq!(stems, ["idle", "cpu", "io"]);
        // One after the other in time, as the phases ran.
        assert_eq!(timelines[0].lines.last().unwrap().time, 1_763_776_000.0);
        assert_eq!(timelines[1].lines[0].time, 1_763_776_002.0);
        assert_eq!(
            timelines[2].name,
            dir.path().join("io").display().to_string()
        );
    }

    #[test]
    fn a_report_in_the_current_directory_or_on_standard_input() {
        let dir = tempfile::tempdir().unwrap();
        let result = dir.path().join("idle.json");
        std::fs::write(&result, result_json()).unwrap();
        // An absolute "result" is taken as it is; a report in the current
        // directory names its phases alone.
        let text = format!(
            r#"{{"phases": [{{"name": "idle", "result": {:?}}}]}}"#,
            result.display().to_string()
        );
        let report = || EvaluationReport::detect(&text).unwrap();
        let runs = phases(&StdinOr::from_arg("report.json"), report(), &RESULTS).unwrap();
        assert_eq!(
            (runs[0].name.as_str(), runs[0].stem.as_str()),
            ("idle", "idle")
        );
        let e = phases(&StdinOr::Stdin, report(), &RESULTS).unwrap_err();
        assert_eq!(
            e.to_string(),
            "stdin: an evaluation report names its phases' files relative to its directory, \
             which standard input has not: give the report's path"
        );
    }

    #[test]
    fn other_inputs_read_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        std::fs::write(&path, result_json()).unwrap();
        let source = StdinOr::from_arg(&path);
        let runs = read(&source).unwrap();
        assert_eq!(runs, vec![Samples::read(&source, EXPECTED).unwrap()]);
        assert_eq!(runs[0].stem, "run");

        let stats = dir.path().join("day.jsonl");
        std::fs::write(&stats, stats_lines(1_763_776_000.0)).unwrap();
        let source = StdinOr::from_arg(&stats);
        assert_eq!(
            read_timeline(&source).unwrap(),
            vec![Timeline::read(&source).unwrap()]
        );
        // A run beside a staged load has "phases" too: a result still.
        let staged = dir.path().join("staged.json");
        let mut doc: serde_json::Value = serde_json::from_str(&result_json()).unwrap();
        doc["phases"] = serde_json::json!([{"name": "idle", "start": 0.0, "duration": 1.0}]);
        std::fs::write(&staged, doc.to_string()).unwrap();
        let runs = read(&StdinOr::from_arg(&staged)).unwrap();
        assert_eq!((runs.len(), runs[0].stem.as_str()), (1, "staged"));
    }

    #[test]
    fn a_missing_phase_file_is_one_line_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let report = evaluation(dir.path(), &["idle", "cpu"]);
        std::fs::remove_file(dir.path().join("cpu.json")).unwrap();
        let e = read(&StdinOr::from_arg(&report)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: phase \"cpu\": {}: cannot read: No such file or directory",
                report.display(),
                dir.path().join("cpu.json").display()
            )
        );
        // The timeline plot reads the other file, which is there.
        assert_eq!(read_timeline(&StdinOr::from_arg(&report)).unwrap().len(), 2);
        std::fs::remove_file(dir.path().join("idle.stats.jsonl")).unwrap();
        let e = read_timeline(&StdinOr::from_arg(&report)).unwrap_err();
        assert!(
            e.to_string().ends_with(&format!(
                ": phase \"idle\": {}: cannot read: No such file or directory",
                dir.path().join("idle.stats.jsonl").display()
            )),
            "{e}"
        );
    }

    #[test]
    fn what_a_report_lacks_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        let source = StdinOr::from_arg(&path);
        let problem = |text: &str, timeline: bool| {
            std::fs::write(&path, text).unwrap();
            match timeline {
                true => read_timeline(&source).map(|_| ()),
                false => read(&source).map(|_| ()),
            }
            .unwrap_err()
            .problem
        };
        assert_eq!(
            problem(r#"{"phases": []}"#, false),
            "an evaluation report without phases (it ended before the first): nothing to draw"
        );
        std::fs::write(dir.path().join("idle.json"), result_json()).unwrap();
        let no_stats = r#"{"phases": [{"name": "idle", "result": "idle.json"}]}"#;
        assert_eq!(
            problem(no_stats, true),
            "phase \"idle\" names no \"stats\" (its --stats-file lines), which this plot reads"
        );
        assert_eq!(read(&source).unwrap()[0].stem, "idle");
        assert_eq!(
            problem(r#"{"phases": [{"result": "idle.json"}]}"#, false),
            "an evaluation report, \"phases\" item 1: no \"name\" (a phase's name, e.g. \"idle\")"
        );
    }
}
