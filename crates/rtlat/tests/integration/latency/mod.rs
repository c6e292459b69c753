//! `rtlat latency`: runs (synthetic and real) and its result documents.

pub(crate) mod results;
pub(crate) mod runs;
