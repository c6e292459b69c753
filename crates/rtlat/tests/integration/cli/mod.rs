//! The command line: usage errors and help (no privilege needed), and the messages a newcomer reads.

pub(crate) mod bad_input;
pub(crate) mod messages;
pub(crate) mod shared_options;
