//! The result documents and what reads them: JSON keys shared by every tool (environment, disturbances, verdict, percentiles), the gates on them, `rtlat plot` (its timeline of `--stats-file` lines apart) and `rtlat compare`.

pub(crate) mod compare;
pub(crate) mod disturbances;
pub(crate) mod environment;
pub(crate) mod gates;
pub(crate) mod oslat_deadline;
pub(crate) mod percentiles;
pub(crate) mod plot;
pub(crate) mod timeline;
pub(crate) mod verdict;
