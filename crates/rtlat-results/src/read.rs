//! Reading a `--json` document, rtlat's or the C rt-tests tools', into
//! [`ResultDocument`]: the envelope, each thread as a [`ThreadResult`],
//! rtlat's `all_threads` and `environment`. Every problem is one line
//! naming where it is (`thread 1: ...`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::document::{Header, Percentiles, ThreadResult};

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
    /// rtlat: the machine's facts (rtlat-audit's `Environment`), as JSON;
    /// `None` when absent or `null`.
    pub environment: Option<Value>,
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
        let doc: Value = serde_json::from_str(text).map_err(|e| json_problem(&e))?;
        let Some(obj) = doc.as_object() else {
            return Err("JSON, but not an object: not a --json result".into());
        };
        let header = Header::deserialize(&doc).map_err(|e| e.to_string())?;
        let Some(thread) = obj.get("thread").and_then(Value::as_object) else {
            return Err("JSON without a \"thread\" object: not a --json result".into());
        };
        let mut threads = BTreeMap::new();
        for (key, value) in thread {
            let index: usize = key
                .parse()
                .map_err(|_| format!("\"thread\" key '{key}' is not a thread number"))?;
            if !value.is_object() {
                return Err(format!("thread {index} is not an object"));
            }
            let t = ThreadResult::deserialize(value).map_err(|e| format!("thread {index}: {e}"))?;
            threads.insert(index, t);
        }
        if threads.is_empty() {
            return Err("no threads in the \"thread\" object".into());
        }
        let all_threads = obj.get("all_threads").filter(|p| !p.is_null()).cloned();
        let resolution_in_ns = obj
            .get("resolution_in_ns")
            .and_then(Value::as_u64)
            .map_or(0, |r| u8::from(r == 1));
        Ok(ResultDocument {
            header,
            resolution_in_ns,
            threads,
            all_threads,
            environment: obj.get("environment").filter(|e| !e.is_null()).cloned(),
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
            ("{\"thread\": {\"0\": 5}}", "thread 0 is not an object"),
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
