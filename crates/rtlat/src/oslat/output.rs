//! oslat's own output: the header block, the summary table (byte for byte
//! as oslat 2.4 prints it: a label right-aligned in 12 columns, `:`, a
//! tab, then ` value` per thread and the unit) and the JSON members.

use std::io::{self, Write};

use rtlat_core::RtTests;
use rtlat_core::oslat::{PERCENTILES, Scale, ThreadFigures, Workload};
use rtlat_results::load::Numbered;
use rtlat_results::oslat::{Labelled, Named, OslatMembers, OslatThreadDto};

use super::settings::Settings;
use crate::report::json::round_decimals;

/// The version line every run starts with (C prints `VERSION` as `%1.2f`):
/// `oslat V 2.40`, or the dialect's.
pub fn version_line(rt_tests: RtTests) -> String {
    format!("oslat V {}", rt_tests.json_version())
}

/// The figures of a finished measurement, as the outputs need them.
#[derive(Debug)]
pub struct Summary<'a> {
    /// One per thread, in CPU-list order.
    pub threads: &'a [ThreadFigures],
    /// The bias of `-B` in the scale's unit (0 without it).
    pub bias: u64,
    /// The unit and width of the buckets and figures.
    pub scale: Scale,
    /// The dialect.
    pub rt_tests: RtTests,
    /// `-b`.
    pub bucket_size: usize,
    /// `-z`.
    pub zero_omit: bool,
}

/// The block C prints before the pre-heat (`dump_globals`), empty line
/// included.
pub fn write_header(w: &mut impl Write, s: &Settings) -> io::Result<()> {
    let c = &s.config;
    let secs = c.duration.as_nanos() / 1_000_000_000;
    writeln!(w, "Total runtime: \t\t{secs} seconds")?;
    if c.rtprio > 0 {
        writeln!(w, "Thread priority: \tSCHED_FIFO:{}", c.rtprio)?;
    } else {
        writeln!(w, "Thread priority: \tdefault")?;
    }
    writeln!(
        w,
        "CPU list: \t\t{}",
        s.cpu_list_text.as_deref().unwrap_or("all")
    )?;
    writeln!(w, "CPU for main thread: \t{}", s.main_cpu)?;
    writeln!(w, "Workload: \t\t{}", c.workload.name())?;
    let kib = match c.workload {
        Workload::Memmove => c.workload_mem / 1024,
        Workload::None => 0,
    };
    writeln!(w, "Workload mem: \t\t{kib} (KiB)")?;
    let preheat = if s.single_preheat { 1 } else { c.cpus.len() };
    writeln!(w, "Preheat cores: \t\t{preheat}")?;
    writeln!(w)
}

/// One row of the table: `%12s:\t`, ` value` per thread, the unit.
fn row(
    w: &mut impl Write,
    label: &str,
    values: impl Iterator<Item = String>,
    end: &str,
) -> io::Result<()> {
    write!(w, "{label:>12}:\t")?;
    for v in values {
        write!(w, " {v}")?;
    }
    writeln!(w, "{end}")
}

/// The summary table (C's `write_summary`), empty line included.
pub fn write_summary(w: &mut impl Write, s: &Summary<'_>) -> io::Result<()> {
    let t = s.threads;
    row(w, "Core", t.iter().map(|t| t.cpu.to_string()), "")?;
    row(
        w,
        "Counter Freq",
        t.iter().map(|t| t.counter_mhz.to_string()),
        if s.rt_tests.oslat_mhz_spelling() {
            " (MHz)"
        } else {
            " (Mhz)"
        },
    )?;
    let mut skipped = false;
    for j in 0..s.bucket_size {
        let last = j == s.bucket_size - 1;
        if !last && s.zero_omit && t.iter().all(|t| t.buckets[j] == 0) {
            skipped = true;
            continue;
        }
        if skipped {
            writeln!(w, "    ...")?;
            skipped = false;
        }
        let label = format!("{} (us)", s.scale.label_text(s.bias, j, true));
        let end = if last { " (including overflows)" } else { "" };
        row(w, &label, t.iter().map(|t| t.buckets[j].to_string()), end)?;
    }
    row(
        w,
        "Minimum",
        t.iter().map(|t| s.scale.text(t.min_lat)),
        " (us)",
    )?;
    row(
        w,
        "Average",
        t.iter().map(|t| format!("{:.3}", t.average(s.bias))),
        " (us)",
    )?;
    row(
        w,
        "Maximum",
        t.iter().map(|t| s.scale.text(t.max_lat)),
        " (us)",
    )?;
    row(
        w,
        "Max-Min",
        t.iter()
            .map(|t| s.scale.text(t.max_lat.wrapping_sub(t.min_lat))),
        " (us)",
    )?;
    row(
        w,
        "Duration",
        t.iter().map(|t| format!("{:.3}", t.duration_secs())),
        " (sec)",
    )?;
    writeln!(w)
}

