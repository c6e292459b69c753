//! One definition per option ([`Flag`]): its spellings, the kind and name
//! of its value, whether rt-tests 2.4 has it, whether it is hidden, its
//! help, and what it does to the tool's raw state ([`Effect`]). Everything
//! else is derived from the definitions:
//!
//! - the [`getopt`](crate::getopt) table ([`parse`] scans with it and
//!   applies each option in command-line order);
//! - how an option is spelled in messages ([`Name`], [`name_of`]);
//! - the `--help` text ([`Page::render`]): a tool's prose is written as
//!   structured [`Part`]s, the options' entries are made from their
//!   definitions;
//! - the model the man pages and completions are made from
//!   ([`Page::model`], the [`Help`] of [`docs`](crate::docs)), without
//!   reading any text back.
//!
//! Shared groups (stop conditions, output files, gates, load, verdict) are
//! functions generic over the tool's raw state, defined once and included
//! in each tool's list.

use std::ffi::{OsStr, OsString};
use std::fmt::Debug;
use std::sync::LazyLock;

use crate::UsageError;
use crate::docs::help::{Block, Entry, Help, Term, collapsed};
use crate::getopt::{GetoptError, OptSpec, Parsed, ValueKind, getopt_long};
use crate::values::{OptionName, opt_values, optional_text, text};

/// An option's spellings, for messages: `-t/--threads`, `--json`, `-F`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Name {
    /// `-t`.
    pub short: Option<char>,
    /// `threads` (without dashes).
    pub long: Option<&'static str>,
}

impl OptionName for Name {
    fn spelling(self) -> String {
        match (self.short, self.long) {
            (Some(short), Some(long)) => format!("-{short}/--{long}"),
            (None, Some(long)) => format!("--{long}"),
            (Some(short), None) => format!("-{short}"),
            (None, None) => "(unnamed option)".to_owned(),
        }
    }
}

/// An option's value as given, with the option's name for messages.
#[derive(Clone, Copy, Debug)]
pub struct Value<'a> {
    /// The option.
    pub name: Name,
    /// Its value, bytes and all; `None` for a flag or an optional value
    /// not given.
    pub raw: Option<&'a OsStr>,
}

impl Value<'_> {
    /// The value as text (empty when none): a value must be UTF-8 unless it
    /// is a file name.
    pub fn text(&self) -> Result<String, UsageError> {
        text(self.name, self.raw)
    }

    /// An optional value as text: `None` when not given.
    pub fn optional(&self) -> Result<Option<String>, UsageError> {
        optional_text(self.name, self.raw)
    }

    /// The value as bytes (a file name), empty when none.
    pub fn os(&self) -> OsString {
        self.raw.map(OsStr::to_os_string).unwrap_or_default()
    }

    /// The value as given, if any (bytes).
    pub fn os_opt(&self) -> Option<OsString> {
        self.raw.map(OsStr::to_os_string)
    }
}

/// How an option changes a tool's raw state `R`.
pub type Apply<R> = fn(&mut R, Value<'_>) -> Result<(), UsageError>;

/// What an option does when the command line gives it.
#[derive(Clone, Copy, Debug)]
pub enum Effect<R> {
    /// Changes the raw state (the last of a repeated option wins, as each
    /// definition decides).
    Apply(Apply<R>),
    /// Asks for the help: the rest of the command line is not read.
    Help,
}

/// One option, defined once.
#[derive(Clone, Copy, Debug)]
pub struct Flag<R> {
    /// `-t`.
    pub short: Option<char>,
    /// `threads` (without dashes).
    pub long: Option<&'static str>,
    /// Whether and how it takes a value.
    pub value: ValueKind,
    /// The value's name in the help (`N`, `FILE`); empty for a flag.
    pub value_name: &'static str,
    /// The value is left out of the help, the man page and the completions'
    /// words (values meant for the program itself, not for the user).
    pub value_hidden: bool,
    /// Whether cyclictest 2.4 (or the tool's C version) has it: its long
    /// name then wins the abbreviation match over newer ones.
    pub in_2_4: bool,
    /// Left out of the help, the man page, the completions and the hints.
    pub hidden: bool,
    /// The default shown at the end of its help, `[1000]`.
    pub default: Option<&'static str>,
    /// Its help, the lines of the text column as `--help` shows them,
    /// joined by newlines ([`crate::lines!`]); a first line `""` (the text
    /// beginning with a newline) puts the text under the spellings; `""`
    /// is no help.
    pub help: &'static str,
    /// The man page's text when it differs from [`Flag::help`].
    pub long_help: Option<&'static str>,
    /// What it does.
    pub effect: Effect<R>,
}

/// How a page lays out its option entries: the columns of the text, how a
/// long option is joined to its value, where a default goes. Tools whose
/// help copies another program's keep that program's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The column the text starts in on an entry's first line; at least
    /// two spaces follow the spellings.
    pub column: usize,
    /// The same for an entry with a short spelling only (Xenomai's
    /// `-p US`).
    pub short_only_column: usize,
    /// The column of the text's further lines.
    pub continuation: usize,
    /// What joins a long option to a required value: `'='`
    /// (`--json=FILE`) or `' '` (`--json FILE`). An optional value is
    /// always `[=N]`, a short-only option's always `-p US`.
    pub long_value: char,
    /// Where a default (`[1000]`) goes.
    pub default: DefaultAt,
}

