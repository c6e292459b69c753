//! Live outputs: read the shared per-thread slots from the main thread
//! (never real-time) while the measuring threads run.

pub mod fifo;
pub mod snapshot;
pub mod text;
