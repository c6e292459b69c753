//! rtlat's measuring engine.
//!
//! A front end builds a validated [`config::CyclicConfig`], the [`engine`]
//! runs the measuring threads under it, live readers look at the shared
//! per-thread [`stats`] channels while it runs, and the run ends in a
//! [`report::RunReport`] of plain data for the output formats.
//!
//! The crate has no `unsafe` code: everything that touches the kernel goes
//! through `rtlat-sys`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod candidates;
pub mod config;
pub mod cpuset;
pub mod distribution;
pub mod engine;
pub mod footprint;
pub mod helper;
pub mod interval;
pub mod ipc;
pub mod janitor;
pub mod load;
pub mod phase;
pub mod report;
pub mod ring;
pub mod stats;
pub mod units;
