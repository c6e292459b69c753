//! Kernel function names for the addresses the trace events carry (an
//! hrtimer's callback, an NMI handler): the text symbols of
//! `/proc/kallsyms`, read once before the first sample, and what the
//! best-known timer callbacks are ([`what_it_is`]).
//!
//! The table is bounded: at most [`MAX_SYMBOLS`] symbols and
//! [`MAX_NAME_BYTES`] bytes of names (16 bytes a symbol besides its name:
//! 4.6 MiB and 8 MiB at most), from at most [`MAX_LINES`] lines read line
//! by line (never the whole text at once). The names sit in one `String`;
//! the symbols in one `Vec` sorted by address. The functions' padding
//! symbols (`__pfx_`) are left out: half the symbols of a kernel that has
//! them, never a callback. A 6.18 kernel: 64 000 symbols, 2.2 MB.
//! Where the kernel hides its addresses (`kptr_restrict`: every address
//! reads 0) the table stays empty and the addresses are shown as they are.

use std::io::{self, BufRead};

/// The most text symbols kept (a kernel has about 120 000, its modules
/// some tens of thousands more).
pub const MAX_SYMBOLS: usize = 300_000;
/// The most bytes of names kept, all names together.
pub const MAX_NAME_BYTES: usize = 8 << 20;
/// The most lines read (every symbol, text or not, is a line).
pub const MAX_LINES: usize = 1_000_000;
/// How far past a symbol's start an address may be and still be named
/// after it (`name+0x40`): text symbols are functions, rarely longer.
const MAX_OFFSET: u64 = 1 << 20;

/// The best-known hrtimer callbacks and NMI handlers, and what they are.
/// One table: the only place these names are given a meaning.
const WELL_KNOWN: &[(&str, &str)] = &[
    ("tick_nohz_handler", "the scheduler tick"),
    ("tick_nohz_highres_handler", "the scheduler tick"),
    ("tick_sched_timer", "the scheduler tick"),
    ("timerfd_tmrproc", "a timerfd"),
    (
        "hrtimer_wakeup",
        "a hrtimer sleep (clock_nanosleep, poll, futex)",
    ),
    ("it_real_fn", "an itimer or alarm()"),
    ("posix_timer_fn", "a POSIX timer (timer_create)"),
    ("watchdog_timer_fn", "the soft-lockup watchdog"),
    ("sched_rt_period_timer", "real-time throttling's period"),
    ("sched_cfs_period_timer", "CFS bandwidth control"),
    ("dl_task_timer", "a SCHED_DEADLINE task's replenishment"),
    (
        "inactive_task_timer",
        "a SCHED_DEADLINE task going inactive",
    ),
    ("hrtick", "the scheduler's high-resolution tick"),
    ("perf_mux_hrtimer_handler", "perf's event multiplexing"),
    ("perf_swevent_hrtimer", "a perf software event"),
    ("napi_watchdog", "network NAPI polling"),
    ("perf_event_nmi_handler", "perf's hardware counters"),
    ("nmi_cpu_backtrace_handler", "a CPU backtrace request"),
];

/// What a well-known kernel function (`tick_nohz_handler`) is, in words
/// (`the scheduler tick`); a module's symbol (`name [mod]`) is looked up
/// by its name.
pub fn what_it_is(function: &str) -> Option<&'static str> {
    let name = function.split(' ').next().unwrap_or(function);
    WELL_KNOWN
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, what)| *what)
}

/// One symbol: its address and where its name is in the names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Symbol {
    address: u64,
    name_start: u32,
    name_len: u32,
}

/// The kernel's text symbols by address; see the module's text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelSymbols {
    symbols: Vec<Symbol>,
    names: String,
    hidden: bool,
    /// Text symbols left out by the bounds.
    dropped: u64,
}

/// A table without symbols: every address shown as it is.
pub static NO_SYMBOLS: KernelSymbols = KernelSymbols {
    symbols: Vec::new(),
    names: String::new(),
    hidden: false,
    dropped: 0,
};

