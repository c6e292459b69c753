//! Kernel trace events, read from tracefs in binary: the layouts tracefs
//! describes in text ([`format`]) and the ring-buffer pages of
//! `per_cpu/cpuN/trace_pipe_raw` decoded with them ([`page`]).
//!
//! This is the decoding half of explaining latencies from kernel events;
//! it reads bytes handed to it and touches no file itself.

pub mod format;
pub mod page;

pub use format::{
    EventFormat, EventFormats, FieldError, FieldFormat, FieldKind, FieldValue, FormatError,
    PageHeaderLayout, PageSpan,
};
pub use page::{LostEvents, PageError, TraceEvent, TraceEvents, TracePage, TraceTicks};
