//! The `-h`/`-H` histogram block, in the layout of cyclictest 2.4.
//!
//! ```text
//! # Histogram
//! 000000 000000<TAB>000000
//! ...
//! # Total: 000000745 000000708
//! # Min Latencies: 00013 00011
//! # Avg Latencies: 00026 00023
//! # Max Latencies: 00147 00049
//! # Histogram Overflows: 00255 00292
//! # Histogram Overflow at cycle number:
//! # Thread 0: 00004 00005 00023 # 00252 others
//! # Thread 1: 00013 00026 # 00290 others
//! (empty line)
//! ```
//!
//! (`<TAB>` stands for a tab character.) Every bucket gets a line, empty
//! ones included; thread columns are separated by a TAB. With `-H` and more
//! than one thread a sum column is added to the bucket lines, `# Total:`,
//! `# Max Latencies:` (the largest maximum) and `# Histogram Overflows:`.
//! Buckets are in units of the run's resolution (µs, or ns with `-N`).
//! Negative values, possible only on CLOCK_REALTIME, keep their sign.
//!
//! rt-tests 2.7 and later (`--rt-tests=2.10`, [`RtTests`]) write a bucket
//! line only where some thread has a sample, no `# Total:` line, with `-H`
//! the sum column on the bucket lines also for one thread, `# Thread N: `
//! with its space also without overflows, and ` # 00000 others` when the
//! overflows exactly fill the list of cycle numbers.

use std::io::{self, BufWriter, Write};

use rtlat_core::{HistogramData, RtTests, RunReport};

/// Writes the histogram block of `report`, final empty line included.
///
/// `summary_column` is `-H`: add the all-threads column when there is more
/// than one thread (with one thread the block is the same as `-h`; from
/// 2.7, `rt_tests`, the bucket lines have it for one thread too).
///
/// Every thread must carry a histogram and all must have the same number of
/// buckets; otherwise nothing is written and the error is of kind
/// [`io::ErrorKind::InvalidInput`]. The output is buffered here, so `w`
/// need not be.
pub fn write_histogram(
    w: &mut impl Write,
    report: &RunReport,
    summary_column: bool,
    rt_tests: RtTests,
) -> io::Result<()> {
    let hists = histograms(report)?;
    let nbuckets = hists.first().map_or(0, |h| h.buckets.len());
    let sum_col = summary_column && hists.len() > 1;
    let bucket_sum_col = sum_col || (summary_column && rt_tests.histogram_sum_column_always());
    let mut w = BufWriter::new(w);

    writeln!(w, "# Histogram")?;
    for bucket in 0..nbuckets {
        let sum: u64 = hists.iter().map(|h| h.buckets[bucket]).sum();
        if sum == 0 && rt_tests.histogram_skips_empty_buckets() {
            continue;
        }
        write!(w, "{bucket:06} ")?;
        for (i, h) in hists.iter().enumerate() {
            if i > 0 {
                w.write_all(b"\t")?;
            }
            write!(w, "{:06}", h.buckets[bucket])?;
        }
        if bucket_sum_col {
            write!(w, "\t{sum:06}")?;
        }
        writeln!(w)?;
    }

    if !rt_tests.histogram_skips_empty_buckets() {
        write_totals(&mut w, &hists, sum_col)?;
    }
    write_figures(&mut w, report, &hists, sum_col)?;
    write_overflow_cycles(&mut w, report, &hists, rt_tests)?;
    let smis: Option<Vec<u64>> = report.threads.iter().map(|t| t.smi_count).collect();
    if let Some(smis) = smis {
        write!(w, "# SMIs:")?;
        for count in smis {
            write!(w, " {count:05}")?;
        }
        writeln!(w)?;
    }
    writeln!(w)?;
    w.flush()
}

/// 2.4's `# Total:` line: each thread's samples in range, and their sum
/// with `sum_col`.
fn write_totals(w: &mut impl Write, hists: &[&HistogramData], sum_col: bool) -> io::Result<()> {
    write!(w, "# Total:")?;
    let mut total_sum: u64 = 0;
    for h in hists {
        let total = h.total();
        total_sum += total;
        write!(w, " {total:09}")?;
    }
    if sum_col {
        write!(w, " {total_sum:09}")?;
    }
    writeln!(w)
}

