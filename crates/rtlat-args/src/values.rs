//! What the tools' command lines share once getopt has scanned them: the
//! machine view they validate against, the one-line [`UsageError`], how an
//! option is spelt in messages, and the value readers every tool uses the
//! same way (integers within a range, `-D` durations, output file paths).
//!
//! Every message has the shape `-x/--long: invalid value 'V': expected ...`
//! (or `-x/--long: cannot write 'V': ...` for files), so a tool only says
//! which option it is and what it accepts; the wording of each tool's
//! options stays in that tool's module.
//!
//! Values come from getopt as the bytes given ([`OsString`]): a file name
//! stays a path whatever its bytes ([`new_file_path`]); every other value
//! must be text ([`text`]).

use std::ffi::{OsStr, OsString};
use std::fmt::{Debug, Display};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use rtlat_base::{Nanos, Resolution, TimeSourceKind};

use crate::UsageError;
use crate::getopt::{OptSpec, Parsed};

use crate::stdio::note;

/// What the command line needs to know about the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemView {
    /// The CPUs this process may run on (its scheduler affinity).
    pub allowed_cpus: Vec<usize>,
    /// The number of CPUs the machine has (`_SC_NPROCESSORS_CONF`).
    pub configured_cpus: usize,
}

impl SystemView {
    /// This process's view: its scheduler affinity (CPU 0 alone if that
    /// cannot be read) and the machine's CPU count.
    pub fn of_this_process() -> SystemView {
        SystemView {
            allowed_cpus: rtlat_sys::affinity::allowed_cpus().unwrap_or_else(|_| vec![0]),
            configured_cpus: rtlat_sys::system::configured_cpus(),
        }
    }
}

/// Prints a parsed command line's warnings, one complete stderr line each,
/// before anything else happens.
pub fn print_warnings(warnings: &[String]) {
    for w in warnings {
        note!("{w}");
    }
}

/// A tool's option id that can say how it is written in messages.
pub trait OptionName: Copy {
    /// `-t/--threads`, `--json`, `-F`.
    fn spelling(self) -> String;
}

/// How `id` is written in messages, from the first entry of `specs` with
/// that id: `-i/--interval`, `--json`, `-F`; the id's debug name if none.
pub fn spelling<'a, O: PartialEq + Debug + 'a>(
    id: O,
    specs: impl IntoIterator<Item = &'a OptSpec<O>>,
) -> String {
    let spec = specs.into_iter().find(|s| s.id == id);
    match spec.map(|s| (s.short, s.long)) {
        Some((Some(short), Some(long))) => format!("-{short}/--{long}"),
        Some((None, Some(long))) => format!("--{long}"),
        Some((Some(short), None)) => format!("-{short}"),
        _ => format!("{id:?}"),
    }
}

/// `<option>: invalid value '<value>': <expected>`.
pub fn invalid(id: impl OptionName, value: &str, expected: impl Display) -> UsageError {
    UsageError(format!(
        "{}: invalid value '{value}': {expected}",
        id.spelling()
    ))
}

/// The options of a scanned command line with their values, in order; a
/// word that is not an option is an error where it stands (so an option
/// before it, `-h`, still counts).
pub fn opt_values<O>(
    items: Vec<Parsed<O>>,
) -> impl Iterator<Item = Result<(O, Option<OsString>), UsageError>> {
    items.into_iter().map(|item| match item {
        Parsed::Positional(word) => Err(UsageError(format!(
            "unexpected argument '{}'",
            word.to_string_lossy()
        ))),
        Parsed::Opt { id, value, .. } => Ok((id, value)),
    })
}

/// An option's value as text (empty when it has none): anything but a file
/// name must be UTF-8, or it is refused in one line naming the option.
pub fn text(id: impl OptionName, value: Option<&OsStr>) -> Result<String, UsageError> {
    let value = value.unwrap_or_default();
    value.to_str().map(str::to_owned).ok_or_else(|| {
        UsageError(format!(
            "{}: invalid value '{}': not valid UTF-8 (only file names may be any bytes)",
            id.spelling(),
            value.to_string_lossy()
        ))
    })
}

/// An optional value (`-t`, `-a` alone or with a value) as text; see
/// [`text`].
pub fn optional_text(
    id: impl OptionName,
    value: Option<&OsStr>,
) -> Result<Option<String>, UsageError> {
    value.map(|v| text(id, Some(v))).transpose()
}

/// Strict integer: surrounding blanks ignored (as atoi skips leading ones),
/// nothing else around the digits.
pub fn int<I: std::str::FromStr>(raw: &str) -> Option<I> {
    raw.trim().parse().ok()
}

/// An integer within `range`, or an error naming the option:
/// `expected <what>, <start> to <end>`.
pub fn int_in(
    id: impl OptionName,
    raw: &str,
    range: RangeInclusive<i64>,
    what: &str,
) -> Result<i64, UsageError> {
    match int::<i64>(raw) {
        Some(v) if range.contains(&v) => Ok(v),
        _ => Err(invalid(
            id,
            raw,
            format_args!("expected {what}, {} to {}", range.start(), range.end()),
        )),
    }
}

