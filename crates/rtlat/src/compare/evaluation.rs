//! Two evaluations (`rtlat evaluate`'s `report.json` and its phases'
//! results) compared phase by phase: each phase of NEW against BASE's
//! phase of the same name by this library's comparison of two runs
//! ([`render::compare`]); nothing here judges a figure. `rtlat evaluate
//! --compare BASE` compares the evaluation it has just made
//! ([`against`]); `rtlat compare` given two evaluations compares them
//! ([`phases`], then [`summary`]).
//!
//! An evaluation is its directory or its `report.json`. It is read whole
//! ([`Evaluation::load`]): the report, then each of its phases' result
//! (`"phases"[].result`, relative to the report's directory), so that one
//! that cannot be compared is one line and exit 2 before anything is
//! measured or printed, and so that `evaluate -o` may name BASE's own
//! directory (its files are overwritten only after they were read). A
//! phase whose run left no result (`"all_threads"` null: its run failed
//! or was cut short before it wrote) is said, not refused.
//!
//! What comes out ([`summary`]): report.json's `"compare"` (each phase's
//! comparison as `rtlat compare --json` writes it, its headline and
//! whether it is worse; the phases only one side has; the environment's
//! differences, as compare's text says them and as its JSON lists them,
//! each key once over the phases) and the answer's line.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rtlat_args::columns;
use rtlat_args::escape::Escaped;

use rtlat_results::evaluation::EvaluationReport;
use rtlat_results::file::{StdinOr, json_problem, read_text};
use serde_json::{Value, json};

use super::figures::ROWS;
use super::input::{self, RunFile};
use super::judge::{Change, NoiseRule, percent};
use super::render::{self, Comparison};

/// An evaluation, read and checked.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// Its `report.json`, as reached from the path given.
    pub report: PathBuf,
    /// How the answer names it: its directory's name.
    pub label: String,
    /// Its phases in its order: the name, and the result or why there
    /// is none.
    pub phases: Vec<(String, Result<RunFile, String>)>,
}

impl Evaluation {
    /// Reads the evaluation at `path` (a directory: its `report.json`)
    /// and each of its phases' result. The error is the reason, one line
    /// (naming the report when it is not `path`, and a phase's file);
    /// `wanted` ends the refusal of what is not an evaluation's report.
    pub fn load(path: &Path, wanted: &str) -> Result<Evaluation, String> {
        let report = if path.is_dir() {
            path.join("report.json")
        } else {
            path.to_owned()
        };
        // The file's name when it is not the path given.
        let named = |problem: String| {
            if report == path {
                problem
            } else {
                format!("{}: {problem}", report.display())
            }
        };
        let text = read_text(&StdinOr::Path(report.clone()), wanted)
            .map_err(|e| named(format!("{}; {wanted}", e.problem)))?;
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&text) {
            return Err(named(format!("{}; {wanted}", json_problem(&e))));
        }
        Evaluation::in_text(&report, &text).unwrap_or_else(|| {
            Err(named(format!(
                "not the report of an evaluation (no \"phases\" with a \"name\" and a \
                 \"result\" each); {wanted}"
            )))
        })
    }

    /// The evaluation whose report, at `report`, is `text` (told apart
    /// as `rtlat plot` tells it: [`EvaluationReport::detect`]): each of
    /// its phases' result read. `None` when `text` is anything else (a
    /// run's result, or not JSON: its reader says why); the error names
    /// the phase and its file.
    pub fn in_text(report: &Path, text: &str) -> Option<Result<Evaluation, String>> {
        let listed = match EvaluationReport::detect(text)? {
            Ok(listed) => listed,
            Err(e) => return Some(Err(e)),
        };
        let dir = report
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut phases = Vec::new();
        for phase in listed.phases {
            let name = phase.name;
            let run = if !phase.measured {
                Err("its run left no result".to_owned())
            } else {
                let file = dir.join(&phase.result);
                match input::load(&StdinOr::Path(file)) {
                    Ok(run) => Ok(run),
                    Err(e) => return Some(Err(format!("phase {name}: {}", e.0))),
                }
            };
            phases.push((name, run));
        }
        let label = std::fs::canonicalize(dir)
            .ok()
            .and_then(|d| Some(d.file_name()?.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        Some(Ok(Evaluation {
            report: report.to_owned(),
            label,
            phases,
        }))
    }

    fn phase(&self, name: &str) -> Option<&Result<RunFile, String>> {
        self.phases
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, run)| run)
    }
}

