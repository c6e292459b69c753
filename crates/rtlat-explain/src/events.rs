//! Trace records turned into compact, typed kernel events: the handful of
//! events that explain a wake-up (timers, interrupts, scheduling, idle), each
//! with only the fields the analysis reads.
//!
//! An [`EventDecoder`] looks up, once, each event's id and the offsets of
//! its fields by name in the events' format files, then decodes records
//! without allocating. IRQ names, the only variable-length text, are kept
//! apart in [`IrqNames`], read the first time each IRQ is seen.

use std::collections::HashMap;
use std::fmt;

use crate::trace::{
    EventFormat, EventFormats, FieldFormat, FieldKind, LostEvents, PageError, PageHeaderLayout,
    TraceEvent, TracePage,
};

/// `cpu_idle`'s state when a CPU leaves idle.
pub const LEAVING_IDLE: u32 = u32::MAX;

/// A task name, inline (the kernel's `TASK_COMM_LEN` of 16 bytes).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Comm([u8; 16]);

impl Comm {
    /// The name from a record's bytes: up to 16, cut at the first NUL.
    pub fn new(bytes: &[u8]) -> Comm {
        let mut comm = [0u8; 16];
        let text = match bytes.iter().position(|&byte| byte == 0) {
            Some(end) => &bytes[..end],
            None => bytes,
        };
        let length = text.len().min(comm.len());
        comm[..length].copy_from_slice(&text[..length]);
        Comm(comm)
    }

    /// The name's bytes, without the NULs after it.
    pub fn as_bytes(&self) -> &[u8] {
        match self.0.iter().position(|&byte| byte == 0) {
            Some(end) => &self.0[..end],
            None => &self.0,
        }
    }
}

impl fmt::Display for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.as_bytes()))
    }
}

impl fmt::Debug for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Comm({:?})", self.to_string())
    }
}

/// An x86 interrupt vector of `irq_vectors:*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Vector {
    /// The local APIC timer: hrtimers expire in it.
    LocalTimer,
    /// The scheduler's inter-processor kick.
    Reschedule,
    /// A function call asked by another CPU (to many CPUs).
    CallFunction,
    /// A function call asked by another CPU (to this one).
    CallFunctionSingle,
    /// Deferred work run from an interrupt.
    IrqWork,
}

impl Vector {
    /// Every vector, in the order of [`Vector::as_str`]'s names.
    pub const ALL: [Vector; 5] = [
        Vector::LocalTimer,
        Vector::Reschedule,
        Vector::CallFunction,
        Vector::CallFunctionSingle,
        Vector::IrqWork,
    ];

    /// The name of its events without `_entry`/`_exit` (`local_timer`).
    pub fn as_str(self) -> &'static str {
        match self {
            Vector::LocalTimer => "local_timer",
            Vector::Reschedule => "reschedule",
            Vector::CallFunction => "call_function",
            Vector::CallFunctionSingle => "call_function_single",
            Vector::IrqWork => "irq_work",
        }
    }
}

/// The kernel's softirq vector names, by number.
const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// The name of softirq vector `vec` (`SCHED`), `None` for a number the
/// kernel does not define.
pub fn softirq_name(vec: u32) -> Option<&'static str> {
    SOFTIRQ_NAMES.get(vec as usize).copied()
}

