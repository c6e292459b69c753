//! Reading one side of a comparison: an rtlat JSON result (`rtlat
//! cyclictest --json`, or any rtlat tool whose threads carry
//! `percentiles`), checked enough that every refusal is one line naming
//! the file and what is wrong.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::environment::Facts;
use super::judge::{ROWS, Row};
use rtlat_args::UsageError;
use rtlat_results::file::{StdinOr, json_problem, read_text};

/// What is compared of one thread, or of all threads together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figures {
    /// Samples taken.
    pub samples: u64,
    /// The value of each of [`ROWS`], ns; `None` without samples.
    pub values: [Option<i64>; ROWS.len()],
    /// The distribution's buckets `[from, to)` in ns, lowest first (empty
    /// when the file has no `distribution`): they say how finely each
    /// value is known.
    pub buckets: Vec<(i64, i64)>,
}

impl Figures {
    /// The value of `row`.
    pub fn value(&self, row: Row) -> Option<i64> {
        self.values[row as usize]
    }
}

/// One file's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFile {
    /// The file as named on the command line.
    pub label: String,
    /// By thread index.
    pub threads: BTreeMap<usize, Figures>,
    /// All threads together.
    pub all: Figures,
    /// The facts of its `"environment"`, when it records one.
    pub environment: Option<Facts>,
}

/// Reads and checks `source` (bounded, a byte-order mark skipped: see
/// [`rtlat_results::file`]).
pub fn load(source: &StdinOr) -> Result<RunFile, UsageError> {
    let text = read_text(source, WANTED).map_err(|e| UsageError(e.to_string()))?;
    parse(&source.name(), &text)
}

const WANTED: &str = "compare takes the JSON files of 'rtlat cyclictest --json'";

/// Reads `text`, the content of the file `label`.
pub fn parse(label: &str, text: &str) -> Result<RunFile, UsageError> {
    let fail = |what: String| UsageError(format!("{label}: {what}"));
    // The C tools' JSON is often not even JSON (`-nan`): name it first.
    let from_c = text.contains("\"rt_test_version:\"") && !text.contains("\"rtlat_version\"");
    if from_c {
        return Err(fail(format!(
            "written by the C rt-tests tools (no \"rtlat_version\"): it has no percentiles; {WANTED}"
        )));
    }
    if text.trim().is_empty() {
        return Err(fail(format!("empty file; {WANTED}")));
    }
    let doc: Value =
        serde_json::from_str(text).map_err(|e| fail(format!("{}; {WANTED}", json_problem(&e))))?;
    let Some(doc) = doc.as_object() else {
        return Err(fail(format!(
            "not an rtlat result (not a JSON object); {WANTED}"
        )));
    };
    if !doc.contains_key("rtlat_version") {
        return Err(fail(format!(
            "not an rtlat result (no \"rtlat_version\"); {WANTED}"
        )));
    }
    let Some(thread) = doc.get("thread").and_then(Value::as_object) else {
        return Err(fail(
            "no \"thread\" object: not a result with per-thread figures".into(),
        ));
    };
    if thread.is_empty() {
        return Err(fail("no threads in \"thread\"".into()));
    }
    let mut threads = BTreeMap::new();
    for (key, t) in thread {
        let index: usize = key
            .parse()
            .map_err(|_| fail(format!("\"thread\" key '{key}' is not a thread index")))?;
        let name = format!("thread {index}");
        let t = t
            .as_object()
            .ok_or_else(|| fail(format!("{name} is not a JSON object")))?;
        // The IPC tools keep the latency figures under "receiver".
        let t = match t.get("receiver").and_then(Value::as_object) {
            Some(receiver) => receiver,
            None => t,
        };
        threads.insert(
            index,
            thread_figures(t).map_err(|e| fail(format!("{name}: {e}")))?,
        );
    }
    let all = all_figures(doc, &threads).map_err(fail)?;
    Ok(RunFile {
        label: label.to_string(),
        threads,
        all,
        environment: Facts::of(doc.get("environment")),
    })
}

fn thread_figures(t: &Map<String, Value>) -> Result<Figures, String> {
    let samples = ["cycles", "samples"]
        .iter()
        .find_map(|k| t.get(*k))
        .ok_or("no \"cycles\"")?
        .as_u64()
        .ok_or("\"cycles\" is not a count")?;
    let percentiles = percentiles(t.get("percentiles"), "\"percentiles\"")?;
    let exact = |key: &str| -> Result<Option<i64>, String> {
        match t.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| format!("\"{key}\" is not a whole number of ns")),
        }
    };
    let mut values = percentiles;
    values[Row::Min as usize] = exact("min_ns")?;
    if let Some(max) = exact("max_ns")? {
        values[Row::Max as usize] = Some(max);
    }
    Ok(Figures {
        samples,
        values,
        buckets: buckets(t.get("distribution"))?,
    })
}

