//! Where a sample stands in the run, said the same way by every line a
//! person reads: the time of each thread's maximum, the explanations of
//! `--explain` and the verdict's worst sample all print
//! `due 0.183007 s into the run, woke 3.208865 s` (the timer's deadline,
//! then the thread's wake-up: cyclictest, latency), or
//! `sent 2.000100 s into the run, received 2.000142 s` (signaltest: the
//! signal's sending, then its reception). Seconds from the run's start as
//! its [`Timeline`](super::run_clock::Timeline) has it, to the µs; a moment
//! before the start (a first deadline set before the clock was read) is 0.

/// What the two instants of a sample are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleInstants {
    /// A timer's deadline and the thread's wake-up.
    DueWoke,
    /// A signal's sending and its reception.
    SentReceived,
}

impl SampleInstants {
    /// `due 0.183007 s into the run, woke 3.208865 s`, from ns since the
    /// run's start.
    pub fn text(self, start_ns: i64, end_ns: i64) -> String {
        let (start, end) = match self {
            SampleInstants::DueWoke => ("due", "woke"),
            SampleInstants::SentReceived => ("sent", "received"),
        };
        format!(
            "{start} {} s into the run, {end} {} s",
            seconds(start_ns),
            seconds(end_ns)
        )
    }
}

/// ns since the run's start as seconds to the µs (truncated), 0 before it.
fn seconds(ns: i64) -> String {
    let us = ns.max(0) / 1_000;
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_instants_in_the_same_words() {
        assert_eq!(
            SampleInstants::DueWoke.text(183_007_400, 3_208_865_999),
            "due 0.183007 s into the run, woke 3.208865 s"
        );
        assert_eq!(
            SampleInstants::SentReceived.text(2_000_100_000, 2_000_142_000),
            "sent 2.000100 s into the run, received 2.000142 s"
        );
        assert_eq!(
            SampleInstants::DueWoke.text(-12_000, 30_000),
            "due 0.000000 s into the run, woke 0.000030 s"
        );
        assert_eq!(
            SampleInstants::DueWoke.text(86_400_000_000_000, 86_400_000_001_000),
            "due 86400.000000 s into the run, woke 86400.000001 s"
        );
    }
}
