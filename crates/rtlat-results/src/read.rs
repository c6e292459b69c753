//! Reading a `--json` document, rtlat's or the C rt-tests tools', into
//! [`ResultDocument`]: the envelope, each thread as a [`ThreadResult`],
//! rtlat's `all_threads` and `environment`. Every problem is one line
//! naming where it is (`thread 1: ...`).

use std::collections::BTreeMap;

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::document::{Header, Percentiles, SysInfo, ThreadResult};

use crate::file::json_problem;

/// Which program wrote a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// An rtlat tool's `--json` (it has `rtlat_version`).
    RtlatJson,
    /// An rt-tests tool's `--json` (C's `cyclictest --json`).
    CJson,
    /// cyclictest's `-h`/`-H` histogram block, on standard output or in
    /// `--histfile`, from either program.
    HistogramText,
}

impl Format {
    /// Who wrote it, for titles and notes: `rtlat`, `rt-tests`, or
    /// `histogram text`.
    pub fn writer(self) -> &'static str {
        match self {
            Format::RtlatJson => "rtlat",
            Format::CJson => "rt-tests",
            Format::HistogramText => "histogram text",
        }
    }
}

/// One `--json` document, read.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultDocument {
    /// The envelope.
    pub header: Header,
    /// 1 when C's µs figures (`min`, `max`, histogram buckets) are ns.
    pub resolution_in_ns: u8,
    /// The threads, by index.
    pub threads: BTreeMap<usize, ThreadResult>,
    /// rtlat: all threads' percentiles together, as JSON (read by
    /// [`ResultDocument::all_threads`]).
    pub all_threads: Option<Value>,
    /// rtlat: the machine's facts ([`crate::environment::Environment`]), as JSON;
    /// `None` when absent or `null`.
    pub environment: Option<Value>,
    /// rtlat: the share of the measured CPUs' time the hypervisor stole
    /// during the run (`"verdict".steal_share`, 0 to 1); `None` when the
    /// document does not say (the C tools', rtlat's before it was
    /// written, a run without system counters) or says something else.
    pub steal_share: Option<f64>,
}

impl ResultDocument {
    /// Parses `text`, a whole document.
    ///
    /// ```
    /// use rtlat_results::{Format, ResultDocument};
    ///
    /// let doc = ResultDocument::parse(r#"{"rt_test_version:": "2.40",
    ///     "thread": {"0": {"histogram": {"3": 5}, "cycles": 5, "min": 3, "max": 3}}}"#)
    ///     .unwrap();
    /// assert_eq!(doc.format(), Format::CJson);
    /// assert_eq!(doc.threads[&0].sample_count(), Some(5));
    /// ```
    pub fn parse(text: &str) -> Result<ResultDocument, String> {
        // Typed, straight from the text: no tree of `serde_json::Value`s
        // (which took some 17 times the text's size), and the keys not
        // read (`audit`, `verdict`, a checkpoint's `timeline`) skipped
        // without being kept.
        if !text.trim_start().starts_with('{') {
            serde_json::from_str::<IgnoredAny>(text).map_err(|e| json_problem(&e))?;
            return Err("JSON, but not an object: not a --json result".into());
        }
        let context = Context::start();
        let raw = serde_json::from_str::<Raw>(text).map_err(|e| context.problem(&e))?;
        let thread = raw
            .thread
            .ok_or("JSON without a \"thread\" object: not a --json result")?;
        let threads = thread.threads;
        if threads.is_empty() {
            return Err("no threads in the \"thread\" object".into());
        }
        let header = Header {
            file_version: raw.file_version,
            cmdline: raw.cmdline,
            rt_test_version: raw.rt_test_version,
            rtlat_version: raw.rtlat_version,
            start_time: raw.start_time,
            end_time: raw.end_time,
            return_code: raw.return_code,
            sysinfo: raw.sysinfo,
        };
        let resolution_in_ns = raw
            .resolution_in_ns
            .as_ref()
            .and_then(Value::as_u64)
            .map_or(0, |r| u8::from(r == 1));
        Ok(ResultDocument {
            header,
            resolution_in_ns,
            threads,
            all_threads: raw.all_threads.filter(|p| !p.is_null()),
            environment: raw.environment.filter(|e| !e.is_null()),
            steal_share: raw
                .verdict
                .as_ref()
                .and_then(|v| v.get("steal_share"))
                .and_then(Value::as_f64)
                .filter(|share| (0.0..=1.0).contains(share)),
        })
    }

    /// All threads' percentiles, every key present; `None` when the
    /// document has none.
    pub fn all_threads(&self) -> Result<Option<Percentiles>, String> {
        Percentiles::read(self.all_threads.as_ref())
    }

    /// rtlat's or a C tool's.
    pub fn format(&self) -> Format {
        if self.header.rtlat_version.is_some() {
            Format::RtlatJson
        } else {
            Format::CJson
        }
    }

    /// How many of C's figure units make a µs: 1000 with
    /// `resolution_in_ns: 1`, else 1.
    pub fn units_per_us(&self) -> f64 {
        if self.resolution_in_ns == 1 {
            1000.0
        } else {
            1.0
        }
    }
}

/// The keys of a document that are read, in one pass; any other is
/// skipped. The envelope's keys are [`Header`]'s, spelled as there.
#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    file_version: u32,
    #[serde(default, rename = "cmdline:")]
    cmdline: String,
    #[serde(default, rename = "rt_test_version:")]
    rt_test_version: String,
    #[serde(default)]
    rtlat_version: Option<String>,
    #[serde(default)]
    start_time: String,
    #[serde(default)]
    end_time: String,
    #[serde(default)]
    return_code: i32,
    #[serde(default)]
    sysinfo: SysInfo,
    #[serde(default)]
    resolution_in_ns: Option<Value>,
    #[serde(default)]
    thread: Option<Threads>,
    #[serde(default)]
    all_threads: Option<Value>,
    #[serde(default)]
    environment: Option<Value>,
    #[serde(default)]
    verdict: Option<Value>,
}

