//! `latency -g FILE`: the all-samples histogram as gnuplot data, in
//! Xenomai's layout: one `x y` line per bucket from the first non-empty to
//! the last, x the bucket's centre in µs, y its count + 1 (so that a
//! logarithmic axis shows empty buckets), framed by a `y = 1` point at each
//! outer edge so that a `with steps` plot starts and ends on the axis.
//! Numbers are printed as C's `%g` prints them.
//!
//! Plot it with (docs/xenomai-latency.md shows this line too):
//! `gnuplot -e "set terminal png; set output 'lat.png'; set logscale y;
//!  set xlabel 'latency (us)'; set ylabel 'samples + 1';
//!  plot 'lat.dat' with steps title 'latency'"`

use std::io::{self, Write};

use rtlat_core::SignedHistogramData;

/// Writes `histogram` as gnuplot data; nothing at all when it holds no
/// sample inside its range.
pub fn write_gnuplot(w: &mut impl Write, histogram: &SignedHistogramData) -> io::Result<()> {
    let nonempty = || histogram.numbered().filter(|&(_, count)| count > 0);
    let (Some((start, _)), Some((stop, _))) = (nonempty().next(), nonempty().last()) else {
        return Ok(());
    };
    let width_us = histogram.width_ns as f64 / 1000.0;
    writeln!(w, "{} 1", c_g(start as f64 * width_us))?;
    for (number, count) in histogram
        .numbered()
        .filter(|&(n, _)| (start..=stop).contains(&n))
    {
        writeln!(w, "{} {}", c_g((number as f64 + 0.5) * width_us), count + 1)?;
    }
    writeln!(w, "{} 1", c_g((stop + 1) as f64 * width_us))
}

/// `x` as C's `printf("%g")` writes it: six significant digits, trailing
/// zeros removed, exponent form below 1e-4 and from 1e6 on.
pub fn c_g(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".to_string()
        } else if x > 0.0 {
            "inf".to_string()
        } else {
            "-inf".to_string()
        };
    }
    // The exponent after rounding to six significant digits.
    let scientific = format!("{x:.5e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` output always has an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` exponent is an integer");
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            trim_fraction(mantissa),
            exponent.unsigned_abs()
        )
    } else {
        let decimals = (5 - exponent) as usize;
        trim_fraction(&format!("{x:.decimals$}")).to_string()
    }
}

fn trim_fraction(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_printf() {
        // Reference values from glibc's printf("%g").
        for (x, expected) in [
            (0.0, "0"),
            (1.0, "1"),
            (0.5, "0.5"),
            (2.25, "2.25"),
            (300.5, "300.5"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (-1.5, "-1.5"),
            (999999.5, "1e+06"),
            (0.1 + 0.2, "0.3"),
            (12.0625, "12.0625"),
        ] {
            assert_eq!(c_g(x), expected, "{x}");
        }
    }

    #[test]
    fn data_is_framed_and_counts_are_plus_one() {
        let h = SignedHistogramData {
            width_ns: 500,
            first: -2,
            buckets: vec![0, 1, 0, 3, 0],
            below: 0,
            above: 9,
        };
        let mut out = Vec::new();
        write_gnuplot(&mut out, &h).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "-0.5 1\n-0.25 2\n0.25 1\n0.75 4\n1 1\n"
        );
    }

    #[test]
    fn an_empty_histogram_writes_nothing() {
        let h = SignedHistogramData {
            width_ns: 1000,
            first: -1,
            buckets: vec![0, 0],
            below: 0,
            above: 3,
        };
        let mut out = Vec::new();
        write_gnuplot(&mut out, &h).unwrap();
        assert!(out.is_empty());
    }
}
