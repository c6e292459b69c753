//! Each reason and level on hand-built reports, the sufficiency
//! arithmetic, the two parts on the audit's fixture trees, the projection
//! in the JSON and the text.

use super::text::{self, Style};
use super::*;
use crate::report::test_support::{ThreadFixture, render, run};
use rtlat_audit::counters::{CpuTicks, KernelLogFinding, SystemDisturbances};
use rtlat_audit::{Audit, Finding, Status};
use rtlat_core::STANDARD_PERCENTILES;
use rtlat_core::SchedPolicy;
use rtlat_core::{CompatStats, Disturbances, ThreadError};
use rtlat_core::{Nanos, Resolution};
use rtlat_core::{RunReport, ThreadReport, ThreadStep};
use rtlat_stats::blocks::BlockSeries;
use rtlat_stats::projection::{Projection, Request};

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
pub(crate) fn quiet_system() -> SystemDisturbances {
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
    Evidence {
        system: Some(system),
        ..Evidence::of(&report)
    }
    .judge()
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
        // Each lands in the measurement, none in the machine.
        assert_eq!(
            (v.measurement, v.machine),
            (Measurement::Doubtful, Machine::Ready),
            "{id}"
        );
        assert_eq!(v.reasons[0].part(), Part::Measurement, "{id}");
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
    // The share itself is in the verdict (compare reads it), 0 included.
    assert_eq!(v.steal_share, Some(0.05));
    assert_eq!(with_steal(0).steal_share, Some(0.0));
    let mut unread = quiet_system();
    unread.ticks = None;
    assert_eq!(judge(vec![quiet_thread(0)], &unread).steal_share, None);
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
    let v = Evidence::of(&report).judge();
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
    assert_eq!(
        reasons.iter().map(|r| r.level).collect::<Vec<_>>(),
        [
            ReasonLevel::Machine(Machine::NotReady),
            ReasonLevel::Machine(Machine::Caveats)
        ]
    );
    assert!(reasons.iter().all(|r| r.part() == Part::Machine));
    assert_eq!(reasons[0].fact.as_deref(), Some("kernel.preemption fact"));
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
    let v = Evidence {
        system: Some(&quiet_system()),
        ..Evidence::of(&report)
    }
    .judge();
    // Short: the answer, no per-thread lines.
    let short = render(|w| text::write(&v, w, &report, "Thread", Style::Short, 200));
    insta::assert_snapshot!("text_lines_short", short);
    assert!(!short.contains("missed periods: "), "{short}");
    assert!(short.starts_with("# Verdict: caveats (details: --verdict=full)\n"));
    // Full: each thread's missed periods, every reason, the duration.
    let text = render(|w| text::write(&v, w, &report, "Thread", Style::Full, 80));
    insta::assert_snapshot!(text);
    assert!(text.lines().all(|l| l.starts_with("# ")), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    assert!(text.contains("# Thread 1: missed periods: 2\n"));
    assert!(text.contains("# Verdict: caveats (measurement doubtful, machine ready)\n"));
    assert!(text.contains("# Suggested duration: 1000 s"));
}

#[test]
fn json_shape() {
    let report = run(Resolution::Micros, vec![thread(0, 0).build()]);
    let v = Evidence::of(&report).judge();
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["level"], "untrustworthy");
    assert_eq!(json["measurement"], "invalid");
    assert_eq!(json["machine"], "ready");
    assert_eq!(json["reasons"][0]["id"], "thread.no_samples");
    assert!(json["reasons"][0]["text"].is_string());
    assert_eq!(json["reasons"][0]["part"], "measurement");
    assert_eq!(json["reasons"][0]["level"], "invalid");
    assert_eq!(json["reasons"][0].as_object().unwrap().len(), 4);
    assert!(json["suggested_duration_s"].is_null());
    // No blocks kept: nothing projected.
    assert!(json["projection"].is_null());
    // In this order in the document (serde_json's map sorts them here).
    let text = serde_json::to_string(&v).unwrap();
    let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap();
    let order = [
        "level",
        "measurement",
        "machine",
        "reasons",
        "steal_share",
        "suggested_duration_s",
        "projection",
    ];
    assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{text}");
    assert_eq!(json.as_object().unwrap().len(), order.len());
}

