//! The tracefs binary decoder against pages recorded on a real machine (with
//! the text `trace` of the same buffer to cross-check every field), against
//! hand-built pages of each event-header kind, and against random bytes.

use proptest::prelude::*;
use rtlat_explain::trace::{
    EventFormat, FieldKind, FieldValue, LostEvents, PageError, PageHeaderLayout, TraceEvent,
    TracePage, TraceTicks,
};

mod common;
use common::*;

#[test]
fn header_page_of_this_machine() {
    let layout = recorded_layout();
    assert_eq!(layout.timestamp.offset_bytes, 0);
    assert_eq!(layout.timestamp.size_bytes, 8);
    assert_eq!(layout.commit.offset_bytes, 8);
    assert_eq!(layout.commit.size_bytes, 8);
    assert_eq!(layout.data.offset_bytes, 16);
    assert_eq!(layout.data.size_bytes, 4080);
    assert_eq!(layout.page_size_bytes(), 4096);
}

#[test]
fn header_event_of_this_machine_is_the_layout_decoded() {
    let text = fixture_text("header_event");
    let squeezed: Vec<String> = text
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    for expected in [
        "type_len : 5 bits",
        "time_delta : 27 bits",
        "padding : type == 29",
        "time_extend : type == 30",
        "time_stamp : type == 31",
        "data max type_len == 28",
    ] {
        assert!(
            squeezed.iter().any(|line| line == expected),
            "{expected:?} in {text}"
        );
    }
}

#[test]
fn event_formats_of_this_machine() {
    let formats = recorded_formats();
    let switch = formats.by_name("sched_switch").expect("sched_switch");
    assert_eq!(switch.id, 372);
    let names: Vec<&str> = switch.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "common_type",
            "common_flags",
            "common_preempt_count",
            "common_pid",
            "prev_comm",
            "prev_pid",
            "prev_prio",
            "prev_state",
            "next_comm",
            "next_pid",
            "next_prio"
        ]
    );
    let prev_comm = switch.field("prev_comm").expect("prev_comm");
    assert_eq!(
        (prev_comm.offset_bytes, prev_comm.size_bytes, prev_comm.kind),
        (8, 16, FieldKind::FixedString)
    );
    assert_eq!(prev_comm.declaration, "char[16]");
    let prev_state = switch.field("prev_state").expect("prev_state");
    assert_eq!(
        (
            prev_state.offset_bytes,
            prev_state.size_bytes,
            prev_state.kind
        ),
        (32, 8, FieldKind::Integer { signed: true })
    );
    let irq = formats
        .by_name("irq_handler_entry")
        .expect("irq_handler_entry");
    assert_eq!(irq.id, 225);
    assert_eq!(
        irq.field("name").expect("name").kind,
        FieldKind::DataLocString
    );
    let idle = formats.by_name("cpu_idle").expect("cpu_idle");
    assert_eq!(
        idle.field("state").expect("state").kind,
        FieldKind::Integer { signed: false }
    );
    assert_eq!(formats.by_id(223).expect("223").name, "softirq_entry");
}

#[test]
fn format_without_id_or_with_a_bad_line_is_refused() {
    assert!(EventFormat::parse("name: x\nformat:\n").is_err());
    assert!(EventFormat::parse("name: x\nID: many\n").is_err());
    let bad_offset = "name: x\nID: 3\n\tfield:int a;\toffset:q;\tsize:4;\tsigned:1;\n";
    assert!(EventFormat::parse(bad_offset).is_err());
    assert!(
        PageHeaderLayout::parse("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n")
            .is_err()
    );
}

/// Every event of every recorded page, with the page's lost events.
fn decode_recorded() -> (Vec<LostEvents>, Vec<TraceEvent<'static>>) {
    let layout = recorded_layout();
    let pages: &'static [u8] = Vec::leak(recorded_pages());
    let mut lost = Vec::new();
    let mut events = Vec::new();
    for bytes in pages.chunks(layout.page_size_bytes()) {
        let page = TracePage::parse(&layout, bytes).expect("recorded page header");
        lost.push(page.lost_events);
        for event in page.events() {
            events.push(event.expect("recorded event decodes"));
        }
    }
    (lost, events)
}