/// What happened, with the fields the analysis reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// `hrtimer_start`: a timer armed (by the task in `common_pid`).
    HrtimerStart {
        /// The timer's address.
        timer: u64,
        /// Its callback's address.
        function: u64,
        /// The hard expiry, ns of the timer's clock.
        expires_ns: i64,
        /// The soft expiry (the programmed time), ns.
        softexpires_ns: i64,
    },
    /// `hrtimer_expire_entry`: a timer's callback starts.
    HrtimerExpireEntry {
        /// The timer's address.
        timer: u64,
        /// The time the expiring code read, ns.
        now_ns: i64,
        /// Its callback's address.
        function: u64,
    },
    /// `hrtimer_expire_exit`: a timer's callback returned.
    HrtimerExpireExit {
        /// The timer's address.
        timer: u64,
    },
    /// `irq_handler_entry` (the name is in [`IrqNames`]).
    IrqEntry {
        /// The IRQ number.
        irq: i32,
    },
    /// `irq_handler_exit`.
    IrqExit {
        /// The IRQ number.
        irq: i32,
    },
    /// `softirq_entry`.
    SoftirqEntry {
        /// The softirq vector ([`softirq_name`]).
        vec: u32,
    },
    /// `softirq_exit`.
    SoftirqExit {
        /// The softirq vector.
        vec: u32,
    },
    /// `sched_waking`: a task is being woken.
    Waking {
        /// The woken task.
        pid: i32,
        /// Its name.
        comm: Comm,
        /// Its kernel priority (0-99 real-time, inverted; 100-139 normal).
        prio: i32,
        /// The CPU it is to run on.
        target_cpu: i32,
    },
    /// `sched_switch`: the CPU goes from one task to another.
    Switch {
        /// The task leaving.
        prev_comm: Comm,
        /// Its pid.
        prev_pid: i32,
        /// Its kernel priority.
        prev_prio: i32,
        /// Its state bits (0: still runnable, preempted).
        prev_state: i64,
        /// The task coming in.
        next_comm: Comm,
        /// Its pid.
        next_pid: i32,
        /// Its kernel priority.
        next_prio: i32,
    },
    /// `cpu_idle`: the CPU enters an idle state, or leaves idle
    /// ([`LEAVING_IDLE`]).
    CpuIdle {
        /// The idle state's index, or [`LEAVING_IDLE`].
        state: u32,
    },
    /// `nmi_handler`: an NMI handler that ended at the event's time.
    Nmi {
        /// The handler's address.
        handler: u64,
        /// How long it ran, ns.
        delta_ns: i64,
    },
    /// `irq_vectors:<vector>_entry` (x86).
    VectorEntry {
        /// Which vector.
        vector: Vector,
    },
    /// `irq_vectors:<vector>_exit` (x86).
    VectorExit {
        /// Which vector.
        vector: Vector,
    },
    /// `ipi:ipi_entry`, where the architecture traces it.
    IpiEntry,
    /// `ipi:ipi_exit`.
    IpiExit,
}

/// One decoded kernel event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelEvent {
    /// When, in ns of the trace clock (CLOCK_MONOTONIC with `mono`).
    pub ts_ns: i64,
    /// The CPU whose buffer held it.
    pub cpu: u32,
    /// The task that was current (`common_pid`; 0 is idle).
    pub pid: i32,
    /// What happened.
    pub kind: EventKind,
}

impl KernelEvent {
    /// The kernel's name of the event (`sched_switch`).
    pub fn name(&self) -> &'static str {
        match self.kind {
            EventKind::HrtimerStart { .. } => "hrtimer_start",
            EventKind::HrtimerExpireEntry { .. } => "hrtimer_expire_entry",
            EventKind::HrtimerExpireExit { .. } => "hrtimer_expire_exit",
            EventKind::IrqEntry { .. } => "irq_handler_entry",
            EventKind::IrqExit { .. } => "irq_handler_exit",
            EventKind::SoftirqEntry { .. } => "softirq_entry",
            EventKind::SoftirqExit { .. } => "softirq_exit",
            EventKind::Waking { .. } => "sched_waking",
            EventKind::Switch { .. } => "sched_switch",
            EventKind::CpuIdle { .. } => "cpu_idle",
            EventKind::Nmi { .. } => "nmi_handler",
            EventKind::VectorEntry { vector } => vector_event_names(vector).0,
            EventKind::VectorExit { vector } => vector_event_names(vector).1,
            EventKind::IpiEntry => "ipi_entry",
            EventKind::IpiExit => "ipi_exit",
        }
    }

    /// A one-line text form, as an expert reads a trace:
    /// `11684.232225123 [000] 0 sched_switch: prev=swapper/0[0] prio=120
    /// state=R ==> next=rtlat-t0[31294] prio=19` (time in s.ns, CPU,
    /// current pid, event, fields).
    pub fn display<'a>(&'a self, names: &'a IrqNames) -> EventDisplay<'a> {
        EventDisplay { event: self, names }
    }
}

