//! The bottom of rtlat's crates: plain values that the command-line
//! parsers, the engine, the result files and the plots all speak, so that
//! none of them has to depend on another for a word.
//!
//! - [`units`]: time and memory carried in types ([`Nanos`],
//!   [`ClockInstant`], [`Bytes`]) and the unit of the C-compatible figures
//!   ([`Resolution`]);
//! - [`time_source`]: where measuring threads take their time from
//!   ([`TimeSourceKind`]);
//! - [`errno`]: an error number or an I/O error in the C library's words
//!   ([`strerror`], [`io_strerror`]);
//! - [`cpu_list`]: CPU lists as users write them (`0-3,8`, `!0`, `+0-1`),
//!   read ([`parse_cpu_list`]) and written ([`format_cpu_list`]);
//! - [`rt_tests`]: which rt-tests release a tool's output imitates
//!   ([`RtTests`], `--rt-tests=2.10`).
//!
//! Nothing here reads or writes anything, and there is no `unsafe`: the
//! crate depends on the standard library and `thiserror`'s derive alone.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cpu_list;
pub mod errno;
pub mod rt_tests;
pub mod time_source;
pub mod units;

pub use cpu_list::{CpuListError, format_cpu_list, parse_cpu_list};
pub use errno::{io_strerror, strerror};
pub use rt_tests::RtTests;
pub use time_source::TimeSourceKind;
pub use units::{Bytes, ClockInstant, Nanos, Resolution};
