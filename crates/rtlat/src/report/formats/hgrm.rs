//! `--hgrm FILE`: all threads together in FILE, HdrHistogram's text
//! ([`crate::report::hgrm`]), and with `--hgrm-per-thread` thread N in
//! FILE with `.N` before its extension.

use rtlat_core::PreciseStats;

use super::{Finished, Format};
use crate::output::{OutputTarget, Stdout, write_to};
use crate::report::hgrm::{Moments, bucket_stddev, per_thread_path, write_hgrm};

/// The `.hgrm` files.
pub struct Hgrm;

impl Format<Finished<'_>> for Hgrm {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        let Some(asked) = &run.asked.hgrm else {
            return Ok(());
        };
        let report = run.report;
        let Some(all) = report.merged_distribution() else {
            return Ok(());
        };
        // A run without a sum of squares (oslat) takes the spread of its
        // buckets.
        let moments = |cycles: u64, precise: &PreciseStats, d| Moments {
            mean_ns: precise.mean(cycles).unwrap_or(0.0),
            stddev_ns: precise.stddev(cycles).unwrap_or_else(|| bucket_stddev(d)),
        };
        let (cycles, precise) = report.all_threads_precise();
        write_to(asked.target, out, "--hgrm", |mut w| {
            write_hgrm(&mut w, &all, moments(cycles, &precise, &all))
        })?;
        if let (true, OutputTarget::File(all_path)) = (asked.per_thread, asked.target) {
            for t in &report.threads {
                let Some(d) = &t.distribution else { continue };
                let path = per_thread_path(all_path, t.index);
                let m = moments(t.compat.cycles, &t.precise, d);
                write_to(
                    &OutputTarget::File(path),
                    out,
                    "--hgrm-per-thread",
                    |mut w| write_hgrm(&mut w, d, m),
                )?;
            }
        }
        Ok(())
    }
}
