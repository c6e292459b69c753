//! A faithful emulation of GNU `getopt_long`, the option scanner the rt-tests
//! tools use.
//!
//! Why not clap: the compatibility contract is getopt's exact habits, and
//! several of them cannot be expressed in clap:
//!
//! - short clusters where a value-taking option swallows the rest of the
//!   word (`-qmp99`), and a single argv word such as `"-h 3500"` (what rteval
//!   passes) meaning `-h` with the value `" 3500"`;
//! - optional values that getopt only takes attached (`-t4`, `--threads=4`),
//!   to which cyclictest adds a peek at the next word (`-t 4`, `-a 0-3`);
//! - GNU permutation: options after positional words are still options,
//!   and `--` ends the options;
//! - long-option abbreviations, with one extra rule of ours: **a prefix that
//!   was unambiguous in cyclictest 2.4 keeps its meaning whatever long options
//!   we add later.** Each [`OptSpec`] says whether it existed in 2.4; a prefix
//!   is first matched against the 2.4 options only, and only when none of them
//!   matches do the newer ones take part. So adding `--synthetic` cannot turn
//!   `--sy` (2.4's `--system`) into an ambiguity.
//!
//! The scanner only splits words into options and values; it does not
//! interpret values. Callers validate them after the whole command line is
//! read, so that a repeated option takes its last value as with getopt.
//!
//! Words are scanned as bytes, not text: option names are ASCII, and a
//! value or positional word is handed over as the [`OsString`] it was, so
//! that a file name which is not UTF-8 reaches the file system intact (as
//! with C's getopt). Callers turn a value into text only where it must be
//! text (numbers, lists).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// When an optional value may be taken from the *next* argv word.
///
/// getopt itself only takes attached optional values (`-t4`,
/// `--threads=4`); cyclictest additionally looks at the following word and
/// uses it when it looks like a value. Unlike C we consume the word, so it
/// is not left behind as a stray positional argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peek {
    /// Only an attached value counts (plain getopt).
    Never,
    /// The next word is the value when it starts with an ASCII digit.
    Number,
    /// The next word is the value when it starts with a digit, `!` or `+`,
    /// or is exactly `all`.
    CpuList,
}

impl Peek {
    /// Whether `word` is taken as the value under this rule.
    fn takes(self, word: &[u8]) -> bool {
        match self {
            Peek::Never => false,
            Peek::Number => word.first().is_some_and(u8::is_ascii_digit),
            Peek::CpuList => {
                word.first()
                    .is_some_and(|c| c.is_ascii_digit() || *c == b'!' || *c == b'+')
                    || word == b"all"
            }
        }
    }
}

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// A flag: `--quiet=x` is an error.
    None,
    /// Always takes a value: attached (`-p99`, `--priority=99`) or the next word
    /// whatever it looks like (`-p 99`, `--priority -1`).
    Required,
    /// May take a value: attached, or from the next word as [`Peek`] says.
    Optional(Peek),
}

/// One option the scanner recognises.
#[derive(Clone, Copy, Debug)]
pub struct OptSpec<T> {
    /// What the caller gets back in [`Parsed::Opt`].
    pub id: T,
    /// The short spelling (`-p`), if any; ASCII.
    pub short: Option<char>,
    /// The long spelling without dashes (`priority`), if any; ASCII.
    pub long: Option<&'static str>,
    /// Whether and how it takes a value.
    pub value: ValueKind,
    /// Whether the long name existed in cyclictest 2.4: such names win the
    /// abbreviation match over names added later.
    pub in_2_4: bool,
    /// Left out of the help, the man page, the completions and the
    /// "did you mean" hints: a test seam, or an option that is only read
    /// to be refused with a reason (one of the C tool's that Linux cannot
    /// do, a shared option that this tool cannot honour). Set with
    /// [`OptSpec::hidden`].
    pub hidden: bool,
}