/// The `# Min/Avg/Max Latencies:` and `# Histogram Overflows:` lines.
fn write_figures(
    w: &mut impl Write,
    report: &RunReport,
    hists: &[&HistogramData],
    sum_col: bool,
) -> io::Result<()> {
    write!(w, "# Min Latencies:")?;
    for t in &report.threads {
        write!(w, " {:05}", t.compat.min_shown())?;
    }
    writeln!(w)?;

    write!(w, "# Avg Latencies:")?;
    for t in &report.threads {
        write!(w, " {:05}", t.compat.avg_truncated())?;
    }
    writeln!(w)?;

    write!(w, "# Max Latencies:")?;
    for t in &report.threads {
        write!(w, " {:05}", t.compat.max_shown())?;
    }
    if sum_col {
        // The largest maximum among threads that have samples (0 if none).
        let max_of_max = report
            .threads
            .iter()
            .filter(|t| t.compat.cycles > 0)
            .map(|t| t.compat.max)
            .max()
            .unwrap_or(0);
        write!(w, " {max_of_max:05}")?;
    }
    writeln!(w)?;

    write!(w, "# Histogram Overflows:")?;
    let mut overflow_sum: u64 = 0;
    for h in hists {
        overflow_sum += h.overflows;
        write!(w, " {:05}", h.overflows)?;
    }
    if sum_col {
        write!(w, " {overflow_sum:05}")?;
    }
    writeln!(w)
}

/// `# Histogram Overflow at cycle number:` and each thread's line: the
/// cycle numbers logged (as many as there are buckets), then how many
/// were not. 2.7 writes the space after `# Thread N:` whatever follows,
/// and the count of the others also when it is 0 but the list is full.
fn write_overflow_cycles(
    w: &mut impl Write,
    report: &RunReport,
    hists: &[&HistogramData],
    rt_tests: RtTests,
) -> io::Result<()> {
    writeln!(w, "# Histogram Overflow at cycle number:")?;
    let v2_7 = rt_tests.histogram_overflow_lines_2_7();
    for (t, h) in report.threads.iter().zip(hists) {
        write!(w, "# Thread {}:", t.index)?;
        if v2_7 && h.overflow_cycles.is_empty() {
            w.write_all(b" ")?;
        }
        for cycle in &h.overflow_cycles {
            write!(w, " {cycle:05}")?;
        }
        let logged = h.overflow_cycles.len() as u64;
        let full = !h.buckets.is_empty() && logged >= h.buckets.len() as u64;
        if h.overflows > logged || (v2_7 && full) {
            write!(w, " # {:05} others", h.overflows - logged)?;
        }
        writeln!(w)?;
    }
    Ok(())
}

