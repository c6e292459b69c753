//! The outputs of `--explain`: the `# Explain` lines after the summary,
//! the JSON `"explain"` array and `"explain_events"` object, and the
//! `--explain-trace` file (the events behind each explanation, as text).
//!
//! Text, one block per explained sample, worst first:
//! ```text
//! # Explain: 2 samples of 5 offered, from 81234 kernel events on CPU 1, none lost
//! # Explain T:0 (4100) CPU 1: latency 312.4 us, due 2.500712 s into the run, woke 2.501024 s
//! #   thread_latency     298.1 us: task spin[4242] fifo 90 297.0 us, irq 24 virtio0 1.1 us
//! #   irq_latency          8.2 us: idle C1 (exit latency 2 us) 6.0 us, unattributed 2.2 us
//! #   ...
//! #   the components add up to the latency (within 2 us)
//! # Explain T:0 IRQ latency p50 2.1 us p99 6.0 us max 9.3 us; thread latency p50 ... (4998 wake-ups)
//! ```

use std::io::{self, Write};

use rtlat_args::escape::Escaped;
use rtlat_core::Distribution;
use rtlat_core::format_cpu_list;
use rtlat_explain::{Cause, Explanation, SUM_TOLERANCE_NS};
use rtlat_results::decimals::round_decimals;
use rtlat_results::explain::{
    CauseDto, ComponentDto, ExplainEventsDto, ExplanationDto, TraceWindowDto,
};

use super::sample_time::SampleInstants;
use crate::explain::outcome::ExplainOutcome;

/// How many causes a text line names (the JSON has them all).
const CAUSES_PER_LINE: usize = 4;

/// Writes the `# Explain` lines.
pub fn write_text(w: &mut impl Write, outcome: &ExplainOutcome) -> io::Result<()> {
    let report = &outcome.report;
    let cpus = format_cpu_list(&outcome.cpus);
    let lost = match (report.lost_events, report.lost_unknown) {
        (0, false) => "none lost".to_owned(),
        (n, false) => format!("{n} lost"),
        (n, true) => format!("at least {n} lost (the kernel did not count all)"),
    };
    writeln!(
        w,
        "# Explain: {} of {} samples offered, from {} kernel events on CPU {cpus}, {lost}",
        report.explanations.len(),
        report.candidates,
        report.events,
    )?;
    if let Some(e) = &outcome.read_error {
        let error = e.to_string();
        writeln!(
            w,
            "# Explain: reading the trace failed: {}",
            Escaped(&error)
        )?;
    }
    if outcome.candidates_missed > 0 {
        writeln!(
            w,
            "# Explain: {} offered samples were overwritten before the reader took them",
            outcome.candidates_missed
        )?;
    }
    for e in &report.explanations {
        write_explanation(w, e, outcome.run_start_ns)?;
    }
    for t in &report.latencies {
        let untraced = if t.untraced_switches > 0 {
            format!(
                "; {} more without a traced switch, in the IRQ latency only",
                t.untraced_switches
            )
        } else {
            String::new()
        };
        writeln!(
            w,
            "# Explain T:{} IRQ latency {}; thread latency {} ({} wake-ups{untraced})",
            t.thread,
            percentiles_text(&t.irq_latency),
            percentiles_text(&t.thread_latency),
            t.wakeups
        )?;
    }
    Ok(())
}

