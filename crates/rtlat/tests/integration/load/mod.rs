//! Background load: `rtlat load` on its own, and `--load` beside the measuring tools.

pub(crate) mod beside;
pub(crate) mod tool;
