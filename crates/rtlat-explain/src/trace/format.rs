//! The layouts tracefs describes in text: an event's `format` file (its name,
//! its numeric id and where each field lies in the binary record) and
//! `events/header_page` (where a ring-buffer page keeps its time stamp, its
//! commit word and its data).
//!
//! Parsing only reads the text; reading the files is the caller's business,
//! so recorded copies parse the same way as the live ones.

use std::borrow::Cow;
use std::collections::HashMap;

/// A format text that does not say what this parser needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// A required line (`name:`, `ID:`, a header field) is absent.
    #[error("the format has no {0}")]
    Missing(&'static str),
    /// A line is there but its value does not parse.
    #[error("bad {what} in format line {line:?}")]
    Malformed {
        /// What was being read (`ID`, `offset`, `size`, ...).
        what: &'static str,
        /// The offending line.
        line: String,
    },
}

/// How a field's bytes are to be read, from its C declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer of 1, 2, 4 or 8 bytes.
    Integer {
        /// Whether the format says `signed:1`.
        signed: bool,
    },
    /// A fixed array of chars (`char comm[16]`): a string ending at the
    /// first NUL or at the end of the array.
    FixedString,
    /// A `__data_loc` string: the field is a u32 whose low 16 bits are the
    /// string's offset in the record and high 16 bits its length.
    DataLocString,
    /// A `__rel_loc` string: as `__data_loc`, but the offset counts from
    /// the end of the field itself.
    RelLocString,
    /// Anything else (other arrays, structures): read as raw bytes.
    Bytes,
}

/// One `field:` line of an event format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldFormat {
    /// The field's name (`prev_pid`, `comm`, `common_type`).
    pub name: String,
    /// Its C declaration without the name (`pid_t`, `char[16]`).
    pub declaration: String,
    /// Its position in the record, in bytes from the record's start.
    pub offset_bytes: usize,
    /// Its size in bytes.
    pub size_bytes: usize,
    /// How to read it.
    pub kind: FieldKind,
}

/// The value of one field of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValue<'a> {
    /// A signed integer, sign-extended.
    Signed(i64),
    /// An unsigned integer.
    Unsigned(u64),
    /// A string's bytes, without the terminating NUL.
    Text(&'a [u8]),
    /// Raw bytes of a field this reader does not interpret.
    Bytes(&'a [u8]),
}

impl<'a> FieldValue<'a> {
    /// The value as a signed integer, when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            FieldValue::Signed(value) => Some(value),
            FieldValue::Unsigned(value) => i64::try_from(value).ok(),
            FieldValue::Text(_) | FieldValue::Bytes(_) => None,
        }
    }

    /// The value as an unsigned integer, when it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            FieldValue::Signed(value) => u64::try_from(value).ok(),
            FieldValue::Unsigned(value) => Some(value),
            FieldValue::Text(_) | FieldValue::Bytes(_) => None,
        }
    }

    /// The value as text, when it is a string (invalid UTF-8 replaced).
    pub fn as_text(&self) -> Option<Cow<'a, str>> {
        match *self {
            FieldValue::Text(bytes) => Some(String::from_utf8_lossy(bytes)),
            _ => None,
        }
    }
}

/// A field that cannot be read from a given record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// The event's format has no field of that name.
    #[error("the event has no field {0:?}")]
    NoSuchField(String),
    /// The field (or the string it points to) lies beyond the record.
    #[error("field {0:?} lies beyond the record")]
    OutOfRecord(String),
    /// An integer field whose size is not 1, 2, 4 or 8 bytes.
    #[error("field {name:?} is an integer of {size_bytes} bytes")]
    UnsupportedSize {
        /// The field's name.
        name: String,
        /// Its size.
        size_bytes: usize,
    },
}