fn write_explanation(w: &mut impl Write, e: &Explanation, run_start_ns: i64) -> io::Result<()> {
    let cpu = e.cpu.map_or_else(|| "?".to_owned(), |c| c.to_string());
    writeln!(
        w,
        "# Explain T:{} ({}) CPU {cpu}: latency {} us, {}",
        e.thread,
        e.tid,
        micros(e.latency_ns),
        SampleInstants::DueWoke.text(e.deadline_ns - run_start_ns, e.wake_ns - run_start_ns)
    )?;
    // A latency longer than the trace window: what the window showed
    // first, each cause with its share of the window.
    let rows = e
        .window
        .iter()
        .map(|window| ("trace_window", window.span_ns(), &window.causes[..], true));
    let mut components: Vec<_> = e.components.iter().collect();
    components.sort_by_key(|c| std::cmp::Reverse(c.ns));
    let rows = rows.chain(
        components
            .into_iter()
            .map(|c| (c.name.as_str(), c.ns, &c.causes[..], false)),
    );
    for (name, ns, causes, shares) in rows {
        writeln!(
            w,
            "#   {:<18} {:>9} us: {}",
            name,
            micros(ns),
            causes_text(causes, shares.then_some(ns))
        )?;
    }
    if e.is_consistent() {
        writeln!(
            w,
            "#   the components add up to the latency (within {} us)",
            micros(SUM_TOLERANCE_NS)
        )?;
    } else {
        writeln!(
            w,
            "#   {} us of the latency is not explained",
            micros(e.unexplained_ns)
        )?;
    }
    if e.lost_events > 0 || e.lost_unknown {
        writeln!(
            w,
            "#   events were lost around this sample: {}{}",
            e.lost_events,
            if e.lost_unknown { " or more" } else { "" }
        )?;
    }
    for note in &e.notes {
        writeln!(w, "#   note: {}", Escaped(note))?;
    }
    Ok(())
}

/// The first [`CAUSES_PER_LINE`] causes, `task spin fifo 90 297.0 us,
/// irq 24 virtio0 1.1 us, 2 more`, or `-` without any; with `of_ns`, each
/// with its share of that time (`297.0 us (95.1 %)`).
fn causes_text(causes: &[Cause], of_ns: Option<i64>) -> String {
    if causes.is_empty() {
        return "-".to_owned();
    }
    let named: Vec<String> = causes
        .iter()
        .take(CAUSES_PER_LINE)
        .map(|cause| {
            // Task and IRQ names are anyone's choice: escaped, so that one
            // sample's block stays its own lines.
            let name = Escaped(&cause.name);
            let mut text = format!("{} {name}", cause.kind.as_str());
            if let (Some(policy), Some(priority)) = (&cause.policy, cause.priority) {
                text.push_str(&format!(" {policy} {priority}"));
            }
            match of_ns.filter(|&of| of > 0) {
                Some(of) => format!(
                    "{text} {} us ({:.1} %)",
                    micros(cause.ns),
                    cause.ns as f64 * 100.0 / of as f64
                ),
                None => format!("{text} {} us", micros(cause.ns)),
            }
        })
        .collect();
    match causes.len().saturating_sub(CAUSES_PER_LINE) {
        0 => named.join(", "),
        more => format!("{}, {more} more", named.join(", ")),
    }
}

/// `p50 2.1 us p99 6.0 us max 9.3 us`, or `none` without a sample.
fn percentiles_text(d: &Distribution) -> String {
    if d.count() == 0 {
        return "none".to_owned();
    }
    let at = |f: f64| {
        d.value_at(f)
            .map_or("-".to_owned(), |n| micros(n.as_nanos()))
    };
    format!(
        "p50 {} us p99 {} us max {} us",
        at(0.50),
        at(0.99),
        d.max().map_or("-".to_owned(), |n| micros(n.as_nanos()))
    )
}