#[test]
fn text_from_the_system_is_escaped_one_reason_one_line() {
    let hostile = "\x1b]0;OWNED\x07\nok  fake";
    let mut competing = finding("competition.rt_threads", Status::Bad, vec![]);
    competing.fact = format!("FIFO 99 {hostile}[42]");
    let mut reasons = Vec::new();
    setup_reasons(&[competing], &None, &mut reasons);
    let report = run(Resolution::Micros, vec![quiet_thread(0)]);
    let mut v = Verdict::from_reasons(reasons);
    v.worst_sample = Some(WorstSample {
        thread: 0,
        latency_ns: 9000,
        component: "thread_latency",
        component_ns: 8000,
        cause: Some(WorstCause {
            kind: "task",
            name: format!("{hostile}[42]"),
            ns: 7000,
        }),
        due_at_ns: 500_000_000,
        at_ns: 500_009_000,
        window_ns: None,
    });
    let short = render(|w| text::write(&v, w, &report, "Thread", Style::Short, 80));
    let text = render(|w| text::write(&v, w, &report, "Thread", Style::Full, 200));
    for text in [&short, &text] {
        assert!(!text.contains(['\x1b', '\x07']), "{text:?}");
        assert!(text.lines().all(|l| l.starts_with("# ")), "{text}");
    }
    let escaped = r"\e]0;OWNED\x07\nok  fake[42]";
    assert!(
        text.contains(&format!(
            "#   bad competition.rt_threads: FIFO 99 {escaped}\n"
        )),
        "{text}"
    );
    // Cut to 80 columns, still escaped.
    assert!(
        short.contains(r"first: competition.rt_threads: FIFO 99 \e]0;OW…"),
        "{short}"
    );
    assert!(
        text.contains(&format!(
            "mostly task {escaped} (7.0 us), due 0.500000 s into the run, woke 0.500009 s\n"
        )),
        "{text}"
    );
}

#[test]
fn a_worst_sample_longer_than_the_trace_window_says_what_the_window_showed() {
    let report = run(Resolution::Micros, vec![quiet_thread(0)]);
    let mut v = Verdict::from_reasons(Vec::new());
    v.worst_sample = Some(WorstSample {
        thread: 0,
        latency_ns: 3_000_010_000,
        component: "thread_latency",
        component_ns: 3_000_002_000,
        cause: Some(WorstCause {
            kind: "task",
            name: "sh".to_owned(),
            ns: 950_000_000,
        }),
        due_at_ns: 1_000_000_000,
        at_ns: 4_000_010_000,
        window_ns: Some(1_000_000_000),
    });
    let text = render(|w| text::write(&v, w, &report, "Thread", Style::Full, 200));
    assert!(
        text.contains(
            "# Worst sample: T:0 3000010.0 us: thread_latency 3000002.0 us, mostly task sh \
             (950000.0 us of the 1000000.0 us traced), due 1.000000 s into the run, \
             woke 4.000010 s\n"
        ),
        "{text}"
    );
    let json = serde_json::to_value(&v).unwrap();
    let worst = &json["worst_sample"];
    assert_eq!(
        (&worst["due_at_ns"], &worst["at_ns"], &worst["window_ns"]),
        (
            &serde_json::json!(1_000_000_000),
            &serde_json::json!(4_000_010_000_i64),
            &serde_json::json!(1_000_000_000)
        )
    );
}

#[test]
fn the_level_is_derived_from_the_two_parts() {
    use Level::*;
    let table = [
        (Measurement::Valid, Machine::Ready, Trustworthy),
        (Measurement::Valid, Machine::Caveats, Caveats),
        (Measurement::Valid, Machine::NotReady, Caveats),
        (Measurement::Doubtful, Machine::Ready, Caveats),
        (Measurement::Doubtful, Machine::NotReady, Caveats),
        (Measurement::Invalid, Machine::Ready, Untrustworthy),
        (Measurement::Invalid, Machine::NotReady, Untrustworthy),
    ];
    for (measurement, machine, level) in table {
        assert_eq!(Level::of(measurement, machine), level);
    }
    let v = Verdict::from_reasons(vec![]);
    assert_eq!(
        (v.level, v.measurement, v.machine),
        (Trustworthy, Measurement::Valid, Machine::Ready)
    );
}

/// The audit of a fixture tree of rtlat-audit for `cpus` at `-p priority`.
pub(crate) fn fixture_audit(tree: &str, cpus: Vec<usize>, priority: u8) -> Audit {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rtlat-audit/tests/fixtures")
        .join(tree);
    rtlat_audit::audit(
        &root,
        &rtlat_audit::Request {
            cpus: Some(cpus),
            priority: Some(priority),
            interval_us: 1000,
        },
    )
    .expect("the fixture tree audits")
}

