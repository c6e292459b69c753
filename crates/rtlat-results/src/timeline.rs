//! Latency over time: the lines of cyclictest's `--stats-file` (one JSON
//! object per thread and interval, JSON Lines) as a type that rtlat writes
//! and readers get back ([`StatsLine`]), and a reader of either shape they
//! are kept in ([`Timeline::read`]):
//!
//! - the `--stats-file` stream itself, one line per thread and interval;
//!   the last line may be cut short when the file is still being written
//!   (it is then skipped, and [`Timeline::cut_last_line`] says which);
//! - a JSON document with a top-level `"timeline"` array whose items have
//!   exactly the shape of those lines (what `rtlat monitor --checkpoint`
//!   writes); its other keys are not read here.
//!
//! ```text
//! {"time":1763776000.5,"elapsed":0.5,"thread":0,"interval":0,"cycles":500,"min":1.234,"avg":2.345,"max":13.456,"p99":3.0,"overruns":0}
//! ```
//!
//! Every key but `p99` (files written before it existed lack it) and
//! `partial` must be there; `min`, `avg`, `max` and `p99` may be `null`
//! (an interval without samples). Keys this version does not know are
//! ignored. A problem is one line naming the input and where in it.

use crate::bounds;
use serde::{Deserialize, Serialize};

use crate::file::{InputError, StdinOr, read_text};

/// One thread's figures over one interval of `--stats-interval`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatsLine {
    /// Wall clock at the interval's end, Unix seconds (ms precision).
    pub time: f64,
    /// Seconds from the run's start to the interval's end.
    pub elapsed: f64,
    /// The measuring thread's index.
    pub thread: usize,
    /// The interval's number, from 0 at the thread's start.
    pub interval: u64,
    /// Samples taken in it.
    pub cycles: u64,
    /// Smallest latency, µs; `null` without samples.
    #[serde(deserialize_with = "Option::deserialize")]
    pub min: Option<f64>,
    /// Mean latency, µs; `null` without samples.
    #[serde(deserialize_with = "Option::deserialize")]
    pub avg: Option<f64>,
    /// Largest latency, µs, exact; `null` without samples.
    #[serde(deserialize_with = "Option::deserialize")]
    pub max: Option<f64>,
    /// The 99th percentile, µs, approximate (see the writer's
    /// documentation: the samples between two reads of the thread's
    /// distribution); `null` without samples, and in files written before
    /// it existed.
    #[serde(default)]
    pub p99: Option<f64>,
    /// Periods skipped in it.
    pub overruns: u64,
    /// Only on a thread's last interval, when the run ended before it did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// The latest `time` accepted: the end of the year 9999, Unix seconds
/// (the clock labels of the time axis stop there).
pub const TIME_LIMIT_S: f64 = 253_402_300_799.0;

impl StatsLine {
    /// Checks that its figures are within the accepted ranges: latencies
    /// an hour either way ([`bounds::latency_us`]), `time` and `elapsed`
    /// from 0 to [`TIME_LIMIT_S`]. The refusal names `at`, the key, the
    /// value and the range.
    pub fn check(&self, at: impl std::fmt::Display) -> Result<(), String> {
        for (key, value) in [("time", self.time), ("elapsed", self.elapsed)] {
            if !(0.0..=TIME_LIMIT_S).contains(&value) {
                return Err(format!(
                    "{at}: \"{key}\": {} s is outside the accepted range, 0 to \
                     {TIME_LIMIT_S} s (the year 9999)",
                    bounds::number(value)
                ));
            }
        }
        for (key, value) in [
            ("min", self.min),
            ("avg", self.avg),
            ("max", self.max),
            ("p99", self.p99),
        ] {
            if let Some(us) = value {
                bounds::latency_us(format_args!("{at}: \"{key}\""), us)?;
            }
        }
        Ok(())
    }
}

/// Which shape a [`Timeline`] was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineFormat {
    /// `--stats-file` lines.
    StatsFile,
    /// A document's `"timeline"` array (a monitor checkpoint).
    Checkpoint,
}

/// One input's lines, in input order.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// How messages and titles name it: the path as given, `stdin` for `-`.
    pub name: String,
    /// The file name without directory and extension, for legends.
    pub stem: String,
    /// Its shape.
    pub format: TimelineFormat,
    /// Its lines (at least one).
    pub lines: Vec<StatsLine>,
    /// The number of the last line of a stats file, when it was cut short
    /// (no newline and not a whole JSON object: the file is being written)
    /// and so skipped.
    pub cut_last_line: Option<usize>,
}

/// What a timeline input should hold, for the messages of one that does not.
pub const EXPECTED: &str =
    "expected cyclictest --stats-file lines or a JSON document with a \"timeline\" array";

/// The keys of a checkpoint that are read: only its timeline.
#[derive(Deserialize)]
struct Checkpoint {
    timeline: Vec<StatsLine>,
}

impl Timeline {
    /// Reads and parses `source` (bounded, a byte-order mark skipped: see
    /// [`crate::file`]).
    pub fn read(source: &StdinOr) -> Result<Timeline, InputError> {
        let text = read_text(source, EXPECTED)?;
        let name = source.name();
        let stem = source.stem();
        Timeline::parse(&name, &stem, &text).map_err(|problem| InputError {
            file: name,
            problem,
        })
    }

