//! How a run's clock maps to the wall clock: one reading of the run's
//! clock and of the wall clock at that moment, taken once the measuring
//! threads have started ([`crate::host::Host::timeline`]). Times on the
//! run's clock ([`ClockInstant`]: the engine's interval ends, each
//! thread's time of its maximum) become wall-clock times and times into
//! the run through it, so that every output that shows one agrees.

use rtlat_core::{ClockInstant, Nanos};

/// One reading of the run's clock with the wall clock, and the run's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// A moment on the run's clock...
    pub clock: ClockInstant,
    /// ...and the wall clock then, ns since the Unix epoch.
    pub unix_ns: i128,
    /// The run's start on the run's clock; `None`: the moment of the
    /// reading (right after the threads passed their start barrier).
    pub start: Option<ClockInstant>,
}

impl Timeline {
    /// The wall-clock time of `at`, ns since the Unix epoch.
    pub fn unix_ns(&self, at: ClockInstant) -> i128 {
        self.unix_ns + i128::from(at.as_nanos()) - i128::from(self.clock.as_nanos())
    }

    /// The moment on the run's clock of the wall-clock time `unix_ns` (ns
    /// since the Unix epoch); before the run's clock began for a time
    /// before the boot, which is still a moment to compare and map back.
    pub fn clock_at(&self, unix_ns: i128) -> ClockInstant {
        let offset = unix_ns - self.unix_ns + i128::from(self.clock.as_nanos());
        ClockInstant(offset.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
    }

    /// The time from the run's start to `at`.
    pub fn elapsed(&self, at: ClockInstant) -> Nanos {
        at.since(self.start.unwrap_or(self.clock))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_on_the_run_clock_map_through_the_reading() {
        let timeline = Timeline {
            clock: ClockInstant(1_000),
            unix_ns: 5_000_000_000,
            start: Some(ClockInstant(800)),
        };
        let at = ClockInstant(1_500);
        assert_eq!(timeline.unix_ns(at), 5_000_000_500);
        assert_eq!(timeline.elapsed(at), Nanos(700));
        let from_reading = Timeline {
            start: None,
            ..timeline
        };
        assert_eq!(from_reading.elapsed(at), Nanos(500));
        assert_eq!(from_reading.unix_ns(ClockInstant(0)), 4_999_999_000);
        assert_eq!(timeline.clock_at(timeline.unix_ns(at)), at);
        assert_eq!(timeline.clock_at(0), ClockInstant(1_000 - 5_000_000_000));
    }
}
