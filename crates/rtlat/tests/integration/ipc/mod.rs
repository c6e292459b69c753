//! The IPC tools (ptsematest, pmqtest, sigwaittest, svsematest): synthetic runs, real runs and the differential tests against the C tools.

pub(crate) mod differential;
pub(crate) mod real;
pub(crate) mod synthetic;