/// The comparison of an evaluation with its base.
#[derive(Clone, Debug)]
pub struct Compared {
    /// report.json's `"compare"`.
    pub json: Value,
    /// The answer's line: `Against BASE: worse in cpu (floor +312%); ...`.
    pub line: String,
    /// Whether a phase is worse than in the base (`--fail-on
    /// regression`).
    pub any_worse: bool,
}

/// How one phase came out against the base.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    /// Some row is worse; the largest change, `floor +312%`.
    Worse(String),
    /// Some row is better, none worse.
    Better,
    /// Rows were judged, none changed.
    Noise,
    /// No row could be judged, and why (`too short`, `host stalls`).
    NotJudged(&'static str),
    /// Not compared: `not in the base`, `no base result`, `no result`.
    Missing(&'static str),
}

impl Outcome {
    /// report.json's `"status"` of the phase.
    fn status(&self) -> &'static str {
        match self {
            Outcome::Worse(_) => "worse",
            Outcome::Better => "better",
            Outcome::Noise => "within noise",
            Outcome::NotJudged(_) => "not judged",
            Outcome::Missing(why) => why,
        }
    }
}

/// One phase of NEW against BASE's phase of the same name.
#[derive(Clone, Debug)]
pub struct Phase<'a> {
    /// Its name.
    pub name: &'a str,
    outcome: Outcome,
    /// The two runs compared, or why they are not (report.json's
    /// `"why"`).
    pub compared: Result<Comparison<'a>, String>,
}

impl Phase<'_> {
    /// report.json's `"status"`: `worse`, `within noise`, `not in the
    /// base`, ...
    pub fn status(&self) -> &'static str {
        self.outcome.status()
    }
}

/// Each of `new`'s phases (in its order) against `base`'s phase of the
/// same name, by `rule`.
pub fn phases<'a>(
    base: &'a Evaluation,
    new: &'a [(String, Result<RunFile, String>)],
    rule: NoiseRule,
) -> Vec<Phase<'a>> {
    new.iter()
        .map(|(name, run)| {
            let (outcome, compared) = match (base.phase(name), run) {
                (None, _) => (
                    Outcome::Missing("not in the base"),
                    Err("the base has no phase of this name".to_owned()),
                ),
                (Some(Err(why)), _) => (Outcome::Missing("no base result"), Err(why.clone())),
                (Some(Ok(_)), Err(why)) => (Outcome::Missing("no result"), Err(why.clone())),
                (Some(Ok(b)), Ok(n)) => {
                    let c = render::compare(b, n, rule);
                    (outcome_of(&c), Ok(c))
                }
            };
            Phase {
                name,
                outcome,
                compared,
            }
        })
        .collect()
}

/// Compares each of `names` (this evaluation's phases, in order; their
/// results are `dir/NAME.json`) with the base's phase of the same name,
/// by the default noise rule.
pub fn against(base: &Evaluation, dir: &Path, names: &[&str]) -> Compared {
    let new: Vec<(String, Result<RunFile, String>)> = names
        .iter()
        .map(|&name| {
            let file = StdinOr::Path(dir.join(format!("{name}.json")));
            (name.to_owned(), input::load(&file).map_err(|e| e.0))
        })
        .collect();
    let rule = NoiseRule::DEFAULT;
    summary(base, &phases(base, &new, rule), rule)
}

