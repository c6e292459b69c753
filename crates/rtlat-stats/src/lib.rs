//! Statistics on finished results: pure judgement, no I/O.
//!
//! - [`blocks`]: a run cut into blocks of equal length, each with its
//!   samples, exact maximum and counts at or above a fixed ladder of
//!   latencies; bounded in memory however long the run (blocks are merged
//!   in pairs when the series is full). What the projection and
//!   `rtlat compare` work on: blocks much longer than a burst of late
//!   samples are close to independent, single samples are not.
//! - [`projection`]: the worst case over a longer horizon, with a stated
//!   confidence, from the block maxima (or an honest refusal).
//! - [`gev`]: the extreme-value distribution the projection fits, its
//!   fit and profile likelihoods; [`optimize`]: the simplex search they
//!   use.
//! - [`checks`]: the tests a projection must pass: trend
//!   (Mann–Kendall) and goodness of fit (Anderson–Darling).
//! - [`floor`]: the level (almost) every window's maximum reaches, and
//!   whether two runs' floors differ by more than a run's own drift.
//! - [`poisson`]: exact intervals for a count of events in a time.
//! - [`special`]: the normal distribution's CDF and quantile, the
//!   incomplete gamma function.
//! - [`rng`]: a small deterministic random number generator.
//!
//! Latencies are `i64` nanoseconds (`_ns`), durations `f64` seconds
//! (`_s`): the names carry the units.

pub mod blocks;
pub mod checks;
pub mod floor;
pub mod gev;
pub mod optimize;
pub mod poisson;
pub mod projection;
pub mod rng;
pub mod special;
