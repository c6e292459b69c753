//! Command lines.
pub mod cyclictest;
pub mod dispatch;
pub mod getopt;

pub use cyclictest::UsageError;