/// A flag: `--quiet=x` is an error.
pub const NO: ValueKind = ValueKind::None;
/// A value always: attached or the next word.
pub const REQ: ValueKind = ValueKind::Required;
/// A value only when attached or when the next word is a number.
pub const OPT_NUM: ValueKind = ValueKind::Optional(Peek::Number);
/// A value only when attached or when the next word looks like a CPU list.
pub const OPT_CPUS: ValueKind = ValueKind::Optional(Peek::CpuList);

impl<T> OptSpec<T> {
    /// An option of the C tool (2.4): `-x` (if `short`) and `--long`.
    pub const fn c(id: T, short: Option<char>, long: &'static str, value: ValueKind) -> Self {
        OptSpec {
            id,
            short,
            long: Some(long),
            value,
            in_2_4: true,
            hidden: false,
        }
    }

    /// An option of the C tool that has a short spelling only (`-x`).
    pub const fn c_short(id: T, short: char, value: ValueKind) -> Self {
        OptSpec {
            id,
            short: Some(short),
            long: None,
            value,
            in_2_4: true,
            hidden: false,
        }
    }

    /// One of ours, newer than 2.4, long only: it never changes what a 2.4
    /// abbreviation means.
    pub const fn new_long(id: T, long: &'static str, value: ValueKind) -> Self {
        OptSpec {
            id,
            short: None,
            long: Some(long),
            value,
            in_2_4: false,
            hidden: false,
        }
    }

    /// One of ours with a short spelling too (`-o`, `--output`).
    pub const fn new(id: T, short: Option<char>, long: &'static str, value: ValueKind) -> Self {
        OptSpec {
            id,
            short,
            long: Some(long),
            value,
            in_2_4: false,
            hidden: false,
        }
    }

    /// The same row for another id type: a shared group's row
    /// (`OptSpec<StopOpt>`) in a tool's table (`Opt::Stop`).
    pub fn map<U>(self, wrap: impl FnOnce(T) -> U) -> OptSpec<U> {
        OptSpec {
            id: wrap(self.id),
            short: self.short,
            long: self.long,
            value: self.value,
            in_2_4: self.in_2_4,
            hidden: self.hidden,
        }
    }

    /// The row without its id: what the documentation (man pages,
    /// completions) needs of it.
    pub fn names(&self) -> OptSpec<()> {
        OptSpec {
            id: (),
            short: self.short,
            long: self.long,
            value: self.value,
            in_2_4: self.in_2_4,
            hidden: self.hidden,
        }
    }
}

impl<T: Copy> OptSpec<T> {
    /// The same row, left out of the help, the man page, the completions
    /// and the hints (the parser still reads it).
    pub const fn hidden(self) -> Self {
        OptSpec {
            hidden: true,
            ..self
        }
    }
}

/// One scanned item, in command-line order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed<T> {
    /// An option.
    Opt {
        /// The spec's id.
        id: T,
        /// The option as the user wrote it (`-p`, `--prio`), for messages.
        spelled: String,
        /// Its value exactly as given (`-h 3500` in one word gives `" 3500"`),
        /// bytes and all.
        value: Option<OsString>,
    },
    /// A word that is not an option (or anything after `--`).
    Positional(OsString),
}

/// Why the scan failed. Display is one line without a program prefix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GetoptError {
    /// No option has this spelling; the hint names the nearest one.
    #[error("unrecognized option '{0}'{1}")]
    Unrecognized(String, Hint),
    /// A long-option prefix matches several options.
    #[error("option '{spelled}' is ambiguous (could be {})", .candidates.join(", "))]
    Ambiguous {
        /// The prefix as written, with its dashes.
        spelled: String,
        /// The full names it matches, with dashes, in table order.
        candidates: Vec<String>,
    },
    /// A value-taking option is the last word; for `-h`, the hint says that
    /// help is `--help`.
    #[error("option '{0}' requires a value{1}")]
    MissingValue(String, Hint),
    /// `--flag=value` for an option without a value.
    #[error("option '{0}' takes no value")]
    UnexpectedValue(String),
}

/// The end of a message that points the user on: ` (did you mean
/// '--histogram'? --help lists every option)`, or nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hint(String);

