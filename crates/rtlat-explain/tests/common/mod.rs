//! Helpers shared by the tests that read the trace fixtures recorded on a
//! real machine: the format files, the binary pages and the text `trace` of
//! the same buffer.
#![allow(dead_code)] // each test file uses its own part

use rtlat_explain::trace::{EventFormat, EventFormats, PageHeaderLayout};

pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trace");
/// The events recorded in `cpu0-pages.bin`.
pub const EVENT_NAMES: [&str; 9] = [
    "sched_switch",
    "sched_waking",
    "irq_handler_entry",
    "irq_handler_exit",
    "softirq_entry",
    "softirq_exit",
    "hrtimer_expire_entry",
    "hrtimer_expire_exit",
    "cpu_idle",
];

pub fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).expect("fixture readable")
}

pub fn recorded_layout() -> PageHeaderLayout {
    PageHeaderLayout::parse(&fixture_text("header_page")).expect("header_page parses")
}

/// The formats of the events recorded in `cpu0-pages.bin`.
pub fn recorded_formats() -> EventFormats {
    formats_of(&EVENT_NAMES)
}

/// The formats of these events, from the fixtures (`<name>.format`).
pub fn formats_of(names: &[&str]) -> EventFormats {
    let mut formats = EventFormats::new();
    for name in names {
        let text = fixture_text(&format!("{name}.format"));
        formats.insert(EventFormat::parse(&text).expect("format parses"));
    }
    formats
}

pub fn recorded_pages() -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/cpu0-pages.bin")).expect("pages readable")
}

/// One event line of the text `trace`.
#[derive(Debug)]
pub struct TextLine {
    pub pid: i64,
    pub microseconds: u64,
    pub event_name: String,
    pub arguments: Vec<(String, String)>,
}

pub fn parse_text_trace() -> Vec<TextLine> {
    let text = fixture_text("cpu0-trace.txt");
    let mut lines = Vec::new();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let (task, rest) = line.split_once(" [000] ").expect("cpu column");
        let pid = task
            .trim()
            .rsplit_once('-')
            .expect("task-pid")
            .1
            .parse()
            .expect("pid");
        let mut words = rest.split_whitespace().skip(1);
        let time = words.next().expect("time").trim_end_matches(':');
        let (seconds, micros) = time.split_once('.').expect("seconds.micros");
        let microseconds =
            seconds.parse::<u64>().expect("s") * 1_000_000 + micros.parse::<u64>().expect("us");
        let event_name = words
            .next()
            .expect("event")
            .trim_end_matches(':')
            .to_owned();
        let arguments = words
            .filter_map(|word| word.split_once('='))
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect();
        lines.push(TextLine {
            pid,
            microseconds,
            event_name,
            arguments,
        });
    }
    lines
}

/// The letters the text trace prints for a task state.
pub fn state_letters(state: i64) -> String {
    let letters = [
        (1, 'S'),
        (2, 'D'),
        (4, 'T'),
        (8, 't'),
        (16, 'X'),
        (32, 'Z'),
        (64, 'P'),
        (128, 'I'),
    ];
    let named: String = letters
        .iter()
        .filter(|(bit, _)| state & bit != 0)
        .map(|(_, l)| l.to_string())
        .collect::<Vec<_>>()
        .join("|");
    if named.is_empty() {
        "R".to_owned()
    } else {
        named
    }
}