/// Where a default goes on the last line of an entry's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultAt {
    /// Its `[` in this column, or one space after a longer line.
    Column(usize),
    /// Its `]` the last character of a line this long, or one space after
    /// a longer line.
    EndsAt(usize),
    /// One space after the text.
    AfterText,
}

impl Layout {
    /// cyclictest's: `--opt=VALUE`, text at column 25, defaults at 70.
    pub const GNU: Layout = Layout {
        column: 25,
        short_only_column: 25,
        continuation: 25,
        long_value: '=',
        default: DefaultAt::Column(70),
    };

    /// `--opt VALUE` with the text at `column`, defaults one space after
    /// the text (change them with the struct update syntax:
    /// `Layout { default: DefaultAt::EndsAt(73), ..Layout::spaced(22) }`).
    pub const fn spaced(column: usize) -> Layout {
        Layout {
            column,
            short_only_column: column,
            continuation: column,
            long_value: ' ',
            default: DefaultAt::AfterText,
        }
    }

    /// The column of an entry's first line of text.
    fn first_column(&self, short_only: bool) -> usize {
        if short_only {
            self.short_only_column
        } else {
            self.column
        }
    }
}

impl Default for Layout {
    fn default() -> Self {
        Layout::GNU
    }
}

impl<R> Flag<R> {
    fn with(
        short: Option<char>,
        long: Option<&'static str>,
        value: ValueKind,
        value_name: &'static str,
        in_2_4: bool,
    ) -> Self {
        Flag {
            short,
            long,
            value,
            value_name,
            value_hidden: false,
            in_2_4,
            hidden: false,
            default: None,
            help: "",
            long_help: None,
            effect: Effect::Apply(|_, _| Ok(())),
        }
    }

    /// An option of the C tool (2.4): `-x` (if `short`) and `--long`.
    pub fn c(
        short: Option<char>,
        long: &'static str,
        value: ValueKind,
        value_name: &'static str,
    ) -> Self {
        Self::with(short, Some(long), value, value_name, true)
    }

    /// An option of the C tool with a short spelling only (`-x`).
    pub fn c_short(short: char, value: ValueKind, value_name: &'static str) -> Self {
        Self::with(Some(short), None, value, value_name, true)
    }

    /// One of ours, newer than 2.4, long only: it never changes what a 2.4
    /// abbreviation means.
    pub fn new_long(long: &'static str, value: ValueKind, value_name: &'static str) -> Self {
        Self::with(None, Some(long), value, value_name, false)
    }

    /// One of ours with a short spelling too.
    pub fn new(
        short: Option<char>,
        long: &'static str,
        value: ValueKind,
        value_name: &'static str,
    ) -> Self {
        Self::with(short, Some(long), value, value_name, false)
    }

    /// An existing table row as a definition (its spellings, value kind,
    /// age and visibility).
    pub fn from_row<T>(row: &OptSpec<T>, value_name: &'static str) -> Self {
        Flag {
            hidden: row.hidden,
            ..Self::with(row.short, row.long, row.value, value_name, row.in_2_4)
        }
    }

    /// The help lines, joined by newlines (see [`Flag::help`]).
    pub fn help(self, lines: &'static str) -> Self {
        Flag {
            help: lines,
            ..self
        }
    }

    /// Help lines made at run time (a constant's value in the text): for
    /// a definition made once, in a `static` list (the lines are leaked,
    /// to live as long as the program).
    pub fn help_owned(self, lines: Vec<String>) -> Self {
        self.help(lines.join("\n").leak())
    }

