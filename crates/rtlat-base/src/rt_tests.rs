//! Which rt-tests release a tool's output imitates: its dialect
//! (`--rt-tests=VERSION`, or the environment variable [`RtTests::ENV`]).
//!
//! rtlat's tools write what rt-tests 2.4 writes (Debian 12's package) by
//! default; a newer dialect changes only what a parser of the C tools'
//! output sees (docs/compatibility.md, "rt-tests 2.10"). Each change is a
//! method here named after what it does, true from the release that
//! brought it, so that a tool's output asks one question and a new
//! release's change is one more method.

use std::fmt;

/// An rt-tests release, 2.4 to 2.10 (`2.MINOR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RtTests {
    minor: u8,
}

impl Default for RtTests {
    /// [`RtTests::DEFAULT`].
    fn default() -> RtTests {
        RtTests::DEFAULT
    }
}

impl RtTests {
    /// rt-tests 2.4: Debian 12's, the one rtlat's tools have copied.
    pub const V2_4: RtTests = RtTests { minor: 4 };
    /// rt-tests 2.6: Debian 13's.
    pub const V2_6: RtTests = RtTests { minor: 6 };
    /// rt-tests 2.10: Debian's next release's and unstable's.
    pub const V2_10: RtTests = RtTests { minor: 10 };
    /// The oldest dialect.
    pub const OLDEST: RtTests = RtTests::V2_4;
    /// The newest dialect.
    pub const NEWEST: RtTests = RtTests::V2_10;
    /// Without `--rt-tests` or [`RtTests::ENV`]: 2.4, whose output every
    /// script written for Debian 12's package reads, and which parsers
    /// written for 2.10's read too (its extra lines are empty buckets and
    /// a `# Total:`).
    pub const DEFAULT: RtTests = RtTests::V2_4;
    /// The environment variable that sets the dialect when the command
    /// line does not (`RTLAT_RT_TESTS=2.10`).
    pub const ENV: &'static str = "RTLAT_RT_TESTS";
    /// What a value may be, for messages.
    pub const EXPECTED: &'static str = "expected an rt-tests release from 2.4 to 2.10 (2.4: Debian \
                                        12's, the default; 2.6: Debian 13's; 2.10: the newest)";

    /// `2.N` with N from 4 to 10 (`2.4`, `2.10`), else `None`.
    pub fn parse(text: &str) -> Option<RtTests> {
        let minor = text.strip_prefix("2.")?;
        if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) || minor.starts_with('0')
        {
            return None;
        }
        let minor: u8 = minor.parse().ok()?;
        let dialect = RtTests { minor };
        (RtTests::OLDEST..=RtTests::NEWEST)
            .contains(&dialect)
            .then_some(dialect)
    }

    /// The release's minor number (2.MINOR).
    pub fn minor(self) -> u8 {
        self.minor
    }

    /// The JSON's `"rt_test_version:"` as that release writes it: C
    /// prints its version, a number, with `%1.2f` (`2.40`, `2.60`, `2.10`).
    pub fn json_version(self) -> String {
        if self.minor < 10 {
            format!("2.{}0", self.minor)
        } else {
            format!("2.{}", self.minor)
        }
    }

    /// From 2.7, cyclictest's histogram block has a line only for a
    /// bucket where some thread has a sample, and no `# Total:` line.
    pub fn histogram_skips_empty_buckets(self) -> bool {
        self.minor >= 7
    }

    /// From 2.7, with `-H` cyclictest adds the sum column to the bucket
    /// lines also for a single thread (2.4: only for two or more).
    pub fn histogram_sum_column_always(self) -> bool {
        self.minor >= 7
    }

    /// From 2.7, each `# Thread N: ` line of the overflows has a space
    /// after its colon even without overflows, and ` # 00000 others`
    /// when the overflows exactly fill the cycle list (2.4: only when
    /// some are left out).
    pub fn histogram_overflow_lines_2_7(self) -> bool {
        self.minor >= 7
    }

    /// From 2.7, cyclictest's JSON has a thread's `"histogram"` only with
    /// `-h`/`-H` (2.4: always, `{}` without).
    pub fn json_histogram_only_when_asked(self) -> bool {
        self.minor >= 7
    }

    /// From 2.5 ("oslat: Add command line option for bucket width"),
    /// oslat's minimum and maximum are the gap in the unit (2.5 and 2.6
    /// rounded up, from 2.7 truncated: [`RtTests::oslat_latency_truncated`])
    /// instead of 2.4's whole µs plus one, the `-B` bias is that minimum,
    /// and a biased gap of 0 counts as 1.
    pub fn oslat_latency_in_units(self) -> bool {
        self.minor >= 5
    }

    /// From 2.7 ("oslat: convert to nanoseconds correctly"), oslat
    /// truncates a gap to the unit (2.5 and 2.6: rounded up, so that a
    /// gap below 1 µs was counted in the 2 µs bucket).
    pub fn oslat_latency_truncated(self) -> bool {
        self.minor >= 7
    }

    /// From 2.7 ("oslat should use MHz, not Mhz"), oslat's `Counter
    /// Freq:` line ends `(MHz)` (2.4: `(Mhz)`).
    pub fn oslat_mhz_spelling(self) -> bool {
        self.minor >= 7
    }

    /// From 2.6 ("oslat: remove newline from tracemark message"), oslat's
    /// `-T` message is one line, without 2.4's `Stopping the test.`.
    pub fn oslat_trace_message_one_line(self) -> bool {
        self.minor >= 6
    }

    /// From 2.6 ("rt-error: added conditional to info() and debug()"),
    /// cyclicdeadline prints its `interval:`/`Tested at` lines only with
    /// `--verbose` and its thread lines only with `--debug` (2.4: always).
    pub fn cyclicdeadline_info_when_asked(self) -> bool {
        self.minor >= 6
    }

    /// From 2.6 (seen in 2.6's script; not in 2.4's), hwlatdetect's
    /// sample lines end with the sample's `, cpu:N`.
    pub fn hwlatdetect_sample_cpu(self) -> bool {
        self.minor >= 6
    }

    /// In 2.10 (seen in 2.10's script; not in 2.6's: the releases
    /// between were not examined, so only 2.10 has it), hwlatdetect's
    /// report: `Sample window:` one space further right, each sample's
    /// `, count:N` where the kernel writes it, "Samples exceeding
    /// threshold" as the sum of the counts, and the `MTBF:` line.
    pub fn hwlatdetect_report_2_10(self) -> bool {
        self.minor >= 10
    }
}

