//! Each reason and level on hand-built reports, and the sufficiency
//! arithmetic.

use super::*;
use crate::report::test_support::{ThreadFixture, render, run};
use rtlat_audit::counters::CpuTicks;
use rtlat_core::config::SchedPolicy;
use rtlat_core::report::{CompatStats, Disturbances, ThreadError};
use rtlat_core::units::{Nanos, Resolution};

/// A thread with `cycles` samples, pinned to CPU 1, no distribution.
fn thread(index: usize, cycles: u64) -> ThreadFixture {
    ThreadFixture::new(index).pinned(1, 0).compat(CompatStats {
        cycles,
        min: 1,
        max: 9,
        act: 3,
        sum: 3 * cycles as i64,
    })
}

fn quiet_disturbances() -> Disturbances {
    Disturbances {
        involuntary_switches: 0,
        migrations: Some(0),
        minor_faults: 0,
        major_faults: 0,
    }
}

/// A quiet system: no steal, no throttling, the log read.
fn quiet_system() -> SystemDisturbances {
    SystemDisturbances {
        cpus: Some(vec![1]),
        ticks: Some(CpuTicks {
            steal: 0,
            total: 1000,
        }),
        thermal_throttle_events: Some(0),
        kernel_log: KernelLogFinding::Read {
            rt_throttling: false,
            records_lost: false,
        },
    }
}

fn judge(threads: Vec<ThreadReport>, system: &SystemDisturbances) -> Verdict {
    let report = run(Resolution::Micros, threads);
    Verdict::of(Evidence {
        report: &report,
        audit: None,
        system: Some(system),
    })
}

fn ids(v: &Verdict) -> Vec<&str> {
    v.reasons.iter().map(|r| r.id.as_str()).collect()
}

fn quiet_thread(index: usize) -> ThreadReport {
    let mut t = thread(index, 1000).build();
    t.disturbances = Some(quiet_disturbances());
    t
}

#[test]
fn a_quiet_run_is_trustworthy() {
    let v = judge(vec![quiet_thread(0), quiet_thread(1)], &quiet_system());
    assert_eq!(v.level, Level::Trustworthy);
    assert!(v.reasons.is_empty(), "{:?}", v.reasons);
    assert_eq!(v.suggested_duration_s, None);
}

#[test]
fn sufficiency_arithmetic() {
    let needed: Vec<u64> = STANDARD_PERCENTILES
        .iter()
        .map(|&(_, p)| samples_needed(p))
        .collect();
    assert_eq!(needed, [20, 100, 1_000, 10_000, 100_000, 1_000_000]);
    // 1 − 0.9 is 0.0999..98 in binary: still 10 beyond, not 9.
    assert_eq!(samples_beyond(100, 0.9), 10);
    assert!(supported(100, 0.9));
    assert!(!supported(99, 0.9));
    assert_eq!(samples_beyond(20_000, 0.9999), 2);
    assert_eq!(samples_beyond(20_000, 0.99999), 0);
    assert_eq!(samples_needed(0.95), 200);
    // Not a whole number: rounded up (10 / 0.3 = 33.3..).
    assert_eq!(samples_needed(0.7), 34);
    let labels: Vec<&str> = unsupported(20_000).iter().map(|(l, _)| *l).collect();
    assert_eq!(labels, ["p99.99", "p99.999"]);
    assert!(unsupported(1_000_000).is_empty());
    assert_eq!(unsupported(19).len(), 6);
}