impl std::fmt::Display for Hint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Hint {
    /// For an option no spec has: the nearest long name, if one is close,
    /// and where the whole list is.
    fn for_unrecognized<T>(spelled: &str, specs: &[OptSpec<T>]) -> Hint {
        let help = has_help(specs).then_some("--help lists every option");
        let nearest = spelled
            .strip_prefix("--")
            .and_then(|name| nearest_long(name, specs))
            .map(|long| format!("did you mean '--{long}'?"));
        match (nearest, help) {
            (Some(nearest), Some(help)) => Hint(format!(" ({nearest} {help})")),
            (Some(nearest), None) => Hint(format!(" ({nearest})")),
            (None, Some(help)) => Hint(format!(" ({help})")),
            (None, None) => Hint::default(),
        }
    }

    /// For a value-taking `-h` at the end of the line: someone asking for
    /// help the way many programs take it.
    fn for_missing_value<T>(spelled: &str, specs: &[OptSpec<T>]) -> Hint {
        if spelled == "-h" && has_help(specs) {
            Hint(" (help is --help)".to_string())
        } else {
            Hint::default()
        }
    }
}

fn has_help<T>(specs: &[OptSpec<T>]) -> bool {
    specs.iter().any(|s| s.long == Some("help"))
}

/// The long name nearest to `name` by edit distance (a typo: at most two
/// edits, and fewer than the name's length), the first in table order on
/// a tie; never a hidden one.
fn nearest_long<T>(name: &str, specs: &[OptSpec<T>]) -> Option<&'static str> {
    specs
        .iter()
        .filter(|s| !s.hidden)
        .filter_map(|s| s.long)
        .map(|long| (strsim::damerau_levenshtein(name, long), long))
        .filter(|&(distance, _)| distance <= 2 && distance < name.len())
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, long)| long)
}

/// Scans `args` (without the program name) against `specs`.
pub fn getopt_long<T: Clone>(
    args: &[OsString],
    specs: &[OptSpec<T>],
) -> Result<Vec<Parsed<T>>, GetoptError> {
    let words: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let mut out = Vec::new();
    let mut next = 0;
    while next < words.len() {
        let word = words[next];
        next += 1;
        if word == b"--" {
            out.extend(words[next..].iter().map(|w| Parsed::Positional(owned(w))));
            break;
        }
        if let Some(body) = word.strip_prefix(b"--") {
            out.push(scan_long(body, specs, &words, &mut next)?);
        } else if let Some(cluster) = word.strip_prefix(b"-").filter(|c| !c.is_empty()) {
            scan_cluster(cluster, specs, &words, &mut next, &mut out)?;
        } else {
            out.push(Parsed::Positional(owned(word)));
        }
    }
    Ok(out)
}

/// A word's bytes as an owned argument.
fn owned(bytes: &[u8]) -> OsString {
    OsString::from_vec(bytes.to_vec())
}

/// Bytes shown in a message: invalid UTF-8 replaced.
fn lossy(bytes: &[u8]) -> String {
    OsStr::from_bytes(bytes).to_string_lossy().into_owned()
}