impl FieldFormat {
    /// Reads this field from a record (the event's payload, starting with
    /// `common_type`).
    pub fn read<'a>(&self, record: &'a [u8]) -> Result<FieldValue<'a>, FieldError> {
        let out_of_record = || FieldError::OutOfRecord(self.name.clone());
        let end = self
            .offset_bytes
            .checked_add(self.size_bytes)
            .ok_or_else(out_of_record)?;
        let bytes = record
            .get(self.offset_bytes..end)
            .ok_or_else(out_of_record)?;
        match self.kind {
            FieldKind::Integer { signed } => {
                read_native_integer(bytes, signed).ok_or_else(|| FieldError::UnsupportedSize {
                    name: self.name.clone(),
                    size_bytes: self.size_bytes,
                })
            }
            FieldKind::FixedString => Ok(FieldValue::Text(until_nul(bytes))),
            FieldKind::DataLocString => self.read_located_string(record, bytes, 0),
            FieldKind::RelLocString => self.read_located_string(record, bytes, end),
            FieldKind::Bytes => Ok(FieldValue::Bytes(bytes)),
        }
    }

    /// Reads the string a `__data_loc` or `__rel_loc` word points to: its
    /// low 16 bits are the offset from `base`, its high 16 bits the length.
    fn read_located_string<'a>(
        &self,
        record: &'a [u8],
        location_bytes: &[u8],
        base: usize,
    ) -> Result<FieldValue<'a>, FieldError> {
        let location = match read_native_integer(location_bytes, false) {
            Some(FieldValue::Unsigned(word)) if location_bytes.len() == 4 => word,
            _ => {
                return Err(FieldError::UnsupportedSize {
                    name: self.name.clone(),
                    size_bytes: self.size_bytes,
                });
            }
        };
        let string_start = base + (location & 0xffff) as usize;
        let string_length = (location >> 16) as usize;
        let string = record
            .get(string_start..string_start + string_length)
            .ok_or_else(|| FieldError::OutOfRecord(self.name.clone()))?;
        Ok(FieldValue::Text(until_nul(string)))
    }
}

fn until_nul(bytes: &[u8]) -> &[u8] {
    match bytes.iter().position(|&byte| byte == 0) {
        Some(end) => &bytes[..end],
        None => bytes,
    }
}

/// Reads an integer of 1, 2, 4 or 8 bytes in the host's byte order (the
/// ring buffer's order); `None` for any other size.
fn read_native_integer(bytes: &[u8], signed: bool) -> Option<FieldValue<'static>> {
    let value = match (bytes.len(), signed) {
        (1, true) => FieldValue::Signed(i8::from_ne_bytes([bytes[0]]).into()),
        (1, false) => FieldValue::Unsigned(bytes[0].into()),
        (2, true) => FieldValue::Signed(i16::from_ne_bytes(bytes.try_into().ok()?).into()),
        (2, false) => FieldValue::Unsigned(u16::from_ne_bytes(bytes.try_into().ok()?).into()),
        (4, true) => FieldValue::Signed(i32::from_ne_bytes(bytes.try_into().ok()?).into()),
        (4, false) => FieldValue::Unsigned(u32::from_ne_bytes(bytes.try_into().ok()?).into()),
        (8, true) => FieldValue::Signed(i64::from_ne_bytes(bytes.try_into().ok()?)),
        (8, false) => FieldValue::Unsigned(u64::from_ne_bytes(bytes.try_into().ok()?)),
        _ => return None,
    };
    Some(value)
}

/// One event's `format` file: its name, its id and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    /// The event's name (`sched_switch`).
    pub name: String,
    /// The id its records carry in `common_type`.
    pub id: u16,
    /// Every field, the common ones first, in the file's order.
    pub fields: Vec<FieldFormat>,
}

impl EventFormat {
    /// Parses the text of `events/<system>/<name>/format`.
    pub fn parse(text: &str) -> Result<EventFormat, FormatError> {
        let mut name = None;
        let mut id = None;
        let mut fields = Vec::new();
        for line in text.lines() {
            let trimmed = line.trim();
            if let Some(value) = trimmed.strip_prefix("name:") {
                name = Some(value.trim().to_owned());
            } else if let Some(value) = trimmed.strip_prefix("ID:") {
                let parsed = value
                    .trim()
                    .parse::<u16>()
                    .map_err(|_| FormatError::Malformed {
                        what: "ID",
                        line: line.to_owned(),
                    })?;
                id = Some(parsed);
            } else if trimmed.starts_with("field:") {
                fields.push(parse_field_line(line)?);
            }
        }
        Ok(EventFormat {
            name: name.ok_or(FormatError::Missing("name: line"))?,
            id: id.ok_or(FormatError::Missing("ID: line"))?,
            fields,
        })
    }

    /// The field of that name.
    pub fn field(&self, name: &str) -> Option<&FieldFormat> {
        self.fields.iter().find(|field| field.name == name)
    }

