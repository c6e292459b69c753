//! The explain module on pages recorded on a real machine: every decoded
//! event against its line of the text `trace` of the same buffer, the
//! formats' required events and fields, and an explanation of a recorded
//! wake-up.

use rtlat_core::DistributionPlan;
use rtlat_core::Nanos;
use rtlat_explain::events::{EventKind, LEAVING_IDLE, PageItem, softirq_name};
use rtlat_explain::trace::{EventFormat, EventFormats, LostEvents};
use rtlat_explain::{
    DecoderError, EventDecoder, ExplainConfig, ExplainContext, Explainer, KernelEvent, Sample,
};

mod common;
use common::*;

/// The recorded events' formats, and `hrtimer_start` (required, but not
/// recorded in the pages).
fn decoder_formats() -> EventFormats {
    let mut names = EVENT_NAMES.to_vec();
    names.push("hrtimer_start");
    formats_of(&names)
}

/// Every recorded page decoded, with the losses reported.
fn decode_recorded_pages(decoder: &mut EventDecoder) -> (Vec<PageItem>, Vec<KernelEvent>) {
    let layout = recorded_layout();
    let pages = recorded_pages();
    let mut losses = Vec::new();
    let mut events = Vec::new();
    for page in pages.chunks(layout.page_size_bytes()) {
        decoder
            .decode_page(0, &layout, page, |item| match item {
                PageItem::Event(event) => events.push(event),
                lost @ PageItem::Lost { .. } => losses.push(lost),
            })
            .expect("recorded page decodes");
    }
    (losses, events)
}

fn argument<'a>(line: &'a TextLine, key: &str) -> &'a str {
    line.arguments
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.as_str())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

fn number<T: std::str::FromStr>(line: &TextLine, key: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    argument(line, key).parse().expect("a number")
}

#[test]
fn every_recorded_event_decodes_as_its_text_line_says() {
    let mut decoder = EventDecoder::new(&decoder_formats()).expect("decoder");
    let (losses, events) = decode_recorded_pages(&mut decoder);
    let lines = parse_text_trace();
    assert_eq!(events.len(), lines.len());
    assert_eq!(decoder.undecodable(), 0);
    assert!(matches!(
        losses.as_slice(),
        [PageItem::Lost {
            cpu: 0,
            lost: LostEvents::Count(lost),
            page_ts_ns: 11_684_232_038_201,
        }] if *lost > 0
    ));
    let mut compared = 0;
    for (event, line) in events.iter().zip(&lines) {
        assert_eq!(event.name(), line.event_name, "{line:?}");
        assert_eq!((event.ts_ns as u64 + 500) / 1000, line.microseconds);
        assert_eq!(i64::from(event.pid), line.pid, "{line:?}");
        assert_eq!(event.cpu, 0);
        match event.kind {
            EventKind::HrtimerExpireEntry { now_ns, .. } => {
                assert_eq!(now_ns, number::<i64>(line, "now"));
            }
            EventKind::HrtimerExpireExit { .. } => {}
            EventKind::CpuIdle { state } => assert_eq!(state, number::<u32>(line, "state")),
            EventKind::Waking {
                pid,
                comm,
                prio,
                target_cpu,
            } => {
                assert_eq!(comm.to_string(), argument(line, "comm"));
                assert_eq!(pid, number::<i32>(line, "pid"));
                assert_eq!(prio, number::<i32>(line, "prio"));
                assert_eq!(target_cpu, number::<i32>(line, "target_cpu"));
            }
            EventKind::Switch {
                prev_comm,
                prev_pid,
                prev_prio,
                prev_state,
                next_comm,
                next_pid,
                next_prio,
            } => {
                assert_eq!(prev_comm.to_string(), argument(line, "prev_comm"));
                assert_eq!(prev_pid, number::<i32>(line, "prev_pid"));
                assert_eq!(prev_prio, number::<i32>(line, "prev_prio"));
                assert_eq!(state_letters(prev_state), argument(line, "prev_state"));
                assert_eq!(next_comm.to_string(), argument(line, "next_comm"));
                assert_eq!(next_pid, number::<i32>(line, "next_pid"));
                assert_eq!(next_prio, number::<i32>(line, "next_prio"));
            }
            EventKind::IrqEntry { irq } => {
                assert_eq!(irq, number::<i32>(line, "irq"));
                assert_eq!(
                    decoder.irq_names().lookup(irq),
                    Some(argument(line, "name"))
                );
            }
            EventKind::IrqExit { irq } => assert_eq!(irq, number::<i32>(line, "irq")),
            EventKind::SoftirqEntry { vec } | EventKind::SoftirqExit { vec } => {
                assert_eq!(vec, number::<u32>(line, "vec"));
                let action = format!("{}]", softirq_name(vec).expect("known vector"));
                assert_eq!(argument(line, "[action"), action);
            }
            other => panic!("{other:?} is not in the recorded trace"),
        }
        compared += 1;
    }
    assert_eq!(compared, lines.len());
    let kinds = |wanted: fn(&EventKind) -> bool| events.iter().filter(|e| wanted(&e.kind)).count();
    assert!(kinds(|kind| matches!(kind, EventKind::Switch { .. })) > 50);
    assert!(kinds(|kind| matches!(kind, EventKind::IrqEntry { .. })) >= 1);
    assert!(
        kinds(|kind| matches!(
            kind,
            EventKind::CpuIdle {
                state: LEAVING_IDLE
            }
        )) > 50
    );
}

