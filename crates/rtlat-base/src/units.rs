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

/// A moment on a run's clock, in nanoseconds since that clock's origin
/// (CLOCK_MONOTONIC: boot; CLOCK_REALTIME: the Unix epoch; a synthetic
/// run's virtual clock: its own start). Only the binary maps it to the
/// wall clock, with one reading of both clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClockInstant(pub i64);

impl ClockInstant {
    /// Nanoseconds since the clock's origin.
    pub const fn as_nanos(self) -> i64 {
        self.0
    }

    /// The time from `earlier` to this moment (negative when `earlier`
    /// is later; saturating).
    pub const fn since(self, earlier: ClockInstant) -> Nanos {
        Nanos(self.0.saturating_sub(earlier.0))
    }
}

/// An amount of memory in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    /// `n` items of `T` (saturating).
    pub fn of<T>(n: usize) -> Bytes {
        Bytes((n as u64).saturating_mul(std::mem::size_of::<T>() as u64))
    }

    /// The sum (saturating).
    pub const fn plus(self, other: Bytes) -> Bytes {
        Bytes(self.0.saturating_add(other.0))
    }

    /// `n` times this (saturating).
    pub const fn times(self, n: u64) -> Bytes {
        Bytes(self.0.saturating_mul(n))
    }

    /// Whole KiB, rounded up.
    pub const fn kib(self) -> u64 {
        self.0.div_ceil(1024)
    }
}

impl std::iter::Sum for Bytes {
    fn sum<I: Iterator<Item = Bytes>>(iter: I) -> Bytes {
        iter.fold(Bytes(0), Bytes::plus)
    }
}

impl fmt::Display for Bytes {
    /// In the largest binary unit that keeps at least one whole unit:
    /// `512 B`, `24.0 KiB`, `1.9 GiB`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
        if self.0 < 1024 {
            return write!(f, "{} B", self.0);
        }
        let mut value = self.0 as f64 / 1024.0;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        write!(f, "{value:.1} {}", UNITS[unit])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_show_in_the_largest_whole_binary_unit() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(24 * 1024).to_string(), "24.0 KiB");
        assert_eq!(Bytes(1536 * 1024).to_string(), "1.5 MiB");
        assert_eq!(Bytes(2 << 40).to_string(), "2.0 TiB");
        assert_eq!(Bytes(u64::MAX).to_string(), "16777216.0 TiB");
        assert_eq!(Bytes::of::<u64>(3).plus(Bytes(1)).times(2), Bytes(50));
        assert_eq!(Bytes(1025).kib(), 2);
    }

    #[test]
    fn a_clock_instant_gives_the_time_since_another() {
        let (earlier, later) = (ClockInstant(1_000), ClockInstant(4_500));
        assert_eq!(later.since(earlier), Nanos(3_500));
        assert_eq!(earlier.since(later), Nanos(-3_500));
        assert_eq!(ClockInstant(i64::MIN).since(later), Nanos(i64::MIN));
    }
}
