//! `rtlat hwlatdetect --json FILE`: rt-tests' envelope, the run's
//! `hwlatdetect` object, the machine's `environment` and `audit`
//! ([`rtlat_results::hwlatdetect`] has the types).

use std::io::{self, Write};

use rtlat_results::hwlatdetect::{HwlatMembers, HwlatResult};

use crate::report::RunMeta;
use crate::report::json::write_unjudged;

/// Writes the document of a run that ended as `meta` says.
pub fn write_json(mut w: &mut dyn Write, meta: &RunMeta, result: &HwlatResult) -> io::Result<()> {
    write_unjudged(
        &mut w,
        meta,
        &HwlatMembers {
            hwlatdetect: result,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_results::hwlatdetect::HwlatSample;

    /// A result with every key written (each optional one given).
    fn full_result() -> HwlatResult {
        HwlatResult {
            duration_s: 10,
            threshold_us: 10,
            hardlimit_us: 10,
            window_us: 1_000_000,
            width_us: 500_000,
            cpu_list: Some("0-1".into()),
            interrupted: false,
            max_latency_us: Some(30),
            samples_recorded: 2,
            samples_exceeding_threshold: 2,
            latencies_above_threshold: 3,
            mtbf_s: Some(2.5),
            smis: Some(0),
            samples: vec![HwlatSample {
                ts: "1508.123456789".into(),
                inner_us: 12,
                outer_us: 30,
                cpu: Some(1),
                count: Some(2),
            }],
        }
    }

    #[test]
    fn the_keys_of_hwlatdetects_document_change_only_with_its_version() {
        use crate::report::test_support::{meta, render};
        use crate::report::verdict::tests::fixture_audit;
        let result = full_result();
        let doc = |m: &RunMeta| render(|w| write_json(w, m, &result));
        let mut audited = meta("hwlatdetect --duration=10 --json=-");
        audited.audit = Some(fixture_audit("tuned-rt", vec![1, 2], 95));
        crate::report::schema::check(
            "hwlatdetect",
            &[&doc(&audited), &doc(&meta("hwlatdetect --json=-"))],
        );
    }
}