#[test]
fn too_few_samples_for_the_percentiles_quoted() {
    let samples: Vec<i64> = (0..20_000).map(|i| 1000 + i % 50).collect();
    let mut short = thread(0, 20_000).distribution(&samples).build();
    short.disturbances = Some(quiet_disturbances());
    let mut slow = thread(1, 20_000)
        .interval(Nanos::from_micros(2500))
        .distribution(&samples)
        .build();
    slow.disturbances = Some(quiet_disturbances());
    let v = judge(vec![short, slow], &quiet_system());
    assert_eq!(v.level, Level::Caveats);
    assert_eq!(ids(&v), ["samples.insufficient"]);
    let text = &v.reasons[0].text;
    assert!(
        text.contains("thread 0 (20000 samples): p99.99, p99.999"),
        "{text}"
    );
    assert!(text.contains("p99.999 needs 1000000 samples"), "{text}");
    // 1000000 samples at the slowest thread's 2.5 ms.
    assert_eq!(v.suggested_duration_s, Some(2500.0));

    // Enough samples: no reason, no suggestion.
    let samples: Vec<i64> = (0..1_000_000).map(|i| 1000 + i % 50).collect();
    let mut long = thread(0, 1_000_000).distribution(&samples).build();
    long.disturbances = Some(quiet_disturbances());
    let v = judge(vec![long], &quiet_system());
    assert_eq!(v.level, Level::Trustworthy, "{:?}", v.reasons);
    assert_eq!(v.suggested_duration_s, None);
}

/// Something done to a quiet thread.
type Disturb = fn(&mut ThreadReport);

#[test]
fn each_thread_disturbance_gives_caveats() {
    let cases: [(&str, Disturb); 7] = [
        ("thread.involuntary_switches", |t| {
            t.disturbances.as_mut().unwrap().involuntary_switches = 3
        }),
        ("thread.migrations", |t| {
            t.disturbances.as_mut().unwrap().migrations = Some(1)
        }),
        ("thread.minor_faults", |t| {
            t.disturbances.as_mut().unwrap().minor_faults = 2
        }),
        ("thread.major_faults", |t| {
            t.disturbances.as_mut().unwrap().major_faults = 1
        }),
        ("thread.smis", |t| t.smi_count = Some(4)),
        ("thread.missed_periods", |t| t.precise.overruns = 10),
        ("thread.not_realtime", |t| t.policy = SchedPolicy::Other),
    ];
    for (id, disturb) in cases {
        let mut t = quiet_thread(1);
        disturb(&mut t);
        let v = judge(vec![quiet_thread(0), t], &quiet_system());
        assert_eq!(v.level, Level::Caveats, "{id}");
        assert_eq!(ids(&v), [id]);
        assert!(
            v.reasons[0].text.contains("thread 1: "),
            "{id}: {}",
            v.reasons[0].text
        );
        assert!(!v.reasons[0].text.contains("thread 0"), "{id}");
    }
    // Not counted is not zero, and says nothing.
    let mut t = quiet_thread(0);
    t.disturbances = None;
    assert_eq!(judge(vec![t], &quiet_system()).level, Level::Trustworthy);
    let mut t = quiet_thread(0);
    t.disturbances.as_mut().unwrap().migrations = None;
    assert_eq!(judge(vec![t], &quiet_system()).level, Level::Trustworthy);
}

#[test]
fn one_reason_per_kind_names_every_thread() {
    let mut a = quiet_thread(0);
    let mut b = quiet_thread(1);
    a.disturbances.as_mut().unwrap().involuntary_switches = 12;
    b.disturbances.as_mut().unwrap().involuntary_switches = 3;
    let v = judge(vec![a, b], &quiet_system());
    assert_eq!(ids(&v), ["thread.involuntary_switches"]);
    assert!(
        v.reasons[0].text.ends_with("thread 0: 12, thread 1: 3"),
        "{}",
        v.reasons[0].text
    );
}

