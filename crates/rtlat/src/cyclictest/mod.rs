//! `rtlat cyclictest`: the cyclictest-compatible front end. `settings` is
//! the validated configuration, `run` carries it out (with the machine facts
//! of [`crate::host`] in its output).

pub mod blocks;
pub mod idle_states;
pub mod resolution;
pub mod run;
pub mod settings;
pub mod stats_file;