#[test]
fn recorded_events_read_as_one_line_each() {
    let mut decoder = EventDecoder::new(&decoder_formats()).expect("decoder");
    let (_, events) = decode_recorded_pages(&mut decoder);
    let names = decoder.irq_names();
    let shown: Vec<String> = events
        .iter()
        .map(|event| event.display(names).to_string())
        .collect();
    let first_switch = shown
        .iter()
        .find(|line| line.contains("sched_switch"))
        .expect("a switch");
    assert_eq!(
        first_switch,
        "11684.232225049 [000] 0 sched_switch: prev=swapper/0[0] prio=120 state=R ==> \
         next=rtlat-t0[31294] prio=19"
    );
    let irq = shown
        .iter()
        .find(|line| line.contains("irq_handler_entry"))
        .expect("an irq");
    assert!(
        irq.ends_with("irq_handler_entry: irq=32 name=virtio0-reporting_vq"),
        "{irq}"
    );
    assert!(shown.iter().all(|line| !line.contains('\n')));
}

#[test]
fn a_required_event_or_field_missing_is_named() {
    let formats = recorded_formats();
    assert_eq!(
        EventDecoder::new(&formats).err(),
        Some(DecoderError::MissingEvent {
            event: "hrtimer_start"
        })
    );
    let mut formats = decoder_formats();
    let waking = fixture_text("sched_waking.format")
        .lines()
        .filter(|line| !line.contains(" target_cpu;"))
        .collect::<Vec<_>>()
        .join("\n");
    formats.insert(EventFormat::parse(&waking).expect("parses"));
    let error = EventDecoder::new(&formats).expect_err("target_cpu missing");
    assert_eq!(
        error,
        DecoderError::MissingField {
            event: "sched_waking",
            field: "target_cpu"
        }
    );
    assert_eq!(
        error.to_string(),
        "the format of event 'sched_waking' has no field 'target_cpu'"
    );
    let mut formats = decoder_formats();
    let switch =
        fixture_text("sched_switch.format").replace("char next_comm[16]", "u8 next_comm[16]");
    formats.insert(EventFormat::parse(&switch).expect("parses"));
    assert!(matches!(
        EventDecoder::new(&formats),
        Err(DecoderError::FieldType {
            event: "sched_switch",
            field: "next_comm",
            ..
        })
    ));
}

#[test]
fn optional_events_are_decoded_where_their_formats_are() {
    let mut names = EVENT_NAMES.to_vec();
    names.extend([
        "hrtimer_start",
        "nmi_handler",
        "local_timer_entry",
        "irq_work_exit",
    ]);
    let formats = formats_of(&names);
    let decoder = EventDecoder::new(&formats).expect("decoder");
    let absent = decoder.optional_absent();
    assert!(!absent.contains(&"nmi_handler"));
    assert!(!absent.contains(&"local_timer_entry"));
    assert!(absent.contains(&"reschedule_entry"));
    assert!(absent.contains(&"ipi_entry"));
}