#[test]
fn what_makes_a_run_untrustworthy() {
    // A thread without a sample.
    let v = judge(vec![quiet_thread(0), thread(1, 0).build()], &quiet_system());
    assert_eq!(v.level, Level::Untrustworthy);
    assert_eq!(ids(&v), ["thread.no_samples"]);

    // A thread that failed.
    let mut t = quiet_thread(0);
    t.error = Some(ThreadError {
        step: ThreadStep::Wait,
        errno: 4,
    });
    let v = judge(vec![t], &quiet_system());
    assert_eq!(v.level, Level::Untrustworthy);
    assert_eq!(ids(&v), ["thread.error"]);
    assert!(
        v.reasons[0]
            .text
            .contains("waiting for a period failed (errno 4)")
    );

    // Missed periods: 10 of 1010 (0.99 %) are caveats, 11 of 1011 not.
    let mut t = quiet_thread(0);
    t.precise.overruns = 10;
    assert_eq!(
        judge(vec![t.clone()], &quiet_system()).level,
        Level::Caveats
    );
    t.precise.overruns = 11;
    let v = judge(vec![t], &quiet_system());
    assert_eq!(v.level, Level::Untrustworthy);
    assert!(v.reasons[0].text.contains("11 of 1011 periods"));

    // RT throttling during the run.
    let mut system = quiet_system();
    system.kernel_log = KernelLogFinding::Read {
        rt_throttling: true,
        records_lost: false,
    };
    let v = judge(vec![quiet_thread(0)], &system);
    assert_eq!(v.level, Level::Untrustworthy);
    assert_eq!(ids(&v), ["system.rt_throttling"]);
}

#[test]
fn steal_time_by_its_share() {
    let with_steal = |steal| {
        let mut system = quiet_system();
        system.ticks = Some(CpuTicks { steal, total: 1000 });
        judge(vec![quiet_thread(0)], &system)
    };
    let v = with_steal(50);
    assert_eq!((v.level, ids(&v)), (Level::Caveats, vec!["system.steal"]));
    assert!(
        v.reasons[0].text.contains("5.00% of the time of CPU 1"),
        "{}",
        v.reasons[0].text
    );
    assert_eq!(with_steal(100).level, Level::Caveats, "10 % exactly");
    assert_eq!(with_steal(101).level, Level::Untrustworthy);
}

#[test]
fn system_counters_not_read_or_lost() {
    let mut system = quiet_system();
    system.thermal_throttle_events = Some(2);
    let v = judge(vec![quiet_thread(0)], &system);
    assert_eq!(
        (v.level, ids(&v)),
        (Level::Caveats, vec!["system.thermal_throttling"])
    );

    let mut system = quiet_system();
    system.ticks = None;
    system.thermal_throttle_events = None;
    system.kernel_log = KernelLogFinding::NotChecked("/dev/kmsg: Permission denied".into());
    let v = judge(vec![quiet_thread(0)], &system);
    assert_eq!(
        (v.level, ids(&v)),
        (Level::Caveats, vec!["system.kernel_log"])
    );
    assert!(v.reasons[0].text.contains("Permission denied"));

    system.kernel_log = KernelLogFinding::Read {
        rt_throttling: false,
        records_lost: true,
    };
    let v = judge(vec![quiet_thread(0)], &system);
    assert_eq!(ids(&v), ["system.kernel_log"]);

    // A synthetic run has no system counters: nothing is said of them.
    let report = run(Resolution::Micros, vec![quiet_thread(0)]);
    let v = Verdict::of(Evidence {
        report: &report,
        audit: None,
        system: None,
    });
    assert_eq!(v.level, Level::Trustworthy);
}

fn finding(id: &'static str, status: Status, cpus: Vec<usize>) -> Finding {
    Finding {
        id,
        status,
        fact: format!("{id} fact"),
        why: (status >= Status::Warn).then(|| format!("{id} why")),
        fix: None,
        cpus,
    }
}

#[test]
fn setup_findings_of_the_measured_cpus_are_caveats() {
    let findings = [
        finding("kernel.preemption", Status::Bad, vec![]),
        finding("frequency.governor", Status::Warn, vec![1]),
        finding("idle.states", Status::Warn, vec![3]),
        finding("smt", Status::Ok, vec![]),
        finding("clocksource", Status::Info, vec![]),
        finding("irq.affinity", Status::Unknown, vec![]),
    ];
    let mut reasons = Vec::new();
    setup_reasons(&findings, &Some(vec![1, 2]), &mut reasons);
    let ids: Vec<&str> = reasons.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["setup.kernel.preemption", "setup.frequency.governor"]);
    assert!(reasons.iter().all(|r| r.level == Level::Caveats));
    assert_eq!(
        reasons[0].text,
        "kernel.preemption fact (bad): kernel.preemption why"
    );

    // Threads not pinned: every CPU is measured.
    let mut reasons = Vec::new();
    setup_reasons(&findings, &None, &mut reasons);
    assert_eq!(reasons.len(), 3);
}

