//! `rtlat compare --json`: the comparison as a JSON document, the text's
//! content for programs (a CI job that wants to say what changed):
//!
//! ```json
//! {"rtlat_version": "0.1.0",
//!  "base": {"file": "a.json", "threads": 2, "samples": 25000},
//!  "new": {"file": "b.json", "threads": 2, "samples": 25000},
//!  "noise_percent": 10.0, "only_base": [], "only_new": [],
//!  "environment_recorded": {"base": true, "new": true},
//!  "environment_changes": [{"key": "kernel.release", "base": "6.1.0", "new": "6.6.0"}],
//!  "subjects": [{"name": "thread 0", "base_samples": 20000, "new_samples": 20000,
//!                "rows": [{"row": "p99", "base_us": 29.0, "new_us": 33.0,
//!                          "change_percent": 13.8, "verdict": "worse"}]}],
//!  "verdicts": {"min": "within noise", "p99": "worse: thread 0 +13.8%"},
//!  "any_worse": true}
//! ```
//! `environment_changes` is `null` unless both results record an
//! environment (`environment_recorded` says which do); a value without
//! data is `null`. A run read from the C cyclictest's JSON has a
//! `"resolution"` beside its `"samples"`: how its percentiles were made
//! (from its `-h` histogram, to the whole µs).

use std::io::{self, Write};

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use super::environment::EnvironmentDiff;
use super::input::RunFile;
use super::judge::{ROWS, percent};
use super::render::{Compared, Comparison};

/// Writes `c` as JSON, pretty-printed and ended by a newline.
pub fn write_json(w: &mut dyn Write, c: &Comparison<'_>) -> io::Result<()> {
    let doc = Document {
        rtlat_version: env!("CARGO_PKG_VERSION"),
        base: RunDto::from(c.base),
        new: RunDto::from(c.new),
        noise_percent: c.rule.percent,
        only_base: &c.only_base,
        only_new: &c.only_new,
        environment_recorded: Recorded {
            base: c.base.environment.is_some(),
            new: c.new.environment.is_some(),
        },
        environment_changes: match &c.environment {
            EnvironmentDiff::Compared(changes) => Some(
                changes
                    .iter()
                    .map(|change| FactChangeDto {
                        key: change.key,
                        base: &change.base,
                        new: &change.new,
                    })
                    .collect(),
            ),
            _ => None,
        },
        subjects: c.subjects.iter().map(SubjectDto::from).collect(),
        verdicts: Verdicts(c),
        any_worse: c.any_worse(),
    };
    let mut w = io::BufWriter::new(w);
    serde_json::to_writer_pretty(&mut w, &doc)?;
    w.write_all(b"\n")?;
    w.flush()
}

#[derive(Serialize)]
struct Document<'a> {
    rtlat_version: &'static str,
    base: RunDto<'a>,
    new: RunDto<'a>,
    noise_percent: f64,
    only_base: &'a [usize],
    only_new: &'a [usize],
    environment_recorded: Recorded,
    environment_changes: Option<Vec<FactChangeDto<'a>>>,
    subjects: Vec<SubjectDto<'a>>,
    verdicts: Verdicts<'a>,
    any_worse: bool,
}

#[derive(Serialize)]
struct RunDto<'a> {
    file: &'a str,
    threads: usize,
    samples: u64,
    /// How the figures were made when not by rtlat (C's histogram).
    #[serde(skip_serializing_if = "Option::is_none")]
    resolution: Option<&'static str>,
}

impl<'a> From<&'a RunFile> for RunDto<'a> {
    fn from(run: &'a RunFile) -> Self {
        RunDto {
            file: &run.label,
            threads: run.threads.len(),
            samples: run.all.samples,
            resolution: run.resolution,
        }
    }
}

#[derive(Serialize)]
struct Recorded {
    base: bool,
    new: bool,
}

#[derive(Serialize)]
struct FactChangeDto<'a> {
    key: &'static str,
    base: &'a Value,
    new: &'a Value,
}

#[derive(Serialize)]
struct SubjectDto<'a> {
    name: &'a str,
    base_samples: u64,
    new_samples: u64,
    rows: Vec<RowDto>,
}

