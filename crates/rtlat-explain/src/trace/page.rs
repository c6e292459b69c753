//! One ring-buffer page as `per_cpu/cpuN/trace_pipe_raw` hands it out,
//! decoded into events: each one's absolute time stamp, its event id and its
//! record (the bytes the event's format describes).
//!
//! A page is a header (a u64 time stamp, a commit word holding the data
//! length and the lost-events flags) and then events, each behind a 32-bit
//! header: a 5-bit `type_len` and a 27-bit `time_delta`. `type_len` 1 to 28
//! is a record of that many 4-byte words, 0 a record whose length in bytes
//! (itself included) is in the next u32, 29 padding, 30 a time extend (the
//! delta's upper bits in the next u32) and 31 an absolute time stamp.
//!
//! Bad bytes are reported as [`PageError`]s; nothing here panics on them.

use super::format::PageHeaderLayout;

/// A time stamp in the trace clock's unit: nanoseconds for the `mono`,
/// `mono_raw`, `boot`, `tai` and `local`/`global` clocks, cycles for
/// `x86-tsc`, a count for `counter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TraceTicks(pub u64);

/// A page that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    /// Fewer bytes than the page header takes.
    #[error("page of {got} bytes is shorter than its {needed}-byte header")]
    TooShortForHeader {
        /// The bytes given.
        got: usize,
        /// The bytes the header needs.
        needed: usize,
    },
    /// The commit word claims more data than the page holds.
    #[error("page claims {claimed} data bytes, it has room for {room}")]
    DataLengthBeyondPage {
        /// The data length in the commit word.
        claimed: usize,
        /// The bytes after the header.
        room: usize,
    },
    /// An event's header or body runs past the page's data.
    #[error("event at data offset {offset} runs past the page's {data_length} data bytes")]
    EventBeyondData {
        /// Where the event starts, from the data's start.
        offset: usize,
        /// The page's data length.
        data_length: usize,
    },
    /// A `type_len` 0 event whose length word is too small to be real.
    #[error("event at data offset {offset} has a length word of {length}")]
    BadLengthWord {
        /// Where the event starts, from the data's start.
        offset: usize,
        /// The length the word gives, in bytes.
        length: u32,
    },
    /// A record too short to hold its `common_type` id.
    #[error("event at data offset {offset} has a record of {length} bytes, no id")]
    RecordWithoutId {
        /// Where the event starts, from the data's start.
        offset: usize,
        /// The record's length.
        length: usize,
    },
}

/// Events lost before a page, as its commit word says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostEvents {
    /// None lost.
    None,
    /// Some were lost; the kernel had no room to say how many.
    Unknown,
    /// This many were lost.
    Count(u64),
}

/// One event of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceEvent<'a> {
    /// When it happened: the page's time stamp plus every delta so far.
    pub timestamp: TraceTicks,
    /// The id of its format (the record's first u16, `common_type`).
    pub id: u16,
    /// The record, as its format's offsets describe it; may end with
    /// padding up to a 4-byte boundary.
    pub record: &'a [u8],
}

/// A decoded page header, and the events behind it.
#[derive(Debug, Clone, Copy)]
pub struct TracePage<'a> {
    /// The page's base time stamp.
    pub timestamp: TraceTicks,
    /// Events the kernel dropped before this page.
    pub lost_events: LostEvents,
    data: &'a [u8],
}

/// The commit word's flag: events were lost before this page.
const MISSED_EVENTS_FLAG: u64 = 1 << 31;
/// The commit word's flag: the lost count follows the data.
const MISSED_COUNT_STORED_FLAG: u64 = 1 << 30;
/// The commit word's bits that hold the data length.
const DATA_LENGTH_MASK: u64 = (1 << 30) - 1;