    /// The lines of its help (none for `""`).
    pub fn help_lines(&self) -> impl Iterator<Item = &'static str> {
        let help = self.help;
        (!help.is_empty())
            .then(|| help.split('\n'))
            .into_iter()
            .flatten()
    }

    /// A default made at run time (see [`Flag::help_owned`]).
    pub fn default_owned(self, shown: String) -> Self {
        self.default(shown.leak())
    }

    /// The value is not shown: the help spells the option as a flag
    /// (`-f, --fork`) though it reads a value.
    pub fn value_hidden(self) -> Self {
        Flag {
            value_hidden: true,
            ..self
        }
    }

    /// The default shown in the help.
    pub fn default(self, shown: &'static str) -> Self {
        Flag {
            default: Some(shown),
            ..self
        }
    }

    /// The man page's text, when it differs from the help.
    pub fn long_help(self, text: &'static str) -> Self {
        Flag {
            long_help: Some(text),
            ..self
        }
    }

    /// Hidden: read, but in no help, page, completion or hint.
    pub fn hidden(self) -> Self {
        Flag {
            hidden: true,
            ..self
        }
    }

    /// What the option does to the raw state.
    pub fn apply(self, apply: Apply<R>) -> Self {
        Flag {
            effect: Effect::Apply(apply),
            ..self
        }
    }

    /// `--help` (and `-h` if `short`): "print this help", the option
    /// that asks for it.
    pub fn help_option(short: Option<char>) -> Self {
        Self::with(short, Some("help"), ValueKind::None, "", false)
            .help(crate::lines!["print this help"])
            .shows_help()
    }

    /// The option asks for the help.
    pub fn shows_help(self) -> Self {
        Flag {
            effect: Effect::Help,
            ..self
        }
    }

    /// How messages spell it.
    pub fn name(&self) -> Name {
        Name {
            short: self.short,
            long: self.long,
        }
    }

    /// The getopt row, without an id (what the man pages and the
    /// completions read of it).
    pub fn row(&self) -> OptSpec<()> {
        self.row_with(())
    }

    fn row_with<T>(&self, id: T) -> OptSpec<T> {
        OptSpec {
            id,
            short: self.short,
            long: self.long,
            value: self.value,
            in_2_4: self.in_2_4,
            hidden: self.hidden,
        }
    }

    /// The spellings with the value, as an entry shows them in
    /// cyclictest's layout: `-t, --threads[=N]`, `--json=FILE`, `-p US`.
    pub fn spec(&self) -> String {
        self.spec_in(&Layout::GNU)
    }

    /// The spellings with the value in `layout`: `--json FILE` when it
    /// joins values with a space.
    pub fn spec_in(&self, layout: &Layout) -> String {
        let value = match self.value {
            _ if self.value_hidden => String::new(),
            ValueKind::None => String::new(),
            ValueKind::Required if self.long.is_none() => format!(" {}", self.value_name),
            ValueKind::Required => format!("{}{}", layout.long_value, self.value_name),
            ValueKind::Optional(_) => format!("[={}]", self.value_name),
        };
        match (self.short, self.long) {
            (Some(s), Some(l)) => format!("-{s}, --{l}{value}"),
            (None, Some(l)) => format!("--{l}{value}"),
            (Some(s), None) => format!("-{s}{value}"),
            (None, None) => String::new(),
        }
    }

    /// The help lines of the text column, the default placed at the end
    /// of the last (`last_column`: the column the last line starts in).
    fn text_lines(&self, layout: &Layout, last_column: usize) -> Vec<String> {
        let mut lines: Vec<String> = self.help_lines().map(str::to_owned).collect();
        if let Some(default) = self.default {
            let last = lines.last_mut().expect("a default ends a help line");
            let end = last_column + last.chars().count();
            let shown = default.chars().count() + 2;
            let pad = match layout.default {
                DefaultAt::Column(column) => column.saturating_sub(end),
                DefaultAt::EndsAt(column) => column.saturating_sub(end + shown),
                DefaultAt::AfterText => 1,
            };
            let pad = if last.is_empty() { pad } else { pad.max(1) };
            last.push_str(&" ".repeat(pad));
            last.push('[');
            last.push_str(default);
            last.push(']');
        }
        lines
    }

    /// The entry as `--help` shows it in cyclictest's layout, each line
    /// ending in a newline.
    pub fn render(&self) -> String {
        self.render_in(&Layout::GNU)
    }

    /// The entry as `--help` shows it in `layout`.
    pub fn render_in(&self, layout: &Layout) -> String {
        let indent = if self.short.is_some() { "  " } else { "      " };
        let spec = format!("{indent}{}", self.spec_in(layout));
        let first = layout.first_column(self.long.is_none());
        let under = self.help.is_empty() || self.help.starts_with('\n');
        let last_column = if self.help.contains('\n') || under {
            layout.continuation
        } else {
            // The GNU layout's defaults were placed as if the first line
            // began at its column, however long the spellings.
            first
        };
        let lines = self.text_lines(layout, last_column);
        let mut out = String::new();
        let mut rest = lines.iter().map(String::as_str);
        match lines.first().map(String::as_str) {
            Some("") => {
                out.push_str(&spec);
                out.push('\n');
                rest.next();
            }
            Some(text) => {
                let width = (first - 2).max(spec.len());
                out.push_str(&format!("{spec:<width$}  {text}\n"));
                rest.next();
            }
            None => {
                out.push_str(&spec);
                out.push('\n');
            }
        }
        for line in rest {
            out.push_str(&" ".repeat(layout.continuation));
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// The entry as the man page and the completions read it, in
    /// cyclictest's layout.
    pub fn entry(&self) -> Entry {
        self.entry_in(&Layout::GNU)
    }

    /// The entry as the man page and the completions read it, in `layout`.
    pub fn entry_in(&self, layout: &Layout) -> Entry {
        let text = match self.long_help {
            Some(long) => long.lines().map(collapsed).collect(),
            None => self
                .text_lines(layout, layout.continuation)
                .iter()
                .filter(|l| !l.is_empty())
                .map(|l| collapsed(l))
                .collect(),
        };
        Entry {
            spec: self.spec_in(layout),
            text,
        }
    }
}

/// The name of the option of `flags` whose long spelling is `long`.
///
/// # Panics
///
/// When there is none: a definition's name is looked up by the tool that
/// defines it, and every tool's tests reach each lookup.
pub fn name_of<R>(flags: &[Flag<R>], long: &str) -> Name {
    flags
        .iter()
        .find(|f| f.long == Some(long))
        .map(Flag::name)
        .unwrap_or_else(|| panic!("no option --{long}"))
}

/// The entries of the options of `flags` with these long names, in this
/// order, for a page.
///
/// # Panics
///
/// When one is not in `flags` (see [`name_of`]).
pub fn pick<'a, R>(flags: &'a [Flag<R>], longs: &[&str]) -> Part<'a, R> {
    Part::Options(find(flags, longs))
}