#[test]
fn measured_cpus_are_the_pinned_ones() {
    let pinned = run(
        Resolution::Micros,
        vec![
            ThreadFixture::new(0).pinned(3, 0).build(),
            ThreadFixture::new(1).pinned(1, 0).build(),
            ThreadFixture::new(2).pinned(3, 0).build(),
        ],
    );
    assert_eq!(measured_cpus(&pinned), Some(vec![1, 3]));
    let loose = run(
        Resolution::Micros,
        vec![
            ThreadFixture::new(0).pinned(3, 0).build(),
            ThreadFixture::new(1).build(),
        ],
    );
    assert_eq!(measured_cpus(&loose), None);
}

#[test]
fn text_lines() {
    let samples: Vec<i64> = (0..20_000).map(|i| 1000 + i % 20).collect();
    let mut t0 = thread(0, 20_000).distribution(&samples).build();
    t0.disturbances = Some(quiet_disturbances());
    t0.disturbances.as_mut().unwrap().involuntary_switches = 5;
    let mut t1 = quiet_thread(1);
    t1.precise.overruns = 2;
    let report = run(Resolution::Micros, vec![t0, t1]);
    let v = Verdict::of(Evidence {
        report: &report,
        audit: None,
        system: Some(&quiet_system()),
    });
    let text = render(|w| v.write_text(w, &report, "Thread"));
    insta::assert_snapshot!(text);
    assert!(text.lines().all(|l| l.starts_with("# ")), "{text}");
    assert!(text.contains("# Thread 1: missed periods: 2\n"));
    assert!(text.contains("# Verdict: caveats\n"));
    assert!(text.contains("# Suggested duration: 1000 s"));
}

#[test]
fn json_shape() {
    let report = run(Resolution::Micros, vec![thread(0, 0).build()]);
    let v = Verdict::of(Evidence {
        report: &report,
        audit: None,
        system: None,
    });
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["level"], "untrustworthy");
    assert_eq!(json["reasons"][0]["id"], "thread.no_samples");
    assert!(json["reasons"][0]["text"].is_string());
    assert!(json["reasons"][0].get("level").is_none());
    assert!(json["suggested_duration_s"].is_null());
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 3);
}

#[test]
fn text_from_the_system_is_escaped_one_reason_one_line() {
    let hostile = "\x1b]0;OWNED\x07\nok  fake";
    let mut competing = finding("competition.rt_threads", Status::Bad, vec![]);
    competing.fact = format!("FIFO 99 {hostile}[42]");
    let mut reasons = Vec::new();
    setup_reasons(&[competing], &None, &mut reasons);
    let report = run(Resolution::Micros, vec![quiet_thread(0)]);
    let v = Verdict {
        level: Level::Caveats,
        reasons,
        suggested_duration_s: None,
        worst_sample: Some(WorstSample {
            thread: 0,
            latency_ns: 9000,
            component: "thread_latency",
            component_ns: 8000,
            cause: Some(WorstCause {
                kind: "task",
                name: format!("{hostile}[42]"),
                ns: 7000,
            }),
        }),
    };
    let text = render(|w| v.write_text(w, &report, "Thread"));
    assert!(!text.contains(['\x1b', '\x07']), "{text:?}");
    assert!(text.lines().all(|l| l.starts_with("# ")), "{text}");
    let escaped = r"\e]0;OWNED\x07\nok  fake[42]";
    assert!(
        text.contains(&format!("competition.rt_threads: FIFO 99 {escaped} (bad)")),
        "{text}"
    );
    assert!(
        text.contains(&format!("mostly task {escaped} (7.0 us)")),
        "{text}"
    );
}
