//! What the IPC tools write: the frame (live and `-q`), the JSON document,
//! and our `--histogram` block.
//!
//! The frame is that of rt-tests 2.4, for each pair (svsematest,
//! ptsematest, sigwaittest; pmqtest adds `TO %d, ` before `Cycles`):
//!
//! ```text
//! #0: ID20848, P80, CPU1, I1000; #1: ID20849, P80, CPU0, Cycles 200
//! ```
//!
//! then for each pair
//!
//! ```text
//! #1 -> #0, Min    9, Cur   19, Avg   27, Max   74
//! ```
//!
//! or `#1 -> #0 (not yet ready)` while the receiver has no sample (C prints
//! `Min -1 ... Avg -2147483648` there in pmqtest and ptsematest). Unlike C
//! the interval is shown whole (C: `-i 1500000` shows `I500000`) and the
//! figures come from CLOCK_MONOTONIC nanoseconds truncated to whole
//! microseconds. `Avg` is rounded, as C rounds it.

use std::io::{self, Write};

use rtlat_core::ClockKind;
use rtlat_core::Resolution;
use rtlat_core::ipc::{PairReport, PairResult};
use rtlat_core::{CompatStats, RunReport, ThreadReport};
use rtlat_results::ipc::{IpcMembers, PairDto, ReceiverDto, SenderDto};
use rtlat_results::load::Numbered;

use super::PairTool;
use crate::report::RunMeta;
use crate::report::json::{
    Extras, distribution, disturbances, histogram, percentiles, round_decimals, trailing_members,
    write_envelope,
};

/// The CPU each side is shown on: (receiver, sender); -1 when unknown.
pub type ShownCpus = (i64, i64);

/// The average as the C tools display it: `sum / samples` rounded to the
/// nearest whole unit (halves up).
pub fn avg_rounded(c: &CompatStats) -> i64 {
    if c.cycles == 0 {
        return 0;
    }
    let n = c.cycles as i128;
    let sum = i128::from(c.sum);
    // floor((2 * sum + n) / (2 * n)) = round half up, in integers.
    (2 * sum + n).div_euclid(2 * n) as i64
}

/// Writes one frame: every pair's header line, then every pair's result
/// line.
pub fn write_frame(
    w: &mut impl Write,
    tool: PairTool,
    pairs: &[PairResult],
    cpus: &[ShownCpus],
) -> io::Result<()> {
    for (p, &(rcpu, scpu)) in pairs.iter().zip(cpus) {
        let (r, s) = (2 * p.index, 2 * p.index + 1);
        write!(
            w,
            "#{r}: ID{}, P{}, CPU{rcpu}, I{}; #{s}: ID{}, P{}, CPU{scpu}, ",
            p.receiver.id,
            p.receiver.priority,
            p.interval.as_micros_truncated(),
            p.sender.id,
            p.sender.priority,
        )?;
        if tool == PairTool::Pmqtest {
            write!(w, "TO {}, ", p.timeouts)?;
        }
        writeln!(w, "Cycles {}", p.sender.compat.cycles)?;
    }
    for p in pairs {
        let (r, s) = (2 * p.index, 2 * p.index + 1);
        let c = &p.receiver.compat;
        if c.cycles == 0 {
            writeln!(w, "#{s} -> #{r} (not yet ready)")?;
        } else {
            writeln!(
                w,
                "#{s} -> #{r}, Min {:4}, Cur {:4}, Avg {:4}, Max {:4}",
                c.min,
                c.act,
                avg_rounded(c),
                c.max
            )?;
        }
    }
    Ok(())
}

/// Moves the cursor up over a frame of `pairs` pairs (after each live
/// frame).
pub fn write_rewind(w: &mut impl Write, pairs: usize) -> io::Result<()> {
    write!(w, "\x1b[{}A", 2 * pairs)
}

/// Moves the cursor below the last frame at the end of a live run.
pub fn write_leave(w: &mut impl Write, pairs: usize) -> io::Result<()> {
    write!(w, "\x1b[{}B", 2 * pairs + 2)
}