/// A resolved address: the function's name, the offset into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionName<'a> {
    /// The symbol (`timerfd_tmrproc`, `name [mod]` for a module's).
    pub name: &'a str,
    /// How far past the symbol's start the address is.
    pub offset: u64,
}

impl std::fmt::Display for FunctionName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            0 => f.write_str(self.name),
            offset => write!(f, "{}+{offset:#x}", self.name),
        }
    }
}

impl KernelSymbols {
    /// Reads `/proc/kallsyms`-formatted text, keeping the text symbols
    /// (types `t`, `T`, `w`, `W`) within the bounds. Lines that do not
    /// parse are skipped.
    pub fn read(mut input: impl BufRead) -> io::Result<KernelSymbols> {
        let mut table = KernelSymbols::default();
        let mut any_address = false;
        let mut any_symbol = false;
        let mut line = String::new();
        let mut lines = 0;
        loop {
            line.clear();
            if input.read_line(&mut line)? == 0 {
                break;
            }
            lines += 1;
            if lines > MAX_LINES {
                // What is left is not read: its text symbols are not kept.
                table.dropped += 1;
                break;
            }
            let Some((address, name, module)) = text_symbol(&line) else {
                continue;
            };
            any_symbol = true;
            if address == 0 {
                continue;
            }
            any_address = true;
            table.keep(address, name, module);
        }
        table.hidden = any_symbol && !any_address;
        // The kernel lists them sorted (its modules' after): checked, and
        // sorted in place where they are not. Of symbols at one address
        // the first listed comes first (its name came first too).
        if !table.symbols.is_sorted_by_key(|symbol| symbol.address) {
            table
                .symbols
                .sort_unstable_by_key(|symbol| (symbol.address, symbol.name_start));
        }
        table.symbols.shrink_to_fit();
        table.names.shrink_to_fit();
        Ok(table)
    }

    /// Parses kallsyms text held in memory (tests, fixtures).
    pub fn parse(text: &str) -> KernelSymbols {
        // Reading from a slice does not fail.
        KernelSymbols::read(text.as_bytes()).unwrap_or_default()
    }

    /// Keeps a symbol, its name `name [module]` for a module's.
    fn keep(&mut self, address: u64, name: &str, module: Option<&str>) {
        let start = self.names.len();
        let len = name.len() + module.map_or(0, |module| module.len() + 1);
        if self.symbols.len() >= MAX_SYMBOLS || start + len > MAX_NAME_BYTES {
            self.dropped += 1;
            return;
        }
        self.names.push_str(name);
        if let Some(module) = module {
            self.names.push(' ');
            self.names.push_str(module);
        }
        self.symbols.push(Symbol {
            address,
            name_start: start as u32,
            name_len: len as u32,
        });
    }

    /// The function `address` is in, if the table knows it.
    pub fn lookup(&self, address: u64) -> Option<FunctionName<'_>> {
        let after = self
            .symbols
            .partition_point(|symbol| symbol.address <= address);
        let last = self.symbols.get(after.checked_sub(1)?)?;
        // The first listed of the symbols at that address.
        let first = self.symbols[..after]
            .iter()
            .rev()
            .take_while(|symbol| symbol.address == last.address)
            .last()
            .unwrap_or(last);
        let offset = address - first.address;
        if offset >= MAX_OFFSET {
            return None;
        }
        let start = first.name_start as usize;
        let name = &self.names[start..start + first.name_len as usize];
        Some(FunctionName { name, offset })
    }

    /// Text symbols kept.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// No symbol kept.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The kernel listed its symbols with every address 0 (`kptr_restrict`).
    pub fn hidden(&self) -> bool {
        self.hidden
    }

    /// Text symbols left out by the bounds (at least 1 where lines were
    /// left unread).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Bytes the table holds (its symbols and names).
    pub fn heap_bytes(&self) -> usize {
        self.symbols.capacity() * std::mem::size_of::<Symbol>() + self.names.capacity()
    }

    /// How `address` is shown: the function's name and, where it is a
    /// well-known one, what it is (`tick_nohz_handler, the scheduler
    /// tick`); the address as it is where the table does not know it.
    pub fn describe(&self, address: u64) -> String {
        match self.lookup(address) {
            Some(function) => match (function.offset, what_it_is(function.name)) {
                (0, Some(what)) => format!("{function} ({what})"),
                _ => function.to_string(),
            },
            None => format!("{address:#x}"),
        }
    }
}