/// The names of a vector's entry and exit events.
fn vector_event_names(vector: Vector) -> (&'static str, &'static str) {
    match vector {
        Vector::LocalTimer => ("local_timer_entry", "local_timer_exit"),
        Vector::Reschedule => ("reschedule_entry", "reschedule_exit"),
        Vector::CallFunction => ("call_function_entry", "call_function_exit"),
        Vector::CallFunctionSingle => ("call_function_single_entry", "call_function_single_exit"),
        Vector::IrqWork => ("irq_work_entry", "irq_work_exit"),
    }
}

/// A [`KernelEvent`] as a line of text (see [`KernelEvent::display`]).
#[derive(Debug, Clone, Copy)]
pub struct EventDisplay<'a> {
    event: &'a KernelEvent,
    names: &'a IrqNames,
}

/// The letters the kernel prints for a task state (`S`, `D|W`, `R+`).
pub fn task_state_letters(state: i64) -> String {
    // The kernel's TASK_REPORT bits, then TASK_REPORT_MAX: preempted.
    const LETTERS: [(i64, char); 8] = [
        (0x01, 'S'),
        (0x02, 'D'),
        (0x04, 'T'),
        (0x08, 't'),
        (0x10, 'X'),
        (0x20, 'Z'),
        (0x40, 'P'),
        (0x80, 'I'),
    ];
    const REPORT_MAX: i64 = 0x100;
    let named: Vec<String> = LETTERS
        .iter()
        .filter(|(bit, _)| state & bit != 0)
        .map(|(_, letter)| letter.to_string())
        .collect();
    let mut text = if named.is_empty() {
        "R".to_owned()
    } else {
        named.join("|")
    };
    if state & REPORT_MAX != 0 {
        text.push('+');
    }
    text
}

/// Writes ns as `seconds.nanoseconds`.
pub(crate) fn write_seconds(f: &mut fmt::Formatter<'_>, ns: i64) -> fmt::Result {
    let sign = if ns < 0 { "-" } else { "" };
    let magnitude = ns.unsigned_abs();
    write!(
        f,
        "{sign}{}.{:09}",
        magnitude / 1_000_000_000,
        magnitude % 1_000_000_000
    )
}