/// The options of `flags` with these long names, in this order.
///
/// # Panics
///
/// When one is not in `flags` (see [`name_of`]).
pub fn find<'a, R>(flags: &'a [Flag<R>], longs: &[&str]) -> Vec<&'a Flag<R>> {
    longs
        .iter()
        .map(|long| {
            flags
                .iter()
                .find(|f| f.long == Some(*long))
                .unwrap_or_else(|| panic!("no option --{long}"))
        })
        .collect()
}

/// The name of the short-only option `-short` of `flags` (Xenomai's
/// `-p`).
///
/// # Panics
///
/// When there is none (see [`name_of`]).
pub fn name_of_short<R>(flags: &[Flag<R>], short: char) -> Name {
    find_short(flags, &[short])[0].name()
}

/// The options of `flags` spelled `-c` for each `c` of `shorts`, in this
/// order (for tools with short-only options).
///
/// # Panics
///
/// When one is not in `flags` (see [`name_of`]).
pub fn find_short<'a, R>(flags: &'a [Flag<R>], shorts: &[char]) -> Vec<&'a Flag<R>> {
    shorts
        .iter()
        .map(|short| {
            flags
                .iter()
                .find(|f| f.short == Some(*short))
                .unwrap_or_else(|| panic!("no option -{short}"))
        })
        .collect()
}

/// The options of `flags` that a shared group defines (`group`, the
/// group's definitions over any state), in the group's order: a page that
/// lists a group this way lists an option added to the group by itself.
pub fn like<'a, R, S>(flags: &'a [Flag<R>], group: &[Flag<S>]) -> Vec<&'a Flag<R>> {
    let longs: Vec<&str> = group.iter().filter_map(|f| f.long).collect();
    find(flags, &longs)
}

/// The getopt table of `flags` (their ids their indexes).
pub fn table<R>(flags: &[Flag<R>]) -> Vec<OptSpec<usize>> {
    flags
        .iter()
        .enumerate()
        .map(|(i, f)| f.row_with(i))
        .collect()
}

/// What a command line asks once read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// Every option was applied.
    Options,
    /// An option asked for the help.
    Help,
}

/// Scans `args` with the table of `flags` and applies each option to `raw`
/// in command-line order; stops at the first error or at the help.
pub fn parse<R>(flags: &[Flag<R>], args: &[OsString], raw: &mut R) -> Result<Read, UsageError> {
    parse_with(flags, args, raw, |e| UsageError(e.to_string()))
}

/// [`parse`], with the tool's own message for some of getopt's errors
/// (`getopt_error` makes the message of each).
pub fn parse_with<R>(
    flags: &[Flag<R>],
    args: &[OsString],
    raw: &mut R,
    getopt_error: impl Fn(GetoptError) -> UsageError,
) -> Result<Read, UsageError> {
    // No operands: refused with opt_values' message.
    scan(flags, args, raw, getopt_error, |_, word| {
        opt_values::<usize>(vec![Parsed::Positional(word)]).try_for_each(|item| item.map(drop))
    })
}

