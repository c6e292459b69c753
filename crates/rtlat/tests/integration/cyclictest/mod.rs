//! `rtlat cyclictest`: synthetic runs (no privilege), real runs and the differential tests against `/usr/bin/cyclictest` (root), then one module per feature that has its own runs.

pub(crate) mod differential;
pub(crate) mod idle_states;
pub(crate) mod max_time;
pub(crate) mod methods;
pub(crate) mod privilege;
pub(crate) mod progress;
pub(crate) mod real;
pub(crate) mod signals;
pub(crate) mod snapshot_file;
pub(crate) mod stats_stream;
pub(crate) mod synthetic;
pub(crate) mod syscalls;