impl fmt::Display for EventDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let event = self.event;
        write_seconds(f, event.ts_ns)?;
        write!(f, " [{:03}] {} {}:", event.cpu, event.pid, event.name())?;
        match event.kind {
            EventKind::HrtimerStart {
                timer,
                function,
                expires_ns,
                softexpires_ns,
            } => write!(
                f,
                " hrtimer={timer:#x} function={function:#x} expires={expires_ns} \
                 softexpires={softexpires_ns}"
            ),
            EventKind::HrtimerExpireEntry {
                timer,
                now_ns,
                function,
            } => write!(f, " hrtimer={timer:#x} function={function:#x} now={now_ns}"),
            EventKind::HrtimerExpireExit { timer } => write!(f, " hrtimer={timer:#x}"),
            EventKind::IrqEntry { irq } => match self.names.lookup(irq) {
                Some(name) => write!(f, " irq={irq} name={name}"),
                None => write!(f, " irq={irq}"),
            },
            EventKind::IrqExit { irq } => write!(f, " irq={irq}"),
            EventKind::SoftirqEntry { vec } | EventKind::SoftirqExit { vec } => {
                write!(
                    f,
                    " vec={vec} [action={}]",
                    softirq_name(vec).unwrap_or("?")
                )
            }
            EventKind::Waking {
                pid,
                comm,
                prio,
                target_cpu,
            } => write!(
                f,
                " comm={comm} pid={pid} prio={prio} target_cpu={target_cpu:03}"
            ),
            EventKind::Switch {
                prev_comm,
                prev_pid,
                prev_prio,
                prev_state,
                next_comm,
                next_pid,
                next_prio,
            } => write!(
                f,
                " prev={prev_comm}[{prev_pid}] prio={prev_prio} state={} ==> \
                 next={next_comm}[{next_pid}] prio={next_prio}",
                task_state_letters(prev_state)
            ),
            EventKind::CpuIdle {
                state: LEAVING_IDLE,
            } => {
                write!(f, " state={LEAVING_IDLE} (leaving idle)")
            }
            EventKind::CpuIdle { state } => write!(f, " state={state}"),
            EventKind::Nmi { handler, delta_ns } => {
                write!(f, " handler={handler:#x} delta_ns={delta_ns}")
            }
            EventKind::VectorEntry { .. }
            | EventKind::VectorExit { .. }
            | EventKind::IpiEntry
            | EventKind::IpiExit => Ok(()),
        }
    }
}

/// IRQ numbers and their handlers' names, as `irq_handler_entry` gives
/// them.
#[derive(Debug, Clone, Default)]
pub struct IrqNames {
    by_irq: HashMap<i32, String>,
}

impl IrqNames {
    /// No names yet.
    pub fn new() -> IrqNames {
        IrqNames::default()
    }

    /// The name of `irq`'s handler, if it has been seen.
    pub fn lookup(&self, irq: i32) -> Option<&str> {
        self.by_irq.get(&irq).map(String::as_str)
    }

    /// Records `irq`'s name (the first one given is kept).
    pub fn insert(&mut self, irq: i32, name: &str) {
        self.by_irq.entry(irq).or_insert_with(|| name.to_owned());
    }

    /// Whether `irq`'s name is known.
    pub fn contains(&self, irq: i32) -> bool {
        self.by_irq.contains_key(&irq)
    }
}

/// The formats do not let the decoder read a required event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecoderError {
    /// A required event has no format.
    #[error("the trace has no format for the required event '{event}'")]
    MissingEvent {
        /// The event's name.
        event: &'static str,
    },
    /// A required event's format lacks a field.
    #[error("the format of event '{event}' has no field '{field}'")]
    MissingField {
        /// The event's name.
        event: &'static str,
        /// The field's name.
        field: &'static str,
    },
    /// A field is there but not of a type the decoder reads.
    #[error("field '{field}' of event '{event}' is not {expected} ({declaration})")]
    FieldType {
        /// The event's name.
        event: &'static str,
        /// The field's name.
        field: &'static str,
        /// What it should be (`an integer`, `a string`).
        expected: &'static str,
        /// Its declaration in the format.
        declaration: String,
    },
}

/// Where an integer field lies in a record.
#[derive(Debug, Clone, Copy)]
struct IntegerField {
    offset: usize,
    size: usize,
    signed: bool,
}

impl IntegerField {
    /// The value, sign- or zero-extended; `None` past the record's end.
    fn read(&self, record: &[u8]) -> Option<i64> {
        let bytes = record.get(self.offset..self.offset.checked_add(self.size)?)?;
        let value = match (self.size, self.signed) {
            (1, true) => i64::from(i8::from_ne_bytes([bytes[0]])),
            (1, false) => i64::from(bytes[0]),
            (2, true) => i64::from(i16::from_ne_bytes(bytes.try_into().ok()?)),
            (2, false) => i64::from(u16::from_ne_bytes(bytes.try_into().ok()?)),
            (4, true) => i64::from(i32::from_ne_bytes(bytes.try_into().ok()?)),
            (4, false) => i64::from(u32::from_ne_bytes(bytes.try_into().ok()?)),
            (8, _) => i64::from_ne_bytes(bytes.try_into().ok()?),
            _ => return None,
        };
        Some(value)
    }