#[test]
fn recorded_pages_decode_into_increasing_known_events() {
    let formats = recorded_formats();
    let (lost, events) = decode_recorded();
    assert_eq!(lost.len(), 4);
    assert!(events.len() > 400, "{} events", events.len());
    for pair in events.windows(2) {
        assert!(pair[0].timestamp <= pair[1].timestamp, "{pair:?}");
    }
    for event in &events {
        assert!(formats.by_id(event.id).is_some(), "unknown id {}", event.id);
    }
    assert_eq!(events[0].timestamp, TraceTicks(11_684_232_038_201));
}

#[test]
fn first_recorded_page_reports_the_events_the_small_buffer_overwrote() {
    let (lost, _) = decode_recorded();
    eprintln!("lost before the first page: {:?}", lost[0]);
    assert!(
        matches!(lost[0], LostEvents::Count(count) if count > 0),
        "{lost:?}"
    );
    assert_eq!(&lost[1..], [LostEvents::None; 3]);
}

#[test]
fn every_recorded_event_matches_its_text_trace_line() {
    let formats = recorded_formats();
    let (_, events) = decode_recorded();
    let lines = parse_text_trace();
    assert_eq!(events.len(), lines.len());
    let mut fields_compared = 0;
    for (event, line) in events.iter().zip(&lines) {
        let format = formats.by_id(event.id).expect("known id");
        assert_eq!(format.name, line.event_name);
        // The text trace rounds to the nearest microsecond.
        assert_eq!(
            (event.timestamp.0 + 500) / 1000,
            line.microseconds,
            "{line:?}"
        );
        let common_pid = format.read(event.record, "common_pid").expect("common_pid");
        assert_eq!(common_pid.as_i64(), Some(line.pid), "{line:?}");
        for (key, text_value) in &line.arguments {
            let Some(field) = format.field(key) else {
                continue;
            };
            let value = field.read(event.record).expect("field reads");
            let decoded = match (key.as_str(), value) {
                ("prev_state", FieldValue::Signed(state)) => state_letters(state),
                ("ret", FieldValue::Signed(1)) => "handled".to_owned(),
                ("ret", FieldValue::Signed(0)) => "unhandled".to_owned(),
                (_, FieldValue::Text(bytes)) => String::from_utf8_lossy(bytes).into_owned(),
                (_, FieldValue::Signed(number)) => number.to_string(),
                (_, FieldValue::Unsigned(number)) => {
                    if field.declaration.contains('*') {
                        continue; // pointers print hashed
                    }
                    number.to_string()
                }
                (_, FieldValue::Bytes(_)) => continue,
            };
            let expected = if key == "target_cpu" {
                text_value.trim_start_matches('0').to_owned()
            } else {
                text_value.clone()
            };
            let decoded = if key == "target_cpu" && decoded == "0" {
                String::new()
            } else {
                decoded
            };
            assert_eq!(decoded, expected, "{key} of {line:?}");
            fields_compared += 1;
        }
    }
    assert!(fields_compared > 1000, "{fields_compared} fields compared");
    let names: Vec<&str> = lines.iter().map(|line| line.event_name.as_str()).collect();
    for name in [
        "sched_switch",
        "sched_waking",
        "irq_handler_entry",
        "softirq_entry",
        "cpu_idle",
        "hrtimer_expire_entry",
    ] {
        assert!(names.contains(&name), "no {name} in the fixture");
    }
}

#[test]
fn data_loc_string_of_an_irq_handler() {
    let formats = recorded_formats();
    let irq_entry = formats.by_name("irq_handler_entry").expect("format");
    let (_, events) = decode_recorded();
    let event = events
        .iter()
        .find(|event| event.id == irq_entry.id)
        .expect("an irq");
    let name = irq_entry.read(event.record, "name").expect("name");
    assert_eq!(name.as_text().as_deref(), Some("virtio0-reporting_vq"));
    assert_eq!(
        irq_entry.read(event.record, "irq").expect("irq").as_i64(),
        Some(32)
    );
}