/// A quiet, long enough run on CPU `cpu`, judged with `audit`.
fn judged_with(audit: &Audit, cpu: usize) -> (RunReport, Verdict) {
    let samples: Vec<i64> = (0..1_000_000).map(|i| 1000 + i % 50).collect();
    let mut t = ThreadFixture::new(0)
        .pinned(cpu, 0)
        .compat(CompatStats {
            cycles: 1_000_000,
            min: 1,
            max: 2,
            act: 1,
            sum: 1_000_000,
        })
        .distribution(&samples)
        .build();
    t.disturbances = Some(quiet_disturbances());
    let report = run(Resolution::Micros, vec![t]);
    let v = Evidence {
        audit: Some(audit),
        system: Some(&quiet_system()),
        ..Evidence::of(&report)
    }
    .judge();
    (report, v)
}

#[test]
fn the_desktop_tree_is_a_machine_not_ready_measured_right() {
    let audit = fixture_audit("desktop", vec![1], 80);
    let (report, v) = judged_with(&audit, 1);
    // Every setup finding lands in the machine, none in the measurement.
    assert_eq!(v.measurement, Measurement::Valid, "{:?}", v.reasons);
    assert_eq!(v.machine, Machine::NotReady);
    assert_eq!(v.level, Level::Caveats, "as before the two parts");
    assert!(!v.reasons.is_empty());
    for r in &v.reasons {
        assert_eq!(r.part(), Part::Machine, "{}", r.id);
        assert!(r.id.starts_with("setup."), "{}", r.id);
    }
    let bad = |id: &str| {
        audit
            .checks
            .iter()
            .find(|f| f.id == id)
            .is_some_and(|f| f.status == Status::Bad)
    };
    // The most important finding first: a `bad` one.
    let first = v.reasons_of(Part::Machine)[0];
    assert!(
        bad(first.id.strip_prefix("setup.").unwrap()),
        "{}",
        first.id
    );
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["machine"], "not-ready");
    assert_eq!(json["measurement"], "valid");
    assert!(
        json["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["part"] == "machine"
                && ["caveats", "not-ready"].contains(&r["level"].as_str().unwrap()))
    );

    // Short: at most 6 lines of at most 80 columns, the answer first.
    let short = render(|w| text::write(&v, w, &report, "Thread", Style::Short, 200));
    insta::assert_snapshot!("desktop_short", short);
    let lines: Vec<&str> = short.lines().collect();
    assert!(lines.len() <= text::SHORT_LINES, "{short}");
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{short}");
    assert_eq!(
        lines[0],
        "# Verdict: caveats (details: --verdict=full, rtlat audit)"
    );
    assert_eq!(lines[1], "# Measurement: valid");
    let findings = v.reasons_of(Part::Machine).len();
    assert!(
        lines[2].starts_with(&format!(
            "# Machine: not ready, {findings} findings; first: "
        )),
        "{short}"
    );

    // Full: every finding summarised to its fact, wrapped at 80.
    // The snapshot unwrapped, the tree's path (in a fact) made neutral.
    let wide = render(|w| text::write(&v, w, &report, "Thread", Style::Full, 1000));
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtlat-audit/tests/fixtures/desktop");
    insta::assert_snapshot!(
        "desktop_full",
        wide.replace(&tree.display().to_string(), "<desktop>")
    );
    let full = render(|w| text::write(&v, w, &report, "Thread", Style::Full, 80));
    assert!(full.lines().all(|l| l.chars().count() <= 80), "{full}");
    assert!(full.contains("(why and what to do: rtlat audit)"), "{full}");
    for finding in audit.checks.iter().filter(|f| f.status >= Status::Warn) {
        if v.reasons
            .iter()
            .any(|r| r.id == format!("setup.{}", finding.id))
        {
            let status = finding.status.name();
            assert!(
                full.contains(&format!("#   {status} {}: ", finding.id)),
                "{}: {full}",
                finding.id
            );
            // The audit's why is not restated.
            if let Some(why) = &finding.why {
                assert!(
                    !full.replace("\n#     ", " ").contains(why.as_str()),
                    "{why}"
                );
            }
        }
    }
}

#[test]
fn the_tuned_tree_is_a_ready_machine() {
    let audit = fixture_audit("tuned-rt", vec![2, 3], 95);
    let (_, v) = judged_with(&audit, 2);
    assert_eq!(
        (v.level, v.measurement, v.machine),
        (Level::Trustworthy, Measurement::Valid, Machine::Ready),
        "{:?}",
        v.reasons
    );
}