/// The threads' histograms, checked to exist and to share one bucket count.
fn histograms(report: &RunReport) -> io::Result<Vec<&HistogramData>> {
    let hists = report
        .threads
        .iter()
        .map(|t| {
            t.histogram
                .as_ref()
                .ok_or_else(|| invalid(format!("thread {} has no histogram", t.index)))
        })
        .collect::<io::Result<Vec<_>>>()?;
    if let Some(first) = hists.first() {
        let n = first.buckets.len();
        if let Some((t, h)) = report
            .threads
            .iter()
            .zip(&hists)
            .find(|(_, h)| h.buckets.len() != n)
        {
            return Err(invalid(format!(
                "thread {} has {} histogram buckets, thread {} has {n}",
                t.index,
                h.buckets.len(),
                report.threads[0].index,
            )));
        }
    }
    Ok(hists)
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{ThreadFixture, render, run};
    use rtlat_core::CompatStats;
    use rtlat_core::Resolution;

    /// The block as text; also checks the final empty line, which snapshots
    /// do not show (insta trims trailing newlines).
    fn hist(report: &RunReport, summary: bool) -> String {
        let text = render(|w| write_histogram(w, report, summary, RtTests::V2_4));
        assert!(text.ends_with("\n\n") && !text.ends_with("\n\n\n"));
        text
    }

    /// Appendix B.1: `cyclictest -H 5 -l 300 -t 2 -p 80 -i 500`, every
    /// sample above the range.
    #[test]
    fn appendix_b1_byte_for_byte() {
        let overflowed = HistogramData {
            buckets: vec![0; 5],
            overflows: 300,
            overflow_cycles: vec![0, 1, 2, 3, 4],
        };
        let r = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .compat(CompatStats {
                        cycles: 300,
                        min: 11,
                        max: 29,
                        act: 29,
                        sum: 14 * 300 + 7,
                    })
                    .histogram(overflowed.clone())
                    .build(),
                ThreadFixture::new(1)
                    .compat(CompatStats {
                        cycles: 300,
                        min: 12,
                        max: 96,
                        act: 32,
                        sum: 31 * 300 + 299,
                    })
                    .histogram(overflowed)
                    .build(),
            ],
        );
        let expected = "# Histogram\n\
            000000 000000\t000000\t000000\n\
            000001 000000\t000000\t000000\n\
            000002 000000\t000000\t000000\n\
            000003 000000\t000000\t000000\n\
            000004 000000\t000000\t000000\n\
            # Total: 000000000 000000000 000000000\n\
            # Min Latencies: 00011 00012\n\
            # Avg Latencies: 00014 00031\n\
            # Max Latencies: 00029 00096 00096\n\
            # Histogram Overflows: 00300 00300 00600\n\
            # Histogram Overflow at cycle number:\n\
            # Thread 0: 00000 00001 00002 00003 00004 # 00295 others\n\
            # Thread 1: 00000 00001 00002 00003 00004 # 00295 others\n\
            \n";
        assert_eq!(hist(&r, true), expected);
    }

    /// Appendix B.6: a thread that never took a sample.
    #[test]
    fn appendix_b6_zero_samples_byte_for_byte() {
        let r = run(
            Resolution::Micros,
            vec![ThreadFixture::new(0).empty_histogram(5).build()],
        );
        let expected = "# Histogram\n\
            000000 000000\n\
            000001 000000\n\
            000002 000000\n\
            000003 000000\n\
            000004 000000\n\
            # Total: 000000000\n\
            # Min Latencies: 1000000\n\
            # Avg Latencies: 00000\n\
            # Max Latencies: 00000\n\
            # Histogram Overflows: 00000\n\
            # Histogram Overflow at cycle number:\n\
            # Thread 0:\n\
            \n";
        assert_eq!(hist(&r, false), expected);
        assert_eq!(hist(&r, true), expected);
        insta::assert_snapshot!(hist(&r, false));
    }

    fn one_thread_micros() -> RunReport {
        run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .samples(
                        &[3, 4, 4, 5, 9, 12, 4, 3, 15, 8],
                        Resolution::Micros,
                        400,
                        Some(10),
                    )
                    .build(),
            ],
        )
    }

    #[test]
    fn one_thread_micros_h() {
        insta::assert_snapshot!(hist(&one_thread_micros(), false));
    }

    #[test]
    fn one_thread_capital_h_is_the_same_as_h() {
        let r = one_thread_micros();
        assert_eq!(hist(&r, true), hist(&r, false));
    }

    fn three_threads_with_overflows() -> RunReport {
        // Thread 0 overflows 9 times with a log of 6: "# 00003 others".
        let t0: Vec<i64> = (0..20)
            .map(|i| if i % 2 == 0 { 2 } else { 6 + i })
            .collect();
        // Thread 1 overflows exactly as many times as the log holds.
        let t1 = [1, 1, 7, 8, 9, 10, 11, 12, 0, 5];
        // Thread 2 never overflows.
        let t2 = [0, 1, 2, 3, 4, 5, 5, 5];
        run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .samples(&t0[..19], Resolution::Micros, 0, Some(6))
                    .build(),
                ThreadFixture::new(1)
                    .samples(&t1, Resolution::Micros, 0, Some(6))
                    .build(),
                ThreadFixture::new(2)
                    .samples(&t2, Resolution::Micros, 0, Some(6))
                    .build(),
            ],
        )
    }

    #[test]
    fn three_threads_with_overflows_h() {
        insta::assert_snapshot!(hist(&three_threads_with_overflows(), false));
    }

    #[test]
    fn three_threads_with_overflows_capital_h() {
        insta::assert_snapshot!(hist(&three_threads_with_overflows(), true));
    }

    #[test]
    fn two_threads_capital_h_sum_columns() {
        let r = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .samples(&[1, 2, 2, 3, 3, 3, 7], Resolution::Micros, 0, Some(5))
                    .build(),
                ThreadFixture::new(1)
                    .samples(&[0, 2, 4, 4, 40], Resolution::Micros, 0, Some(5))
                    .build(),
            ],
        );
        insta::assert_snapshot!(hist(&r, true));
    }

    #[test]
    fn nanos_buckets() {
        let r = run(
            Resolution::Nanos,
            vec![
                ThreadFixture::new(0)
                    .samples(&[1, 3, 3, 2, 1_500], Resolution::Nanos, 0, Some(4))
                    .build(),
                ThreadFixture::new(1)
                    .samples(&[0, 0, 1], Resolution::Nanos, 0, Some(4))
                    .build(),
                ThreadFixture::new(2)
                    .samples(&[3, 3, 3, 3], Resolution::Nanos, 0, Some(4))
                    .build(),
            ],
        );
        insta::assert_snapshot!(hist(&r, false));
    }

    #[test]
    fn negative_latency_keeps_its_sign() {
        let r = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .samples(&[-7, -2, -30], Resolution::Micros, 0, Some(3))
                    .build(),
                ThreadFixture::new(1)
                    .samples(&[-1, 1, 2], Resolution::Micros, 0, Some(3))
                    .build(),
            ],
        );
        insta::assert_snapshot!(hist(&r, true));
    }

    #[test]
    fn missing_histogram_is_invalid_input() {
        let r = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0).empty_histogram(5).build(),
                ThreadFixture::new(1).build(),
            ],
        );
        let mut out = Vec::new();
        let err = write_histogram(&mut out, &r, false, RtTests::V2_4).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(out.is_empty());
    }

    #[test]
    fn differing_bucket_counts_are_invalid_input() {
        let r = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0).empty_histogram(5).build(),
                ThreadFixture::new(1).empty_histogram(6).build(),
            ],
        );
        let mut out = Vec::new();
        let err = write_histogram(&mut out, &r, true, RtTests::V2_4).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(out.is_empty());
    }

    /// The same block as rt-tests 2.10 writes it.
    fn hist_2_10(report: &RunReport, summary: bool) -> String {
        render(|w| write_histogram(w, report, summary, RtTests::V2_10))
    }

    /// rt-tests 2.10 (seen side by side with its cyclictest, -h 10): only
    /// the buckets with samples, no `# Total:`; the rest as 2.4.
    #[test]
    fn v2_10_skips_empty_buckets_and_the_total() {
        let expected = "# Histogram\n\
            000003 000002\n\
            000004 000003\n\
            000005 000001\n\
            000008 000001\n\
            000009 000001\n\
            # Min Latencies: 00003\n\
            # Avg Latencies: 00006\n\
            # Max Latencies: 00015\n\
            # Histogram Overflows: 00002\n\
            # Histogram Overflow at cycle number:\n\
            # Thread 0: 00005 00008\n\
            \n";
        assert_eq!(hist_2_10(&one_thread_micros(), false), expected);
        // 2.6 still writes 2.4's block.
        let v2_6 = render(|w| write_histogram(w, &one_thread_micros(), false, RtTests::V2_6));
        assert_eq!(v2_6, hist(&one_thread_micros(), false));
    }

    /// rt-tests 2.10's `-H` with one thread: the sum column on the bucket
    /// lines (not on the figures' lines, which need two threads).
    #[test]
    fn v2_10_capital_h_has_the_sum_column_for_one_thread() {
        let text = hist_2_10(&one_thread_micros(), true);
        assert!(
            text.starts_with("# Histogram\n000003 000002\t000002\n"),
            "{text}"
        );
        assert!(text.contains("\n# Max Latencies: 00015\n"), "{text}");
        assert!(text.contains("\n# Histogram Overflows: 00002\n"), "{text}");
    }

    /// rt-tests 2.10's overflow lines: `# Thread 0: ` keeps its space
    /// without overflows; a full list of cycle numbers says `# 00000
    /// others`; with every sample over the range no bucket line is left.
    #[test]
    fn v2_10_overflow_lines() {
        let r = run(
            Resolution::Micros,
            vec![ThreadFixture::new(0).empty_histogram(3).build()],
        );
        let text = hist_2_10(&r, false);
        assert!(text.starts_with("# Histogram\n# Min Latencies:"), "{text}");
        assert!(text.ends_with("# Thread 0: \n\n"), "{text:?}");
        let full = HistogramData {
            buckets: vec![0; 3],
            overflows: 3,
            overflow_cycles: vec![0, 1, 2],
        };
        let r = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .compat(CompatStats {
                        cycles: 3,
                        min: 4,
                        max: 9,
                        act: 9,
                        sum: 18,
                    })
                    .histogram(full)
                    .build(),
            ],
        );
        assert!(hist_2_10(&r, false).ends_with("# Thread 0: 00000 00001 00002 # 00000 others\n\n"));
        assert!(hist(&r, false).ends_with("# Thread 0: 00000 00001 00002\n\n"));
    }
}
