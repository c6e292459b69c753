//! The bottom of rtlat's crates: plain values that the command-line
//! parsers, the engine, the result files and the plots all speak, so that
//! none of them has to depend on another for a word.
//!
//! - [`units`]: time and memory carried in types ([`Nanos`],
//!   [`ClockInstant`], [`Bytes`]) and the unit of the C-compatible figures
//!   ([`Resolution`]);
//! - [`time_source`]: where measuring threads take their time from
//!   ([`TimeSourceKind`]);
//!
//! Nothing here reads or writes anything, and there is no `unsafe`: the
//! crate depends on the standard library alone.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod time_source;
pub mod units;

pub use time_source::TimeSourceKind;
pub use units::{Bytes, ClockInstant, Nanos, Resolution};