const EVENT_HEADER_BYTES: usize = 4;
const TIME_DELTA_BITS: u32 = 27;
const TYPE_LEN_MAX_DATA_WORDS: u32 = 28;
const TYPE_LEN_PADDING: u32 = 29;
const TYPE_LEN_TIME_EXTEND: u32 = 30;
const TYPE_LEN_ABSOLUTE_TIME_STAMP: u32 = 31;
/// The top bits of a time stamp that an absolute time-stamp event does
/// not carry: they are those of the time stamp before it.
const ABSOLUTE_STAMP_CARRIED_BITS: u32 = 59;

impl<'a> TracePage<'a> {
    /// Decodes a page's header; `page` is one page of `trace_pipe_raw`
    /// (it may be longer than the data, as the kernel pads it).
    pub fn parse(layout: &PageHeaderLayout, page: &'a [u8]) -> Result<TracePage<'a>, PageError> {
        let header_end = [layout.timestamp, layout.commit]
            .iter()
            .map(|span| span.offset_bytes + span.size_bytes)
            .max()
            .unwrap_or(0)
            .max(layout.data.offset_bytes);
        if page.len() < header_end {
            return Err(PageError::TooShortForHeader {
                got: page.len(),
                needed: header_end,
            });
        }
        let timestamp = read_word(page, layout.timestamp.offset_bytes, 8);
        let commit = read_word(page, layout.commit.offset_bytes, layout.commit.size_bytes);
        let after_header = &page[layout.data.offset_bytes..];
        let room = after_header.len().min(layout.data.size_bytes);
        let data_length = (commit & DATA_LENGTH_MASK) as usize;
        if data_length > room {
            return Err(PageError::DataLengthBeyondPage {
                claimed: data_length,
                room,
            });
        }
        let lost_events = if commit & MISSED_EVENTS_FLAG == 0 {
            LostEvents::None
        } else if commit & MISSED_COUNT_STORED_FLAG != 0 {
            let count_size = layout.commit.size_bytes;
            match after_header.get(data_length..data_length + count_size) {
                Some(_) => LostEvents::Count(read_word(after_header, data_length, count_size)),
                None => LostEvents::Unknown,
            }
        } else {
            LostEvents::Unknown
        };
        Ok(TracePage {
            timestamp: TraceTicks(timestamp),
            lost_events,
            data: &after_header[..data_length],
        })
    }

    /// The page's data length in bytes.
    pub fn data_length_bytes(&self) -> usize {
        self.data.len()
    }

    /// The page's events in order; an error ends the walk.
    pub fn events(&self) -> TraceEvents<'a> {
        TraceEvents {
            data: self.data,
            position: 0,
            now: self.timestamp.0,
            failed: false,
        }
    }
}

/// Reads a u32 or u64 in the host's byte order; the caller has checked the
/// bounds.
fn read_word(bytes: &[u8], offset: usize, size: usize) -> u64 {
    if size == 4 {
        let mut word = [0u8; 4];
        word.copy_from_slice(&bytes[offset..offset + 4]);
        u32::from_ne_bytes(word).into()
    } else {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[offset..offset + 8]);
        u64::from_ne_bytes(word)
    }
}

/// Splits an event header into (type_len, time_delta). The kernel declares
/// them as C bit fields, so their order follows the host's byte order.
fn split_event_header(header: u32) -> (u32, u32) {
    if cfg!(target_endian = "little") {
        (header & 0x1f, header >> 5)
    } else {
        (
            header >> TIME_DELTA_BITS,
            header & ((1 << TIME_DELTA_BITS) - 1),
        )
    }
}

/// The events of one page, in order.
#[derive(Debug, Clone)]
pub struct TraceEvents<'a> {
    data: &'a [u8],
    position: usize,
    now: u64,
    failed: bool,
}

impl<'a> TraceEvents<'a> {
    fn u32_at(&self, offset: usize) -> Result<u32, PageError> {
        self.data
            .get(offset..offset + 4)
            .map(|bytes| read_word(bytes, 0, 4) as u32)
            .ok_or(PageError::EventBeyondData {
                offset: self.position,
                data_length: self.data.len(),
            })
    }