    /// The value's bits as a u64 (addresses, unsigned counts).
    fn read_u64(&self, record: &[u8]) -> Option<u64> {
        self.read(record).map(|value| value as u64)
    }

    /// The value as an i32 (pids, priorities, IRQ numbers), truncated as C
    /// would.
    fn read_i32(&self, record: &[u8]) -> Option<i32> {
        self.read(record).map(|value| value as i32)
    }

    /// The value as a u32 (states, vectors).
    fn read_u32(&self, record: &[u8]) -> Option<u32> {
        self.read(record).map(|value| value as u32)
    }
}

/// Where a fixed-size name (`char comm[16]`) lies in a record.
#[derive(Debug, Clone, Copy)]
struct CommField {
    offset: usize,
    size: usize,
}

impl CommField {
    fn read(&self, record: &[u8]) -> Option<Comm> {
        record
            .get(self.offset..self.offset.checked_add(self.size)?)
            .map(Comm::new)
    }
}

/// How the records of one event id are decoded.
#[derive(Debug, Clone)]
enum Decoding {
    HrtimerStart {
        timer: IntegerField,
        function: IntegerField,
        expires: IntegerField,
        softexpires: IntegerField,
    },
    HrtimerExpireEntry {
        timer: IntegerField,
        now: IntegerField,
        function: IntegerField,
    },
    HrtimerExpireExit {
        timer: IntegerField,
    },
    IrqEntry {
        irq: IntegerField,
        name: FieldFormat,
    },
    IrqExit {
        irq: IntegerField,
    },
    SoftirqEntry {
        vec: IntegerField,
    },
    SoftirqExit {
        vec: IntegerField,
    },
    Waking {
        comm: CommField,
        pid: IntegerField,
        prio: IntegerField,
        target_cpu: IntegerField,
    },
    Switch {
        prev_comm: CommField,
        prev_pid: IntegerField,
        prev_prio: IntegerField,
        prev_state: IntegerField,
        next_comm: CommField,
        next_pid: IntegerField,
        next_prio: IntegerField,
    },
    CpuIdle {
        state: IntegerField,
    },
    Nmi {
        handler: IntegerField,
        delta_ns: IntegerField,
    },
    VectorEntry(Vector),
    VectorExit(Vector),
    IpiEntry,
    IpiExit,
}

/// The events an explanation cannot do without.
pub const REQUIRED_EVENT_NAMES: [&str; 10] = [
    "hrtimer_start",
    "hrtimer_expire_entry",
    "hrtimer_expire_exit",
    "irq_handler_entry",
    "irq_handler_exit",
    "softirq_entry",
    "softirq_exit",
    "sched_waking",
    "sched_switch",
    "cpu_idle",
];

/// One event's format, and a way to resolve its fields with errors that
/// name them.
struct FieldResolver<'a> {
    event: &'static str,
    format: &'a EventFormat,
}

