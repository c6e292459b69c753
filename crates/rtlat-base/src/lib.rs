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
//!   ([`strerror`], [`io_strerror`]).
//!
//! Nothing here reads or writes anything, and there is no `unsafe`: the
//! crate depends on the standard library alone.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod errno;
pub mod time_source;
pub mod units;

pub use errno::{io_strerror, strerror};
pub use time_source::TimeSourceKind;
pub use units::{Bytes, ClockInstant, Nanos, Resolution};
