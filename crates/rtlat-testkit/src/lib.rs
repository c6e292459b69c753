//! What rtlat's tests share and its programs never run: a dev-dependency
//! only (`publish = false`), so that no production crate carries test
//! support.
//!
//! - [`emulation`]: whether the tests run under a user-mode emulator
//!   (qemu-user), where timing and tracing do not hold, so that the tests
//!   that depend on them say SKIPPED with the reason;
//! - [`parsing`]: what every tool's parser tests ask of a command line.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod emulation;
pub mod parsing;
