//! `rtlat signaltest`: synthetic runs (no privilege) and real runs with the differential tests against `/usr/bin/signaltest` (root).

pub(crate) mod real;
pub(crate) mod synthetic;