impl fmt::Display for RtTests {
    /// `2.4`, `2.10`: how the option takes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "2.{}", self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_releases_it_knows_and_nothing_else() {
        assert_eq!(RtTests::parse("2.4"), Some(RtTests::V2_4));
        assert_eq!(RtTests::parse("2.6"), Some(RtTests::V2_6));
        assert_eq!(RtTests::parse("2.10"), Some(RtTests::V2_10));
        assert_eq!(RtTests::parse("2.8").map(RtTests::minor), Some(8));
        for bad in [
            "", "2", "2.", "2.3", "2.11", "2.04", "2.40", "3.0", " 2.4", "2.4 ", "2.1O", "v2.10",
            "2.+4",
        ] {
            assert_eq!(RtTests::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_json_version_is_c_s_printf_of_a_number() {
        assert_eq!(RtTests::V2_4.json_version(), "2.40");
        assert_eq!(RtTests::V2_6.json_version(), "2.60");
        assert_eq!(RtTests::V2_10.json_version(), "2.10");
        assert_eq!(RtTests::parse("2.9").unwrap().json_version(), "2.90");
    }

    #[test]
    fn oslat_and_cyclicdeadline_change_with_2_5_2_6_and_2_7() {
        let at = |m: &str| RtTests::parse(m).unwrap();
        // (release, in units, truncated, MHz, one-line -T, quiet info)
        for (d, units, trunc, mhz, one_line, quiet) in [
            ("2.4", false, false, false, false, false),
            ("2.5", true, false, false, false, false),
            ("2.6", true, false, false, true, true),
            ("2.7", true, true, true, true, true),
            ("2.10", true, true, true, true, true),
        ] {
            let r = at(d);
            assert_eq!(r.oslat_latency_in_units(), units, "{d}");
            assert_eq!(r.oslat_latency_truncated(), trunc, "{d}");
            assert_eq!(r.oslat_mhz_spelling(), mhz, "{d}");
            assert_eq!(r.oslat_trace_message_one_line(), one_line, "{d}");
            assert_eq!(r.cyclicdeadline_info_when_asked(), quiet, "{d}");
        }
    }

    #[test]
    fn the_default_is_2_4_and_changes_come_with_2_7() {
        assert_eq!(RtTests::default(), RtTests::V2_4);
        assert_eq!(RtTests::V2_10.to_string(), "2.10");
        let at = |m: &str| RtTests::parse(m).unwrap();
        for (d, new) in [
            ("2.4", false),
            ("2.6", false),
            ("2.7", true),
            ("2.10", true),
        ] {
            assert_eq!(at(d).histogram_skips_empty_buckets(), new, "{d}");
            assert_eq!(at(d).json_histogram_only_when_asked(), new, "{d}");
            assert_eq!(at(d).histogram_sum_column_always(), new, "{d}");
            assert_eq!(at(d).histogram_overflow_lines_2_7(), new, "{d}");
        }
    }
}
