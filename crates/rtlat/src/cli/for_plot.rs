//! The `cli` module of the `rtlat-plot` binary (`src/bin/rtlat-plot.rs`):
//! the plot command line and the helpers it shares with `rtlat`'s command
//! lines. Not part of the `rtlat` binary itself.

#[path = "getopt.rs"]
#[allow(
    dead_code,
    reason = "shared with rtlat; the plot command uses part of it"
)]
pub mod getopt;
#[path = "plot.rs"]
pub mod plot;
#[path = "values.rs"]
#[allow(
    dead_code,
    reason = "shared with rtlat; the plot command uses part of it"
)]
pub mod values;

pub use values::UsageError;