impl FieldResolver<'_> {
    fn field(&self, field: &'static str) -> Result<&FieldFormat, DecoderError> {
        self.format.field(field).ok_or(DecoderError::MissingField {
            event: self.event,
            field,
        })
    }

    fn wrong_type(
        &self,
        field: &FieldFormat,
        name: &'static str,
        expected: &'static str,
    ) -> DecoderError {
        DecoderError::FieldType {
            event: self.event,
            field: name,
            expected,
            declaration: field.declaration.clone(),
        }
    }

    fn integer(&self, name: &'static str) -> Result<IntegerField, DecoderError> {
        let field = self.field(name)?;
        match field.kind {
            FieldKind::Integer { signed } => Ok(IntegerField {
                offset: field.offset_bytes,
                size: field.size_bytes,
                signed,
            }),
            _ => Err(self.wrong_type(field, name, "an integer")),
        }
    }

    fn comm(&self, name: &'static str) -> Result<CommField, DecoderError> {
        let field = self.field(name)?;
        match field.kind {
            FieldKind::FixedString => Ok(CommField {
                offset: field.offset_bytes,
                size: field.size_bytes,
            }),
            _ => Err(self.wrong_type(field, name, "a fixed-size string")),
        }
    }

    fn string(&self, name: &'static str) -> Result<FieldFormat, DecoderError> {
        let field = self.field(name)?;
        match field.kind {
            FieldKind::DataLocString | FieldKind::RelLocString | FieldKind::FixedString => {
                Ok(field.clone())
            }
            _ => Err(self.wrong_type(field, name, "a string")),
        }
    }
}

/// Resolves the decoding of event `event` from its format.
fn resolve(event: &'static str, format: &EventFormat) -> Result<Decoding, DecoderError> {
    let fields = FieldResolver { event, format };
    let vector_of = |suffix: &str| {
        Vector::ALL
            .into_iter()
            .find(|vector| event.strip_suffix(suffix) == Some(vector.as_str()))
    };
    Ok(match event {
        "hrtimer_start" => Decoding::HrtimerStart {
            timer: fields.integer("hrtimer")?,
            function: fields.integer("function")?,
            expires: fields.integer("expires")?,
            softexpires: fields.integer("softexpires")?,
        },
        "hrtimer_expire_entry" => Decoding::HrtimerExpireEntry {
            timer: fields.integer("hrtimer")?,
            now: fields.integer("now")?,
            function: fields.integer("function")?,
        },
        "hrtimer_expire_exit" => Decoding::HrtimerExpireExit {
            timer: fields.integer("hrtimer")?,
        },
        "irq_handler_entry" => Decoding::IrqEntry {
            irq: fields.integer("irq")?,
            name: fields.string("name")?,
        },
        "irq_handler_exit" => Decoding::IrqExit {
            irq: fields.integer("irq")?,
        },
        "softirq_entry" => Decoding::SoftirqEntry {
            vec: fields.integer("vec")?,
        },
        "softirq_exit" => Decoding::SoftirqExit {
            vec: fields.integer("vec")?,
        },
        "sched_waking" => Decoding::Waking {
            comm: fields.comm("comm")?,
            pid: fields.integer("pid")?,
            prio: fields.integer("prio")?,
            target_cpu: fields.integer("target_cpu")?,
        },
        "sched_switch" => Decoding::Switch {
            prev_comm: fields.comm("prev_comm")?,
            prev_pid: fields.integer("prev_pid")?,
            prev_prio: fields.integer("prev_prio")?,
            prev_state: fields.integer("prev_state")?,
            next_comm: fields.comm("next_comm")?,
            next_pid: fields.integer("next_pid")?,
            next_prio: fields.integer("next_prio")?,
        },
        "cpu_idle" => Decoding::CpuIdle {
            state: fields.integer("state")?,
        },
        "nmi_handler" => Decoding::Nmi {
            handler: fields.integer("handler")?,
            delta_ns: fields.integer("delta_ns")?,
        },
        "ipi_entry" => Decoding::IpiEntry,
        "ipi_exit" => Decoding::IpiExit,
        _ => {
            if let Some(vector) = vector_of("_entry") {
                Decoding::VectorEntry(vector)
            } else if let Some(vector) = vector_of("_exit") {
                Decoding::VectorExit(vector)
            } else {
                return Err(DecoderError::MissingEvent { event });
            }
        }
    })
}

/// Every event the decoder knows: the required ones, then the optional.
const OPTIONAL_EVENT_NAMES: [&str; 13] = [
    "nmi_handler",
    "local_timer_entry",
    "local_timer_exit",
    "reschedule_entry",
    "reschedule_exit",
    "call_function_entry",
    "call_function_exit",
    "call_function_single_entry",
    "call_function_single_exit",
    "irq_work_entry",
    "irq_work_exit",
    "ipi_entry",
    "ipi_exit",
];