/// The JSON document: rt-tests' envelope, then `num_threads` and `thread`
/// with a `sender` and a `receiver` object per pair (C's keys first, ours
/// after; pmqtest's receiver has `timeoutcount`). In thread mode each
/// receiver also has `percentiles` and `distribution`, and the document
/// `all_threads`, as cyclictest's. Without samples `min`,
/// `avg` and `max` are `null` (C: `-1`, `-nan`, `0`). The document ends
/// with the load, if any, and the verdict (`extras`).
pub fn write_json(
    w: &mut impl Write,
    tool: PairTool,
    report: &PairReport,
    cpus: &[ShownCpus],
    meta: &RunMeta,
    extras: Extras<'_, '_>,
) -> io::Result<()> {
    let receivers = receivers_as_run_report(report, cpus);
    let merged = receivers.merged_distribution();
    write_envelope(
        w,
        meta,
        &IpcMembers {
            num_threads: report.pairs.len(),
            resolution_in_ns: u8::from(report.resolution == Resolution::Nanos),
            thread: pairs(tool, &report.pairs, cpus),
            trailing: trailing_members(merged.as_ref(), extras, &receivers.threads),
        },
        extras.verdict,
    )
}

/// Each pair's object, by its number.
fn pairs(tool: PairTool, pairs: &[PairResult], cpus: &[ShownCpus]) -> Numbered<PairDto> {
    Numbered(
        pairs
            .iter()
            .zip(cpus)
            .map(|(p, &(rcpu, scpu))| (p.index, pair(tool, p, rcpu, scpu)))
            .collect(),
    )
}

/// One pair's object, its receiver on CPU `rcpu` and sender on `scpu`.
fn pair(tool: PairTool, p: &PairResult, rcpu: i64, scpu: i64) -> PairDto {
    let c = &p.receiver.compat;
    let any = c.cycles > 0;
    PairDto {
        sender: SenderDto {
            cpu: scpu,
            priority: p.sender.priority,
            samples: p.sender.compat.cycles,
            interval: p.interval.as_micros_truncated(),
            tid: p.sender.id,
        },
        receiver: ReceiverDto {
            cpu: rcpu,
            priority: p.receiver.priority,
            timeoutcount: (tool == PairTool::Pmqtest).then_some(p.timeouts),
            min: any.then_some(c.min),
            avg: c.avg().map(|a| round_decimals(a, 2)),
            max: any.then_some(c.max),
            samples: c.cycles,
            min_ns: p.receiver.precise.min.map(|n| n.as_nanos()),
            max_ns: p.receiver.precise.max.map(|n| n.as_nanos()),
            mean_ns: p
                .receiver
                .precise
                .mean(c.cycles)
                .map(|m| round_decimals(m, 1)),
            tid: p.receiver.id,
            interval_us: p.interval.as_micros_truncated(),
            histogram: histogram(p.histogram.as_ref()),
            disturbances: p.receiver.disturbances.map(disturbances),
            percentiles: p.distribution.as_ref().map(percentiles),
            distribution: p.distribution.as_ref().map(distribution),
        },
    }
}

