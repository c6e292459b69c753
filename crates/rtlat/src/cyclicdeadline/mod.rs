//! `rtlat cyclicdeadline`: how late SCHED_DEADLINE jobs start, option- and
//! output-compatible with rt-tests cyclicdeadline 2.4. `settings` is the
//! validated configuration, `run` carries it out, `output` holds its own
//! formats. The threads themselves are `rtlat_core::deadline`.

pub mod output;
pub mod run;
pub mod settings;