/// What a page holds, handed over one item at a time by
/// [`EventDecoder::decode_page`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageItem {
    /// The kernel dropped events before this page (reported first).
    Lost {
        /// The CPU.
        cpu: u32,
        /// The page's time stamp, ns: the events were lost before it.
        page_ts_ns: i64,
        /// How many.
        lost: LostEvents,
    },
    /// One decoded event.
    Event(KernelEvent),
}

/// Decodes the records of the known events; see the module's text.
#[derive(Debug, Clone)]
pub struct EventDecoder {
    /// Indexed by event id; `None` for ids this decoder does not read.
    by_id: Vec<Option<Decoding>>,
    /// Where `common_pid` lies (the same in every format).
    common_pid: IntegerField,
    irq_names: IrqNames,
    undecodable: u64,
    optional_absent: Vec<&'static str>,
}

impl EventDecoder {
    /// Resolves each known event's id and fields from `formats`: every
    /// required event and field must be there; optional events may be
    /// absent (or unreadable: then they are not decoded).
    pub fn new(formats: &EventFormats) -> Result<EventDecoder, DecoderError> {
        let mut by_id: Vec<Option<Decoding>> = Vec::new();
        let mut place = |id: u16, decoding: Decoding| {
            let index = usize::from(id);
            if by_id.len() <= index {
                by_id.resize(index + 1, None);
            }
            by_id[index] = Some(decoding);
        };
        let mut common_pid = None;
        for event in REQUIRED_EVENT_NAMES {
            let format = formats
                .by_name(event)
                .ok_or(DecoderError::MissingEvent { event })?;
            let resolver = FieldResolver { event, format };
            common_pid = Some(resolver.integer("common_pid")?);
            place(format.id, resolve(event, format)?);
        }
        let mut optional_absent = Vec::new();
        for event in OPTIONAL_EVENT_NAMES {
            match formats
                .by_name(event)
                .map(|format| (format, resolve(event, format)))
            {
                Some((format, Ok(decoding))) => place(format.id, decoding),
                _ => optional_absent.push(event),
            }
        }
        let common_pid = common_pid.ok_or(DecoderError::MissingEvent {
            event: REQUIRED_EVENT_NAMES[0],
        })?;
        Ok(EventDecoder {
            by_id,
            common_pid,
            irq_names: IrqNames::new(),
            undecodable: 0,
            optional_absent,
        })
    }

    /// Decodes one record read on `cpu`; `None` (and one more
    /// [`EventDecoder::undecodable`]) for an id it does not read or a
    /// record too short for its fields. Allocates only the first time an
    /// IRQ is seen (its name).
    pub fn decode(&mut self, cpu: u32, event: &TraceEvent<'_>) -> Option<KernelEvent> {
        let decoded = self.decode_record(cpu, event);
        if decoded.is_none() {
            self.undecodable += 1;
        }
        decoded
    }

