//! Command lines.
pub mod audit;
pub mod compare;
pub mod cyclictest;
pub mod dispatch;
pub mod explain;
pub mod gates;
pub mod getopt;
pub mod ipc;
pub mod latency;
pub mod load;
pub mod load_options;
pub mod signaltest;
pub mod values;

pub use values::UsageError;