/// The hidden `--synthetic SEED` (spelled by `id`): the seeded synthetic
/// clock, or the real one without the option.
pub fn time_source(id: impl OptionName, seed: Option<&str>) -> Result<TimeSourceKind, UsageError> {
    match seed {
        Some(text) => Ok(TimeSourceKind::Synthetic {
            seed: int::<u64>(text).ok_or_else(|| {
                invalid(id, text, format_args!("expected a seed, 0 to {}", u64::MAX))
            })?,
        }),
        None => Ok(TimeSourceKind::Real),
    }
}

/// An option's integer within `range` (see [`int_in`]), or `default`
/// when the option was not given.
pub fn int_in_or(
    id: impl OptionName,
    raw: Option<&str>,
    range: RangeInclusive<i64>,
    what: &str,
    default: i64,
) -> Result<i64, UsageError> {
    match raw {
        Some(text) => int_in(id, text, range, what),
        None => Ok(default),
    }
}

/// The unit of a run's figures: whole nanoseconds when `nsecs` (chosen by
/// the option spelled `spelled`, `-N` or `--nsecs`), else whole
/// microseconds; with the unit's name for messages.
pub fn resolution(nsecs: bool, spelled: &str) -> (Resolution, String) {
    if nsecs {
        (Resolution::Nanos, format!("nanoseconds ({spelled})"))
    } else {
        (Resolution::Micros, "microseconds".to_string())
    }
}

/// `-l`: a count of `what`, 0 for no limit (`None`).
pub fn loop_limit(id: impl OptionName, text: &str, what: &str) -> Result<Option<u64>, UsageError> {
    match int::<u64>(text) {
        Some(0) => Ok(None),
        Some(n) => Ok(Some(n)),
        None => Err(invalid(
            id,
            text,
            format_args!("expected {what}, 0 (no limit) or more"),
        )),
    }
}

/// What `-D` accepts, for the message of a malformed value.
pub const DURATION_EXPECTED: &str = "expected a whole number of seconds, optionally followed by \
                                     s, m, h or d (90, 10m, 2h); 0 for no limit";

/// Why a `-D` value was refused by [`duration`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurationError {
    /// Not digits with at most one unit letter s, m, h or d.
    Malformed,
    /// Only digits (and a unit), but more seconds than an `i64` holds.
    SecondsOverflow,
    /// A whole number of seconds, but more nanoseconds than an `i64` holds.
    TooLong,
}

/// What an over-long `-D` value gets: the most an `i64` of nanoseconds
/// holds.
pub const DURATION_TOO_LONG: &str = "too long: at most 292 years (9223372036 seconds)";

/// `-D` of any tool (`-T` of latency, `load -D`): [`duration`], with the
/// same message for the same bad value everywhere.
pub fn duration_option(id: impl OptionName, text: &str) -> Result<Option<Nanos>, UsageError> {
    duration(text).map_err(|e| match e {
        DurationError::Malformed => invalid(id, text, DURATION_EXPECTED),
        DurationError::SecondsOverflow | DurationError::TooLong => {
            invalid(id, text, DURATION_TOO_LONG)
        }
    })
}

/// `-D`: whole seconds with an optional single suffix s, m, h or d
/// (surrounding blanks ignored); `None` for 0, no limit.
pub fn duration(text: &str) -> Result<Option<Nanos>, DurationError> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_lowercase()),
        _ => (t, 's'),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DurationError::Malformed);
    }
    let scale = unit_seconds(unit).ok_or(DurationError::Malformed)?;
    let secs: i64 = digits.parse().map_err(|_| DurationError::SecondsOverflow)?;
    let nanos = secs
        .checked_mul(scale)
        .and_then(|s| s.checked_mul(1_000_000_000))
        .ok_or(DurationError::TooLong)?;
    Ok((nanos != 0).then_some(Nanos(nanos)))
}

/// The seconds in one of `-D`'s units: `s`, `m`, `h`, `d` (any case).
fn unit_seconds(unit: char) -> Option<i64> {
    match unit.to_ascii_lowercase() {
        's' => Some(1),
        'm' => Some(60),
        'h' => Some(3600),
        'd' => Some(86_400),
        _ => None,
    }
}

/// A decimal length with an optional unit, read exactly into nanoseconds
/// (surrounding blanks ignored): digits with at most one point (`2`, `0.5`,
/// `.25`), then nothing (seconds) or one of the units `-D` takes, `s`, `m`,
/// `h`, `d`, or `ms` (`100ms`, `1.5m`, `2s`; any case). No sign, no
/// exponent. `None` for anything else, for a length finer than a
/// nanosecond, or for more than an `i64` of nanoseconds.
pub fn decimal_duration(text: &str) -> Option<Nanos> {
    let t = text.trim();
    let (number, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
    let mut letters = unit.chars();
    let unit_ns: i128 = match (letters.next(), letters.next(), letters.next()) {
        (None, _, _) => 1_000_000_000,
        (Some('m' | 'M'), Some('s' | 'S'), None) => 1_000_000,
        (Some(one), None, _) => i128::from(unit_seconds(one)?) * 1_000_000_000,
        _ => return None,
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty())
        || !digits(whole)
        || !digits(fraction)
        || whole.len() + fraction.len() > 30
    {
        return None;
    }
    // `whole.fraction` as an integer over 10^(fraction digits).
    let mantissa: i128 = format!("0{whole}{fraction}").parse().ok()?;
    let scale = 10_i128.checked_pow(u32::try_from(fraction.len()).ok()?)?;
    let scaled_ns = mantissa.checked_mul(unit_ns)?;
    if scaled_ns % scale != 0 {
        return None;
    }
    i64::try_from(scaled_ns / scale).ok().map(Nanos)
}

/// How [`new_file_path`] reports a parent directory it cannot use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirReport {
    /// Always `directory 'D' does not exist`.
    Missing,
    /// Tells a missing directory from a non-directory and from any other
    /// error of looking it up.
    Detailed,
}