/// ns as µs with one decimal, the unit of the `# Explain` lines.
pub(crate) fn micros(ns: i64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// Writes the `--explain-trace` text: for each explained sample, a header
/// and every event of its window, in time order.
pub fn write_trace(w: &mut impl Write, outcome: &ExplainOutcome) -> io::Result<()> {
    writeln!(
        w,
        "# rtlat --explain-trace: the kernel events behind each explained sample \
         (times: CLOCK_MONOTONIC seconds)"
    )?;
    for e in &outcome.report.explanations {
        writeln!(w)?;
        writeln!(
            w,
            "# T:{} ({}) latency {} us: deadline {} wake-up {}",
            e.thread,
            e.tid,
            micros(e.latency_ns),
            seconds(e.deadline_ns),
            seconds(e.wake_ns)
        )?;
        for event in &e.evidence {
            // One event one line, whatever its task and IRQ names hold.
            let line = event.display(&outcome.report.irq_names).to_string();
            writeln!(w, "{}", Escaped(&line))?;
        }
    }
    Ok(())
}

fn seconds(ns: i64) -> String {
    format!(
        "{}.{:09}",
        ns.div_euclid(1_000_000_000),
        ns.rem_euclid(1_000_000_000)
    )
}

/// The JSON `"explain"` array: each explained sample, worst first.
pub fn explanations(outcome: &ExplainOutcome) -> Vec<ExplanationDto<'_>> {
    outcome
        .report
        .explanations
        .iter()
        .map(|e| explanation(e, outcome.run_start_ns))
        .collect()
}

/// One explained sample, its times since `run_start_ns`.
fn explanation(e: &Explanation, run_start_ns: i64) -> ExplanationDto<'_> {
    ExplanationDto {
        thread: e.thread,
        cpu: e.cpu,
        latency_ns: e.latency_ns,
        at_ns: e.wake_ns - run_start_ns,
        components: e
            .components
            .iter()
            .map(|c| ComponentDto {
                name: c.name.as_str(),
                ns: c.ns,
                causes: c.causes.iter().map(cause).collect(),
            })
            .collect(),
        lost_events: e.lost_events,
        tid: e.tid,
        deadline_monotonic_ns: e.deadline_ns,
        wake_monotonic_ns: e.wake_ns,
        lost_events_uncounted: e.lost_unknown,
        window_short: e.window_short,
        unexplained_ns: e.unexplained_ns,
        complete: e.is_consistent(),
        notes: &e.notes,
        due_at_ns: e.deadline_ns - run_start_ns,
        trace_window: e.window.as_ref().map(|window| TraceWindowDto {
            cpu: window.cpu,
            from_ns: window.from_ns - run_start_ns,
            to_ns: window.to_ns - run_start_ns,
            causes: window.causes.iter().map(cause).collect(),
        }),
    }
}

fn cause(cause: &Cause) -> CauseDto<'_> {
    CauseDto {
        kind: cause.kind.as_str(),
        name: &cause.name,
        ns: cause.ns,
        pid: cause.pid,
        policy: cause.policy.as_deref(),
        priority: cause.priority,
    }
}