/// A record of `event` with these integer fields set, laid out as its
/// fixture format says.
fn build_record(formats: &EventFormats, event: &str, pid: i32, fields: &[(&str, i64)]) -> Vec<u8> {
    let format = formats.by_name(event).expect("format");
    let size = format
        .fields
        .iter()
        .map(|field| field.offset_bytes + field.size_bytes)
        .max()
        .expect("fields");
    let mut record = vec![0u8; size];
    let mut put = |name: &str, value: i64| {
        let field = format.field(name).expect("field");
        let bytes = value.to_ne_bytes();
        let range = field.offset_bytes..field.offset_bytes + field.size_bytes;
        if cfg!(target_endian = "little") {
            record[range].copy_from_slice(&bytes[..field.size_bytes]);
        } else {
            record[range].copy_from_slice(&bytes[8 - field.size_bytes..]);
        }
    };
    put("common_type", i64::from(format.id));
    put("common_pid", i64::from(pid));
    for (name, value) in fields {
        put(name, *value);
    }
    record
}

fn trace_event(record: &[u8], ts: u64) -> rtlat_explain::trace::TraceEvent<'_> {
    let id = u16::from_ne_bytes([record[0], record[1]]);
    rtlat_explain::trace::TraceEvent {
        timestamp: rtlat_explain::trace::TraceTicks(ts),
        id,
        record,
    }
}

#[test]
fn hand_built_records_of_the_events_not_recorded() {
    let mut names = EVENT_NAMES.to_vec();
    names.extend([
        "hrtimer_start",
        "nmi_handler",
        "local_timer_exit",
        "call_function_single_entry",
    ]);
    let formats = formats_of(&names);
    let mut decoder = EventDecoder::new(&formats).expect("decoder");
    let start = build_record(
        &formats,
        "hrtimer_start",
        4242,
        &[
            ("hrtimer", 0x1000),
            ("function", 0x2000),
            ("expires", 5_000_050),
            ("softexpires", 5_000_000),
        ],
    );
    assert_eq!(
        decoder.decode(1, &trace_event(&start, 4_000_000)),
        Some(KernelEvent {
            ts_ns: 4_000_000,
            cpu: 1,
            pid: 4242,
            kind: EventKind::HrtimerStart {
                timer: 0x1000,
                function: 0x2000,
                expires_ns: 5_000_050,
                softexpires_ns: 5_000_000
            }
        })
    );
    let nmi = build_record(
        &formats,
        "nmi_handler",
        0,
        &[
            ("handler", 0xffff_ffff_8100_0000u64 as i64),
            ("delta_ns", 1_234),
        ],
    );
    let decoded = decoder.decode(0, &trace_event(&nmi, 9)).expect("nmi");
    assert_eq!(
        decoded.kind,
        EventKind::Nmi {
            handler: 0xffff_ffff_8100_0000,
            delta_ns: 1_234
        }
    );
    let vector = build_record(
        &formats,
        "call_function_single_entry",
        7,
        &[("vector", 251)],
    );
    assert_eq!(
        decoder.decode(0, &trace_event(&vector, 9)).map(|e| e.kind),
        Some(EventKind::VectorEntry {
            vector: rtlat_explain::Vector::CallFunctionSingle
        })
    );
    let timer_exit = build_record(&formats, "local_timer_exit", 7, &[("vector", 236)]);
    let shown = decoder
        .decode(0, &trace_event(&timer_exit, 1_000_000_007))
        .expect("decodes")
        .display(decoder.irq_names())
        .to_string();
    assert_eq!(shown, "1.000000007 [000] 7 local_timer_exit:");
    assert_eq!(decoder.undecodable(), 0);
    // Cut short: the start's softexpires lies past the end.
    assert_eq!(decoder.decode(0, &trace_event(&start[..36], 1)), None);
    // An id no known event has.
    let mut unknown = start.clone();
    unknown[..2].copy_from_slice(&9_999u16.to_ne_bytes());
    assert_eq!(decoder.decode(0, &trace_event(&unknown, 1)), None);
    assert_eq!(decoder.undecodable(), 2);
}

/// The measured thread of the recording.
const RECORDED_TID: i32 = 31_294;

