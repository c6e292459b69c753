//! Text that comes from the system or from an input file, made safe for a
//! terminal or a line-based output.
//!
//! Any local user names their own threads, and anyone who hands over a
//! result file chooses its labels. Written raw, such a name can move the
//! cursor, retitle the terminal (`ESC ] 0 ; ... BEL`), start a new line
//! that looks like one of ours (`\nok  fake`) or reorder what is shown
//! (the bidi overrides of "Trojan Source"). Every text writer therefore
//! passes such text through [`Escaped`] (or [`EscapedBytes`] for bytes
//! that may not be UTF-8), and every message on standard error does
//! ([`crate::stdio::write_note`]); JSON writers do not, since serde
//! escapes strings itself and keeps their exact characters.
//!
//! It lives here because this crate is what both binaries (`rtlat`,
//! `rtlat-plot`) share for their output ([`crate::stdio`]); the libraries
//! below (`rtlat-audit`, `rtlat-explain`, `rtlat-results`) keep the exact
//! text, and the writers escape it.
//!
//! What is escaped, and how:
//!
//! | text | written as |
//! |---|---|
//! | `\` | `\\` (so that every escape below is unambiguous) |
//! | ESC | `\e` |
//! | newline, carriage return, tab | `\n`, `\r`, `\t` |
//! | the other C0 controls and DEL | `\xNN` (`\x07` for BEL) |
//! | C1 controls (U+0080 to U+009F) | `\u{NN}` |
//! | bidi controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), line and paragraph separators (U+2028, U+2029) | `\u{NNNN}` |
//! | a byte that is not part of valid UTF-8 ([`EscapedBytes`]) | `\xNN` (always 80 to FF) |
//!
//! Everything else, `µs` and `ü` included, passes unchanged. The mapping
//! is injective: different texts never look the same once escaped.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

/// A `str` that displays escaped (see the module documentation).
///
/// ```
/// use rtlat_args::escape::Escaped;
/// let name = "\x1b]0;OWNED\x07\nok  fake";
/// assert_eq!(Escaped(name).to_string(), r"\e]0;OWNED\x07\nok  fake");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Escaped<'a>(pub &'a str);

/// Bytes that display as their UTF-8 text, escaped, with each byte that
/// is not valid UTF-8 as `\xNN` (a task name is 16 bytes, cut anywhere).
#[derive(Clone, Copy, Debug)]
pub struct EscapedBytes<'a>(pub &'a [u8]);

/// `text` escaped; borrowed when nothing needed escaping (the usual case).
pub fn escape(text: &str) -> Cow<'_, str> {
    if text.chars().any(needs_escape) {
        Cow::Owned(Escaped(text).to_string())
    } else {
        Cow::Borrowed(text)
    }
}

/// Whether `c` is written other than as itself.
fn needs_escape(c: char) -> bool {
    matches!(c,
        '\\'
        | '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{061c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

fn write_char(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    if !needs_escape(c) {
        return f.write_char(c);
    }
    match c {
        '\\' => f.write_str("\\\\"),
        '\u{1b}' => f.write_str("\\e"),
        '\n' => f.write_str("\\n"),
        '\r' => f.write_str("\\r"),
        '\t' => f.write_str("\\t"),
        '\u{0}'..='\u{1f}' | '\u{7f}' => write!(f, "\\x{:02x}", c as u32),
        _ => write!(f, "\\u{{{:x}}}", c as u32),
    }
}

fn write_str(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    // Runs without anything to escape go out in one piece.
    let mut rest = text;
    while let Some(at) = rest.find(needs_escape) {
        f.write_str(&rest[..at])?;
        let c = rest[at..].chars().next().expect("found at a char boundary");
        write_char(f, c)?;
        rest = &rest[at + c.len_utf8()..];
    }
    f.write_str(rest)
}

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_str(f, self.0)
    }
}