/// All threads: `all_threads` for the percentiles and the maximum, the
/// threads for the rest.
fn all_figures(
    doc: &Map<String, Value>,
    threads: &BTreeMap<usize, Figures>,
) -> Result<Figures, String> {
    let mut values = percentiles(doc.get("all_threads"), "\"all_threads\" percentiles")?;
    values[Row::Min as usize] = threads.values().filter_map(|f| f.value(Row::Min)).min();
    let mut buckets: Vec<(i64, i64)> = threads
        .values()
        .flat_map(|f| f.buckets.iter().copied())
        .collect();
    buckets.sort_unstable();
    buckets.dedup();
    Ok(Figures {
        samples: threads.values().map(|f| f.samples).sum(),
        values,
        buckets,
    })
}

/// The rows' values from a percentiles object (µs with 3 decimals):
/// every percentile row's key and `max` must be there, a number or null.
fn percentiles(p: Option<&Value>, what: &str) -> Result<[Option<i64>; ROWS.len()], String> {
    let p = match p {
        Some(Value::Object(p)) => p,
        Some(_) => return Err(format!("{what} is not a JSON object")),
        None => {
            return Err(format!("no {what}; {WANTED}"));
        }
    };
    let mut values = [None; ROWS.len()];
    for row in ROWS {
        let Some(key) = row.percentile_key() else {
            continue;
        };
        values[row as usize] = match p.get(key) {
            None => return Err(format!("no \"{key}\" in {what}")),
            Some(Value::Null) => None,
            Some(v) => Some(
                v.as_f64()
                    .map(micros_to_ns)
                    .ok_or_else(|| format!("\"{key}\" in {what} is not a number"))?,
            ),
        };
    }
    Ok(values)
}

/// `{"unit": "us", "buckets": [[from, to, count], ...]}` as ns bounds;
/// empty when absent.
fn buckets(d: Option<&Value>) -> Result<Vec<(i64, i64)>, String> {
    let Some(d) = d else {
        return Ok(Vec::new());
    };
    let malformed = || {
        "\"distribution\" is not {\"unit\": \"us\", \"buckets\": [[from, to, count], ...]}"
            .to_string()
    };
    if d.get("unit").and_then(Value::as_str) != Some("us") {
        return Err(malformed());
    }
    let list = d
        .get("buckets")
        .and_then(Value::as_array)
        .ok_or_else(malformed)?;
    let mut out = Vec::with_capacity(list.len());
    for b in list {
        let bound = |i: usize| b.get(i).and_then(Value::as_f64).map(micros_to_ns);
        match (bound(0), bound(1)) {
            (Some(from), Some(to)) if from < to => out.push((from, to)),
            _ => return Err(malformed()),
        }
    }
    out.sort_unstable();
    Ok(out)
}

