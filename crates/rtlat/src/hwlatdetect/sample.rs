//! One line of the `hwlat` tracer's output, as `trace_pipe` gives it:
//!
//! ```text
//!  <...>-1234  [001] d...  1234.567890: #1     inner/outer(us):   12/14    ts:1508.123456789 count:3
//! ```
//!
//! The seventh whitespace-separated field is `inner/outer` in µs, the
//! eighth `ts:SECONDS.NANOS`, the CPU is the second (`[001]`, or `13d....`
//! in the latency format), and kernels from 5.14 add `count:N` (the
//! number of gaps above the threshold in that window) and, with NMI
//! accounting, `nmi-total:`/`nmi-count:`.

use rtlat_core::RtTests;

/// One sample of the tracer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The `ts:` field as written (seconds with nanoseconds).
    pub timestamp: String,
    /// The largest gap inside the sampling loop, µs.
    pub inner_us: u64,
    /// The largest gap between two turns of the loop, µs.
    pub outer_us: u64,
    /// The CPU the sample was taken on, when the line says.
    pub cpu: Option<u32>,
    /// `count:` (kernel 5.14 and later): gaps above the threshold.
    pub count: Option<u64>,
}

impl Sample {
    /// The sample of one line, `None` for a line that is not one (`CPU:0
    /// [LOST 3 EVENTS]`, a header comment).
    pub fn parse(line: &str) -> Option<Sample> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 7 {
            return None;
        }
        // After the `inner/outer(us):` label (the seventh field in the
        // default format, which the script reads blindly).
        let label = fields.iter().position(|f| f.starts_with("inner/outer"))?;
        let (inner, outer) = fields.get(label + 1)?.split_once('/')?;
        let timestamp = fields[label + 2..]
            .iter()
            .find_map(|f| f.strip_prefix("ts:"))?;
        let cpu = cpu_of(fields[1]);
        let count = fields[label + 2..]
            .iter()
            .find_map(|f| f.strip_prefix("count:"))
            .and_then(|v| v.parse().ok());
        Some(Sample {
            timestamp: timestamp.to_owned(),
            inner_us: inner.parse().ok()?,
            outer_us: outer.parse().ok()?,
            cpu,
            count,
        })
    }

    /// The larger of the two gaps: the sample's latency.
    pub fn largest(&self) -> u64 {
        self.inner_us.max(self.outer_us)
    }

    /// The timestamp in seconds, for the MTBF.
    pub fn seconds(&self) -> Option<f64> {
        self.timestamp.parse().ok()
    }

    /// The script's line for the sample (`--watch`, `--report`, the list
    /// at the end): `ts: 1508.123456789, inner:12, outer:14`; from 2.6
    /// with `, cpu:1`, from 2.10 also `, count:2` where the kernel wrote
    /// it.
    pub fn line(&self, dialect: RtTests) -> String {
        let mut line = format!(
            "ts: {}, inner:{}, outer:{}",
            self.timestamp, self.inner_us, self.outer_us
        );
        if dialect.hwlatdetect_sample_cpu()
            && let Some(cpu) = self.cpu
        {
            line.push_str(&format!(", cpu:{cpu}"));
        }
        if dialect.hwlatdetect_report_2_10()
            && let Some(count) = self.count
        {
            line.push_str(&format!(", count:{count}"));
        }
        line
    }
}

/// The CPU of the second field: `[007]`, or `13d....` (latency format:
/// the CPU then four flag characters).
fn cpu_of(field: &str) -> Option<u32> {
    if let Some(inside) = field.strip_prefix('[') {
        return inside.strip_suffix(']')?.parse().ok();
    }
    let digits = field.len().checked_sub(5)?;
    field.get(..digits)?.parse().ok()
}

/// The mean time between failures of rt-tests 2.10's hwlatdetect, in
/// seconds: the time from the first to the last sample, scaled up from
/// the sampled part of each window (width) to the whole window, divided
/// by the gaps between the `exceeding` latencies. `None` unless more than
/// one latency exceeded the threshold, or without a width.
pub fn mtbf_s(samples: &[Sample], exceeding: u64, window_us: u64, width_us: u64) -> Option<f64> {
    if exceeding <= 1 || width_us == 0 {
        return None;
    }
    let first = samples.first()?.seconds()?;
    let last = samples.last()?.seconds()?;
    Some(((last - first) * window_us as f64) / ((exceeding - 1) as f64 * width_us as f64))
}

/// The latencies above the threshold: 2.10 adds up the `count:` fields
/// where the kernel writes them; 2.4 (and a kernel without them) counts
/// the samples.
pub fn exceeding(samples: &[Sample]) -> u64 {
    match samples.first().and_then(|s| s.count) {
        Some(_) => samples.iter().map(|s| s.count.unwrap_or(0)).sum(),
        None => samples.len() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_old_and_new_kernels() {
        let old = "           <...>-1730  [001] d...   567.190353: #1     inner/outer(us):   12/14    ts:1508.123456789";
        let s = Sample::parse(old).unwrap();
        assert_eq!(
            (s.inner_us, s.outer_us, s.cpu, s.count),
            (12, 14, Some(1), None)
        );
        assert_eq!(s.timestamp, "1508.123456789");
        assert_eq!(
            s.line(RtTests::V2_4),
            "ts: 1508.123456789, inner:12, outer:14"
        );
        for dialect in [RtTests::V2_6, RtTests::V2_10] {
            assert_eq!(
                s.line(dialect),
                "ts: 1508.123456789, inner:12, outer:14, cpu:1"
            );
        }
        let new = "   hwlatd-123   13d....  99.000001: #27    inner/outer(us):  105/0     ts:1700000000.000000001 count:4 nmi-total:0 nmi-count:0";
        let s = Sample::parse(new).unwrap();
        assert_eq!(
            (s.inner_us, s.outer_us, s.cpu, s.count),
            (105, 0, Some(13), Some(4))
        );
        assert_eq!(s.largest(), 105);
        assert_eq!(
            s.line(RtTests::V2_10),
            "ts: 1700000000.000000001, inner:105, outer:0, cpu:13, count:4"
        );
        assert_eq!(
            s.line(RtTests::V2_6),
            "ts: 1700000000.000000001, inner:105, outer:0, cpu:13"
        );
        assert_eq!(Sample::parse("CPU:0 [LOST 3 EVENTS]"), None);
        assert_eq!(Sample::parse("# tracer: hwlat"), None);
    }

    #[test]
    fn mtbf_as_2_10() {
        let at = |ts: &str, count| Sample {
            timestamp: ts.into(),
            inner_us: 20,
            outer_us: 0,
            cpu: None,
            count,
        };
        let samples = [at("10.0", Some(2)), at("20.0", Some(1))];
        assert_eq!(exceeding(&samples), 3);
        // (20 - 10) * 1000000 / ((3 - 1) * 500000) = 10 s.
        assert_eq!(mtbf_s(&samples, 3, 1_000_000, 500_000), Some(10.0));
        assert_eq!(mtbf_s(&samples[..1], 1, 1_000_000, 500_000), None);
        let plain = [at("1.5", None), at("2.5", None)];
        assert_eq!(exceeding(&plain), 2);
    }
}
