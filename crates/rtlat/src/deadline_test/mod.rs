//! `rtlat deadline_test`: SCHED_DEADLINE threads that work for their
//! runtime every period, and whether they meet their deadlines,
//! option- and output-compatible with rt-tests deadline_test 2.4.
//! `settings` is the validated configuration, `run` carries it out; the
//! threads are `rtlat_core::deadline_work`.

pub mod run;
pub mod settings;