    /// Parses `text`, the content of the input `name` (`stem` for
    /// legends).
    pub fn parse(name: &str, stem: &str, text: &str) -> Result<Timeline, String> {
        if text.trim().is_empty() {
            return Err(format!("empty: no lines; {EXPECTED}"));
        }
        let (format, lines, cut_last_line) = match document_with_timeline(text)? {
            true => {
                let lines = serde_json::from_str::<Checkpoint>(text)
                    .map_err(|e| format!("{}: not a timeline ({})", located(&e), message(&e)))?
                    .timeline;
                for (i, line) in lines.iter().enumerate() {
                    line.check(format_args!("\"timeline\" item {}", i + 1))?;
                }
                (TimelineFormat::Checkpoint, lines, None)
            }
            false => {
                let (lines, cut) = stream_lines(text)?;
                (TimelineFormat::StatsFile, lines, cut)
            }
        };
        if lines.is_empty() {
            return Err(match (format, cut_last_line) {
                (TimelineFormat::Checkpoint, _) => "its \"timeline\" array is empty".to_string(),
                (_, Some(n)) => format!("no whole line: line {n} is cut short"),
                (_, None) => format!("no lines; {EXPECTED}"),
            });
        }
        Ok(Timeline {
            name: name.to_string(),
            stem: stem.to_string(),
            format,
            lines,
            cut_last_line,
        })
    }

    /// The threads' indexes, lowest first.
    pub fn threads(&self) -> Vec<usize> {
        let mut threads: Vec<usize> = self.lines.iter().map(|l| l.thread).collect();
        threads.sort_unstable();
        threads.dedup();
        threads
    }
}

/// Whether `text` is one JSON document with a `"timeline"` key (a
/// checkpoint), not stats-file lines; an error when it is neither: a JSON
/// document of another kind, or one that is not valid JSON and does not
/// start with a line of its own either.
fn document_with_timeline(text: &str) -> Result<bool, String> {
    // Only the shape is looked at, without keeping what is read: a tree
    // of `serde_json::Value`s would take many times the text.
    let whole = shape(text);
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let is_object =
        |line: Option<&str>| line.is_some_and(|l| matches!(shape(l), Ok(Shape::Object { .. })));
    let first = lines.next();
    let first_is_object = is_object(first);
    // Lines of their own: the first, or the second (the first broken),
    // or one line being written.
    let second = lines.next();
    let stream =
        first_is_object || is_object(second) || (second.is_none() && !text.ends_with('\n'));
    match whole {
        Ok(Shape::Object { timeline: true }) => Ok(true),
        // One stats line alone is a whole document too.
        Ok(_) if first_is_object && first.map(str::trim) == Some(text.trim()) => Ok(false),
        Ok(_) => Err(format!(
            "a JSON document without a \"timeline\" array; {EXPECTED}"
        )),
        Err(_) if stream || !text.trim_start().starts_with('{') => Ok(false),
        // Not lines of their own: a document that does not parse (cut
        // short, or broken).
        Err(e) => Err(crate::file::json_problem(&e)),
    }
}

/// What a JSON text is, as far as telling a checkpoint from stats lines
/// needs.
enum Shape {
    /// An object, with a `"timeline"` key or not.
    Object { timeline: bool },
    /// Any other value.
    Other,
}

/// The [`Shape`] of `text`, or why it is not JSON.
fn shape(text: &str) -> Result<Shape, serde_json::Error> {
    /// An object's keys: whether `timeline` is one (its value skipped).
    #[derive(Deserialize)]
    struct Keys {
        #[serde(default, deserialize_with = "present")]
        timeline: bool,
    }
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| true)
    }
    if text.trim_start().starts_with('{') {
        serde_json::from_str::<Keys>(text).map(|k| Shape::Object {
            timeline: k.timeline,
        })
    } else {
        serde_json::from_str::<serde::de::IgnoredAny>(text).map(|_| Shape::Other)
    }
}

/// The lines of a stats file; a last line cut short is skipped and its
/// number returned.
fn stream_lines(text: &str) -> Result<(Vec<StatsLine>, Option<usize>), String> {
    let mut lines = Vec::new();
    let mut cut = None;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<StatsLine>(line.trim_end_matches(['\n', '\r'])) {
            Ok(l) => {
                l.check(format_args!("line {number}"))?;
                lines.push(l);
            }
            Err(e) => {
                let last = !line.ends_with('\n');
                let syntax = matches!(
                    e.classify(),
                    serde_json::error::Category::Eof | serde_json::error::Category::Syntax
                );
                if last && syntax {
                    cut = Some(number);
                    break;
                }
                let what = match e.classify() {
                    serde_json::error::Category::Eof => "cut short",
                    _ if syntax => "not JSON",
                    _ => "not a --stats-file line",
                };
                return Err(format!(
                    "line {number}, column {}: {what} ({})",
                    e.column(),
                    message(&e)
                ));
            }
        }
    }
    Ok((lines, cut))
}