/// The report as a cyclictest [`RunReport`] whose threads are the
/// receivers, for the histogram writer.
pub fn receivers_as_run_report(report: &PairReport, cpus: &[ShownCpus]) -> RunReport {
    RunReport {
        resolution: report.resolution,
        clock: ClockKind::Monotonic,
        end: report.end,
        threads: report
            .pairs
            .iter()
            .zip(cpus)
            .map(|(p, &(rcpu, _))| ThreadReport {
                index: p.index,
                tid: p.receiver.id,
                policy: p.receiver.policy,
                priority: p.receiver.priority,
                interval: p.interval,
                cpu: usize::try_from(rcpu).ok(),
                node: None,
                smi_count: None,
                compat: p.receiver.compat,
                precise: p.receiver.precise,
                // The pairs' results do not carry it (the fork mode's
                // receivers keep no time of their maximum).
                max_at: None,
                histogram: p.histogram.clone(),
                signed_histogram: None,
                distribution: p.distribution.clone(),
                phases: p.phases.clone(),
                error: p.receiver.error,
                disturbances: p.receiver.disturbances,
                wakeup_latencies: None,
            })
            .collect(),
        break_info: None,
        spikes: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::SysInfo;
    use rtlat_core::Nanos;
    use rtlat_core::SchedPolicy;
    use rtlat_core::ipc::SideResult;
    use rtlat_core::{EndReason, PreciseStats};

    fn side(id: i32, compat: CompatStats) -> SideResult {
        SideResult {
            id,
            policy: SchedPolicy::Fifo,
            priority: 80,
            cpu: None,
            compat,
            precise: PreciseStats {
                min: (compat.cycles > 0).then_some(Nanos(compat.min * 1000 + 123)),
                max: (compat.cycles > 0).then_some(Nanos(compat.max * 1000 + 456)),
                sum_ns: i128::from(compat.sum) * 1000,
                sum_sq_ns: None,
                overruns: 0,
            },
            error: None,
            disturbances: None,
            ended: true,
        }
    }

    /// Pair 0 measured three hand-offs, pair 1 none yet.
    fn report() -> PairReport {
        let done = CompatStats {
            cycles: 3,
            min: 9,
            max: 74,
            act: 19,
            sum: 102,
        };
        let pair = |index: usize, compat: CompatStats, sent: u64| PairResult {
            index,
            interval: Nanos::from_micros(1000 + 500 * index as i64 + 1_500_000 * index as i64),
            receiver: side(100 + 2 * index as i32, compat),
            sender: side(
                101 + 2 * index as i32,
                CompatStats {
                    cycles: sent,
                    ..CompatStats::default()
                },
            ),
            timeouts: 2,
            histogram: None,
            distribution: None,
            phases: Vec::new(),
        };
        PairReport {
            resolution: Resolution::Micros,
            end: EndReason::Stopped,
            pairs: vec![pair(0, done, 3), pair(1, CompatStats::default(), 0)],
            break_info: None,
        }
    }

    fn frame(tool: PairTool) -> String {
        let mut out = Vec::new();
        write_frame(&mut out, tool, &report().pairs, &[(1, 0), (-1, -1)]).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn frame_lines_as_c_prints_them_with_not_yet_ready() {
        assert_eq!(
            frame(PairTool::Svsematest),
            "#0: ID100, P80, CPU1, I1000; #1: ID101, P80, CPU0, Cycles 3\n\
             #2: ID102, P80, CPU-1, I1501500; #3: ID103, P80, CPU-1, Cycles 0\n\
             #1 -> #0, Min    9, Cur   19, Avg   34, Max   74\n\
             #3 -> #2 (not yet ready)\n"
        );
        // pmqtest: the time-out count before Cycles; the same guard (C has
        // none there and prints Avg -2147483648).
        assert_eq!(
            frame(PairTool::Pmqtest).lines().next().unwrap(),
            "#0: ID100, P80, CPU1, I1000; #1: ID101, P80, CPU0, TO 2, Cycles 3"
        );
        assert!(frame(PairTool::Ptsematest).ends_with("#3 -> #2 (not yet ready)\n"));
    }

    #[test]
    fn json_has_nulls_without_samples_and_c_keys_first() {
        let meta = RunMeta {
            cmdline: "ptsematest -q".into(),
            start_time: "t0".into(),
            end_time: "t1".into(),
            return_code: 0,
            sysinfo: SysInfo {
                sysname: "Linux".into(),
                nodename: "n".into(),
                release: "r".into(),
                version: "v".into(),
                machine: "m".into(),
                realtime: false,
            },
            audit: None,
            blocks: Vec::new(),
            projection: Default::default(),
            rt_tests: Default::default(),
        };
        let mut out = Vec::new();
        let cpus = [(1, 0), (-1, -1)];
        let receivers = receivers_as_run_report(&report(), &cpus);
        let verdict = crate::report::verdict::judge(&receivers, &meta, None);
        write_json(
            &mut out,
            PairTool::Pmqtest,
            &report(),
            &cpus,
            &meta,
            Extras {
                load: None,
                verdict: &verdict,
                explain: None,
                timeline: None,
            },
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("nan"));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let r1 = &v["thread"]["1"]["receiver"];
        assert!(r1["min"].is_null() && r1["avg"].is_null() && r1["max"].is_null());
        let r0 = &v["thread"]["0"]["receiver"];
        assert_eq!(r0["avg"], serde_json::json!(34.0));
        assert_eq!(r0["timeoutcount"], 2);
        assert_eq!(r0["min_ns"], 9123);
        assert_eq!(v["thread"]["1"]["sender"]["interval"], 1501500);
        let order = [
            "\"cpu\"",
            "\"priority\"",
            "\"timeoutcount\"",
            "\"min\"",
            "\"avg\"",
            "\"max\"",
            "\"samples\"",
            "\"min_ns\"",
        ];
        let receiver = &text[text.find("\"receiver\"").unwrap()..];
        let pos: Vec<usize> = order.iter().map(|k| receiver.find(k).unwrap()).collect();
        assert!(pos.is_sorted(), "{pos:?}");
    }

    #[test]
    fn average_rounds_half_up_like_c() {
        let c = |sum, cycles| CompatStats {
            cycles,
            min: 0,
            max: 0,
            act: 0,
            sum,
        };
        assert_eq!(avg_rounded(&c(5, 2)), 3);
        assert_eq!(avg_rounded(&c(4, 3)), 1);
        assert_eq!(avg_rounded(&c(5, 3)), 2);
        assert_eq!(avg_rounded(&c(0, 0)), 0);
        assert_eq!(avg_rounded(&c(2686, 100)), 27);
    }
}