/// The members after the envelope: C's `num_threads` and `thread`, then
/// ours.
pub fn members<'a>(
    s: &Summary<'_>,
    load: Option<rtlat_results::load::LoadDto<'a>>,
) -> OslatMembers<'a> {
    OslatMembers {
        num_threads: s.threads.len(),
        thread: Numbered(
            s.threads
                .iter()
                .enumerate()
                .map(|(i, t)| (i, thread_dto(t, s.bias, s.scale)))
                .collect(),
        ),
        all_threads: {
            let mut all = s.threads.iter().map(ThreadFigures::distribution);
            all.next().map(|mut merged| {
                for d in all {
                    merged.merge(&d);
                }
                crate::report::json::percentiles(&merged)
            })
        },
        counter: rtlat_sys::counter::KIND,
        bias: s.bias,
        load,
    }
}

fn thread_dto(t: &ThreadFigures, bias: u64, scale: Scale) -> OslatThreadDto {
    let avg = t.average(bias);
    OslatThreadDto {
        cpu: t.cpu,
        freq: t.counter_mhz,
        min: t.min_lat,
        avg: avg.is_finite().then(|| round_decimals(avg, 6)),
        max: t.max_lat,
        duration: round_decimals(t.duration_secs(), 3),
        histogram: Labelled(
            t.buckets
                .iter()
                .enumerate()
                .filter(|&(_, &n)| n > 0)
                .map(|(j, &n)| (scale.label_text(bias, j, false), n))
                .collect(),
        ),
        loops: t.loops,
        ns_per_loop: t.ns_per_loop().map(|v| round_decimals(v, 3)),
        counter_hz: t.counter_hz,
        min_ns: t.min_ns.map(|v| v.round() as i64),
        max_ns: t.max_ns.map(|v| v.round() as i64),
        mean_ns: t.mean_ns().map(|v| round_decimals(v, 3)),
        percentiles_ns: Named(
            PERCENTILES
                .iter()
                .map(|&(name, f)| (name, t.value_at(f).map(|v| round_decimals(v, 1))))
                .collect(),
        ),
        cycles: t.loops,
        percentiles: crate::report::json::percentiles(&t.distribution()),
        overflow_excess: t.overflow_sum,
        tid: t.tid,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rtlat_core::{DistributionPlan, Nanos};

    /// A thread's figures with every extended key filled.
    pub(crate) fn figures(cpu: usize, buckets: Vec<u64>, min: u64, max: u64) -> ThreadFigures {
        let plan = DistributionPlan::new(1000, Nanos::ZERO).unwrap();
        ThreadFigures {
            cpu,
            tid: 100,
            counter_hz: 2_100_000_000,
            counter_mhz: 2100,
            loops: buckets.iter().sum(),
            buckets,
            overflow_sum: 0,
            min_lat: min,
            max_lat: max,
            scale: Scale::DEFAULT,
            runtime_ticks: 2_100_000_000,
            min_ns: Some(30.0),
            max_ns: Some(max as f64 * 1000.0),
            fine: vec![(30.0, 10)],
            slow: rtlat_core::Distribution::empty(plan),
        }
    }

    #[test]
    fn the_table_byte_for_byte_with_zero_omit() {
        let t = [
            figures(1, vec![100, 0, 0, 2], 1, 40),
            figures(3, vec![90, 0, 1, 0], 1, 3),
        ];
        let s = Summary {
            threads: &t,
            bias: 0,
            scale: Scale::DEFAULT,
            rt_tests: RtTests::V2_4,
            bucket_size: 4,
            zero_omit: true,
        };
        let mut out = Vec::new();
        write_summary(&mut out, &s).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "        Core:\t 1 3\n\
             Counter Freq:\t 2100 2100 (Mhz)\n    \
             001 (us):\t 100 90\n    \
             ...\n    \
             003 (us):\t 0 1\n    \
             004 (us):\t 2 0 (including overflows)\n     \
             Minimum:\t 1 1 (us)\n     \
             Average:\t 1.059 1.022 (us)\n     \
             Maximum:\t 40 3 (us)\n     \
             Max-Min:\t 39 2 (us)\n    \
             Duration:\t 1.000 1.000 (sec)\n\n"
        );
    }
}