#[test]
fn a_coarse_clock_is_a_doubt_on_the_measurement() {
    let report = run(Resolution::Micros, vec![quiet_thread(0)]);
    let coarse = |ns, report: &RunReport| {
        Evidence {
            clock_resolution_ns: Some(ns),
            ..Evidence::of(report)
        }
        .judge()
    };
    let v = coarse(4_000_000, &report);
    assert_eq!(ids(&v), ["clock.resolution"]);
    assert_eq!(v.measurement, Measurement::Doubtful);
    assert!(
        v.reasons[0]
            .text
            .contains("(4 ms) is coarser than the 1 us"),
        "{}",
        v.reasons[0].text
    );
    // A high-resolution clock (1 ns) shows in us and in ns (-N).
    assert!(coarse(1, &report).reasons.is_empty());
    assert!(coarse(1_000, &report).reasons.is_empty());
    let nanos = run(Resolution::Nanos, vec![quiet_thread(0)]);
    assert_eq!(ids(&coarse(1_000, &nanos)), ["clock.resolution"]);
}

/// `seconds` of blocks of 10 s, for the projection.
fn blocks(seconds: u64) -> BlockSeries {
    let mut series = BlockSeries::new(10_000_000_000, rtlat_stats::blocks::DEFAULT_CAPACITY);
    for i in 0..seconds / 10 {
        series.push(rtlat_stats::blocks::Block::new(
            10_000,
            Some(5_000 + (i % 7) as i64 * 100),
            10_000 * 3_000,
        ));
    }
    series
}

/// A projection as the estimator would make it: 1 h and 24 h, a deadline.
fn projected() -> Projection {
    use rtlat_stats::projection::{Estimate, Exceedance, HorizonLevel, Projected};
    Projection::Projected(Projected {
        method: "GEV fit to block maxima by maximum likelihood, profile-likelihood intervals"
            .into(),
        block_s: 10.0,
        blocks: 360,
        blocks_left_out: 0,
        fit_p: 0.41,
        trend_p: 0.62,
        location_ns: 60_000.0,
        scale_ns: 8_000.0,
        shape: 0.05,
        levels: vec![
            HorizonLevel {
                horizon_s: 3_600.0,
                max_ns: Estimate {
                    value: 142_000.0,
                    lower: 120_000.0,
                    upper: 190_000.0,
                },
                range_ns: (125_000.0, 170_000.0),
            },
            HorizonLevel {
                horizon_s: 86_400.0,
                max_ns: Estimate {
                    value: 210_000.0,
                    lower: 150_000.0,
                    upper: f64::INFINITY,
                },
                range_ns: (180_000.0, 260_000.0),
            },
        ],
        beyond: Vec::new(),
        deadline: Some(Exceedance {
            deadline_ns: 100_000,
            per_hour: Estimate {
                value: 3.1,
                lower: 1.2,
                upper: 6.4,
            },
            mean_time_between_s: Some(19.0 * 60.0),
            observed_blocks: 2,
        }),
    })
}

#[test]
fn the_projection_is_shown_projected_or_refused() {
    let report = run(Resolution::Micros, vec![quiet_thread(0)]);
    let series = [blocks(60)];
    let request = Request {
        horizons_s: vec![3_600.0, 86_400.0],
        deadline_ns: Some(100_000),
    };
    let mut v = Evidence {
        system: Some(&quiet_system()),
        blocks: &series,
        request: Some(&request),
        ..Evidence::of(&report)
    }
    .judge();
    // Whatever the estimator says, the JSON carries it and the run's
    // length is no doubt on the measurement.
    let json = serde_json::to_value(&v).unwrap();
    assert!(json["projection"]["outcome"].is_string(), "{json}");
    assert_eq!(v.measurement, Measurement::Valid);
    // A minute of blocks cannot project 24 h: the duration says how long.
    assert_eq!(
        v.suggested_duration_s,
        Some(rtlat_stats::projection::needed_duration_s(86_400.0))
    );
    let full = render(|w| text::write(&v, w, &report, "Thread", Style::Full, 80));
    assert!(
        full.contains("to project the worst case over 24 h"),
        "{full}"
    );

    // Refused: why, in the short text; the advice in the full.
    v.projection = Some(Projection::Refused(rtlat_stats::projection::Refusal {
        id: "too_few_blocks",
        reason: "60 blocks of 10 s are too few to fit (at least 100 are needed)".into(),
        advice: "run at least 7 min more".into(),
        more_s: Some(400.0),
    }));
    let short = render(|w| text::write(&v, w, &report, "Thread", Style::Short, 80));
    assert!(
        short.contains("\n# Worst case: not projected: 60 blocks of 10 s are too few to fit"),
        "{short}"
    );
    let full = render(|w| text::write(&v, w, &report, "Thread", Style::Full, 80));
    assert!(
        full.contains("# Projection: refused (too_few_blocks): 60 blocks"),
        "{full}"
    );
    assert!(full.contains("#   run at least 7 min more\n"), "{full}");

    // Projected: the worst case and the deadline's rate, in 80 columns.
    v.projection = Some(projected());
    let short = render(|w| text::write(&v, w, &report, "Thread", Style::Short, 200));
    insta::assert_snapshot!("projected_short", short);
    assert!(
        short.contains("\n# Worst case: 1 h 142 us (95 % 120-190), 24 h 210 us (150-unbounded)\n"),
        "{short}"
    );
    assert!(
        short.contains("\n# Above 100 us: 3.1 per hour (95 % 1.2-6.4), one every 19 min\n"),
        "{short}"
    );
    assert!(short.lines().count() <= text::SHORT_LINES);
    let full = render(|w| text::write(&v, w, &report, "Thread", Style::Full, 80));
    insta::assert_snapshot!("projected_full", full);
    assert!(full.lines().all(|l| l.chars().count() <= 80), "{full}");
    assert!(
        full.contains("# Projection: GEV fit to block maxima"),
        "{full}"
    );
    assert!(
        full.contains("location 60 us, scale 8 us, shape 0.050"),
        "{full}"
    );
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["projection"]["outcome"], "projected");
    assert_eq!(
        json["projection"]["levels"][1]["max_ns"]["upper"],
        serde_json::Value::Null
    );

    // No blocks (a tool that keeps none): no projection, no duration for it.
    let v = Evidence {
        system: Some(&quiet_system()),
        request: Some(&request),
        ..Evidence::of(&report)
    }
    .judge();
    assert_eq!((v.projection.clone(), v.suggested_duration_s), (None, None));
}