/// `line L, column C` of a document's error.
fn located(e: &serde_json::Error) -> String {
    format!("line {}, column {}", e.line(), e.column())
}

/// serde_json's message without the ` at line L column C` it ends with.
fn message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let place = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&place).unwrap_or(&text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"time":1763776000.5,"elapsed":0.5,"thread":0,"interval":0,"cycles":500,"min":1.234,"avg":2.345,"max":13.456,"p99":3.0,"overruns":0}"#;

    fn parse(text: &str) -> Result<Timeline, String> {
        Timeline::parse("dir/s.jsonl", "s", text)
    }

    #[test]
    fn a_line_writes_and_reads_back_the_same() {
        let line: StatsLine = serde_json::from_str(LINE).unwrap();
        assert_eq!(serde_json::to_string(&line).unwrap(), LINE);
        assert_eq!(line.p99, Some(3.0));
        assert!(!line.partial);
        let partial = StatsLine {
            partial: true,
            max: None,
            ..line
        };
        let text = serde_json::to_string(&partial).unwrap();
        assert!(text.contains(r#""max":null,"p99":3.0,"overruns":0,"partial":true}"#));
    }

    #[test]
    fn stats_file_lines_and_a_cut_last_line() {
        let second = LINE.replace(r#""thread":0"#, r#""thread":1"#);
        let t = parse(&format!("{LINE}\n\n{second}\n")).unwrap();
        assert_eq!(t.format, TimelineFormat::StatsFile);
        assert_eq!(t.lines.len(), 2);
        assert_eq!(t.threads(), [0, 1]);
        assert_eq!(t.cut_last_line, None);
        // A file being written: its last line stops anywhere.
        for cut in [10, 60, LINE.len() - 1] {
            let t = parse(&format!("{LINE}\n{second}\n{}", &LINE[..cut])).unwrap();
            assert_eq!((t.lines.len(), t.cut_last_line), (2, Some(3)), "{cut}");
        }
        // A whole last line without its newline is read.
        let t = parse(&format!("{LINE}\n{second}")).unwrap();
        assert_eq!((t.lines.len(), t.cut_last_line), (2, None));
        // Older files have no p99.
        let old = LINE.replace(r#""p99":3.0,"#, "");
        assert_eq!(parse(&old).unwrap().lines[0].p99, None);
    }

    #[test]
    fn a_checkpoint_timeline() {
        let doc = format!(
            "{{\n  \"checkpoint_version\": 1,\n  \"timeline\": [\n    {LINE},\n    {}\n  ],\n  \
             \"other\": {{}}\n}}\n",
            LINE.replace("13.456", "null")
        );
        let t = parse(&doc).unwrap();
        assert_eq!(t.format, TimelineFormat::Checkpoint);
        assert_eq!(t.lines.len(), 2);
        assert_eq!(t.lines[1].max, None);
        // Compact, on one line.
        let compact = format!("{{\"timeline\":[{LINE}]}}");
        assert_eq!(parse(&compact).unwrap().format, TimelineFormat::Checkpoint);
    }

    #[test]
    fn bad_inputs_name_the_place() {
        let no_max = LINE.replace(r#""max":13.456,"#, "");
        let text_max = LINE.replace("13.456", "\"x\"");
        for (text, expected) in [
            (
                String::new(),
                "empty: no lines; expected cyclictest --stats-file lines",
            ),
            ("  \n\n".to_string(), "empty: no lines"),
            (
                format!("{LINE}\nhello\n{LINE}\n"),
                "line 2, column 1: not JSON (expected value)",
            ),
            (
                format!("{LINE}\n{no_max}\n"),
                "line 2, column 119: not a --stats-file line (missing field `max`)",
            ),
            (
                format!("{text_max}\n"),
                "line 1, column 105: not a --stats-file line (invalid type: string \"x\", \
                 expected f64)",
            ),
            // Cut, but followed by more: not the file's end.
            (
                format!("{}\n{LINE}\n", &LINE[..20]),
                "line 1, column 20: cut short (EOF while parsing an object)",
            ),
            (
                "{\n  \"thread\": {}\n}\n".to_string(),
                "a JSON document without a \"timeline\" array",
            ),
            ("[1, 2]\n".to_string(), "without a \"timeline\" array"),
            (
                "{\n  \"timeline\": [\n".to_string(),
                "cut short: the JSON ends before it is complete (EOF while parsing a list at \
                 line 3 column 0)",
            ),
            (
                "{\"timeline\": 5}".to_string(),
                "line 1, column 14: not a timeline (invalid type: integer `5`, expected a \
                 sequence",
            ),
            (
                format!("{{\"timeline\": [\n{no_max}\n]}}"),
                "line 2, column 119: not a timeline (missing field `max`",
            ),
            (
                "{\"timeline\": []}".to_string(),
                "its \"timeline\" array is empty",
            ),
            (LINE[..30].to_string(), "no whole line: line 1 is cut short"),
        ] {
            let e = parse(&text).unwrap_err();
            assert!(e.contains(expected), "{text:?}: {e:?}");
            assert!(!e.contains('\n'), "{e:?}");
        }
    }
}