/// The JSON `"explain_events"` object: what the reader saw and what it
/// cost.
pub fn explain_events(outcome: &ExplainOutcome) -> ExplainEventsDto {
    let r = &outcome.report;
    ExplainEventsDto {
        events: r.events,
        lost_events: r.lost_events,
        lost_events_uncounted: r.lost_unknown,
        undecodable: r.undecodable,
        samples_offered: r.candidates,
        samples_explained: r.explanations.len() as u64,
        samples_missed: outcome.candidates_missed,
        reader_cpu_s: round_decimals(outcome.reader_cpu.as_secs_f64(), 6),
        reader_wall_s: round_decimals(outcome.reader_wall.as_secs_f64(), 6),
        read_error: outcome.read_error.clone(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rtlat_explain::events::{Comm, EventKind, IrqNames, KernelEvent};
    use rtlat_explain::{CauseKind, Component, ComponentName, ExplainReport, TraceWindow};
    use std::time::Duration;

    const HOSTILE: &str = "\x1b]0;OWNED\x07\nok  fake";

    /// One explained sample whose culprit task and IRQ carry hostile names.
    pub(crate) fn outcome() -> ExplainOutcome {
        let mut irq_names = IrqNames::new();
        irq_names.insert(24, HOSTILE);
        let comm = Comm::new(b"\x1b]0;OWN\x07\nok \xff");
        let explanation = Explanation {
            thread: 0,
            tid: 4242,
            cpu: Some(1),
            latency_ns: 300_000,
            deadline_ns: 1_000_000_000,
            wake_ns: 1_000_300_000,
            components: vec![Component {
                name: ComponentName::ThreadLatency,
                ns: 300_000,
                causes: vec![
                    Cause {
                        kind: CauseKind::Task,
                        name: format!("{HOSTILE}[77]"),
                        ns: 299_000,
                        pid: Some(77),
                        policy: Some("fifo".to_owned()),
                        priority: Some(99),
                    },
                    Cause {
                        kind: CauseKind::Irq,
                        name: format!("24 {HOSTILE}"),
                        ns: 1_000,
                        pid: None,
                        policy: None,
                        priority: None,
                    },
                ],
            }],
            unexplained_ns: 0,
            lost_events: 0,
            lost_unknown: false,
            window_short: false,
            window: None,
            notes: vec![format!("note {HOSTILE}")],
            evidence: vec![
                KernelEvent {
                    ts_ns: 1_000_000_000,
                    cpu: 1,
                    pid: 77,
                    kind: EventKind::IrqEntry { irq: 24 },
                },
                KernelEvent {
                    ts_ns: 1_000_200_000,
                    cpu: 1,
                    pid: 77,
                    kind: EventKind::Switch {
                        prev_comm: comm,
                        prev_pid: 77,
                        prev_prio: 0,
                        prev_state: 0,
                        next_comm: Comm::new(b"rtlat"),
                        next_pid: 4242,
                        next_prio: 4,
                    },
                },
            ],
        };
        ExplainOutcome {
            report: ExplainReport {
                explanations: vec![explanation],
                latencies: Vec::new(),
                events: 2,
                lost_events: 0,
                lost_unknown: false,
                undecodable: 0,
                out_of_order: 0,
                candidates: 1,
                candidates_explained: 1,
                irq_names,
            },
            candidates_missed: 0,
            reader_cpu: Duration::ZERO,
            reader_wall: Duration::ZERO,
            read_error: Some(format!("read {HOSTILE}")),
            cpus: vec![1],
            run_start_ns: 999_000_000,
        }
    }

    fn assert_harmless(text: &str, lines: usize) {
        assert!(!text.contains(['\x1b', '\x07']), "{text:?}");
        assert!(!text.lines().any(|l| l.starts_with("ok")), "{text}");
        assert_eq!(text.lines().count(), lines, "{text}");
    }

    #[test]
    fn names_from_the_trace_are_escaped_in_the_text() {
        let mut out = Vec::new();
        write_text(&mut out, &outcome()).unwrap();
        let text = String::from_utf8(out).unwrap();
        // Summary, read error, sample, one component, consistency, note.
        assert_harmless(&text, 6);
        assert!(text.lines().all(|l| l.starts_with('#')), "{text}");
        let escaped = r"\e]0;OWNED\x07\nok  fake";
        assert!(
            text.contains(&format!(
                "task {escaped}[77] fifo 99 299.0 us, irq 24 {escaped} 1.0 us"
            )),
            "{text}"
        );
        assert!(text.contains(&format!(
            "# Explain: reading the trace failed: read {escaped}\n"
        )));
        assert!(text.contains(&format!("#   note: note {escaped}\n")));
    }

    #[test]
    fn names_from_the_trace_are_escaped_in_the_trace_file() {
        let mut out = Vec::new();
        write_trace(&mut out, &outcome()).unwrap();
        let text = String::from_utf8(out).unwrap();
        // Header, blank, sample header, two events.
        assert_harmless(&text, 5);
        assert!(
            text.contains(r"irq=24 name=\e]0;OWNED\x07\nok  fake"),
            "{text}"
        );
        // The comm of the event, not UTF-8 at its end: lossy (as
        // everywhere a comm is shown), harmless.
        assert!(
            text.contains("prev=\\e]0;OWN\\x07\\nok \u{fffd}[77]"),
            "{text}"
        );
    }

    /// The issue's starved thread: woken on time, held off its CPU for
    /// 3 s by a FIFO 90 task, the window 1 s.
    fn starved() -> ExplainOutcome {
        let task = |name: &str, ns, pid, policy: &str, priority| Cause {
            kind: CauseKind::Task,
            name: name.to_owned(),
            ns,
            pid: Some(pid),
            policy: Some(policy.to_owned()),
            priority: Some(priority),
        };
        let untraced = |ns| Cause {
            kind: CauseKind::Untraced,
            name: "before the trace window".to_owned(),
            ns,
            pid: None,
            policy: None,
            priority: None,
        };
        let s = 1_000_000_000;
        let mut outcome = outcome();
        let e = &mut outcome.report.explanations[0];
        e.latency_ns = 3 * s + 10_000;
        e.deadline_ns = 2 * s;
        e.wake_ns = 5 * s + 10_000;
        e.components = vec![
            Component {
                name: ComponentName::IrqLatency,
                ns: 4_000,
                causes: vec![untraced(4_000)],
            },
            Component {
                name: ComponentName::ThreadLatency,
                ns: 3 * s + 2_000,
                causes: vec![
                    task("sh", 950_000_000, 77, "fifo", 90),
                    task("kworker/1:1", 50_000_000, 78, "other", 0),
                    untraced(2 * s + 2_000),
                ],
            },
            Component {
                name: ComponentName::ReturnToUser,
                ns: 4_000,
                causes: vec![],
            },
        ];
        e.window_short = true;
        e.window = Some(TraceWindow {
            cpu: 1,
            from_ns: 4 * s + 6_000,
            to_ns: 5 * s + 6_000,
            causes: vec![
                task("sh", 950_000_000, 77, "fifo", 90),
                task("kworker/1:1", 50_000_000, 78, "other", 0),
            ],
        });
        e.notes = vec!["the latency is longer than the trace window".to_owned()];
        outcome.run_start_ns = s;
        outcome.read_error = None;
        outcome
    }

    #[test]
    fn a_latency_longer_than_the_window_shows_the_window_first_with_shares() {
        let outcome = starved();
        let mut out = Vec::new();
        write_text(&mut out, &outcome).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "# Explain T:0 (4242) CPU 1: latency 3000010.0 us, due 1.000000 s into the run, \
             woke 4.000010 s"
        );
        assert_eq!(
            lines[2],
            "#   trace_window       1000000.0 us: task sh fifo 90 950000.0 us (95.0 %), \
             task kworker/1:1 other 0 50000.0 us (5.0 %)"
        );
        assert_eq!(
            lines[3],
            "#   thread_latency     3000002.0 us: task sh fifo 90 950000.0 us, \
             task kworker/1:1 other 0 50000.0 us, untraced before the trace window 2000002.0 us"
        );
        assert!(lines[4].starts_with("#   irq_latency "), "{text}");
        // The verdict's worst sample: the wait and what held the CPU in the
        // window, not a component of microseconds; placed in the same words.
        let worst = outcome.worst_sample().expect("a worst sample");
        assert_eq!(
            (
                worst.component,
                worst.cause.as_ref().map(|c| c.name.as_str())
            ),
            ("thread_latency", Some("sh"))
        );
        assert_eq!(
            (worst.due_at_ns, worst.at_ns),
            (1_000_000_000, 4_000_010_000)
        );
        assert_eq!(worst.window_ns, Some(1_000_000_000));
        let json = serde_json::to_value(explanations(&outcome)).unwrap();
        let first = &json[0];
        assert_eq!(first["due_at_ns"], 1_000_000_000);
        assert_eq!(first["at_ns"], 4_000_010_000_i64);
        assert_eq!(first["trace_window"]["from_ns"], 3_000_006_000_i64);
        assert_eq!(first["trace_window"]["causes"][0]["policy"], "fifo");
        assert_eq!(first["trace_window"]["causes"][0]["priority"], 90);
        // Without a window, no key.
        let plain = serde_json::to_value(explanations(&super::tests::outcome())).unwrap();
        assert!(plain[0].get("trace_window").is_none());
    }
}