/// The lines of the environment's differences (as compare's text says
/// them), each once over `phases`.
pub fn environment_lines(phases: &[Phase<'_>]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for c in phases.iter().filter_map(|p| p.compared.as_ref().ok()) {
        for line in c.environment.lines() {
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    lines
}

/// report.json's `"compare"` and the answer's line for `phases` (made by
/// [`phases`] with `rule`) against `base`.
pub fn summary(base: &Evaluation, phases: &[Phase<'_>], rule: NoiseRule) -> Compared {
    let mut entries: Vec<Value> = Vec::new();
    let mut changes: Vec<Value> = Vec::new();
    for phase in phases {
        let mut entry = match &phase.compared {
            Err(why) => json!({"why": why}),
            Ok(c) => {
                let comparison = as_json(c);
                for change in comparison["environment_changes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    if !changes.iter().any(|known| known["key"] == change["key"]) {
                        changes.push(change.clone());
                    }
                }
                json!({
                    "headline": c.headline(),
                    "any_worse": c.any_worse(),
                    "regressions": c.regressions(),
                    "comparison": comparison,
                })
            }
        };
        entry["name"] = phase.name.into();
        entry["status"] = phase.status().into();
        entries.push(entry);
    }
    let only_base: Vec<&str> = base
        .phases
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !phases.iter().any(|p| p.name == *n))
        .collect();
    let outcomes: Vec<(String, Outcome)> = phases
        .iter()
        .map(|p| (p.name.to_owned(), p.outcome.clone()))
        .collect();
    let any_worse = outcomes.iter().any(|(_, o)| matches!(o, Outcome::Worse(_)));
    let line = answer_line(&base.label, &outcomes);
    Compared {
        json: json!({
            "base": base.report.display().to_string(),
            "noise_percent": rule.percent,
            "answer": line,
            "any_worse": any_worse,
            "phases": entries,
            "only_in_base": only_base,
            "environment": environment_lines(phases),
            "environment_changes": changes,
        }),
        line,
        any_worse,
    }
}

/// `rtlat compare` of two evaluations: the answer's line, the two
/// reports and the phases only BASE has; then each of NEW's phases under
/// its heading (`Phase cpu:`), as `rtlat compare` writes two runs (but
/// for their environments), or why it is not compared; then what differs
/// between the environments, once. Every line fits `width` columns.
pub fn write_text(
    w: &mut dyn Write,
    base: &Evaluation,
    new: &Evaluation,
    phases: &[Phase<'_>],
    compared: &Compared,
    width: usize,
) -> io::Result<()> {
    let wrapped = |w: &mut dyn Write, text: &str, indent: usize| -> io::Result<()> {
        for line in columns::wrap(text, width, &" ".repeat(indent)) {
            writeln!(w, "{line}")?;
        }
        Ok(())
    };
    wrapped(w, &Escaped(&compared.line).to_string(), 6)?;
    for (tag, e) in [("BASE", base), ("NEW ", new)] {
        let report = e.report.display().to_string();
        let count = match e.phases.len() {
            1 => "1 phase".to_owned(),
            n => format!("{n} phases"),
        };
        wrapped(
            w,
            &format!("{tag}  {}: an evaluation of {count}", Escaped(&report)),
            6,
        )?;
    }
    let only_base: Vec<String> = base
        .phases
        .iter()
        .filter(|(n, _)| !phases.iter().any(|p| p.name == n))
        .map(|(n, _)| Escaped(n.as_str()).to_string())
        .collect();
    if !only_base.is_empty() {
        wrapped(
            w,
            &format!("only in BASE, not compared: {}", only_base.join(", ")),
            2,
        )?;
    }
    for phase in phases {
        writeln!(w)?;
        match &phase.compared {
            Ok(c) => {
                writeln!(w, "Phase {}:", Escaped(phase.name))?;
                render::write_phase_text(w, c, width)?;
            }
            Err(why) => wrapped(
                w,
                &format!(
                    "Phase {}: not compared ({}): {}",
                    Escaped(phase.name),
                    phase.status(),
                    Escaped(why)
                ),
                2,
            )?,
        }
    }
    let environment = environment_lines(phases);
    if !environment.is_empty() {
        writeln!(w)?;
        for line in &environment {
            wrapped(w, line, 4)?;
        }
    }
    Ok(())
}

/// `rtlat compare --json` of two evaluations: report.json's `"compare"`
/// as `evaluate --compare` writes it (its `"phases"` each with the
/// phase's comparison as `rtlat compare --json` writes two runs'), with
/// `"rtlat_version"` and NEW's report (`"new"`), pretty-printed and
/// ended by a newline.
pub fn write_json(w: &mut dyn Write, new: &Evaluation, compared: &Compared) -> io::Result<()> {
    let mut document = compared.json.clone();
    document["rtlat_version"] = env!("CARGO_PKG_VERSION").into();
    document["new"] = new.report.display().to_string().into();
    serde_json::to_writer_pretty(&mut *w, &document)?;
    writeln!(w)
}

/// The comparison as `rtlat compare --json` writes it.
fn as_json(c: &Comparison<'_>) -> Value {
    let mut bytes = Vec::new();
    match crate::compare::json::write_json(&mut bytes, c) {
        Ok(()) => serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        Err(_) => Value::Null,
    }
}

/// A phase's outcome: worse (with its largest change, all threads' first),
/// better, within noise, or not judged and why.
fn outcome_of(c: &Comparison<'_>) -> Outcome {
    if c.any_worse() {
        // All threads' rows first (the subjects end with it), then the
        // threads'; the largest change among the first subject with one.
        let change = c.subjects.iter().rev().find_map(|s| {
            ROWS.iter()
                .filter(|&&row| s.changes[row as usize] == Change::Worse)
                .filter_map(|&row| {
                    let (b, n) = s.values(row);
                    Some((row, percent(b?, n?)))
                })
                .max_by(|a, b| {
                    let size = |p: Option<f64>| p.unwrap_or(f64::INFINITY);
                    size(a.1).total_cmp(&size(b.1))
                })
                .map(|(row, p)| {
                    let change = p.map_or_else(|| "n/a".to_owned(), |p| format!("{p:+.0}%"));
                    if s.name == "all threads" {
                        format!("{} {change}", row.name())
                    } else {
                        format!("{} {} {change}", s.name, row.name())
                    }
                })
        });
        return Outcome::Worse(change.unwrap_or_default());
    }
    let any = |change: Change| c.subjects.iter().any(|s| s.changes.contains(&change));
    if any(Change::Better) {
        Outcome::Better
    } else if c.family.rows > 0 {
        Outcome::Noise
    } else if any(Change::HostStalls) {
        Outcome::NotJudged("host stalls")
    } else if any(Change::TooFewBlocks) || any(Change::TooFewSamples) {
        Outcome::NotJudged("too short")
    } else {
        Outcome::NotJudged("no data")
    }
}

/// The answer's width.
const WIDTH: usize = 80;

/// `Against BASE: worse in cpu (floor +312%); within noise in idle`, at
/// most 80 columns: when it is longer, the worse phases after the first
/// lose their change, then the phases not judged or not compared their
/// reason, then every group but the worse one becomes a count; what is
/// still too long is cut (report.json and the page have it all).
fn answer_line(label: &str, outcomes: &[(String, Outcome)]) -> String {
    let label: String = if label.chars().count() > 24 {
        label.chars().take(23).chain(['…']).collect()
    } else {
        label.to_owned()
    };
    let worse: Vec<(&str, &str)> = outcomes
        .iter()
        .filter_map(|(n, o)| match o {
            Outcome::Worse(change) => Some((n.as_str(), change.as_str())),
            _ => None,
        })
        .collect();
    // The other groups: their head, and their phases with the reason
    // each has (none for better and within noise).
    let group = |head: &'static str, pick: &dyn Fn(&Outcome) -> Option<&'static str>| {
        let items: Vec<(&str, Option<&'static str>)> = outcomes
            .iter()
            .filter_map(|(n, o)| {
                pick(o).map(|why| (n.as_str(), Some(why).filter(|w| !w.is_empty())))
            })
            .collect();
        (head, items)
    };
    let mut others = vec![
        group("better in", &|o| (*o == Outcome::Better).then_some("")),
        group("within noise in", &|o| (*o == Outcome::Noise).then_some("")),
        group("not judged in", &|o| match o {
            Outcome::NotJudged(why) => Some(why),
            _ => None,
        }),
        group("not compared:", &|o| match o {
            Outcome::Missing(why) => Some(why),
            _ => None,
        }),
    ];
    others.retain(|(_, items)| !items.is_empty());
    // `cpu, io (too short), fork (host stalls)`: a reason once after
    // the run of phases that have it.
    let listed = |items: &[(&str, Option<&str>)], reasons: bool| -> String {
        let mut out = String::new();
        for (i, (name, why)) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(name);
            let last_of_run = items.get(i + 1).is_none_or(|(_, next)| next != why);
            if let (true, true, Some(why)) = (reasons, last_of_run, why) {
                out.push_str(&format!(" ({why})"));
            }
        }
        out
    };
    let render = |details: usize, reasons: bool, counted: bool| -> String {
        let mut groups = Vec::new();
        if !worse.is_empty() {
            let items: Vec<String> = worse
                .iter()
                .enumerate()
                .map(|(i, &(name, change))| {
                    if i < details && !change.is_empty() {
                        format!("{name} ({change})")
                    } else {
                        name.to_owned()
                    }
                })
                .collect();
            groups.push(format!("worse in {}", items.join(", ")));
        }
        for (head, items) in &others {
            let what = if counted && items.len() > 1 {
                format!("{} phases", items.len())
            } else {
                listed(items, reasons)
            };
            groups.push(format!("{head} {what}"));
        }
        if groups.is_empty() {
            groups.push("no phase to compare".to_owned());
        }
        format!("Against {label}: {}", groups.join("; "))
    };
    let tries = [
        (worse.len(), true, false),
        (1, true, false),
        (1, false, false),
        (1, false, true),
        (0, false, true),
    ];
    for (details, reasons, counted) in tries {
        let line = render(details, reasons, counted);
        if line.chars().count() <= WIDTH {
            return line;
        }
    }
    render(0, false, true)
        .chars()
        .take(WIDTH - 1)
        .chain(['…'])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::fixtures;

    /// What `evaluate --compare` says it takes.
    const WANTED: &str =
        "--compare takes the directory of an earlier rtlat evaluate, or its report.json";

    /// The evaluation at `path`, as `evaluate --compare` reads its base.
    fn load(path: &Path) -> Result<Evaluation, String> {
        Evaluation::load(path, WANTED)
    }

    /// A result of two threads: thread 0 with 1 % of its samples at
    /// `late0` ns, thread 1 at 40 µs; 100 blocks of 100 ms each.
    fn result(late0: i64) -> String {
        fixtures::document(
            &[
                fixtures::thread(late0, |_| 10),
                fixtures::thread(40_000, |_| 10),
            ],
            true,
        )
    }

    /// An evaluation's directory: `report.json` and a result per phase
    /// (`None`: the phase's run left none).
    fn evaluation(phases: &[(&str, Option<i64>)]) -> tempfile::TempDir {
        evaluation_on(None, phases)
    }

    /// [`evaluation`], each result with an environment whose kernel is
    /// `kernel`, when given.
    fn evaluation_on(kernel: Option<&str>, phases: &[(&str, Option<i64>)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut listed = Vec::new();
        for &(name, late) in phases {
            if let Some(late) = late {
                let mut document: Value = serde_json::from_str(&result(late)).unwrap();
                if let Some(kernel) = kernel {
                    document["environment"] = json!({"kernel": {"release": kernel}});
                }
                let file = dir.path().join(format!("{name}.json"));
                std::fs::write(file, document.to_string()).unwrap();
            }
            listed.push(json!({
                "name": name,
                "result": format!("{name}.json"),
                "all_threads": late.map(|_| json!({"max": 1.0})),
            }));
        }
        let report = json!({"rtlat_version": "0.1.0", "phases": listed});
        std::fs::write(dir.path().join("report.json"), report.to_string()).unwrap();
        dir
    }

    #[test]
    fn an_evaluation_against_itself_is_within_noise() {
        let dir = evaluation(&[("idle", Some(40_000)), ("cpu", Some(40_000))]);
        let base = load(dir.path()).unwrap();
        assert_eq!(base.report, dir.path().join("report.json"));
        let c = against(&base, dir.path(), &["idle", "cpu"]);
        assert!(!c.any_worse);
        let label = &base.label;
        assert_eq!(
            c.line,
            format!("Against {label}: within noise in idle, cpu")
        );
        assert_eq!(c.json["any_worse"], false);
        assert_eq!(c.json["phases"][1]["name"], "cpu");
        assert_eq!(c.json["phases"][1]["status"], "within noise");
        // The comparison as `rtlat compare --json` writes it.
        let comparison = &c.json["phases"][1]["comparison"];
        assert_eq!(comparison["any_worse"], false);
        assert_eq!(comparison["subjects"][2]["name"], "all threads");
        assert!(
            comparison["headline"]
                .as_str()
                .unwrap()
                .starts_with("No change beyond noise"),
            "{comparison}"
        );
        // The report itself as the base (a file, not its directory).
        let again = load(&dir.path().join("report.json")).unwrap();
        assert_eq!(again.phases.len(), 2);
    }

    #[test]
    fn a_worse_phase_is_named_with_its_largest_change() {
        let base = evaluation(&[("idle", Some(40_000)), ("cpu", Some(40_000))]);
        let new = evaluation(&[("idle", Some(40_000)), ("cpu", Some(80_000))]);
        let b = load(base.path()).unwrap();
        let c = against(&b, new.path(), &["idle", "cpu"]);
        assert!(c.any_worse);
        let label = &b.label;
        assert_eq!(
            c.line,
            format!("Against {label}: worse in cpu (floor +87%); within noise in idle")
        );
        let cpu = &c.json["phases"][1];
        assert_eq!(cpu["status"], "worse");
        assert_eq!(cpu["any_worse"], true);
        assert_eq!(
            cpu["regressions"][0],
            "p99.9 worse: thread 0 +88.9%, all threads +86.7%"
        );
        assert_eq!(c.json["phases"][0]["status"], "within noise");
    }

    #[test]
    fn phases_on_one_side_only_are_said() {
        let base = evaluation(&[("idle", Some(40_000)), ("io", None), ("fork", Some(40_000))]);
        let new = evaluation(&[("idle", Some(40_000)), ("io", Some(40_000)), ("cpu", None)]);
        let b = load(base.path()).unwrap();
        assert_eq!(
            b.phases[1],
            ("io".to_owned(), Err("its run left no result".to_owned()))
        );
        let c = against(&b, new.path(), &["idle", "io", "cpu", "timers"]);
        assert!(!c.any_worse);
        // With the base's name as a short one would be: the reasons do
        // not fit (report.json has them).
        let outcomes: Vec<(String, Outcome)> = c.json["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let name = p["name"].as_str().unwrap().to_owned();
                let outcome = match p["status"].as_str().unwrap() {
                    "within noise" => Outcome::Noise,
                    "not in the base" => Outcome::Missing("not in the base"),
                    "no base result" => Outcome::Missing("no base result"),
                    other => panic!("{other}"),
                };
                (name, outcome)
            })
            .collect();
        assert_eq!(
            answer_line("base", &outcomes),
            "Against base: within noise in idle; not compared: io, cpu, timers"
        );
        assert!(c.line.starts_with(&format!("Against {}: ", b.label)));
        assert_eq!(c.json["only_in_base"], json!(["fork"]));
        assert_eq!(c.json["phases"][2]["status"], "not in the base");
        assert_eq!(c.json["phases"][1]["why"], "its run left no result");
    }

    #[test]
    fn the_line_fits_80_columns() {
        let worse = |name: &str, change: &str| (name.to_owned(), Outcome::Worse(change.into()));
        let outcomes = vec![
            worse("cpu", "floor +312%"),
            worse("memory", "thread 1 p99 +41%"),
            ("idle".to_owned(), Outcome::Noise),
            ("io".to_owned(), Outcome::NotJudged("host stalls")),
            ("fork".to_owned(), Outcome::NotJudged("too short")),
            ("timers".to_owned(), Outcome::Missing("not in the base")),
            ("cache".to_owned(), Outcome::Better),
        ];
        let long = "an-evaluation-directory-with-a-long-name";
        // Each step of shortening, as far as it needs to go.
        for (label, outcomes, line) in [
            (
                "base",
                &outcomes[2..4],
                "Against base: within noise in idle; not judged in io (host stalls)",
            ),
            (
                "evaluation-6.1",
                &outcomes[2..5],
                "Against evaluation-6.1: within noise in idle; not judged in io, fork",
            ),
            (
                "evaluation-6.1",
                &outcomes[..2],
                "Against evaluation-6.1: worse in cpu (floor +312%), memory (thread 1 p99 +41%)",
            ),
            (
                long,
                &outcomes[..2],
                "Against an-evaluation-directory…: worse in cpu (floor +312%), memory",
            ),
            (
                "base",
                &outcomes[..4],
                "Against base: worse in cpu, memory; within noise in idle; not judged in io",
            ),
        ] {
            assert_eq!(answer_line(label, outcomes), line);
        }
        // A reason once after the phases that have it.
        let short = [
            ("io".to_owned(), Outcome::NotJudged("too short")),
            ("fork".to_owned(), Outcome::NotJudged("too short")),
        ];
        assert_eq!(
            answer_line("base", &short),
            "Against base: not judged in io, fork (too short)"
        );
        // What does not fit even so is cut after the worse phases.
        let cut = answer_line("base", &outcomes);
        assert_eq!(
            cut,
            "Against base: worse in cpu, memory; better in cache; within noise in idle; not …"
        );
        assert_eq!(cut.chars().count(), 80);
    }

    #[test]
    fn what_is_not_a_base_is_refused_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nowhere");
        let e = load(&missing).unwrap_err();
        assert!(e.starts_with("cannot read: "), "{e}");
        // A directory without a report names the file it looked for.
        let e = load(dir.path()).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "{}: cannot read: ",
                dir.path().join("report.json").display()
            )),
            "{e}"
        );
        let result = dir.path().join("run.json");
        std::fs::write(&result, result_of_a_run()).unwrap();
        let e = load(&result).unwrap_err();
        assert_eq!(
            e,
            "not the report of an evaluation (no \"phases\" with a \"name\" and a \"result\" \
             each); --compare takes the directory of an earlier rtlat evaluate, or its report.json"
        );
        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, "{\"phases\": [").unwrap();
        let e = load(&broken).unwrap_err();
        assert!(e.starts_with("cut short: the JSON ends"), "{e}");
        // A report whose phase's result is gone.
        let eval = evaluation(&[("idle", Some(40_000))]);
        std::fs::remove_file(eval.path().join("idle.json")).unwrap();
        let e = load(eval.path()).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "phase idle: {}: cannot read: ",
                eval.path().join("idle.json").display()
            )),
            "{e}"
        );
    }

    fn result_of_a_run() -> String {
        result(40_000)
    }

    /// What `rtlat compare` prints for two runs' results.
    fn compare_text(base: &Path, new: &Path) -> String {
        let load = |path: &Path| input::load(&StdinOr::Path(path.to_owned())).unwrap();
        let (b, n) = (load(base), load(new));
        let mut out = Vec::new();
        render::write_text(&mut out, &render::compare(&b, &n, NoiseRule::DEFAULT), 80).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// `rtlat compare BASE NEW` of two evaluations: its text, its JSON and
    /// its exit status with `--fail-on-regression`.
    fn compare_evaluations(base: &Path, new: &Path) -> (String, Value, u8) {
        let (b, n) = (load(base).unwrap(), load(new).unwrap());
        let phases = phases(&b, &n.phases, NoiseRule::DEFAULT);
        let compared = summary(&b, &phases, NoiseRule::DEFAULT);
        let mut text = Vec::new();
        write_text(&mut text, &b, &n, &phases, &compared, 80).unwrap();
        let mut json = Vec::new();
        write_json(&mut json, &n, &compared).unwrap();
        assert!(json.ends_with(b"}\n"));
        let status = crate::compare::evaluations_status(true, &phases);
        assert_eq!(
            crate::compare::evaluations_status(false, &phases),
            0,
            "without --fail-on-regression"
        );
        (
            String::from_utf8(text).unwrap(),
            serde_json::from_slice(&json).unwrap(),
            status,
        )
    }

    #[test]
    fn two_evaluations_are_compared_phase_by_phase() {
        let base = evaluation_on(
            Some("6.1.0"),
            &[
                ("idle", Some(40_000)),
                ("cpu", Some(40_000)),
                ("fork", Some(40_000)),
            ],
        );
        let new = evaluation_on(
            Some("6.6.0"),
            &[
                ("idle", Some(40_000)),
                ("cpu", Some(80_000)),
                ("io", Some(40_000)),
            ],
        );
        let (text, _, status) = compare_evaluations(base.path(), new.path());
        assert_eq!(status, 3, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let b = load(base.path()).unwrap();
        // The answer's line (shortened to fit 80 columns).
        assert_eq!(
            lines[0],
            format!(
                "Against {}: worse in cpu; within noise in idle; not compared: io",
                b.label
            )
        );
        let report = |dir: &tempfile::TempDir| dir.path().join("report.json").display().to_string();
        assert_eq!(
            lines[1],
            format!("BASE  {}: an evaluation of 3 phases", report(&base))
        );
        assert_eq!(
            lines[2],
            format!("NEW   {}: an evaluation of 3 phases", report(&new))
        );
        assert_eq!(lines[3], "only in BASE, not compared: fork");
        // Each phase compared: its heading, then exactly what `rtlat
        // compare` prints for its two results, but for the environment.
        for name in ["idle", "cpu"] {
            let file = format!("{name}.json");
            let alone = compare_text(&base.path().join(&file), &new.path().join(&file));
            let environment = "environment differs (BASE -> NEW):\n  kernel.release  6.1.0 -> \
                               6.6.0\n\n";
            assert!(alone.contains(environment), "{alone}");
            let expected = format!("\nPhase {name}:\n{}", alone.replacen(environment, "", 1));
            assert!(text.contains(&expected), "{text}\n--- want ---\n{expected}");
        }
        assert!(text.contains("\nPhase cpu:\nWorse: "), "{text}");
        assert!(
            text.contains("\nPhase idle:\nNo change beyond noise"),
            "{text}"
        );
        assert!(
            text.contains(
                "\nPhase io: not compared (not in the base): the base has no phase of this name\n"
            ),
            "{text}"
        );
        assert!(!text.contains("Phase fork"), "{text}");
        // The environment's differences once, at the end.
        assert_eq!(text.matches("environment differs").count(), 1, "{text}");
        assert!(
            text.ends_with(
                "\n\nenvironment differs (BASE -> NEW):\n  kernel.release  6.1.0 -> 6.6.0\n"
            ),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    }

    #[test]
    fn two_evaluations_as_json() {
        let base = evaluation(&[("idle", Some(40_000)), ("cpu", Some(40_000)), ("io", None)]);
        let new = evaluation(&[("idle", Some(40_000)), ("cpu", Some(80_000)), ("io", None)]);
        let (text, json, status) = compare_evaluations(base.path(), new.path());
        assert_eq!(status, 3, "{text}");
        assert_eq!(json["rtlat_version"], env!("CARGO_PKG_VERSION"));
        let report = |dir: &tempfile::TempDir| dir.path().join("report.json").display().to_string();
        assert_eq!(json["base"], report(&base));
        assert_eq!(json["new"], report(&new));
        assert_eq!(json["noise_percent"], 10.0);
        assert_eq!(json["any_worse"], true);
        assert_eq!(json["answer"], text.lines().next().unwrap());
        assert_eq!(json["only_in_base"], json!([]));
        let phases = json["phases"].as_array().unwrap();
        let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["idle", "cpu", "io"]);
        let statuses: Vec<&str> = phases
            .iter()
            .map(|p| p["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["within noise", "worse", "no base result"]);
        assert_eq!(phases[2]["why"], "its run left no result");
        assert!(phases[2].get("comparison").is_none());
        // Each compared phase: its comparison as `rtlat compare --json`
        // writes it for the two results.
        for (i, name) in [(0, "idle"), (1, "cpu")] {
            let file = format!("{name}.json");
            let load = |dir: &tempfile::TempDir| {
                input::load(&StdinOr::Path(dir.path().join(&file))).unwrap()
            };
            let (b, n) = (load(&base), load(&new));
            let mut alone = Vec::new();
            let c = render::compare(&b, &n, NoiseRule::DEFAULT);
            crate::compare::json::write_json(&mut alone, &c).unwrap();
            let alone: Value = serde_json::from_slice(&alone).unwrap();
            assert_eq!(phases[i]["comparison"], alone, "{name}");
            assert_eq!(phases[i]["headline"], alone["headline"]);
            assert_eq!(phases[i]["any_worse"], alone["any_worse"]);
        }
        assert_eq!(
            phases[1]["regressions"][0],
            "p99.9 worse: thread 0 +88.9%, all threads +86.7%"
        );
        // Without an environment in either, nothing to say of it.
        assert_eq!(json["environment"], json!([]));
        assert!(!text.contains("environment"), "{text}");
    }

    #[test]
    fn evaluations_within_noise_pass_the_gate() {
        let base = evaluation(&[("idle", Some(40_000)), ("cpu", Some(40_000))]);
        let (text, json, status) = compare_evaluations(base.path(), base.path());
        assert_eq!(status, 0, "{text}");
        assert_eq!(json["any_worse"], false);
        assert!(
            text.contains("\nPhase idle:\nNo change beyond noise"),
            "{text}"
        );
        assert!(
            text.contains("\nPhase cpu:\nNo change beyond noise"),
            "{text}"
        );
    }

    /// `rtlat compare`'s settings for `base` and `new`.
    fn settings(base: &Path, new: &Path) -> crate::compare::Settings {
        crate::compare::Settings {
            base: StdinOr::Path(base.to_owned()),
            new: StdinOr::Path(new.to_owned()),
            rule: NoiseRule::DEFAULT,
            fail_on_regression: true,
            json: None,
        }
    }

    /// The usage error of `rtlat compare` with `settings`.
    fn refusal(settings: &crate::compare::Settings) -> String {
        let e = crate::compare::run(settings).unwrap_err();
        e.downcast_ref::<rtlat_args::UsageError>()
            .unwrap_or_else(|| panic!("not a usage error: {e}"))
            .0
            .clone()
    }

    #[test]
    fn an_evaluation_and_a_run_are_refused() {
        let eval = evaluation(&[("idle", Some(40_000))]);
        let run = eval.path().join("idle.json");
        let report = eval.path().join("report.json");
        for (base, new, line) in [
            (
                eval.path(),
                run.as_path(),
                format!(
                    "BASE '{}' is an evaluation and NEW '{}' a run's result",
                    eval.path().display(),
                    run.display()
                ),
            ),
            (
                run.as_path(),
                report.as_path(),
                format!(
                    "NEW '{}' is an evaluation and BASE '{}' a run's result",
                    report.display(),
                    run.display()
                ),
            ),
        ] {
            let message = refusal(&settings(base, new));
            assert_eq!(
                message,
                format!("{line}: compare takes two evaluations or two results, not one of each")
            );
            assert!(!message.contains('\n'));
        }
        // An evaluation that cannot be read: its reason, one line.
        let gone = evaluation(&[("idle", Some(40_000))]);
        std::fs::remove_file(gone.path().join("idle.json")).unwrap();
        let message = refusal(&settings(eval.path(), gone.path()));
        let idle = gone.path().join("idle.json");
        assert!(
            message.starts_with(&format!("phase idle: {}: cannot read: ", idle.display())),
            "{message}"
        );
        let report = gone.path().join("report.json");
        let message = refusal(&settings(eval.path(), &report));
        assert!(
            message.starts_with(&format!(
                "{}: phase idle: {}: cannot read: ",
                report.display(),
                idle.display()
            )),
            "{message}"
        );
        // A directory without a report.
        let empty = tempfile::tempdir().unwrap();
        let message = refusal(&settings(eval.path(), empty.path()));
        assert!(
            message.starts_with(&format!(
                "{}: cannot read: ",
                empty.path().join("report.json").display()
            )),
            "{message}"
        );
        assert!(
            message.ends_with(
                "; compare takes two evaluations (each its directory or its report.json) or two \
                 results of 'rtlat cyclictest --json'"
            ),
            "{message}"
        );
    }
}