/// [`parse`] for a tool that takes operands (files, a load spec): each
/// word that is not an option goes to `operand`, in command-line order
/// among the options, which may refuse it.
pub fn parse_with_operands<R>(
    flags: &[Flag<R>],
    args: &[OsString],
    raw: &mut R,
    operand: impl FnMut(&mut R, OsString) -> Result<(), UsageError>,
) -> Result<Read, UsageError> {
    scan(flags, args, raw, |e| UsageError(e.to_string()), operand)
}

/// The getopt scan under [`parse`], [`parse_with`] and
/// [`parse_with_operands`].
fn scan<R>(
    flags: &[Flag<R>],
    args: &[OsString],
    raw: &mut R,
    getopt_error: impl Fn(GetoptError) -> UsageError,
    mut operand: impl FnMut(&mut R, OsString) -> Result<(), UsageError>,
) -> Result<Read, UsageError> {
    let items = getopt_long(args, &table(flags)).map_err(getopt_error)?;
    for item in items {
        let (index, value) = match item {
            Parsed::Positional(word) => {
                operand(raw, word)?;
                continue;
            }
            Parsed::Opt { id, value, .. } => (id, value),
        };
        let flag = &flags[index];
        match flag.effect {
            Effect::Help => return Ok(Read::Help),
            Effect::Apply(apply) => apply(
                raw,
                Value {
                    name: flag.name(),
                    raw: value.as_deref(),
                },
            )?,
        }
    }
    Ok(Read::Options)
}

/// One part of a help page.
#[derive(Clone, Debug)]
pub enum Part<'a, R> {
    /// Prose in column 0, after a blank line.
    Paragraph(String),
    /// A group's heading (without its colon), after a blank line; its
    /// options follow right under it.
    Heading(&'static str),
    /// Option entries, right under a heading (else after a blank line).
    Options(Vec<&'a Flag<R>>),
    /// Lines shown as they are, indented two columns, right under the
    /// paragraph before (an example).
    Example(&'static str),
    /// Terms and what each means, right under the paragraph before: each
    /// term indented two columns, its text at `column` (see [`terms`] for
    /// one line each).
    Terms {
        /// Where the texts start.
        column: usize,
        /// How much further than `column` the lines that carry on a line
        /// of its own (`op: ...` under a kind of load) start.
        hang: usize,
        /// The terms; a text line marked `true` starts a line of its own
        /// (at `column`), the others carry on the line before.
        terms: Vec<Term>,
    },
    /// A list right under the paragraph before: each item's lines, the
    /// first after `  - `, the others indented four columns.
    Bullets(Vec<Vec<String>>),
    /// Prose in column 0 right under the part before (no blank line: a
    /// sentence a list interrupts).
    Continued(String),
    /// A section of indented prose, right under the paragraph before:
    /// each line indented two columns; a run of lines written with spaces
    /// in front (indented further) is shown as it is, less the
    /// indentation the run shares; the others are prose.
    Indented(String),
}

/// A tool's options and its help page, read the three ways a tool
/// needs: the getopt table, the `--help` text, and the model the man
/// pages and completions are made from. A tool's command-line module
/// defines one, `pub static MANUAL: &dyn Manual = &Pages { .. }`; its
/// raw state stays private.
pub trait Manual: Sync {
    /// The option table, as the man page and the completions see it.
    fn table(&self) -> Vec<OptSpec<()>>;

    /// The text of `--help`.
    fn help_text(&self) -> String;

    /// What the man page and the completions read of the help.
    fn help_model(&self) -> Help;
}

/// The [`Manual`] of a tool whose raw state is `R`: its option
/// definitions and its `--help` page.
#[derive(Debug)]
pub struct Pages<R: 'static> {
    /// The tool's option definitions.
    pub flags: &'static LazyLock<Vec<Flag<R>>>,
    /// Its `--help` page.
    pub page: fn() -> Page<'static, R>,
}

impl<R: Send + Sync> Manual for Pages<R> {
    fn table(&self) -> Vec<OptSpec<()>> {
        self.flags.iter().map(Flag::row).collect()
    }

    fn help_text(&self) -> String {
        (self.page)().render()
    }

    fn help_model(&self) -> Help {
        (self.page)().model()
    }
}

/// A tool's `--help`: its title, usage lines and parts.
#[derive(Clone, Debug)]
pub struct Page<'a, R> {
    /// The first line.
    pub title: String,
    /// The usage lines (the first after `Usage: `).
    pub usage: Vec<String>,
    /// Everything after.
    pub parts: Vec<Part<'a, R>>,
    /// How the option entries are laid out ([`Layout::GNU`] for
    /// cyclictest's).
    pub layout: Layout,
}

