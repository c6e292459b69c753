//! What a tool's command line asks for, the same for every tool: the help,
//! or a run with what the tool needs for it (its validated settings, and
//! for a measuring tool the warnings to print first).

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invocation<R> {
    /// `--help` (or the tool's other spelling of it): print the help to
    /// stdout and exit 0.
    Help,
    /// Run with `R`.
    Run(R),
}
