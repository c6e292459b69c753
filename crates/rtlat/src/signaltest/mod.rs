//! `rtlat signaltest`: the signal round-trip latency of a ring of threads,
//! option- and output-compatible with rt-tests signaltest 2.4. `settings`
//! is the validated configuration, `run` carries it out, `output` holds
//! signaltest's own formats. The ring itself is `rtlat_core::ring`.

pub mod output;
pub mod run;
pub mod settings;
