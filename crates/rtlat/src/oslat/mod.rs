//! `rtlat oslat`: the gaps in a busy loop on each chosen CPU (OS noise),
//! option- and output-compatible with rt-tests oslat 2.4. `settings` is
//! the validated configuration, `run` carries it out, `output` holds
//! oslat's formats. The loop itself is `rtlat_core::oslat`.

pub mod output;
pub mod run;
pub mod settings;
