//! The range of values the readers accept, and the checks that keep a
//! result inside it.
//!
//! A latency is a wake-up's delay: no run has one of an hour, so a value
//! beyond [`LATENCY_LIMIT_US`] either way is a broken or hostile file,
//! not a measurement. Refusing it here keeps what the readers do with
//! values (axes, ticks, bucket columns, ns as `i64`) within sizes they can
//! draw and count: without it a bucket near `f64::MAX` made the plot loop
//! over its columns forever. Counts are `u64`, and their sums are checked
//! ([`add_count`]): a file whose counts add up beyond `u64::MAX` is
//! refused, never wrapped.
//!
//! A refusal is one line: where (`thread 0: "max_ns"`), the value, and the
//! range accepted.

use std::fmt::Display;

/// The largest latency accepted either way, µs: one hour.
pub const LATENCY_LIMIT_US: f64 = 3_600_000_000.0;

/// The same in ns, for the fields written in ns.
pub const LATENCY_LIMIT_NS: i64 = 3_600_000_000_000;

/// How the accepted range reads in a message.
const RANGE_TEXT: &str = "-3600000000 to 3600000000 us (an hour either way)";

/// `us` when it is within an hour either way; otherwise the refusal,
/// naming `what`.
pub fn latency_us(what: impl Display, us: f64) -> Result<f64, String> {
    if us.is_finite() && us.abs() <= LATENCY_LIMIT_US {
        Ok(us)
    } else {
        Err(format!(
            "{what}: {} us is outside the accepted range, {RANGE_TEXT}",
            number(us)
        ))
    }
}

/// `ns` when it is within an hour either way; otherwise the refusal,
/// naming `what`.
pub fn latency_ns(what: impl Display, ns: i64) -> Result<i64, String> {
    if ns.unsigned_abs() <= LATENCY_LIMIT_NS.unsigned_abs() {
        Ok(ns)
    } else {
        Err(format!(
            "{what}: {ns} ns is outside the accepted range, {RANGE_TEXT}"
        ))
    }
}

/// `total + count`; the refusal, naming `what`, when the sum does not fit
/// in 64 bits.
pub fn add_count(what: impl Display, total: u64, count: u64) -> Result<u64, String> {
    total.checked_add(count).ok_or_else(|| {
        format!(
            "{what}: the counts add up to more than {} (2^64 - 1), which no run reaches",
            u64::MAX
        )
    })
}

/// A value for a message: plain up to 1e15, in exponent form beyond (a
/// plain 1e300 is 301 digits).
pub(crate) fn number(value: f64) -> String {
    if value.is_finite() && value.abs() < 1e15 {
        format!("{value}")
    } else {
        format!("{value:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hour_either_way() {
        assert_eq!(latency_us("x", 3_600_000_000.0), Ok(3_600_000_000.0));
        assert_eq!(latency_us("x", -3_600_000_000.0), Ok(-3_600_000_000.0));
        assert_eq!(
            latency_us("thread 0: \"max\"", 3_601_000_000.0).unwrap_err(),
            "thread 0: \"max\": 3601000000 us is outside the accepted range, \
             -3600000000 to 3600000000 us (an hour either way)"
        );
        assert!(
            latency_us("x", f64::MAX)
                .unwrap_err()
                .starts_with("x: 1.7976931348623157e308 us is outside")
        );
        assert!(latency_us("x", f64::NAN).is_err());
        assert!(latency_us("x", f64::NEG_INFINITY).is_err());
        assert_eq!(latency_ns("x", -LATENCY_LIMIT_NS), Ok(-LATENCY_LIMIT_NS));
        assert!(
            latency_ns("x", i64::MIN)
                .unwrap_err()
                .starts_with("x: -9223372036854775808 ns is outside")
        );
    }

    #[test]
    fn counts_never_wrap() {
        assert_eq!(add_count("x", u64::MAX - 1, 1), Ok(u64::MAX));
        assert!(
            add_count("thread 0", u64::MAX, 1)
                .unwrap_err()
                .starts_with("thread 0: the counts add up to more than 18446744073709551615")
        );
    }
}