// Hand-built pages, 4096 bytes with the layout of this machine.

const TEST_ID: u16 = 7;

fn header(type_len: u32, time_delta: u32) -> u32 {
    if cfg!(target_endian = "little") {
        type_len | (time_delta << 5)
    } else {
        (type_len << 27) | time_delta
    }
}

fn record_words(marker: u16) -> Vec<u32> {
    let mut record = [0u8; 8];
    record[..2].copy_from_slice(&TEST_ID.to_ne_bytes());
    record[4..6].copy_from_slice(&marker.to_ne_bytes());
    vec![
        u32::from_ne_bytes(record[..4].try_into().unwrap()),
        u32::from_ne_bytes(record[4..].try_into().unwrap()),
    ]
}

fn build_page(timestamp: u64, commit_flags: u64, words: &[u32], trailer: &[u8]) -> Vec<u8> {
    let mut page = vec![0u8; 4096];
    page[..8].copy_from_slice(&timestamp.to_ne_bytes());
    let data: Vec<u8> = words.iter().flat_map(|word| word.to_ne_bytes()).collect();
    let commit = data.len() as u64 | commit_flags;
    page[8..16].copy_from_slice(&commit.to_ne_bytes());
    page[16..16 + data.len()].copy_from_slice(&data);
    page[16 + data.len()..16 + data.len() + trailer.len()].copy_from_slice(trailer);
    page
}

fn decode(page: &[u8]) -> Result<Vec<(u64, u16)>, PageError> {
    let page = TracePage::parse(&recorded_layout(), page)?;
    page.events()
        .map(|event| {
            event.map(|event| {
                assert_eq!(event.id, TEST_ID);
                (
                    event.timestamp.0,
                    u16::from_ne_bytes(event.record[4..6].try_into().unwrap()),
                )
            })
        })
        .collect()
}

#[test]
fn hand_built_page_of_every_header_kind() {
    let mut words = vec![header(2, 10)];
    words.extend(record_words(1));
    // Time extend: 5 + (3 << 27).
    words.extend([header(30, 5), 3]);
    words.push(header(2, 1));
    words.extend(record_words(2));
    // Padding of 8 bytes after its header.
    words.extend([header(29, 1), 8, 0xdead_beef]);
    // Length in the next word: 8 record bytes + the word itself.
    words.extend([header(0, 4), 12]);
    words.extend(record_words(3));
    // Absolute stamp 2_000_000_000 = (14 << 27) + 120_951_808.
    words.extend([header(31, 120_951_808), 14]);
    words.push(header(2, 0));
    words.extend(record_words(4));
    let page = build_page(1_000, 0, &words, &[]);
    let base = 1_000 + 10;
    let extended = base + 5 + (3 << 27) + 1;
    assert_eq!(
        decode(&page).expect("decodes"),
        [
            (base, 1),
            (extended, 2),
            (extended + 4, 3),
            (2_000_000_000, 4)
        ]
    );
}

#[test]
fn length_word_that_is_not_a_multiple_of_four_keeps_the_next_event_aligned() {
    // 6 record bytes (id and a marker) + the length word itself: 10; the
    // record is stored in 8 bytes, as the kernel keeps every event aligned.
    let record = record_words(1);
    let mut words = vec![
        header(0, 2),
        10,
        record[0],
        record[1] & u32::from_ne_bytes([0xff, 0xff, 0, 0]),
    ];
    words.push(header(2, 3));
    words.extend(record_words(2));
    let page = build_page(0, 0, &words, &[]);
    let layout = recorded_layout();
    let decoded = TracePage::parse(&layout, &page).unwrap();
    let lengths: Vec<usize> = decoded
        .events()
        .map(|event| event.unwrap().record.len())
        .collect();
    assert_eq!(lengths, [6, 8]);
    assert_eq!(decode(&page).expect("decodes"), [(2, 1), (5, 2)]);
}