#[test]
fn recorded_wake_ups_explained_from_the_pages() {
    let formats = decoder_formats();
    let layout = recorded_layout();
    let plan = DistributionPlan::new(1_000, Nanos::from_micros(2_000)).expect("plan");
    let config = ExplainConfig {
        keep: 3,
        window_ns: 1_000_000_000,
        give_up_ns: 200_000_000,
    };
    let mut explainer = Explainer::new(
        EventDecoder::new(&formats).expect("decoder"),
        layout,
        &[0],
        &[(0, RECORDED_TID, 1_000_000)],
        plan,
        config,
    );
    for page in recorded_pages().chunks(layout.page_size_bytes()) {
        explainer.feed_page(0, page).expect("page");
    }
    explainer.end_of_batch();

    // Samples built from the recorded wake-ups: the deadline 3 µs before
    // the timer's handler, the clock read 2 µs after the switch in.
    let mut decoder = EventDecoder::new(&formats).expect("decoder");
    let (_, events) = decode_recorded_pages(&mut decoder);
    let mut samples = Vec::new();
    for (index, event) in events.iter().enumerate() {
        let EventKind::HrtimerExpireEntry { .. } = event.kind else {
            continue;
        };
        let wakes_ours = matches!(
            events.get(index + 1).map(|e| e.kind),
            Some(EventKind::Waking {
                pid: RECORDED_TID,
                ..
            })
        );
        let switch_in = events[index..].iter().find(|e| {
            matches!(
                e.kind,
                EventKind::Switch {
                    next_pid: RECORDED_TID,
                    ..
                }
            )
        });
        if let (true, Some(switch_in)) = (wakes_ours, switch_in) {
            let deadline_ns = event.ts_ns - 3_000;
            let wake_ns = switch_in.ts_ns + 2_000;
            samples.push(Sample {
                thread: 0,
                tid: RECORDED_TID,
                deadline_ns,
                wake_ns,
                latency_ns: wake_ns - deadline_ns,
            });
        }
    }
    assert!(samples.len() > 20, "{} wake-ups", samples.len());
    for sample in &samples {
        explainer.offer(*sample);
    }
    let report = explainer.finish(&ExplainContext::events_only());
    assert_eq!(report.events, events.len() as u64);
    assert!(report.lost_events > 0);
    assert_eq!(report.undecodable, 0);
    assert_eq!(report.explanations.len(), 3);
    let mut worst: Vec<i64> = samples.iter().map(|s| s.latency_ns).collect();
    worst.sort_unstable_by(|a, b| b.cmp(a));
    let explained: Vec<i64> = report.explanations.iter().map(|e| e.latency_ns).collect();
    assert_eq!(explained, worst[..3]);
    for explanation in &report.explanations {
        assert!(explanation.is_consistent(), "{explanation:#?}");
        assert_eq!(explanation.unexplained_ns, 0);
        assert_eq!(explanation.components[0].ns, 3_000);
        assert_eq!(explanation.components[3].ns, 2_000);
        assert!(!explanation.window_short);
        assert_eq!(explanation.cpu, Some(0));
        for component in &explanation.components {
            let causes: i64 = component.causes.iter().map(|cause| cause.ns).sum();
            assert_eq!(causes, component.ns.max(0), "{component:?}");
        }
        let first = explanation.evidence.first().expect("evidence");
        assert!(first.ts_ns >= explanation.deadline_ns - 100_000);
        assert!(explanation.evidence.iter().any(|event| matches!(
            event.kind,
            EventKind::Waking {
                pid: RECORDED_TID,
                ..
            }
        )));
    }
}

#[test]
fn decoding_allocates_nothing_once_the_irq_names_are_known() {
    let mut decoder = EventDecoder::new(&decoder_formats()).expect("decoder");
    let layout = recorded_layout();
    let pages = recorded_pages();
    let decode_all = |decoder: &mut EventDecoder| {
        let mut decoded = 0u64;
        for page in pages.chunks(layout.page_size_bytes()) {
            decoder
                .decode_page(0, &layout, page, |item| {
                    if let PageItem::Event(_) = item {
                        decoded += 1;
                    }
                })
                .expect("page");
        }
        decoded
    };
    let first = allocation_counter::measure(|| {
        decode_all(&mut decoder);
    });
    assert!(first.count_total > 0, "the IRQ's name is stored once");
    let mut decoded = 0;
    let again = allocation_counter::measure(|| {
        decoded = decode_all(&mut decoder);
    });
    assert!(decoded > 500);
    assert_eq!(again.count_total, 0);
}
