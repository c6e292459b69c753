//! Arithmetic on `timespec` values, done as cyclictest does it.
//!
//! Deadlines stay split in seconds and nanoseconds (no division per cycle);
//! the C-compatible microsecond difference truncates the nanosecond part on
//! its own, exactly like cyclictest's `calcdiff`, so that rtlat's numbers
//! compare with the C tool's.

use rtlat_sys::clock::Timespec;

const NANOS_PER_SEC: i64 = 1_000_000_000;

/// A period split once into whole seconds and the nanosecond rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    secs: i64,
    nanos: i64,
}

impl Period {
    /// `ns` nanoseconds (positive).
    pub const fn from_nanos(ns: i64) -> Period {
        Period {
            secs: ns / NANOS_PER_SEC,
            nanos: ns % NANOS_PER_SEC,
        }
    }

    /// The period in nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.secs * NANOS_PER_SEC + self.nanos
    }

    /// The period as a relative `timespec`.
    pub(crate) const fn as_timespec(self) -> Timespec {
        Timespec {
            tv_sec: self.secs,
            tv_nsec: self.nanos,
        }
    }
}

/// `t + p`, normalised.
#[inline(always)]
pub fn add(t: Timespec, p: Period) -> Timespec {
    let mut sec = t.tv_sec + p.secs;
    let mut nsec = t.tv_nsec + p.nanos;
    if nsec >= NANOS_PER_SEC {
        nsec -= NANOS_PER_SEC;
        sec += 1;
    }
    Timespec {
        tv_sec: sec,
        tv_nsec: nsec,
    }
}

/// `t` in nanoseconds since its clock's zero.
#[inline(always)]
pub fn to_nanos(t: &Timespec) -> i64 {
    t.tv_sec * NANOS_PER_SEC + t.tv_nsec
}

/// The `timespec` of `ns` nanoseconds since the clock's zero, normalised
/// (a negative `ns` gives a negative second count and a positive rest).
#[inline(always)]
pub fn from_nanos(ns: i64) -> Timespec {
    Timespec {
        tv_sec: ns.div_euclid(NANOS_PER_SEC),
        tv_nsec: ns.rem_euclid(NANOS_PER_SEC),
    }
}

/// `a > b`.
#[inline(always)]
pub(crate) fn is_after(a: &Timespec, b: &Timespec) -> bool {
    (a.tv_sec, a.tv_nsec) > (b.tv_sec, b.tv_nsec)
}

/// `a - b` in nanoseconds (signed).
#[inline(always)]
pub fn diff_nanos(a: &Timespec, b: &Timespec) -> i64 {
    (a.tv_sec - b.tv_sec) * NANOS_PER_SEC + (a.tv_nsec - b.tv_nsec)
}

/// `a - b` in whole microseconds the way cyclictest computes it: seconds
/// times a million plus the nanosecond difference truncated toward zero on
/// its own (so 1.998 µs across a second boundary gives 2, not 1).
#[inline(always)]
pub(crate) fn diff_micros_c(a: &Timespec, b: &Timespec) -> i64 {
    (a.tv_sec - b.tv_sec) * 1_000_000 + (a.tv_nsec - b.tv_nsec) / 1_000
}

/// `t` in whole microseconds since the clock's epoch, as cyclictest stamps
/// its spikes (seconds times a million plus the truncated nanoseconds).
#[inline(always)]
pub(crate) fn micros_since_epoch(t: &Timespec) -> i64 {
    t.tv_sec * 1_000_000 + t.tv_nsec / 1_000
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(sec: i64, nsec: i64) -> Timespec {
        Timespec {
            tv_sec: sec,
            tv_nsec: nsec,
        }
    }

    #[test]
    fn add_carries_into_seconds() {
        assert_eq!(
            add(ts(1, 999_999_000), Period::from_nanos(2_000)),
            ts(2, 1_000)
        );
        assert_eq!(
            add(ts(1, 0), Period::from_nanos(1_500_000_000)),
            ts(2, 500_000_000)
        );
    }

    #[test]
    fn micros_truncate_the_nanosecond_part_alone() {
        // 1.998 us across a second boundary: C gives 2.
        let next = ts(0, 999_999_500);
        let now = ts(1, 1_498);
        assert_eq!(diff_nanos(&now, &next), 1_998);
        assert_eq!(
            diff_micros_c(&now, &next),
            1_000_000 + (1_498 - 999_999_500) / 1_000
        );
        assert_eq!(diff_micros_c(&now, &next), 2);
        assert_eq!(diff_micros_c(&ts(5, 1_999), &ts(5, 0)), 1);
        assert_eq!(diff_micros_c(&ts(5, 0), &ts(5, 1_999)), -1);
    }
}