    /// Reads the field of that name from a record of this event.
    pub fn read<'a>(&self, record: &'a [u8], name: &str) -> Result<FieldValue<'a>, FieldError> {
        self.field(name)
            .ok_or_else(|| FieldError::NoSuchField(name.to_owned()))?
            .read(record)
    }
}

/// The parts of a `field:` line, before they are checked.
struct FieldLineParts<'a> {
    declaration: &'a str,
    offset: &'a str,
    size: &'a str,
    signed: Option<&'a str>,
}

fn split_field_line(line: &str) -> Option<FieldLineParts<'_>> {
    let mut declaration = None;
    let mut offset = None;
    let mut size = None;
    let mut signed = None;
    for part in line.split(';') {
        let part = part.trim();
        if let Some(value) = part.strip_prefix("field:") {
            declaration = Some(value.trim());
        } else if let Some(value) = part.strip_prefix("offset:") {
            offset = Some(value.trim());
        } else if let Some(value) = part.strip_prefix("size:") {
            size = Some(value.trim());
        } else if let Some(value) = part.strip_prefix("signed:") {
            signed = Some(value.trim());
        }
    }
    Some(FieldLineParts {
        declaration: declaration?,
        offset: offset?,
        size: size?,
        signed,
    })
}

fn parse_field_line(line: &str) -> Result<FieldFormat, FormatError> {
    let malformed = |what| FormatError::Malformed {
        what,
        line: line.to_owned(),
    };
    let parts = split_field_line(line).ok_or_else(|| malformed("field"))?;
    let offset_bytes = parts.offset.parse().map_err(|_| malformed("offset"))?;
    let size_bytes = parts.size.parse().map_err(|_| malformed("size"))?;
    let signed = match parts.signed {
        None | Some("0") => false,
        Some("1") => true,
        Some(_) => return Err(malformed("signed")),
    };
    let (declaration, name) =
        split_declaration(parts.declaration).ok_or_else(|| malformed("field"))?;
    let kind = if declaration.starts_with("__data_loc") {
        FieldKind::DataLocString
    } else if declaration.starts_with("__rel_loc") {
        FieldKind::RelLocString
    } else if declaration.ends_with(']') {
        if declaration.starts_with("char[") || declaration.starts_with("const char[") {
            FieldKind::FixedString
        } else {
            FieldKind::Bytes
        }
    } else if matches!(size_bytes, 1 | 2 | 4 | 8) {
        FieldKind::Integer { signed }
    } else {
        FieldKind::Bytes
    };
    Ok(FieldFormat {
        name,
        declaration,
        offset_bytes,
        size_bytes,
        kind,
    })
}

/// Splits `char prev_comm[16]` into (`char[16]`, `prev_comm`) and
/// `__data_loc char[] name` into (`__data_loc char[]`, `name`).
fn split_declaration(declaration: &str) -> Option<(String, String)> {
    let (type_part, last_word) = declaration.trim().rsplit_once(char::is_whitespace)?;
    let (name, array_suffix) = match last_word.find('[') {
        Some(bracket) => last_word.split_at(bracket),
        None => (last_word, ""),
    };
    let name = name.trim_start_matches('*');
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    Some((
        format!("{}{}", type_part.trim(), array_suffix),
        name.to_owned(),
    ))
}

/// Where one part of a ring-buffer page lies, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSpan {
    /// From the page's start.
    pub offset_bytes: usize,
    /// Its size.
    pub size_bytes: usize,
}

/// The page header's layout, from `events/header_page`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageHeaderLayout {
    /// The page's time stamp (the first event's base), a u64.
    pub timestamp: PageSpan,
    /// The commit word: data length in its low bits, lost-events flags above.
    pub commit: PageSpan,
    /// Where the events start, and the most room they may take.
    pub data: PageSpan,
}