#[test]
fn the_longest_horizon_projected_asks_for_the_longer_run() {
    let report = run(Resolution::Micros, vec![quiet_thread(0)]);
    let series = [blocks(20)];
    let judge = |horizons_s: Vec<f64>| {
        let request = Request {
            horizons_s,
            deadline_ns: None,
        };
        Evidence {
            blocks: &series,
            request: Some(&request),
            ..Evidence::of(&report)
        }
        .judge()
        .suggested_duration_s
    };
    let need = rtlat_stats::projection::needed_duration_s;
    assert_eq!(judge(vec![3_600.0]), Some(need(3_600.0)));
    assert_eq!(
        judge(vec![60.0, 7.0 * 86_400.0]),
        Some(need(7.0 * 86_400.0))
    );
    // A run already long enough for the horizon needs nothing more.
    let enough = |h: f64| (need(h) > 20.0).then(|| need(h));
    assert_eq!(judge(vec![300.0]), enough(300.0));
    assert_eq!(judge(vec![1.0]), enough(1.0));
}

#[test]
fn full_text_wraps_to_the_width_given() {
    let samples: Vec<i64> = (0..20_000).map(|i| 1000 + i % 20).collect();
    let mut t0 = thread(0, 20_000).distribution(&samples).build();
    t0.disturbances = Some(quiet_disturbances());
    let report = run(Resolution::Micros, vec![t0]);
    let v = Evidence {
        system: Some(&quiet_system()),
        ..Evidence::of(&report)
    }
    .judge();
    for width in [40, 80, 120] {
        let full = render(|w| text::write(&v, w, &report, "Thread", Style::Full, width));
        assert!(
            full.lines().all(|l| l.chars().count() <= width),
            "{width}: {full}"
        );
        assert!(
            full.lines().any(|l| l.starts_with("#     ")),
            "wrapped at {width}: {full}"
        );
    }
}

#[test]
fn a_horizon_beyond_the_run_says_how_much_longer_to_run() {
    let report = run(Resolution::Micros, vec![quiet_thread(0)]);
    let mut v = Evidence::of(&report).judge();
    let Projection::Projected(mut p) = projected() else {
        unreachable!()
    };
    p.levels.truncate(1);
    p.beyond = vec![rtlat_stats::projection::Beyond {
        horizon_s: 86_400.0,
        more_s: 26.4,
    }];
    v.projection = Some(Projection::Projected(p));
    let short = render(|w| text::write(&v, w, &report, "Thread", Style::Short, 80));
    assert!(
        short.contains("\n# Worst case: 1 h 142 us (95 % 120-190), 24 h: run 26.4 s more\n"),
        "{short}"
    );
    let full = render(|w| text::write(&v, w, &report, "Thread", Style::Full, 80));
    assert!(
        full.contains("#   worst case over 24 h: not projected: the run is too short, run 26.4"),
        "{full}"
    );
}
