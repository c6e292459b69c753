//! Where the measuring threads get their time from: the real clock, or a
//! seeded synthetic one. A value the command line chooses and the engines
//! obey.

/// Where the measuring threads get their time from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeSourceKind {
    /// The real clock and real sleeps.
    #[default]
    Real,
    /// A deterministic, seeded synthetic clock: no sleeping, no privilege,
    /// the same numbers for the same seed. For tests and demonstrations.
    Synthetic {
        /// Seed of the pseudo-random latency sequence.
        seed: u64,
    },
}