impl PageHeaderLayout {
    /// Parses the text of `events/header_page`.
    pub fn parse(text: &str) -> Result<PageHeaderLayout, FormatError> {
        let mut timestamp = None;
        let mut commit = None;
        let mut data = None;
        for line in text
            .lines()
            .filter(|line| line.trim().starts_with("field:"))
        {
            let field = parse_field_line(line)?;
            let span = PageSpan {
                offset_bytes: field.offset_bytes,
                size_bytes: field.size_bytes,
            };
            match field.name.as_str() {
                "timestamp" => timestamp = Some(span),
                "commit" => commit = Some(span),
                "data" => data = Some(span),
                _ => {}
            }
        }
        let layout = PageHeaderLayout {
            timestamp: timestamp.ok_or(FormatError::Missing("timestamp field"))?,
            commit: commit.ok_or(FormatError::Missing("commit field"))?,
            data: data.ok_or(FormatError::Missing("data field"))?,
        };
        let malformed = |what| FormatError::Malformed {
            what,
            line: text.to_owned(),
        };
        if layout.timestamp.size_bytes != 8 {
            return Err(malformed("timestamp size"));
        }
        if !matches!(layout.commit.size_bytes, 4 | 8) {
            return Err(malformed("commit size"));
        }
        Ok(layout)
    }

    /// The size of a whole page (header and data), as `trace_pipe_raw`
    /// hands them out.
    pub fn page_size_bytes(&self) -> usize {
        self.data.offset_bytes + self.data.size_bytes
    }
}

/// The formats of the events a trace holds, looked up by id.
#[derive(Debug, Clone, Default)]
pub struct EventFormats {
    by_id: HashMap<u16, EventFormat>,
}

impl EventFormats {
    /// No formats yet.
    pub fn new() -> EventFormats {
        EventFormats::default()
    }

    /// Adds (or replaces) the format of one event.
    pub fn insert(&mut self, format: EventFormat) {
        self.by_id.insert(format.id, format);
    }

    /// The format of the events with that id.
    pub fn by_id(&self, id: u16) -> Option<&EventFormat> {
        self.by_id.get(&id)
    }

    /// The format of the event of that name.
    pub fn by_name(&self, name: &str) -> Option<&EventFormat> {
        self.by_id.values().find(|format| format.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_field(line: &str) -> FieldFormat {
        let text = format!("name: test\nID: 9\nformat:\n{line}\n");
        let mut format = EventFormat::parse(&text).expect("parses");
        format.fields.remove(0)
    }

    #[test]
    fn declarations_split_into_type_and_name() {
        let pointer = one_field("\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;");
        assert_eq!(
            (pointer.name.as_str(), pointer.declaration.as_str()),
            ("hrtimer", "void *")
        );
        assert_eq!(pointer.kind, FieldKind::Integer { signed: false });
        let bytes = one_field("\tfield:u8 mac[6];\toffset:8;\tsize:6;\tsigned:0;");
        assert_eq!((bytes.name.as_str(), bytes.kind), ("mac", FieldKind::Bytes));
        let odd = one_field("\tfield:struct pair p;\toffset:8;\tsize:12;\tsigned:0;");
        assert_eq!(odd.kind, FieldKind::Bytes);
    }

    #[test]
    fn relative_location_counts_from_the_end_of_the_field() {
        let field = one_field("\tfield:__rel_loc char[] msg;\toffset:8;\tsize:4;\tsigned:0;");
        assert_eq!(field.kind, FieldKind::RelLocString);
        let mut record = vec![0u8; 12];
        // Offset 2 after the field's end (byte 12), length 3 with the NUL.
        record[8..12].copy_from_slice(&(2u32 | (3 << 16)).to_ne_bytes());
        record.extend_from_slice(b"..hi\0");
        assert_eq!(field.read(&record), Ok(FieldValue::Text(b"hi")));
        record.truncate(14);
        assert!(matches!(
            field.read(&record),
            Err(FieldError::OutOfRecord(_))
        ));
    }

    #[test]
    fn integers_of_each_size_and_sign() {
        let signed = one_field("\tfield:short s;\toffset:0;\tsize:2;\tsigned:1;");
        assert_eq!(
            signed.read(&(-3i16).to_ne_bytes()),
            Ok(FieldValue::Signed(-3))
        );
        let unsigned = one_field("\tfield:u64 u;\toffset:0;\tsize:8;\tsigned:0;");
        assert_eq!(
            unsigned.read(&u64::MAX.to_ne_bytes()),
            Ok(FieldValue::Unsigned(u64::MAX))
        );
        assert_eq!(FieldValue::Unsigned(u64::MAX).as_i64(), None);
        assert_eq!(FieldValue::Signed(-1).as_u64(), None);
        let byte = one_field("\tfield:char c;\toffset:1;\tsize:1;\tsigned:1;");
        assert_eq!(byte.read(&[0, 0xff]), Ok(FieldValue::Signed(-1)));
        assert!(byte.read(&[0]).is_err());
    }
}
