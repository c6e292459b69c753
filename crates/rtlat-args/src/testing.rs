//! What every tool's parser tests ask of a command line: words as the
//! parsers take them, a fixed two-CPU machine, "this must run" and "this
//! must be refused". Public, not `cfg(test)`, because the tests live in
//! other crates (`rtlat`, `rtlat-plot`).

use std::ffi::OsString;
use std::fmt::Debug;

use crate::UsageError;
use crate::invocation::Invocation;
use crate::values::SystemView;

/// `words` as a parser's arguments.
pub fn os_words(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// A machine of two CPUs, 0 and 1, both allowed.
pub fn two_cpus() -> SystemView {
    SystemView {
        allowed_cpus: vec![0, 1],
        configured_cpus: 2,
    }
}

/// The run `parsed` must ask for; otherwise a panic naming `context` (the
/// words, the tool) and what came instead.
pub fn expect_run<R: Debug>(parsed: Result<Invocation<R>, UsageError>, context: impl Debug) -> R {
    match parsed {
        Ok(Invocation::Run(run)) => run,
        other => panic!("{context:?}: {other:?}"),
    }
}

/// The message `parsed` must be refused with; otherwise a panic naming
/// `context` and what was accepted.
pub fn expect_usage_error<T: Debug>(parsed: Result<T, UsageError>, context: impl Debug) -> String {
    match parsed {
        Err(e) => e.0,
        Ok(other) => panic!("{context:?}: expected an error, got {other:?}"),
    }
}
