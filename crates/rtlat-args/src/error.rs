//! The error of a command line that cannot run: every tool turns it into
//! one line on stderr, `PROGRAM: MESSAGE`, and exit status 2 (any other
//! error is exit 1). Kept apart so that a tool can say "this is the user's
//! mistake" without knowing how command lines are parsed.

/// A usage error: one line, no program prefix, no trailing newline.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);
