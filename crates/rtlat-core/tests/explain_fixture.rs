//! The explain module on pages recorded on a real machine: every decoded
//! event against its line of the text `trace` of the same buffer, the
//! formats' required events and fields, and an explanation of a recorded
//! wake-up.

use rtlat_core::explain::events::{EventKind, LEAVING_IDLE, PageItem, softirq_name};
use rtlat_core::explain::{DecoderError, EventDecoder, KernelEvent};
use rtlat_core::trace::{EventFormat, EventFormats, LostEvents};

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

fn trace_event(record: &[u8], ts: u64) -> rtlat_core::trace::TraceEvent<'_> {
    let id = u16::from_ne_bytes([record[0], record[1]]);
    rtlat_core::trace::TraceEvent {
        timestamp: rtlat_core::trace::TraceTicks(ts),
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
            vector: rtlat_core::explain::Vector::CallFunctionSingle
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