impl fmt::Display for EscapedBytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.0.utf8_chunks() {
            write_str(f, chunk.valid())?;
            for byte in chunk.invalid() {
                write!(f, "\\x{byte:02x}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn escaped(text: &str) -> String {
        Escaped(text).to_string()
    }

    #[test]
    fn the_hostile_task_name_becomes_one_harmless_line() {
        assert_eq!(
            escaped("\x1b]0;OWNED\x07\nok  fake"),
            r"\e]0;OWNED\x07\nok  fake"
        );
    }

    #[test]
    fn c0_controls_and_del() {
        assert_eq!(escaped("a\nb\rc\td"), r"a\nb\rc\td");
        assert_eq!(escaped("\x1b[2J"), r"\e[2J");
        assert_eq!(
            escaped("\0\x01\x07\x08\x0b\x0c\x1f"),
            r"\x00\x01\x07\x08\x0b\x0c\x1f"
        );
        assert_eq!(escaped("\x7f"), r"\x7f");
    }

    #[test]
    fn c1_controls() {
        // U+009B is CSI to terminals that take 8-bit controls.
        assert_eq!(escaped("\u{9b}31m\u{80}\u{85}"), r"\u{9b}31m\u{80}\u{85}");
    }

    #[test]
    fn bidi_controls_and_separators() {
        assert_eq!(
            escaped("a\u{202e}b\u{2066}c\u{2069}\u{200f}\u{061c}"),
            r"a\u{202e}b\u{2066}c\u{2069}\u{200f}\u{61c}"
        );
        for c in ('\u{202a}'..='\u{202e}').chain('\u{2066}'..='\u{2069}') {
            assert!(escaped(&c.to_string()).starts_with("\\u{"), "{c:?}");
        }
        assert_eq!(escaped("\u{2028}\u{2029}"), r"\u{2028}\u{2029}");
    }

    #[test]
    fn a_backslash_is_doubled() {
        assert_eq!(escaped(r"C:\temp\e"), r"C:\\temp\\e");
        // Not the same as an escaped ESC.
        assert_ne!(escaped("\\e"), escaped("\x1b"));
    }

    #[test]
    fn ordinary_text_passes_unchanged_and_borrowed() {
        for text in [
            "µs",
            "ü",
            "latency 12.3 µs on CPU 1",
            "kworker/0:1H",
            "日本",
            "🦀",
            "",
        ] {
            assert_eq!(escaped(text), text);
            assert!(matches!(escape(text), Cow::Borrowed(_)), "{text}");
        }
        assert!(matches!(escape("a\nb"), Cow::Owned(_)));
    }

    #[test]
    fn invalid_utf8_bytes_are_escaped_one_by_one() {
        assert_eq!(EscapedBytes(b"ok\xff\xfe").to_string(), r"ok\xff\xfe");
        // A name cut in the middle of a character (TASK_COMM_LEN).
        assert_eq!(
            EscapedBytes("aü".as_bytes()[..2].as_ref()).to_string(),
            r"a\xc3"
        );
        assert_eq!(EscapedBytes("µs\x1b".as_bytes()).to_string(), r"µs\e");
        // A raw C1 byte and the C1 character differ.
        assert_ne!(
            EscapedBytes(b"\x85").to_string(),
            EscapedBytes("\u{85}".as_bytes()).to_string()
        );
    }

    /// Reads an escaped text back; the inverse that makes the mapping
    /// injective.
    fn unescape(text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                continue;
            }
            match chars.next().expect("a complete escape") {
                '\\' => out.push(b'\\'),
                'e' => out.push(0x1b),
                'n' => out.push(b'\n'),
                'r' => out.push(b'\r'),
                't' => out.push(b'\t'),
                'x' => {
                    let hex: String = chars.by_ref().take(2).collect();
                    out.push(u8::from_str_radix(&hex, 16).unwrap());
                }
                'u' => {
                    assert_eq!(chars.next(), Some('{'));
                    let hex: String = chars.by_ref().take_while(|&c| c != '}').collect();
                    let c = char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap();
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                other => panic!("unknown escape \\{other}"),
            }
        }
        out
    }

    /// Characters that escaping must leave alone or change; weighted
    /// towards the interesting ones.
    fn hostile_char() -> impl Strategy<Value = char> {
        prop_oneof![
            any::<char>(),
            (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap()),
            (0x7fu32..0xa0).prop_map(|c| char::from_u32(c).unwrap()),
            (0x2026u32..0x2070).prop_map(|c| char::from_u32(c).unwrap()),
            Just('\\'),
            Just('e'),
            Just('x'),
            Just('u'),
        ]
    }

    fn no_controls(text: &str) -> bool {
        !text.chars().any(|c| needs_escape(c) && c != '\\')
    }

    proptest! {
        #[test]
        fn escaped_text_has_no_controls_and_reads_back(
            text in proptest::collection::vec(hostile_char(), 0..24)
                .prop_map(|chars| chars.into_iter().collect::<String>())
        ) {
            let out = escaped(&text);
            prop_assert!(no_controls(&out), "{out:?}");
            prop_assert_eq!(unescape(&out), text.as_bytes());
            prop_assert_eq!(escape(&text), out);
        }

        #[test]
        fn escaped_bytes_have_no_controls_and_read_back(
            bytes in proptest::collection::vec(any::<u8>(), 0..24)
        ) {
            let out = EscapedBytes(&bytes).to_string();
            prop_assert!(no_controls(&out), "{out:?}");
            prop_assert_eq!(unescape(&out), bytes);
        }
    }
}
