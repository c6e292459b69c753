//! `rtlat plot`'s command line, as a library: its option definitions,
//! its help, and the validated [`settings::Settings`] they are read into.
//!
//! Why a library beside the `rtlat-plot` binary: `rtlat` generates every
//! tool's man page and completions from the tool's option definitions
//! (`rtlat --generate`), rtlat plot's included. It reads them from here,
//! so that nothing is parsed back from a help text, while the drawing
//! code (the plotting crates, the built-in font) stays in the binary and
//! out of `rtlat`, whose code `rtlat cyclictest -m` locks in RAM. Nothing
//! that draws belongs in this library.
#![forbid(unsafe_code)]

pub mod cli;
pub mod settings;