impl<R> Page<'_, R> {
    /// The text of `--help`.
    pub fn render(&self) -> String {
        let mut out = format!("{}\n\n", self.title);
        for (i, usage) in self.usage.iter().enumerate() {
            let lead = if i == 0 { "Usage: " } else { "       " };
            out.push_str(&format!("{lead}{usage}\n"));
        }
        let mut after_heading = false;
        for part in &self.parts {
            let tight = after_heading
                || matches!(
                    part,
                    Part::Example(_)
                        | Part::Terms { .. }
                        | Part::Indented(_)
                        | Part::Bullets(_)
                        | Part::Continued(_)
                );
            if !tight {
                out.push('\n');
            }
            after_heading = false;
            match part {
                Part::Paragraph(text) | Part::Continued(text) => {
                    out.push_str(text);
                    out.push('\n');
                }
                Part::Heading(text) => {
                    out.push_str(text);
                    out.push_str(":\n");
                    after_heading = true;
                }
                Part::Options(flags) => {
                    for flag in flags.iter().filter(|f| !f.hidden) {
                        out.push_str(&flag.render_in(&self.layout));
                    }
                }
                Part::Example(text) => {
                    for line in text.lines() {
                        out.push_str(&format!("  {line}\n"));
                    }
                }
                Part::Terms {
                    column,
                    hang,
                    terms,
                } => {
                    for term in terms {
                        out.push_str(&render_term(term, *column, *hang));
                    }
                }
                Part::Indented(text) => {
                    for line in text.lines() {
                        out.push_str(&format!("  {line}\n"));
                    }
                }
                Part::Bullets(items) => {
                    for item in items {
                        for (i, line) in item.iter().enumerate() {
                            let lead = if i == 0 { "  - " } else { "    " };
                            out.push_str(&format!("{lead}{line}\n"));
                        }
                    }
                }
            }
        }
        out
    }

    /// The page's parts as the man pages and completions read them.
    pub fn model(&self) -> Help {
        let blocks = self
            .parts
            .iter()
            .map(|part| match part {
                Part::Paragraph(text) | Part::Continued(text) => {
                    Block::Paragraph(text.lines().map(str::to_owned).collect())
                }
                Part::Heading(text) => Block::Heading((*text).to_owned()),
                Part::Options(flags) => Block::Options(
                    flags
                        .iter()
                        .filter(|f| !f.hidden)
                        .map(|f| f.entry_in(&self.layout))
                        .collect(),
                ),
                Part::Example(text) => Block::Verbatim(text.lines().map(str::to_owned).collect()),
                Part::Terms { terms, .. } => Block::Terms(
                    terms
                        .iter()
                        .map(|term| Term {
                            term: term.term.clone(),
                            lines: term
                                .lines
                                .iter()
                                .map(|(own, line)| (*own, collapsed(line)))
                                .collect(),
                        })
                        .collect(),
                ),
                Part::Indented(text) => Block::Indented(indented_blocks(text)),
                Part::Bullets(items) => Block::Bullets(
                    items
                        .iter()
                        .map(|item| item.iter().map(|l| collapsed(l)).collect())
                        .collect(),
                ),
            })
            .collect();
        Help {
            title: self.title.clone(),
            // The synopsis: a usage line's runs of spaces (lining up a
            // note in --help) made one.
            usage: self.usage.iter().map(|u| collapsed(u)).collect(),
            blocks,
        }
    }
}

/// Terms with a one-line text each, (term, text), texts at `column`.
pub fn terms<'a, R>(column: usize, pairs: &[(&str, &str)]) -> Part<'a, R> {
    Part::Terms {
        column,
        hang: 0,
        terms: pairs
            .iter()
            .map(|(term, text)| Term {
                term: (*term).to_owned(),
                lines: vec![(false, (*text).to_owned())],
            })
            .collect(),
    }
}

/// One term of a [`Part::Terms`] as `--help` shows it.
fn render_term(term: &Term, column: usize, hang: usize) -> String {
    let mut out = String::new();
    // Whether the line before is, or carries on, a line of its own.
    let mut in_own_line = false;
    for (i, (own, line)) in term.lines.iter().enumerate() {
        if i == 0 {
            let width = column.saturating_sub(2).max(term.term.chars().count() + 2);
            out.push_str(&format!("  {:<width$}{line}\n", term.term));
        } else {
            let at = if in_own_line && !own {
                column + hang
            } else {
                column
            };
            out.push_str(&format!("{}{line}\n", " ".repeat(at)));
        }
        in_own_line = in_own_line || *own;
    }
    out
}