thread_local! {
    /// Where in the `thread` object the parse is: the thread being read,
    /// or a problem found there, for the one-line message of a failure
    /// ([`Context::problem`]). A parse runs on one thread and does not
    /// nest, so a thread-local is enough.
    static WHERE: RefCell<Where> = const { RefCell::new(Where::Outside) };
}

/// What [`WHERE`] holds.
#[derive(Clone, Debug)]
enum Where {
    /// Not inside a thread.
    Outside,
    /// Reading this thread.
    Thread(usize),
    /// This problem, found by the reader itself.
    Problem(String),
}

/// A parse's [`WHERE`], reset when it starts and when it ends.
struct Context;

impl Drop for Context {
    fn drop(&mut self) {
        WHERE.with(|w| *w.borrow_mut() = Where::Outside);
    }
}

impl Context {
    /// A parse starts outside any thread.
    fn start() -> Context {
        WHERE.with(|w| *w.borrow_mut() = Where::Outside);
        Context
    }

    /// The one line of a failed parse: JSON that does not parse, as
    /// [`json_problem`] says it; a problem the reader found; a value of
    /// the wrong type inside thread N as `thread N: ...`.
    fn problem(&self, e: &serde_json::Error) -> String {
        if !e.is_data() {
            return json_problem(e);
        }
        match WHERE.with(|w| w.borrow().clone()) {
            Where::Problem(problem) => problem,
            Where::Thread(index) => format!("thread {index}: {}", without_position(e)),
            Where::Outside => without_position(e),
        }
    }
}

/// A data error's message without serde_json's ` at line L column C`.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&position).unwrap_or(&text).to_string()
}

/// The `thread` object: `"0": {...}` per thread, read one by one.
struct Threads {
    threads: BTreeMap<usize, ThreadResult>,
}

impl<'de> Deserialize<'de> for Threads {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Threads, D::Error> {
        d.deserialize_map(ThreadsVisitor)
    }
}

struct ThreadsVisitor;

impl<'de> Visitor<'de> for ThreadsVisitor {
    type Value = Threads;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of \"<thread>\": {...}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Threads, A::Error> {
        let fail = |problem: String| {
            WHERE.with(|w| *w.borrow_mut() = Where::Problem(problem.clone()));
            de::Error::custom(problem)
        };
        let mut threads = BTreeMap::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let index: usize = key
                .parse()
                .map_err(|_| fail(format!("\"thread\" key '{key}' is not a thread number")))?;
            WHERE.with(|w| *w.borrow_mut() = Where::Thread(index));
            let thread = map.next_value_seed(ThreadSeed)?;
            WHERE.with(|w| *w.borrow_mut() = Where::Outside);
            threads.insert(index, thread);
        }
        Ok(Threads { threads })
    }
}

/// One thread's object (a JSON object only: the derived reader would take
/// an array too).
struct ThreadSeed;

impl<'de> DeserializeSeed<'de> for ThreadSeed {
    type Value = ThreadResult;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ThreadResult, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ThreadSeed {
    type Value = ThreadResult;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ThreadResult, A::Error> {
        ThreadResult::deserialize(de::value::MapAccessDeserializer::new(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_documents_are_one_line_each() {
        for (text, message) in [
            ("[1]", "JSON, but not an object: not a --json result"),
            (
                "{}",
                "JSON without a \"thread\" object: not a --json result",
            ),
            ("{\"thread\": {}}", "no threads in the \"thread\" object"),
            (
                "{\"thread\": {\"x\": {}}}",
                "\"thread\" key 'x' is not a thread number",
            ),
            (
                "{\"thread\": {\"0\": 5}}",
                "thread 0: invalid type: integer `5`, expected an object",
            ),
            (
                "{\"thread\": {\"0\": {\"cycles\": \"many\"}}}",
                "thread 0: invalid type: string \"many\", expected u64",
            ),
        ] {
            assert_eq!(ResultDocument::parse(text).unwrap_err(), message, "{text}");
        }
    }

    #[test]
    fn an_ipc_pair_reads_as_its_receiver() {
        let doc = ResultDocument::parse(
            r#"{"rtlat_version": "0.1.0", "thread": {"0": {"sender": {"samples": 5},
               "receiver": {"samples": 5, "min_ns": 3000, "max_ns": 9000}}}}"#,
        )
        .unwrap();
        assert_eq!(doc.format(), Format::RtlatJson);
        let t = doc.threads[&0].latencies();
        assert_eq!((t.sample_count(), t.max_ns), (Some(5), Some(9000)));
        assert_eq!(t.percentiles(), Ok(None));
        assert_eq!(doc.all_threads(), Ok(None));
    }

    #[test]
    fn percentiles_need_every_key() {
        let doc = ResultDocument::parse(
            r#"{"thread": {"0": {"percentiles": {"p50": 1.5}}}, "all_threads": {"p50": null,
               "p90": null, "p99": null, "p99.9": null, "p99.99": null, "p99.999": null,
               "max": 2.0}}"#,
        )
        .unwrap();
        assert_eq!(
            doc.threads[&0].percentiles().unwrap_err(),
            "missing field `p90`"
        );
        let all = doc.all_threads().unwrap().unwrap();
        assert_eq!((all.p50, all.get("max")), (None, Some(Some(2.0))));
    }
}