    /// Walks to the next data event, applying the time stamps on the way.
    fn next_event(&mut self) -> Result<Option<TraceEvent<'a>>, PageError> {
        while self.position < self.data.len() {
            let start = self.position;
            let (type_len, time_delta) = split_event_header(self.u32_at(start)?);
            let body = start + EVENT_HEADER_BYTES;
            let beyond_data = PageError::EventBeyondData {
                offset: start,
                data_length: self.data.len(),
            };
            match type_len {
                TYPE_LEN_PADDING => {
                    if time_delta == 0 {
                        // Padding to the end of the page.
                        self.position = self.data.len();
                        return Ok(None);
                    }
                    let padding = self.u32_at(body)? as usize;
                    let next = body.checked_add(padding).ok_or(beyond_data.clone())?;
                    if next > self.data.len() || padding == 0 {
                        return Err(beyond_data);
                    }
                    self.position = next;
                }
                TYPE_LEN_TIME_EXTEND => {
                    let upper = u64::from(self.u32_at(body)?);
                    self.now = self
                        .now
                        .wrapping_add((upper << TIME_DELTA_BITS) | u64::from(time_delta));
                    self.position = body + 4;
                }
                TYPE_LEN_ABSOLUTE_TIME_STAMP => {
                    let upper = u64::from(self.u32_at(body)?);
                    let stamp = (upper << TIME_DELTA_BITS) | u64::from(time_delta);
                    self.now = with_carried_top_bits(stamp, self.now);
                    self.position = body + 4;
                }
                0 => {
                    let length = self.u32_at(body)?;
                    let record_length = (length as usize)
                        .checked_sub(4)
                        .filter(|&record| record >= 2)
                        .ok_or(PageError::BadLengthWord {
                            offset: start,
                            length,
                        })?;
                    return self.take_record(start, time_delta, body + 4, record_length);
                }
                words => {
                    debug_assert!(words <= TYPE_LEN_MAX_DATA_WORDS);
                    return self.take_record(start, time_delta, body, words as usize * 4);
                }
            }
        }
        Ok(None)
    }

    fn take_record(
        &mut self,
        start: usize,
        time_delta: u32,
        record_start: usize,
        record_length: usize,
    ) -> Result<Option<TraceEvent<'a>>, PageError> {
        let record = record_start
            .checked_add(record_length)
            .and_then(|end| self.data.get(record_start..end))
            .ok_or(PageError::EventBeyondData {
                offset: start,
                data_length: self.data.len(),
            })?;
        let id_bytes: [u8; 2] = record
            .get(..2)
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or(PageError::RecordWithoutId {
                offset: start,
                length: record.len(),
            })?;
        // Stored 4-byte aligned, as the kernel keeps every event.
        self.position = (record_start + record_length + 3) & !3;
        self.now = self.now.wrapping_add(u64::from(time_delta));
        Ok(Some(TraceEvent {
            timestamp: TraceTicks(self.now),
            id: u16::from_ne_bytes(id_bytes),
            record,
        }))
    }
}

/// An absolute time-stamp event carries the low 59 bits; the top ones are
/// those of the time before it, one step up if that makes time go back.
fn with_carried_top_bits(stamp: u64, previous: u64) -> u64 {
    let low_mask = (1u64 << ABSOLUTE_STAMP_CARRIED_BITS) - 1;
    let combined = (stamp & low_mask) | (previous & !low_mask);
    if combined < previous {
        combined.wrapping_add(1 << ABSOLUTE_STAMP_CARRIED_BITS)
    } else {
        combined
    }
}

impl<'a> Iterator for TraceEvents<'a> {
    type Item = Result<TraceEvent<'a>, PageError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.next_event() {
            Ok(Some(event)) => Some(Ok(event)),
            Ok(None) => None,
            Err(error) => {
                self.failed = true;
                Some(Err(error))
            }
        }
    }
}