/// The address, the name and the module (`[e1000]`, for a module's) of a
/// text symbol's line: `ffffffff81733b90 t timerfd_tmrproc`.
fn text_symbol(line: &str) -> Option<(u64, &str, Option<&str>)> {
    let mut fields = line.split_ascii_whitespace();
    let address = u64::from_str_radix(fields.next()?, 16).ok()?;
    let kind = fields.next()?;
    if !matches!(kind, "t" | "T" | "w" | "W") {
        return None;
    }
    let name = fields.next()?;
    // The padding before each function (CONFIG_CALL_PADDING): half the
    // symbols of such a kernel, never a callback.
    if name.starts_with("__pfx_") {
        return None;
    }
    let module = fields.next().filter(|module| module.starts_with('['));
    Some((address, name, module))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../tests/fixtures/kallsyms");

    #[test]
    fn text_symbols_are_named_and_the_others_left_out() {
        let table = KernelSymbols::parse(FIXTURE);
        assert!(!table.hidden());
        assert_eq!(table.dropped(), 0);
        let name = |address| table.lookup(address).map(|f| f.to_string());
        assert_eq!(
            name(0xffff_ffff_8173_3b90).as_deref(),
            Some("timerfd_tmrproc")
        );
        assert_eq!(
            name(0xffff_ffff_8143_32e0).as_deref(),
            Some("tick_nohz_handler")
        );
        // Within a function: named with the offset.
        assert_eq!(
            name(0xffff_ffff_8141_e4c0).as_deref(),
            Some("hrtimer_wakeup+0x10")
        );
        // Of several names at one address, the first listed.
        assert_eq!(name(0xffff_ffff_8100_0000).as_deref(), Some("_stext"));
        // Data (`D`, `d`, `B`, `R`, ...) is not kept: its address is far
        // past the last function before it, so it is not named.
        assert_eq!(name(0xffff_ffff_82a0_0000), None);
        assert_eq!(name(0xffff_ffff_8110_0000).as_deref(), Some("arch_weak_fn"));
        assert_eq!(table.len(), 9);
        // Before the first symbol, none.
        assert_eq!(name(0x1000), None);
    }

    #[test]
    fn a_modules_symbols_keep_the_module_name() {
        let table = KernelSymbols::parse(FIXTURE);
        assert_eq!(
            table
                .lookup(0xffff_ffff_c0a0_1000)
                .map(|f| f.name.to_owned()),
            Some("e1000_intr [e1000]".to_owned())
        );
        assert_eq!(what_it_is("timerfd_tmrproc [x]"), Some("a timerfd"));
    }

    #[test]
    fn hidden_addresses_leave_the_table_empty() {
        let hidden: String = FIXTURE
            .lines()
            .map(|line| format!("0000000000000000{}\n", &line[16..]))
            .collect();
        let table = KernelSymbols::parse(&hidden);
        assert!(table.hidden());
        assert!(table.is_empty());
        assert_eq!(table.describe(0xffff_ffff_8173_3b90), "0xffffffff81733b90");
        assert!(!KernelSymbols::parse("").hidden(), "nothing read");
    }

    #[test]
    fn well_known_handlers_are_said_what_they_are() {
        let table = KernelSymbols::parse(FIXTURE);
        assert_eq!(
            table.describe(0xffff_ffff_8143_32e0),
            "tick_nohz_handler (the scheduler tick)"
        );
        assert_eq!(
            table.describe(0xffff_ffff_8173_3b90),
            "timerfd_tmrproc (a timerfd)"
        );
        assert!(
            table
                .describe(0xffff_ffff_8141_e4b0)
                .starts_with("hrtimer_wakeup (a hrtimer sleep (clock_nanosleep")
        );
        // Inside a function: not its callback, no meaning given.
        assert_eq!(table.describe(0xffff_ffff_8141_e4c0), "hrtimer_wakeup+0x10");
        assert_eq!(table.describe(0x10), "0x10");
    }

    #[test]
    fn the_table_of_well_known_handlers_names_each_once() {
        let mut names: Vec<&str> = WELL_KNOWN.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count, "a name twice in WELL_KNOWN");
        assert!(
            WELL_KNOWN
                .iter()
                .all(|(name, what)| !name.is_empty() && !what.is_empty() && !name.contains(' '))
        );
        for (name, what) in [
            ("tick_nohz_handler", "the scheduler tick"),
            ("tick_sched_timer", "the scheduler tick"),
            ("timerfd_tmrproc", "a timerfd"),
            ("it_real_fn", "an itimer or alarm()"),
            ("watchdog_timer_fn", "the soft-lockup watchdog"),
        ] {
            assert_eq!(what_it_is(name), Some(what), "{name}");
        }
        assert!(what_it_is("hrtimer_wakeup").is_some_and(|w| w.contains("clock_nanosleep")));
        assert_eq!(what_it_is("schedule"), None);
    }

    #[test]
    fn the_bounds_hold() {
        let mut text = String::new();
        for n in 0..(MAX_SYMBOLS as u64 + 10) {
            text.push_str(&format!("{:016x} t f{n}\n", 0xffff_ffff_8100_0000 + n * 16));
        }
        let table = KernelSymbols::parse(&text);
        assert_eq!(table.len(), MAX_SYMBOLS);
        assert_eq!(table.dropped(), 10);
        assert!(table.heap_bytes() <= MAX_SYMBOLS * 16 + MAX_NAME_BYTES);
        let long = "x".repeat(4096);
        let mut text = String::new();
        for n in 0..(MAX_NAME_BYTES / 4096 + 5) as u64 {
            text.push_str(&format!(
                "{:016x} T {long}\n",
                0xffff_ffff_8100_0000 + n * 16
            ));
        }
        let table = KernelSymbols::parse(&text);
        assert_eq!(table.len(), MAX_NAME_BYTES / 4096);
        assert_eq!(table.dropped(), 5);
        // Lines beyond the bound are not read.
        let mut text = "ffffffff81000000 D data\n".repeat(MAX_LINES);
        text.push_str("ffffffff81000010 t late\n");
        let table = KernelSymbols::parse(&text);
        assert!(table.is_empty());
        assert_eq!(table.dropped(), 1);
    }

    #[test]
    fn symbols_listed_out_of_order_are_sorted() {
        let table = KernelSymbols::parse(
            "ffffffffc0002000 t b\t[m]\nffffffff81000100 t a\n\
             ffffffff81000000 T first\nffffffff81000000 T alias\n",
        );
        let name = |address| table.lookup(address).map(|f| f.to_string());
        assert_eq!(name(0xffff_ffff_8100_0000).as_deref(), Some("first"));
        assert_eq!(name(0xffff_ffff_8100_0104).as_deref(), Some("a+0x4"));
        assert_eq!(name(0xffff_ffff_c000_2000).as_deref(), Some("b [m]"));
    }

    #[test]
    fn lines_that_do_not_parse_are_skipped() {
        let table = KernelSymbols::parse(
            "garbage\nffffffff81000010 T\nzz T f\n\nffffffff81000000 t __pfx_f\n",
        );
        assert!(table.is_empty());
        assert!(!table.hidden());
    }
}
