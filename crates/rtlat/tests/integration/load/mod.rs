//! Background load: `rtlat load` on its own, `--load` beside the measuring
//! tools, and the user's own workload (`rtlat_core::load::Workload`).

pub(crate) mod beside;
pub(crate) mod tool;
pub(crate) mod workload;
