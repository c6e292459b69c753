//! Numbers in the words the verdict's reasons and its text use: a
//! duration in its largest whole unit, three significant digits.

/// A duration given in ns, in its largest whole unit: `4 ms`, `1 us`,
/// `1 ns`, `1.5 us`.
pub fn duration_ns(ns: i64) -> String {
    for (unit, per) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= per {
            return format!("{} {unit}", significant(ns as f64 / per as f64));
        }
    }
    format!("{ns} ns")
}

/// Whole at 100 and above, else three significant digits, trailing
/// zeros trimmed.
pub fn significant(x: f64) -> String {
    let decimals = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_their_largest_whole_unit() {
        assert_eq!(duration_ns(4_000_000), "4 ms");
        assert_eq!(duration_ns(1_000), "1 us");
        assert_eq!(duration_ns(1_500), "1.5 us");
        assert_eq!(duration_ns(1), "1 ns");
        assert_eq!(significant(142.4), "142");
        assert_eq!(significant(12.34), "12.3");
    }
}