#[test]
fn padding_without_delta_ends_the_page() {
    let mut words = vec![header(2, 3)];
    words.extend(record_words(1));
    words.extend([header(29, 0), 0, header(2, 3)]);
    words.extend(record_words(2));
    let page = build_page(0, 0, &words, &[]);
    assert_eq!(decode(&page).expect("decodes"), [(3, 1)]);
}

#[test]
fn lost_events_flags_of_the_commit_word() {
    let mut words = vec![header(2, 0)];
    words.extend(record_words(1));
    let layout = recorded_layout();
    let none = build_page(0, 0, &words, &[]);
    assert_eq!(
        TracePage::parse(&layout, &none).unwrap().lost_events,
        LostEvents::None
    );
    let unknown = build_page(0, 1 << 31, &words, &[]);
    assert_eq!(
        TracePage::parse(&layout, &unknown).unwrap().lost_events,
        LostEvents::Unknown
    );
    // As the kernel writes it: a signed long, sign-extended.
    let counted = build_page(0, 0xffff_ffff_c000_0000, &words, &42u64.to_ne_bytes());
    let page = TracePage::parse(&layout, &counted).unwrap();
    assert_eq!(page.lost_events, LostEvents::Count(42));
    assert_eq!(page.data_length_bytes(), 12);
}

#[test]
fn truncated_and_corrupt_pages_are_errors() {
    let layout = recorded_layout();
    assert!(matches!(
        TracePage::parse(&layout, &[0u8; 10]),
        Err(PageError::TooShortForHeader { got: 10, .. })
    ));
    let mut too_long = build_page(0, 0, &[], &[]);
    too_long[8..16].copy_from_slice(&5000u64.to_ne_bytes());
    assert!(matches!(
        TracePage::parse(&layout, &too_long),
        Err(PageError::DataLengthBeyondPage { claimed: 5000, .. })
    ));
    // A page cut short after its header: the commit word claims more.
    let mut words = vec![header(2, 0)];
    words.extend(record_words(1));
    let whole = build_page(0, 0, &words, &[]);
    assert!(TracePage::parse(&layout, &whole[..20]).is_err());
    // A record claiming more words than the data holds.
    let overlong = build_page(0, 0, &[header(28, 0), 7], &[]);
    assert!(matches!(
        decode(&overlong),
        Err(PageError::EventBeyondData { offset: 0, .. })
    ));
    // A time extend without its second word.
    assert!(decode(&build_page(0, 0, &[header(30, 0)], &[])).is_err());
    // A length word too small to hold an id, and one beyond the data.
    assert!(matches!(
        decode(&build_page(0, 0, &[header(0, 0), 4], &[])),
        Err(PageError::BadLengthWord { length: 4, .. })
    ));
    assert!(decode(&build_page(0, 0, &[header(0, 0), 400, 0], &[])).is_err());
    // Padding past the end.
    assert!(decode(&build_page(0, 0, &[header(29, 1), 4000], &[])).is_err());
    // The walk stops at the first error.
    let page = TracePage::parse(&layout, &overlong).unwrap();
    assert_eq!(page.events().count(), 1);
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600), commit in 0u64..700) {
        let layout = recorded_layout();
        let formats = recorded_formats();
        let mut page = bytes.clone();
        if page.len() >= 16 {
            page[8..16].copy_from_slice(&commit.to_ne_bytes());
        }
        for candidate in [&bytes, &page] {
            if let Ok(page) = TracePage::parse(&layout, candidate) {
                for event in page.events().flatten() {
                    if let Some(format) = formats.by_id(event.id) {
                        for field in &format.fields {
                            let _ = field.read(event.record);
                        }
                    }
                    for format in EVENT_NAMES.iter().filter_map(|name| formats.by_name(name)) {
                        for field in &format.fields {
                            let _ = field.read(event.record);
                        }
                    }
                }
            }
        }
    }
}