    fn decode_record(&mut self, cpu: u32, event: &TraceEvent<'_>) -> Option<KernelEvent> {
        let record = event.record;
        let decoding = self.by_id.get(usize::from(event.id))?.as_ref()?;
        let kind = match decoding {
            Decoding::HrtimerStart {
                timer,
                function,
                expires,
                softexpires,
            } => EventKind::HrtimerStart {
                timer: timer.read_u64(record)?,
                function: function.read_u64(record)?,
                expires_ns: expires.read(record)?,
                softexpires_ns: softexpires.read(record)?,
            },
            Decoding::HrtimerExpireEntry {
                timer,
                now,
                function,
            } => EventKind::HrtimerExpireEntry {
                timer: timer.read_u64(record)?,
                now_ns: now.read(record)?,
                function: function.read_u64(record)?,
            },
            Decoding::HrtimerExpireExit { timer } => EventKind::HrtimerExpireExit {
                timer: timer.read_u64(record)?,
            },
            Decoding::IrqEntry { irq, name } => {
                let irq = irq.read_i32(record)?;
                if !self.irq_names.contains(irq)
                    && let Ok(value) = name.read(record)
                    && let Some(text) = value.as_text()
                {
                    self.irq_names.insert(irq, &text);
                }
                EventKind::IrqEntry { irq }
            }
            Decoding::IrqExit { irq } => EventKind::IrqExit {
                irq: irq.read_i32(record)?,
            },
            Decoding::SoftirqEntry { vec } => EventKind::SoftirqEntry {
                vec: vec.read_u32(record)?,
            },
            Decoding::SoftirqExit { vec } => EventKind::SoftirqExit {
                vec: vec.read_u32(record)?,
            },
            Decoding::Waking {
                comm,
                pid,
                prio,
                target_cpu,
            } => EventKind::Waking {
                pid: pid.read_i32(record)?,
                comm: comm.read(record)?,
                prio: prio.read_i32(record)?,
                target_cpu: target_cpu.read_i32(record)?,
            },
            Decoding::Switch {
                prev_comm,
                prev_pid,
                prev_prio,
                prev_state,
                next_comm,
                next_pid,
                next_prio,
            } => EventKind::Switch {
                prev_comm: prev_comm.read(record)?,
                prev_pid: prev_pid.read_i32(record)?,
                prev_prio: prev_prio.read_i32(record)?,
                prev_state: prev_state.read(record)?,
                next_comm: next_comm.read(record)?,
                next_pid: next_pid.read_i32(record)?,
                next_prio: next_prio.read_i32(record)?,
            },
            Decoding::CpuIdle { state } => EventKind::CpuIdle {
                state: state.read_u32(record)?,
            },
            Decoding::Nmi { handler, delta_ns } => EventKind::Nmi {
                handler: handler.read_u64(record)?,
                delta_ns: delta_ns.read(record)?,
            },
            Decoding::VectorEntry(vector) => EventKind::VectorEntry { vector: *vector },
            Decoding::VectorExit(vector) => EventKind::VectorExit { vector: *vector },
            Decoding::IpiEntry => EventKind::IpiEntry,
            Decoding::IpiExit => EventKind::IpiExit,
        };
        Some(KernelEvent {
            ts_ns: i64::try_from(event.timestamp.0).ok()?,
            cpu,
            pid: self.common_pid.read_i32(record)?,
            kind,
        })
    }

    /// Parses one page of `trace_pipe_raw` read on `cpu` and hands `sink`
    /// its lost events (if any) then each decoded event. A page that breaks
    /// off is an error after the events before the break were handed over.
    pub fn decode_page(
        &mut self,
        cpu: u32,
        layout: &PageHeaderLayout,
        page: &[u8],
        mut sink: impl FnMut(PageItem),
    ) -> Result<(), PageError> {
        let page = TracePage::parse(layout, page)?;
        if page.lost_events != LostEvents::None {
            sink(PageItem::Lost {
                cpu,
                page_ts_ns: i64::try_from(page.timestamp.0).unwrap_or(i64::MAX),
                lost: page.lost_events,
            });
        }
        for event in page.events() {
            if let Some(decoded) = self.decode(cpu, &event?) {
                sink(PageItem::Event(decoded));
            }
        }
        Ok(())
    }

    /// The IRQ names seen so far.
    pub fn irq_names(&self) -> &IrqNames {
        &self.irq_names
    }

    /// Records not decoded so far (unknown id, too short).
    pub fn undecodable(&self) -> u64 {
        self.undecodable
    }

    /// The optional events the formats lack (or describe unreadably).
    pub fn optional_absent(&self) -> &[&'static str] {
        &self.optional_absent
    }
}