/// A file the run writes (`--json`, `--histfile`, `--junit`, ...), checked
/// now, before anything is measured: a name, not a directory, in a
/// directory that exists, and writable there (name length, free space, a
/// probe file: see [`crate::output_file::check`]). `raw` is the option's
/// value, any bytes; `verb` says what cannot be done in messages (`cannot
/// write 'x'`).
pub fn new_file_path(
    id: impl OptionName,
    raw: &OsStr,
    verb: &str,
    report: DirReport,
) -> Result<PathBuf, UsageError> {
    checked_path((id, raw, verb), report, crate::output_file::check)
}

/// A file the run makes itself at its start (`-F`'s FIFO): its name and
/// directory are checked now, as for [`new_file_path`], the rest when it
/// is made.
pub fn new_node_path(
    id: impl OptionName,
    raw: &OsStr,
    verb: &str,
    report: DirReport,
) -> Result<PathBuf, UsageError> {
    checked_path((id, raw, verb), report, crate::output_file::check_name)
}

/// [`path_in_a_directory`], then `check` on the path.
fn checked_path(
    (id, raw, verb): (impl OptionName, &OsStr, &str),
    report: DirReport,
    check: fn(&Path) -> Result<(), crate::output_file::Refusal>,
) -> Result<PathBuf, UsageError> {
    let path = path_in_a_directory(id, raw, verb, report)?;
    check(&path).map_err(|why| cannot(id, raw, verb, why))?;
    Ok(path)
}

/// `<option>: cannot <verb> '<path>': <why>`.
fn cannot(id: impl OptionName, raw: &OsStr, verb: &str, why: impl Display) -> UsageError {
    UsageError(format!(
        "{}: cannot {verb} '{}': {why}",
        id.spelling(),
        raw.to_string_lossy()
    ))
}

/// Not empty, not a directory, and its directory exists now.
fn path_in_a_directory(
    id: impl OptionName,
    raw: &OsStr,
    verb: &str,
    report: DirReport,
) -> Result<PathBuf, UsageError> {
    if raw.is_empty() {
        return Err(invalid(id, "", "expected a file name"));
    }
    let path = Path::new(raw);
    if path.is_dir() {
        return Err(cannot(id, raw, verb, "it is a directory"));
    }
    let dir = crate::output_file::directory_of(path);
    let missing = || {
        cannot(
            id,
            raw,
            verb,
            format_args!("directory '{}' does not exist", dir.display()),
        )
    };
    match report {
        DirReport::Missing if dir.is_dir() => Ok(path.to_path_buf()),
        DirReport::Missing => Err(missing()),
        DirReport::Detailed => match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => Ok(path.to_path_buf()),
            Ok(_) => Err(cannot(
                id,
                raw,
                verb,
                format_args!("'{}' is not a directory", dir.display()),
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(missing()),
            Err(e) => Err(cannot(
                id,
                raw,
                verb,
                format_args!("directory '{}': {e}", dir.display()),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_durations_are_read_exactly() {
        for (text, ns) in [
            ("2", 2_000_000_000),
            ("0.5", 500_000_000),
            (".25", 250_000_000),
            ("3.", 3_000_000_000),
            (" 0.01 ", 10_000_000),
            ("1.000000001", 1_000_000_001),
            ("86400", 86_400_000_000_000),
            ("0", 0),
            ("100ms", 100_000_000),
            ("100MS", 100_000_000),
            ("0.5ms", 500_000),
            ("2s", 2_000_000_000),
            ("1.5m", 90_000_000_000),
            ("1h", 3_600_000_000_000),
            ("1d", 86_400_000_000_000),
            ("0.000001ms", 1),
            (" 10ms ", 10_000_000),
        ] {
            assert_eq!(decimal_duration(text), Some(Nanos(ns)), "{text:?}");
        }
        for text in [
            "",
            ".",
            "ms",
            "-1",
            "+1",
            "1e3",
            "0x10",
            "1.0000000001",
            "0.0000001ms",
            "1..2",
            "1,5",
            "abc",
            "1 s",
            "1us",
            "1sm",
            "99999999999",
            "1000000000000000000000000000000",
        ] {
            assert_eq!(decimal_duration(text), None, "{text:?}");
        }
    }
}
