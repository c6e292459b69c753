//! Units carried in types: a latency or a period is a [`Nanos`], never a bare
//! integer. Conversion to the whole microseconds that cyclictest prints happens
//! only at the output edge, through [`Resolution`].

use std::fmt;

/// A signed span of time in nanoseconds.
///
/// Signed because a latency can be negative when CLOCK_REALTIME is stepped
/// back; the C tool wraps such values, we keep the sign.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub i64);

impl Nanos {
    /// Zero nanoseconds.
    pub const ZERO: Nanos = Nanos(0);

    /// `us` microseconds.
    pub const fn from_micros(us: i64) -> Nanos {
        Nanos(us * 1_000)
    }

    /// `s` seconds.
    pub const fn from_secs(s: i64) -> Nanos {
        Nanos(s * 1_000_000_000)
    }

    /// The value in nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.0
    }

    /// Whole microseconds, truncated toward zero as C's integer division does.
    pub const fn as_micros_truncated(self) -> i64 {
        self.0 / 1_000
    }

    /// The value as a `std::time::Duration`, or `None` when negative.
    pub fn to_duration(self) -> Option<std::time::Duration> {
        u64::try_from(self.0)
            .ok()
            .map(std::time::Duration::from_nanos)
    }
}

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ns", self.0)
    }
}

/// The unit of the C-compatible figures (min, act, avg, max, histogram
/// buckets): whole microseconds by default, whole nanoseconds with `-N`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Resolution {
    /// Whole microseconds (cyclictest's default).
    #[default]
    Micros,
    /// Whole nanoseconds (cyclictest `-N`).
    Nanos,
}

impl Resolution {
    /// The short unit name used in messages: `us` or `ns`.
    pub const fn unit_name(self) -> &'static str {
        match self {
            Resolution::Micros => "us",
            Resolution::Nanos => "ns",
        }
    }

    /// How many nanoseconds one unit holds.
    pub const fn nanos_per_unit(self) -> i64 {
        match self {
            Resolution::Micros => 1_000,
            Resolution::Nanos => 1,
        }
    }
}
