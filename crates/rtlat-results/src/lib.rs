//! rtlat's result documents, for rtlat and for any program that reads them.
//!
//! - [`file`]: reading one results file (a path or standard input),
//!   bounded and checked to be text.
#![forbid(unsafe_code)]

pub mod file;

pub use file::{InputError, MAX_INPUT_BYTES, StdinOr, read_text};
