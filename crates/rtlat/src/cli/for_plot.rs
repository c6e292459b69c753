//! The `cli` module of the `rtlat-plot` binary (`src/bin/rtlat-plot.rs`):
//! the plot command line. Not part of the `rtlat` binary itself.

#[path = "plot.rs"]
pub mod plot;
