//! The report of `rtlat evaluate` (`DIR/report.json`) as an input of the
//! results tools: its phases, in order, each with the files it wrote
//! (its `--json` result, its `--stats-file` lines), named relative to the
//! report's directory. Only what a reader of the phases needs is typed
//! here; the report's other members are not read.
//!
//! A document is taken for a report by its content: a JSON object with a
//! `"phases"` array each item of which has a `"result"` string, and no
//! `"thread"` member. (A result document of a run beside a staged load,
//! `--load-schedule`, has a `"phases"` array too, of items without
//! `"result"`, and always a `"thread"` object.)
//!
//! ```
//! use rtlat_results::evaluation::EvaluationReport;
//!
//! let text = r#"{"rtlat_version": "0.1.0", "phases": [
//!     {"name": "idle", "result": "idle.json", "stats": "idle.stats.jsonl"},
//!     {"name": "cpu", "result": "cpu.json", "stats": "cpu.stats.jsonl"}]}"#;
//! let report = EvaluationReport::detect(text).unwrap().unwrap();
//! assert_eq!(report.phases[1].name, "cpu");
//! assert_eq!(report.phases[1].result, "cpu.json");
//! // A result document is not a report.
//! assert!(EvaluationReport::detect(r#"{"thread": {}, "phases": []}"#).is_none());
//! ```

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

/// An evaluation's report, as far as its phases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvaluationReport {
    /// Its phases, in the order they ran.
    pub phases: Vec<ReportPhase>,
}

/// One phase of a report's `"phases"` array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportPhase {
    /// `"name"`: `idle`, `cpu`, ...
    pub name: String,
    /// `"result"`: its `--json` result, relative to the report's directory.
    pub result: String,
    /// `"stats"`: its `--stats-file` lines, relative to the report's
    /// directory, when the report names them.
    pub stats: Option<String>,
    /// Whether its run left a result: `false` when the report's
    /// `"all_threads"` for it is `null` (its run failed, or was ended
    /// before it wrote).
    pub measured: bool,
}

/// The members that tell a report apart; the others are skipped unread.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    thread: Option<IgnoredAny>,
    #[serde(default)]
    phases: Option<Value>,
}

impl EvaluationReport {
    /// `None` when `text` is not a report (see the module's documentation
    /// for what is); else the report, or what is wrong with its phases
    /// (one line, naming the phase).
    pub fn detect(text: &str) -> Option<Result<EvaluationReport, String>> {
        // Most inputs are told apart without parsing: a result document
        // of hundreds of MiB is parsed once, by its own reader.
        if !text.trim_start().starts_with('{') || !text.contains("\"phases\"") {
            return None;
        }
        let probe: Probe = serde_json::from_str(text).ok()?;
        if probe.thread.is_some() {
            return None;
        }
        let Value::Array(items) = probe.phases? else {
            return None;
        };
        if !items
            .iter()
            .all(|p| p.get("result").is_some_and(Value::is_string))
        {
            return None;
        }
        Some(
            items
                .iter()
                .enumerate()
                .map(phase)
                .collect::<Result<Vec<_>, _>>()
                .map(|phases| EvaluationReport { phases }),
        )
    }
}

/// The `index`th (from 0) item of `"phases"`, which has a `"result"` string.
fn phase((index, item): (usize, &Value)) -> Result<ReportPhase, String> {
    let at = format!("\"phases\" item {}", index + 1);
    let name = match item.get("name").and_then(Value::as_str) {
        Some(name) if !name.trim().is_empty() => name.to_string(),
        _ => return Err(format!("{at}: no \"name\" (a phase's name, e.g. \"idle\")")),
    };
    let stats = match item.get("stats") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(format!("{at} (\"{name}\"): \"stats\" is not a file name")),
    };
    Ok(ReportPhase {
        name,
        result: item["result"].as_str().unwrap_or_default().to_string(),
        stats,
        measured: !item["all_threads"].is_null(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_a_report() {
        let report = r#"{"phases": [{"name": "idle", "result": "idle.json"},
            {"name": "cpu", "result": "cpu.json", "all_threads": {"max": 12.5}}], "audit": null}"#;
        let r = EvaluationReport::detect(report).unwrap().unwrap();
        assert_eq!(
            r.phases,
            [
                ReportPhase {
                    name: "idle".into(),
                    result: "idle.json".into(),
                    stats: None,
                    measured: false,
                },
                ReportPhase {
                    name: "cpu".into(),
                    result: "cpu.json".into(),
                    stats: None,
                    measured: true,
                }
            ]
        );
        // An evaluation that ended before its first phase.
        let none = EvaluationReport::detect(r#"{"phases": []}"#)
            .unwrap()
            .unwrap();
        assert!(none.phases.is_empty());
        for other in [
            // A run beside a staged load: phases without files, a thread.
            r#"{"thread": {"0": {}}, "phases": [{"name": "idle", "start": 0}]}"#,
            r#"{"thread": {"0": {}}, "phases": [{"name": "idle", "result": "x.json"}]}"#,
            r#"{"phases": [{"name": "idle", "start": 0}]}"#,
            r#"{"phases": {"name": "idle"}}"#,
            r#"{"timeline": []}"#,
            r#"{"phases": [{"name": "idle", "result": "idle.json"}"#,
            "[{\"phases\": []}]",
            "# \"phases\"\n000000 1\n",
        ] {
            assert_eq!(EvaluationReport::detect(other), None, "{other}");
        }
    }

    #[test]
    fn a_phase_without_a_name_or_with_odd_stats_is_named() {
        let e = EvaluationReport::detect(
            r#"{"phases": [{"name": "idle", "result": "a"}, {"result": "b"}]}"#,
        )
        .unwrap()
        .unwrap_err();
        assert_eq!(
            e,
            "\"phases\" item 2: no \"name\" (a phase's name, e.g. \"idle\")"
        );
        let e =
            EvaluationReport::detect(r#"{"phases": [{"name": "io", "result": "a", "stats": 3}]}"#)
                .unwrap()
                .unwrap_err();
        assert_eq!(
            e,
            "\"phases\" item 1 (\"io\"): \"stats\" is not a file name"
        );
    }
}
