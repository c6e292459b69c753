//! rtlat's result documents, for rtlat and for any program that reads them.
//!
//! - [`audit`]: the audit's findings and the `rtlat audit --json` document;
//! - [`blocks`]: a thread's run as blocks of equal length (`"blocks"`);
//! - [`bounds`]: the range of values and counts the readers accept;
//! - [`compare`]: the `rtlat compare --json` document;
//! - [`decimals`]: a figure with a fixed number of decimals, as written;
//! - [`document`]: the `--json` document as serde types, which rtlat
//!   writes and readers get back;
//! - [`envelope`]: the whole document as written, envelope to verdict;
//! - [`environment`]: the machine's facts (`"environment"`);
//! - [`evaluation`]: the phases of `rtlat evaluate`'s `report.json`,
//!   each with its files, for the tools that read them;
//! - [`explain`]: the `--explain` parts (`"explain"`, `"explain_events"`);
//! - [`load`]: the `"load"` object and `"phases"` array of a run beside a load;
//! - [`members`]: the members every tool's document ends with;
//! - [`monitor`]: rtlat monitor's `"monitor"` member (its checkpoints);
//! - [`ipc`]: the IPC tools' pairs (`sender`, `receiver`);
//! - [`deadline`]: cyclicdeadline's threads;
//! - [`signaltest`]: signaltest's threads;
//! - [`read`]: a `--json` document, rtlat's or the C rt-tests tools',
//!   read and checked ([`ResultDocument`]);
//! - [`samples`]: any result as bucketed samples per thread
//!   ([`Samples`]): rtlat's distribution, C's `-h` histogram in its JSON,
//!   or the `-h`/`--histfile` text ([`histogram_text`]);
//! - [`timeline`]: the `--stats-file` lines (latency over time) as a
//!   type ([`timeline::StatsLine`]), and a reader of them or of a
//!   document's `"timeline"` array ([`timeline::Timeline`]);
//! - [`verdict`]: the `"verdict"` object (its types; the judgement that
//!   fills it is crate `rtlat-verdict`'s);
//! - [`file`](mod@file): reading one results file (a path or standard input),
//!   bounded and checked to be text.
//!
//! Another program reading a result file:
//!
//! ```
//! use rtlat_results::{Format, Samples, StdinOr};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("run.json");
//! # std::fs::write(&path, r#"{"file_version": 1, "cmdline:": "rtlat cyclictest -q -l 4",
//! #   "rt_test_version:": "2.40", "rtlat_version": "0.1.0",
//! #   "thread": {"0": {"cycles": 4, "cpu": 1, "min_ns": 2100, "max_ns": 9800,
//! #     "distribution": {"unit": "us", "buckets": [[2.0, 3.0, 3], [9.0, 10.0, 1]]}}}}"#).unwrap();
//! // `rtlat cyclictest -l 4 --json=run.json` wrote it.
//! let run = Samples::read(&StdinOr::from_arg(&path), "expected a result").unwrap();
//! assert_eq!(run.format, Format::RtlatJson);
//! assert_eq!(run.tool.as_deref(), Some("cyclictest"));
//! let thread = &run.threads[0];
//! assert_eq!(thread.name(), "CPU 1");
//! assert_eq!(thread.count(), 4);
//! assert_eq!(thread.value_at(0.5), Some(2.1)); // the median, µs
//! assert_eq!(thread.max_us, Some(9.8));
//! ```
#![forbid(unsafe_code)]

pub mod audit;
pub mod blocks;
pub mod bounds;
pub mod compare;
pub mod deadline;
pub mod decimals;
pub mod document;
pub mod envelope;
pub mod environment;
pub mod evaluation;
pub mod explain;
pub mod file;
pub mod histogram_text;
pub mod hwlatdetect;
pub mod ipc;
pub mod load;
pub mod members;
pub mod monitor;
pub mod oslat;
pub mod passfail;
pub mod pi_stress;
pub mod read;
pub mod samples;
pub mod signaltest;
pub mod timeline;
pub mod verdict;

pub use file::{InputError, MAX_INPUT_BYTES, StdinOr, read_text};
pub use read::{Format, ResultDocument};
pub use samples::Samples;