impl<'a> From<&'a Compared<'a>> for SubjectDto<'a> {
    fn from(s: &'a Compared<'a>) -> Self {
        let us = |ns: Option<i64>| ns.map(|ns| ns as f64 / 1000.0);
        SubjectDto {
            name: &s.name,
            base_samples: s.base.samples,
            new_samples: s.new.samples,
            rows: ROWS
                .iter()
                .zip(s.changes)
                .map(|(&row, change)| {
                    let (base, new) = (s.base.value(row), s.new.value(row));
                    RowDto {
                        row: row.name(),
                        base_us: us(base),
                        new_us: us(new),
                        change_percent: base
                            .zip(new)
                            .and_then(|(b, n)| percent(b, n))
                            .map(|p| (p * 10.0).round() / 10.0),
                        verdict: change.describe(),
                    }
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct RowDto {
    row: &'static str,
    base_us: Option<f64>,
    new_us: Option<f64>,
    change_percent: Option<f64>,
    verdict: &'static str,
}

/// `{"min": "within noise", ...}`: the verdict line of each row.
struct Verdicts<'a>(&'a Comparison<'a>);

impl Serialize for Verdicts<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(ROWS.len()))?;
        for row in ROWS {
            map.serialize_entry(row.name(), &self.0.verdict(row))?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::input::parse;
    use crate::compare::judge::NoiseRule;
    use crate::compare::render::compare;

    const BASE: &str = include_str!("testdata/base.json");
    const NEW: &str = include_str!("testdata/new.json");

    fn json_of(base: &str, new: &str) -> Value {
        let (base, new) = (
            parse("base.json", base).unwrap(),
            parse("new.json", new).unwrap(),
        );
        let c = compare(&base, &new, NoiseRule { percent: 10.0 });
        let mut out = Vec::new();
        write_json(&mut out, &c).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    /// `text` with an `"environment"` whose kernel release is `release`.
    fn with_environment(text: &str, release: &str) -> String {
        let mut doc: Value = serde_json::from_str(text).unwrap();
        doc["environment"] = serde_json::json!({
            "rtlat_version": "0.1.0",
            "kernel": {"release": release, "cmdline": "quiet"},
        });
        doc.to_string()
    }

    #[test]
    fn the_figures_and_verdicts_of_the_text() {
        let v = json_of(BASE, NEW);
        assert_eq!(v["base"]["file"], "base.json");
        assert_eq!(v["new"]["samples"], 25000);
        assert_eq!(v["noise_percent"], 10.0);
        let thread0 = &v["subjects"][0];
        assert_eq!(thread0["name"], "thread 0");
        let p99 = &thread0["rows"][2];
        assert_eq!(p99["row"], "p99");
        assert_eq!(p99["base_us"], 29.0);
        assert_eq!(p99["new_us"], 33.0);
        assert_eq!(p99["change_percent"], 13.8);
        assert_eq!(p99["verdict"], "worse");
        assert_eq!(v["subjects"][2]["name"], "all threads");
        assert_eq!(
            v["verdicts"]["p99"],
            "worse: thread 0 +13.8%, all threads +10.3%"
        );
        assert_eq!(v["any_worse"], true);
        // Neither fixture records an environment.
        assert_eq!(v["environment_changes"], Value::Null);
        assert_eq!(
            v["environment_recorded"],
            serde_json::json!({"base": false, "new": false})
        );
    }

    #[test]
    fn environment_changes_name_the_key_and_both_values() {
        let v = json_of(
            &with_environment(BASE, "6.1.0-rt"),
            &with_environment(NEW, "6.6.0"),
        );
        assert_eq!(
            v["environment_changes"],
            serde_json::json!([{"key": "kernel.release", "base": "6.1.0-rt", "new": "6.6.0"}])
        );
        let only_new = json_of(BASE, &with_environment(NEW, "6.6.0"));
        assert_eq!(only_new["environment_changes"], Value::Null);
        assert_eq!(only_new["environment_recorded"]["new"], true);
    }
}