/// The prose and the lines shown as they are of a [`Part::Indented`]:
/// a run of lines in its own column is a paragraph, a run of lines
/// indented further a verbatim block.
fn indented_blocks(text: &str) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    for line in text.lines() {
        let prose = !line.starts_with(' ');
        match (blocks.last_mut(), prose) {
            (Some(Block::Paragraph(lines)), true) => lines.push(line.trim().to_owned()),
            (Some(Block::Verbatim(lines)), false) => lines.push(line.to_owned()),
            (_, true) => blocks.push(Block::Paragraph(vec![line.trim().to_owned()])),
            (_, false) => blocks.push(Block::Verbatim(vec![line.to_owned()])),
        }
    }
    // What is shown as it is, less the indentation its block shares.
    for block in &mut blocks {
        if let Block::Verbatim(lines) = block {
            let shared = lines
                .iter()
                .map(|l| l.len() - l.trim_start_matches(' ').len())
                .min()
                .unwrap_or(0);
            for line in lines.iter_mut() {
                line.drain(..shared);
            }
        }
    }
    blocks
}

/// Every flag of `flags` that a page's parts list, and those they do not:
/// `(listed twice or more, visible but not listed)` as spellings: a page's
/// test asks for both to be empty.
pub fn unlisted<R>(flags: &[Flag<R>], page: &Page<'_, R>) -> (Vec<String>, Vec<String>) {
    let listed: Vec<Name> = page
        .parts
        .iter()
        .flat_map(|p| match p {
            Part::Options(f) => f.iter().map(|f| f.name()).collect(),
            _ => Vec::new(),
        })
        .collect();
    let twice = listed
        .iter()
        .enumerate()
        .filter(|(i, n)| listed[..*i].contains(n))
        .map(|(_, n)| n.spelling())
        .collect();
    let missing = flags
        .iter()
        .filter(|f| !f.hidden && !listed.contains(&f.name()))
        .map(|f| f.name().spelling())
        .collect();
    (twice, missing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::getopt::{NO, OPT_NUM, REQ};

    #[derive(Default)]
    struct Raw {
        quiet: bool,
        threads: Option<Option<String>>,
        json: Option<OsString>,
    }

    fn flags() -> Vec<Flag<Raw>> {
        vec![
            Flag::c(Some('q'), "quiet", NO, "")
                .help(crate::lines!["print less"])
                .apply(|r: &mut Raw, _| {
                    r.quiet = true;
                    Ok(())
                }),
            Flag::c(Some('t'), "threads", OPT_NUM, "N")
                .help(crate::lines!["number of threads"])
                .default("1")
                .apply(|r: &mut Raw, v| {
                    r.threads = Some(v.optional()?);
                    Ok(())
                }),
            Flag::new_long("json-output-file", REQ, "FILE")
                .help(crate::lines!["", "write JSON to FILE"])
                .apply(|r: &mut Raw, v| {
                    r.json = Some(v.os());
                    Ok(())
                }),
            Flag::c(Some('?'), "help", NO, "")
                .help(crate::lines!["print this help"])
                .shows_help(),
        ]
    }

    fn words(w: &[&str]) -> Vec<OsString> {
        w.iter().map(OsString::from).collect()
    }

    #[test]
    fn applies_in_order_and_stops_at_help() {
        let flags = flags();
        let mut raw = Raw::default();
        let read = parse(&flags, &words(&["-qt4", "--json-o", "x"]), &mut raw).unwrap();
        assert_eq!(read, Read::Options);
        assert!(raw.quiet);
        assert_eq!(raw.threads, Some(Some("4".to_owned())));
        assert_eq!(raw.json, Some(OsString::from("x")));
        let mut raw = Raw::default();
        assert_eq!(
            parse(&flags, &words(&["-?", "stray"]), &mut raw).unwrap(),
            Read::Help
        );
        let e = parse(&flags, &words(&["stray"]), &mut Raw::default()).unwrap_err();
        assert_eq!(e.0, "unexpected argument 'stray'");
    }

    #[test]
    fn entries_are_laid_out_in_columns() {
        let flags = flags();
        assert_eq!(
            flags[1].render(),
            format!(
                "  -t, --threads[=N]      number of threads{}[1]\n",
                " ".repeat(70 - 25 - 17)
            )
        );
        assert_eq!(
            flags[2].render(),
            "      --json-output-file=FILE\n                         write JSON to FILE\n"
        );
        assert_eq!(flags[1].entry().text, ["number of threads [1]"]);
        assert_eq!(name_of(&flags, "threads").spelling(), "-t/--threads");
    }

    #[test]
    fn other_layouts_place_text_values_and_defaults() {
        // Xenomai's latency: short options' text at 12, long ones' at 24,
        // further lines at 12, lines with a default 69 long.
        let xenomai = Layout {
            column: 24,
            short_only_column: 12,
            continuation: 12,
            long_value: '=',
            default: DefaultAt::EndsAt(69),
        };
        let period = Flag::<Raw>::c_short('p', REQ, "US")
            .help(crate::lines![
                "sampling period in microseconds, 1 to 1000000"
            ])
            .default("100");
        assert_eq!(
            period.render_in(&xenomai),
            "  -p US     sampling period in microseconds, 1 to 1000000       [100]\n"
        );
        let json = Flag::<Raw>::new_long("json", REQ, "FILE")
            .help(crate::lines!["write JSON to FILE", "(- for stdout)"]);
        assert_eq!(
            json.render_in(&xenomai),
            "      --json=FILE       write JSON to FILE\n            (- for stdout)\n"
        );
        // rtlat load's: `--opt VALUE`, text at 27, a default on a line of
        // its own ending in column 40.
        let load = Layout {
            default: DefaultAt::EndsAt(40),
            ..Layout::spaced(27)
        };
        let duration = Flag::<Raw>::c(Some('D'), "duration", REQ, "DURATION")
            .help(crate::lines!["stop after DURATION", ""])
            .default("0");
        assert_eq!(
            duration.render_in(&load),
            format!(
                "  -D, --duration DURATION  stop after DURATION\n{}[0]\n",
                " ".repeat(37)
            )
        );
        assert_eq!(duration.entry_in(&load).spec, "-D, --duration DURATION");
        assert_eq!(
            duration.entry_in(&load).text,
            ["stop after DURATION", "[0]"]
        );
        let nice = Flag::<Raw>::new_long("nice", REQ, "N")
            .help_owned(vec!["nice value".to_owned()])
            .default_owned(0.to_string());
        assert_eq!(
            nice.render_in(&Layout::spaced(27)),
            "      --nice N             nice value [0]\n"
        );
    }

    #[test]
    fn a_hidden_value_and_a_tools_own_getopt_message() {
        let fork = Flag::<Raw>::c(Some('f'), "fork", OPT_NUM, "N")
            .help(crate::lines!["fork mode"])
            .value_hidden();
        assert_eq!(fork.spec(), "-f, --fork");
        assert_eq!(fork.spec_in(&Layout::spaced(20)), "-f, --fork");
        let e = parse_with(&flags(), &words(&["-2"]), &mut Raw::default(), |e| {
            UsageError(format!("ours: {e}"))
        })
        .unwrap_err();
        assert!(e.0.starts_with("ours: "), "{}", e.0);
    }

    #[test]
    fn a_page_renders_and_models_the_same_parts() {
        let flags = flags();
        let page = Page {
            title: "tool: does things".to_owned(),
            usage: vec!["tool [OPTIONS]".to_owned()],
            layout: Layout::GNU,
            parts: vec![
                Part::Paragraph("What it does.".to_owned()),
                Part::Heading("Options"),
                Part::Options(flags.iter().collect()),
                Part::Paragraph("Example:".to_owned()),
                Part::Example("tool -q"),
            ],
        };
        let text = page.render();
        assert_eq!(crate::docs::help::parse(&text), page.model());
        assert!(text.ends_with("\nExample:\n  tool -q\n"), "{text}");
        assert_eq!(unlisted(&flags, &page), (vec![], vec![]));
    }

    #[test]
    fn lists_terms_and_indented_prose_render_and_model_alike() {
        let page: Page<'_, Raw> = Page {
            title: "tool: does things".to_owned(),
            usage: vec!["tool A".to_owned(), "tool B        (a note)".to_owned()],
            layout: Layout::spaced(20),
            parts: vec![
                Part::Paragraph("It reads one of:".to_owned()),
                Part::Bullets(vec![
                    vec!["a file,".to_owned()],
                    vec!["a longer thing, over".to_owned(), "two lines;".to_owned()],
                ]),
                Part::Continued("and writes another.".to_owned()),
                Part::Paragraph("Statuses:".to_owned()),
                terms(11, &[("ok", "fine"), ("unknown", "not read")]),
                Part::Paragraph("Kinds:".to_owned()),
                Part::Terms {
                    column: 13,
                    hang: 4,
                    terms: vec![Term {
                        term: "cpu".to_owned(),
                        lines: vec![
                            (false, "arithmetic and".to_owned()),
                            (false, "more".to_owned()),
                            (true, "op: one sum".to_owned()),
                            (false, "of ten".to_owned()),
                        ],
                    }],
                },
                Part::Paragraph("When?".to_owned()),
                Part::Indented(
                    "A prose line that is long enough to be taken for prose, surely\n\
                     and its second line:\n  \x20 shown as it is\n    and this too\nprose again."
                        .to_owned(),
                ),
            ],
        };
        let text = page.render();
        assert_eq!(crate::docs::help::parse(&text), page.model());
        assert!(
            text.contains(
                "\nIt reads one of:\n  - a file,\n  - a longer thing, over\n    two lines;\n\
                 and writes another.\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  cpu        arithmetic and\n             more\n             op: one sum\n\
                 \x20                of ten\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  ok       fine\n  unknown  not read\n"),
            "{text}"
        );
    }
}