fn micros_to_ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = include_str!("testdata/base.json");

    fn error(text: &str) -> String {
        parse("x.json", text).unwrap_err().0
    }

    #[test]
    fn reads_the_fixture() {
        let r = parse("base.json", BASE).unwrap();
        assert_eq!(r.threads.len(), 2);
        let t0 = &r.threads[&0];
        assert_eq!(t0.samples, 20_000);
        assert_eq!(
            t0.values,
            [
                Some(1_000),
                Some(15_000),
                Some(29_000),
                Some(256_000),
                Some(2_908_406)
            ]
        );
        assert_eq!(t0.buckets[0], (1_000, 2_000));
        assert_eq!(r.all.samples, 25_000);
        assert_eq!(r.all.value(Row::Min), Some(1_000));
        assert_eq!(r.all.value(Row::Max), Some(2_908_406));
    }

    #[test]
    fn ipc_results_read_the_receiver() {
        let text = r#"{"rtlat_version": "0.1.0", "thread": {"0": {"sender": {"samples": 5},
            "receiver": {"samples": 5, "min_ns": 3000, "max_ns": 9000,
            "percentiles": {"p50": 4.0, "p90": 5.0, "p99": 6.0, "p99.9": 6.0, "p99.99": 6.0,
            "p99.999": 6.0, "max": 9.0}}}},
            "all_threads": {"p50": 4.0, "p99": 6.0, "p99.9": 6.0, "max": 9.0}}"#;
        let r = parse("ipc.json", text).unwrap();
        assert_eq!(r.threads[&0].samples, 5);
        assert_eq!(r.threads[&0].value(Row::P99), Some(6_000));
        assert!(r.threads[&0].buckets.is_empty());
    }

    #[test]
    fn table_of_refusals() {
        let c_json = r#"{
  "file_version": 1,
  "cmdline:": "cyclictest -q --json=ct.json",
  "rt_test_version:": "2.40",
  "thread": {"0": {"cycles": 0, "min": 1000000, "max": 0, "avg": -nan}}
}"#;
        let without_percentiles = BASE.replace("\"percentiles\"", "\"percentile\"");
        let without_p999 = BASE.replacen("\"p99.9\":", "\"p99.8\":", 1);
        let cases: Vec<(&str, &str)> = vec![
            (
                c_json,
                "x.json: written by the C rt-tests tools (no \"rtlat_version\"): it has no \
                 percentiles; compare takes the JSON files of 'rtlat cyclictest --json'",
            ),
            (
                "T: 0 ( 1000) P: 0",
                "x.json: not valid JSON (expected value at line 1 column 1); compare takes",
            ),
            (
                "",
                "x.json: empty file; compare takes the JSON files of 'rtlat cyclictest --json'",
            ),
            (
                &BASE[..BASE.len() / 2],
                "x.json: cut short: the JSON ends before it is complete (EOF while parsing",
            ),
            ("[1, 2]", "x.json: not an rtlat result (not a JSON object)"),
            (
                "{\"thread\": {}}",
                "x.json: not an rtlat result (no \"rtlat_version\")",
            ),
            (
                "{\"rtlat_version\": \"0.1.0\"}",
                "x.json: no \"thread\" object",
            ),
            (
                "{\"rtlat_version\": \"0.1.0\", \"thread\": {}}",
                "x.json: no threads in \"thread\"",
            ),
            (
                "{\"rtlat_version\": \"0.1.0\", \"thread\": {\"a\": {}}}",
                "x.json: \"thread\" key 'a' is not a thread index",
            ),
            (
                "{\"rtlat_version\": \"0.1.0\", \"thread\": {\"0\": {}}}",
                "x.json: thread 0: no \"cycles\"",
            ),
            (
                &without_percentiles,
                "x.json: thread 0: no \"percentiles\"; compare takes the JSON files of 'rtlat \
                 cyclictest --json'",
            ),
            (
                &without_p999,
                "x.json: thread 0: no \"p99.9\" in \"percentiles\"",
            ),
        ];
        for (text, expected) in cases {
            let message = error(text);
            assert!(
                message.starts_with(expected),
                "{text}\n got {message}\nwant {expected}"
            );
            assert!(!message.contains('\n'), "{message}");
        }
        let mut doc: Value = serde_json::from_str(BASE).unwrap();
        doc.as_object_mut().unwrap().remove("all_threads");
        assert!(error(&doc.to_string()).starts_with("x.json: no \"all_threads\" percentiles"));
        doc["thread"]["1"]["percentiles"]["p99"] = Value::from("fast");
        assert_eq!(
            error(&doc.to_string()),
            "x.json: thread 1: \"p99\" in \"percentiles\" is not a number"
        );
        doc["thread"]["1"]["distribution"]["unit"] = Value::from("ns");
        doc["thread"]["1"]["percentiles"]["p99"] = Value::from(29.0);
        assert!(error(&doc.to_string()).starts_with("x.json: thread 1: \"distribution\" is not"));
    }

    #[test]
    fn missing_file_names_it() {
        let e = load(&StdinOr::from_arg("/nonexistent/base.json"))
            .unwrap_err()
            .0;
        assert_eq!(
            e,
            "/nonexistent/base.json: cannot read: No such file or directory"
        );
    }

    #[test]
    fn a_thread_without_samples_has_no_values() {
        let mut doc: Value = serde_json::from_str(BASE).unwrap();
        let t = &mut doc["thread"]["1"];
        t["cycles"] = Value::from(0);
        t["min_ns"] = Value::Null;
        t["max_ns"] = Value::Null;
        for (_, v) in t["percentiles"].as_object_mut().unwrap() {
            *v = Value::Null;
        }
        let r = parse("x.json", &doc.to_string()).unwrap();
        assert_eq!(r.threads[&1].values, [None; ROWS.len()]);
    }
}
