//! `rtlat rt-migrate-test`: real-time task migration checks, option- and
//! output-compatible with rt-tests rt-migrate-test 2.4. `settings` is the
//! validated configuration, `run` carries it out, `output` holds its
//! tables, summary and JSON members. The tasks themselves are
//! `rtlat_core::migrate`.

pub mod output;
pub mod run;
pub mod settings;