/// `--name`, `--name=value`, `--name value`.
fn scan_long<T: Clone>(
    body: &[u8],
    specs: &[OptSpec<T>],
    words: &[&[u8]],
    next: &mut usize,
) -> Result<Parsed<T>, GetoptError> {
    let (name, attached) = match body.iter().position(|&b| b == b'=') {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    if name.is_empty() {
        let spelled = format!("--{}", lossy(body));
        let hint = Hint::for_unrecognized(&spelled, specs);
        return Err(GetoptError::Unrecognized(spelled, hint));
    }
    let name = std::str::from_utf8(name).map_err(|_| {
        let spelled = format!("--{}", lossy(name));
        let hint = Hint::for_unrecognized(&spelled, specs);
        GetoptError::Unrecognized(spelled, hint)
    })?;
    let spec = find_long(specs, name)?;
    let full = format!("--{}", spec.long.unwrap_or(name));
    let value = match spec.value {
        ValueKind::None => {
            if attached.is_some() {
                return Err(GetoptError::UnexpectedValue(full));
            }
            None
        }
        ValueKind::Required => match attached {
            Some(value) => Some(owned(value)),
            None => match take_next(words, next) {
                Some(value) => Some(value),
                None => {
                    let hint = Hint::for_missing_value(&full, specs);
                    return Err(GetoptError::MissingValue(full, hint));
                }
            },
        },
        ValueKind::Optional(peek) => match attached {
            Some(value) => Some(owned(value)),
            None => peek_next(words, next, peek),
        },
    };
    Ok(Parsed::Opt {
        id: spec.id.clone(),
        spelled: format!("--{name}"),
        value,
    })
}

/// `-abc`: flags until one takes a value, which then gets the rest of the
/// word (or the next word).
fn scan_cluster<T: Clone>(
    cluster: &[u8],
    specs: &[OptSpec<T>],
    words: &[&[u8]],
    next: &mut usize,
    out: &mut Vec<Parsed<T>>,
) -> Result<(), GetoptError> {
    for (pos, &byte) in cluster.iter().enumerate() {
        // Short options are ASCII: a byte beyond is no option's (shown as
        // the character it starts).
        let spec = byte
            .is_ascii()
            .then(|| specs.iter().find(|s| s.short == Some(char::from(byte))))
            .flatten()
            .ok_or_else(|| {
                let shown = lossy(&cluster[pos..]).chars().next().unwrap_or('?');
                let spelled = format!("-{shown}");
                let hint = Hint::for_unrecognized(&spelled, specs);
                GetoptError::Unrecognized(spelled, hint)
            })?;
        let spelled = format!("-{}", char::from(byte));
        let rest = &cluster[pos + 1..];
        let value = match spec.value {
            ValueKind::None => None,
            ValueKind::Required if !rest.is_empty() => Some(owned(rest)),
            ValueKind::Required => Some(take_next(words, next).ok_or_else(|| {
                GetoptError::MissingValue(spelled.clone(), Hint::for_missing_value(&spelled, specs))
            })?),
            ValueKind::Optional(_) if !rest.is_empty() => Some(owned(rest)),
            ValueKind::Optional(peek) => peek_next(words, next, peek),
        };
        let ends_cluster = value.is_some() || spec.value != ValueKind::None;
        out.push(Parsed::Opt {
            id: spec.id.clone(),
            spelled,
            value,
        });
        if ends_cluster {
            break;
        }
    }
    Ok(())
}

fn take_next(words: &[&[u8]], next: &mut usize) -> Option<OsString> {
    let word = words.get(*next)?;
    *next += 1;
    Some(owned(word))
}

fn peek_next(words: &[&[u8]], next: &mut usize, peek: Peek) -> Option<OsString> {
    match words.get(*next) {
        Some(word) if peek.takes(word) => take_next(words, next),
        _ => None,
    }
}

/// Exact name first; then a unique prefix among the 2.4 names; then, only
/// if no 2.4 name matches, a unique prefix among the newer names.
fn find_long<'s, T>(specs: &'s [OptSpec<T>], name: &str) -> Result<&'s OptSpec<T>, GetoptError> {
    if let Some(spec) = specs.iter().find(|s| s.long == Some(name)) {
        return Ok(spec);
    }
    for only_2_4 in [true, false] {
        let hits: Vec<&OptSpec<T>> = specs
            .iter()
            .filter(|s| (s.in_2_4 || !only_2_4) && s.long.is_some_and(|l| l.starts_with(name)))
            .collect();
        match hits.as_slice() {
            [] => continue,
            [one] => return Ok(one),
            many => {
                return Err(GetoptError::Ambiguous {
                    spelled: format!("--{name}"),
                    candidates: many
                        .iter()
                        .filter_map(|s| s.long.map(|l| format!("--{l}")))
                        .collect(),
                });
            }
        }
    }
    let spelled = format!("--{name}");
    let hint = Hint::for_unrecognized(&spelled, specs);
    Err(GetoptError::Unrecognized(spelled, hint))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Id {
        Quiet,
        Mlock,
        Prio,
        Threads,
        Affinity,
        Hist,
        Duration,
        Dummy,
        Distance,
        New,
    }

    const fn spec(
        id: Id,
        short: Option<char>,
        long: &'static str,
        value: ValueKind,
        in_2_4: bool,
    ) -> OptSpec<Id> {
        OptSpec {
            id,
            short,
            long: Some(long),
            value,
            in_2_4,
            hidden: false,
        }
    }

    const SPECS: &[OptSpec<Id>] = &[
        spec(Id::Quiet, Some('q'), "quiet", ValueKind::None, true),
        spec(Id::Mlock, Some('m'), "mlockall", ValueKind::None, true),
        spec(Id::Prio, Some('p'), "priority", ValueKind::Required, true),
        spec(
            Id::Threads,
            Some('t'),
            "threads",
            ValueKind::Optional(Peek::Number),
            true,
        ),
        spec(
            Id::Affinity,
            Some('a'),
            "affinity",
            ValueKind::Optional(Peek::CpuList),
            true,
        ),
        spec(Id::Hist, Some('h'), "histogram", ValueKind::Required, true),
        spec(
            Id::Duration,
            Some('D'),
            "duration",
            ValueKind::Required,
            true,
        ),
        spec(Id::Dummy, None, "dummy", ValueKind::None, true),
        spec(
            Id::Distance,
            Some('d'),
            "distance",
            ValueKind::Required,
            true,
        ),
        spec(Id::New, None, "dunew", ValueKind::Required, false),
    ];

    fn scan(args: &[&str]) -> Result<Vec<Parsed<Id>>, GetoptError> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        getopt_long(&args, SPECS)
    }

    fn opt(id: Id, spelled: &str, value: Option<&str>) -> Parsed<Id> {
        Parsed::Opt {
            id,
            spelled: spelled.to_owned(),
            value: value.map(OsString::from),
        }
    }

    fn pos(word: &str) -> Parsed<Id> {
        Parsed::Positional(word.into())
    }

    fn err(args: &[&str]) -> String {
        scan(args).unwrap_err().to_string()
    }

    #[test]
    fn flag_cluster() {
        assert_eq!(
            scan(&["-qm"]).unwrap(),
            vec![opt(Id::Quiet, "-q", None), opt(Id::Mlock, "-m", None)]
        );
    }

    #[test]
    fn cluster_ending_in_value_option() {
        assert_eq!(
            scan(&["-qmp99"]).unwrap(),
            vec![
                opt(Id::Quiet, "-q", None),
                opt(Id::Mlock, "-m", None),
                opt(Id::Prio, "-p", Some("99"))
            ]
        );
        // A required value swallows the rest of the cluster, even letters.
        assert_eq!(
            scan(&["-pq"]).unwrap(),
            vec![opt(Id::Prio, "-p", Some("q"))]
        );
        assert_eq!(
            scan(&["-qp", "99"]).unwrap(),
            vec![opt(Id::Quiet, "-q", None), opt(Id::Prio, "-p", Some("99"))]
        );
    }

    #[test]
    fn short_values_attached_and_separate() {
        assert_eq!(
            scan(&["-p99"]).unwrap(),
            vec![opt(Id::Prio, "-p", Some("99"))]
        );
        assert_eq!(
            scan(&["-p", "99"]).unwrap(),
            vec![opt(Id::Prio, "-p", Some("99"))]
        );
        // A required value is the next word whatever it looks like.
        assert_eq!(
            scan(&["-p", "-5"]).unwrap(),
            vec![opt(Id::Prio, "-p", Some("-5"))]
        );
        assert_eq!(
            scan(&["-p", "--"]).unwrap(),
            vec![opt(Id::Prio, "-p", Some("--"))]
        );
    }

    #[test]
    fn one_word_with_space_keeps_raw_value() {
        assert_eq!(
            scan(&["-h 3500"]).unwrap(),
            vec![opt(Id::Hist, "-h", Some(" 3500"))]
        );
    }

    #[test]
    fn long_values() {
        let want = vec![opt(Id::Duration, "--duration", Some("10"))];
        assert_eq!(scan(&["--duration=10"]).unwrap(), want);
        assert_eq!(scan(&["--duration", "10"]).unwrap(), want);
        assert_eq!(
            scan(&["--duration="]).unwrap(),
            vec![opt(Id::Duration, "--duration", Some(""))]
        );
        assert_eq!(
            scan(&["--duration=a=b"]).unwrap(),
            vec![opt(Id::Duration, "--duration", Some("a=b"))]
        );
    }

    #[test]
    fn optional_values_attached() {
        assert_eq!(
            scan(&["-t4"]).unwrap(),
            vec![opt(Id::Threads, "-t", Some("4"))]
        );
        assert_eq!(
            scan(&["--threads=4"]).unwrap(),
            vec![opt(Id::Threads, "--threads", Some("4"))]
        );
        assert_eq!(
            scan(&["-qt4"]).unwrap(),
            vec![
                opt(Id::Quiet, "-q", None),
                opt(Id::Threads, "-t", Some("4"))
            ]
        );
        // getopt gives an optional value the rest of the cluster.
        assert_eq!(
            scan(&["-tq"]).unwrap(),
            vec![opt(Id::Threads, "-t", Some("q"))]
        );
    }

    #[test]
    fn optional_number_peek() {
        assert_eq!(
            scan(&["-t", "4"]).unwrap(),
            vec![opt(Id::Threads, "-t", Some("4"))]
        );
        assert_eq!(
            scan(&["-t", "0"]).unwrap(),
            vec![opt(Id::Threads, "-t", Some("0"))]
        );
        assert_eq!(
            scan(&["-t", "4x"]).unwrap(),
            vec![opt(Id::Threads, "-t", Some("4x"))]
        );
        assert_eq!(
            scan(&["--threads", "4"]).unwrap(),
            vec![opt(Id::Threads, "--threads", Some("4"))]
        );
        assert_eq!(
            scan(&["-qt", "4"]).unwrap(),
            vec![
                opt(Id::Quiet, "-q", None),
                opt(Id::Threads, "-t", Some("4"))
            ]
        );
        assert_eq!(
            scan(&["-t", "-q"]).unwrap(),
            vec![opt(Id::Threads, "-t", None), opt(Id::Quiet, "-q", None)]
        );
        assert_eq!(
            scan(&["-t", "all"]).unwrap(),
            vec![opt(Id::Threads, "-t", None), pos("all")]
        );
        assert_eq!(scan(&["-t"]).unwrap(), vec![opt(Id::Threads, "-t", None)]);
        assert_eq!(
            scan(&["--threads"]).unwrap(),
            vec![opt(Id::Threads, "--threads", None)]
        );
    }

    #[test]
    fn optional_cpulist_peek() {
        for word in ["0-3", "!0", "+1", "all", "3"] {
            assert_eq!(
                scan(&["-a", word]).unwrap(),
                vec![opt(Id::Affinity, "-a", Some(word))],
                "{word}"
            );
        }
        for word in ["foo", "alle", "-3"] {
            let got = scan(&["-a", word]);
            match got {
                Ok(items) => assert_eq!(items[0], opt(Id::Affinity, "-a", None), "{word}"),
                Err(e) => assert!(
                    matches!(&e, GetoptError::Unrecognized(w, _) if w == "-3"),
                    "{e:?}"
                ),
            }
        }
    }

    #[test]
    fn never_peek_takes_only_attached() {
        let specs = [OptSpec {
            id: 1u8,
            short: Some('x'),
            long: Some("xx"),
            value: ValueKind::Optional(Peek::Never),
            in_2_4: true,
            hidden: false,
        }];
        let args: Vec<OsString> = ["-x", "5"].iter().map(OsString::from).collect();
        assert_eq!(
            getopt_long(&args, &specs).unwrap(),
            vec![
                Parsed::Opt {
                    id: 1,
                    spelled: "-x".into(),
                    value: None
                },
                Parsed::Positional("5".into())
            ]
        );
    }

    #[test]
    fn double_dash_ends_options() {
        assert_eq!(
            scan(&["-q", "--", "-m", "--prio=3"]).unwrap(),
            vec![opt(Id::Quiet, "-q", None), pos("-m"), pos("--prio=3")]
        );
    }

    #[test]
    fn lone_dash_is_positional() {
        assert_eq!(
            scan(&["-", "-q"]).unwrap(),
            vec![pos("-"), opt(Id::Quiet, "-q", None)]
        );
    }

    #[test]
    fn permutation_keeps_scanning_after_positionals() {
        assert_eq!(
            scan(&["foo", "-p", "5", "bar", "--quiet"]).unwrap(),
            vec![
                pos("foo"),
                opt(Id::Prio, "-p", Some("5")),
                pos("bar"),
                opt(Id::Quiet, "--quiet", None)
            ]
        );
    }

    #[test]
    fn long_exact_beats_prefix() {
        let specs = [
            OptSpec {
                id: 1u8,
                short: None,
                long: Some("spike"),
                value: ValueKind::None,
                in_2_4: true,
                hidden: false,
            },
            OptSpec {
                id: 2u8,
                short: None,
                long: Some("spike-nodes"),
                value: ValueKind::None,
                in_2_4: true,
                hidden: false,
            },
        ];
        let args = vec![OsString::from("--spike")];
        assert_eq!(
            getopt_long(&args, &specs).unwrap(),
            vec![Parsed::Opt {
                id: 1,
                spelled: "--spike".into(),
                value: None
            }]
        );
        let args = vec![OsString::from("--spi")];
        assert!(matches!(
            getopt_long(&args, &specs),
            Err(GetoptError::Ambiguous { .. })
        ));
    }

    #[test]
    fn long_abbreviations() {
        assert_eq!(
            scan(&["--prio", "5"]).unwrap(),
            vec![opt(Id::Prio, "--prio", Some("5"))]
        );
        assert_eq!(
            scan(&["--dur=5"]).unwrap(),
            vec![opt(Id::Duration, "--dur", Some("5"))]
        );
        assert_eq!(
            err(&["--du"]),
            "option '--du' is ambiguous (could be --duration, --dummy)"
        );
        assert_eq!(
            err(&["--d=3"]),
            "option '--d' is ambiguous (could be --duration, --dummy, --distance)"
        );
    }

    #[test]
    fn newer_names_never_steal_2_4_prefixes() {
        // "--dum" matches only 2.4's --dummy, not the newer --dunew...
        assert_eq!(
            scan(&["--dum"]).unwrap(),
            vec![opt(Id::Dummy, "--dum", None)]
        );
        // ... and "--du" stays ambiguous between the 2.4 names only.
        assert!(!err(&["--du"]).contains("dunew"));
        // A prefix no 2.4 name has reaches the newer names.
        assert_eq!(
            scan(&["--dun", "7"]).unwrap(),
            vec![opt(Id::New, "--dun", Some("7"))]
        );
        assert_eq!(
            scan(&["--dunew=7"]).unwrap(),
            vec![opt(Id::New, "--dunew", Some("7"))]
        );
    }

    #[test]
    fn errors() {
        assert_eq!(err(&["--bogus"]), "unrecognized option '--bogus'");
        assert_eq!(err(&["--bogus=1"]), "unrecognized option '--bogus'");
        assert_eq!(err(&["-Z"]), "unrecognized option '-Z'");
        assert_eq!(err(&["-qZ"]), "unrecognized option '-Z'");
        assert_eq!(err(&["--=1"]), "unrecognized option '--=1'");
        assert_eq!(err(&["-p"]), "option '-p' requires a value");
        assert_eq!(err(&["-qp"]), "option '-p' requires a value");
        assert_eq!(err(&["--priority"]), "option '--priority' requires a value");
        assert_eq!(err(&["--prio"]), "option '--priority' requires a value");
        assert_eq!(err(&["--quiet=1"]), "option '--quiet' takes no value");
        assert_eq!(err(&["--qu=1"]), "option '--quiet' takes no value");
    }

    #[test]
    fn values_and_positionals_need_not_be_utf8() {
        let bytes = |b: &[u8]| OsString::from_vec(b.to_vec());
        let name = bytes(b"r\xffn.json");
        let args = vec![
            OsString::from("-q"),
            bytes(b"--dunew=r\xffn.json"),
            bytes(b"-pr\xffn.json"),
            OsString::from("-h"),
            name.clone(),
            name.clone(),
        ];
        assert_eq!(
            getopt_long(&args, SPECS).unwrap(),
            vec![
                opt(Id::Quiet, "-q", None),
                Parsed::Opt {
                    id: Id::New,
                    spelled: "--dunew".into(),
                    value: Some(name.clone())
                },
                Parsed::Opt {
                    id: Id::Prio,
                    spelled: "-p".into(),
                    value: Some(name.clone())
                },
                Parsed::Opt {
                    id: Id::Hist,
                    spelled: "-h".into(),
                    value: Some(name.clone())
                },
                Parsed::Positional(name),
            ]
        );
    }

    #[test]
    fn option_names_beyond_ascii_are_unrecognized() {
        let bytes = |b: &[u8]| OsString::from_vec(b.to_vec());
        for (arg, shown) in [
            (bytes(b"-\xff"), "-\u{fffd}"),
            (bytes(b"-q\xc3\xa9"), "-\u{e9}"),
            (bytes(b"--qu\xffiet"), "--qu\u{fffd}iet"),
            (bytes(b"--\xff=1"), "--\u{fffd}"),
        ] {
            let e = getopt_long(std::slice::from_ref(&arg), SPECS).unwrap_err();
            assert!(
                matches!(&e, GetoptError::Unrecognized(w, _) if w == shown),
                "{arg:?}: {e:?}"
            );
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn empty_args() {
        assert_eq!(scan(&[]).unwrap(), vec![]);
    }

    fn message(words: &[&str], specs: &[OptSpec<Id>]) -> String {
        let args: Vec<OsString> = words.iter().map(OsString::from).collect();
        getopt_long(&args, specs).unwrap_err().to_string()
    }

    /// The table with a `--help` of its own, as every tool's has.
    fn with_help() -> Vec<OptSpec<Id>> {
        let mut specs = SPECS.to_vec();
        specs.push(spec(Id::Dummy, None, "help", ValueKind::None, true));
        specs
    }

    #[test]
    fn an_unknown_option_suggests_the_nearest_and_help() {
        let specs = with_help();
        assert_eq!(
            message(&["--qiuet"], &specs),
            "unrecognized option '--qiuet' (did you mean '--quiet'? --help lists every option)"
        );
        assert_eq!(
            message(&["--treads=2"], &specs),
            "unrecognized option '--treads' (did you mean '--threads'? --help lists every option)"
        );
        // Nothing near: only where the list is.
        assert_eq!(
            message(&["--verbose"], &specs),
            "unrecognized option '--verbose' (--help lists every option)"
        );
        assert_eq!(
            message(&["-X"], &specs),
            "unrecognized option '-X' (--help lists every option)"
        );
        // A table without --help says nothing it cannot keep.
        assert_eq!(
            message(&["--qiuet"], SPECS),
            "unrecognized option '--qiuet' (did you mean '--quiet'?)"
        );
        assert_eq!(
            message(&["--verbose"], SPECS),
            "unrecognized option '--verbose'"
        );
    }

    #[test]
    fn h_without_its_value_says_where_help_is() {
        let specs = with_help();
        assert_eq!(
            message(&["-h"], &specs),
            "option '-h' requires a value (help is --help)"
        );
        assert_eq!(message(&["-h"], SPECS), "option '-h' requires a value");
        // Another option's missing value gets no such hint.
        assert_eq!(message(&["-p"], &specs), "option '-p' requires a value");
        assert_eq!(
            message(&["--priority"], &specs),
            "option '--priority' requires a value"
        );
    }
}
