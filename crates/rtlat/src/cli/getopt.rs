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

use std::ffi::OsString;

/// When an optional value may be taken from the *next* argv word.
///
/// getopt itself only takes attached optional values (`-t4`,
/// `--threads=4`); cyclictest additionally looks at the following word and
/// uses it when it looks like a value. Unlike C we consume the word, so it
/// is not left behind as a stray positional argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peek {
    /// Only an attached value counts (plain getopt).
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "no cyclictest option needs it; kept for other tools' tables"
        )
    )]
    Never,
    /// The next word is the value when it starts with an ASCII digit.
    Number,
    /// The next word is the value when it starts with a digit, `!` or `+`,
    /// or is exactly `all`.
    CpuList,
}

impl Peek {
    /// Whether `word` is taken as the value under this rule.
    fn takes(self, word: &str) -> bool {
        match self {
            Peek::Never => false,
            Peek::Number => word.starts_with(|c: char| c.is_ascii_digit()),
            Peek::CpuList => {
                word.starts_with(|c: char| c.is_ascii_digit() || c == '!' || c == '+')
                    || word == "all"
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
    /// The short spelling (`-p`), if any.
    pub short: Option<char>,
    /// The long spelling without dashes (`priority`), if any.
    pub long: Option<&'static str>,
    /// Whether and how it takes a value.
    pub value: ValueKind,
    /// Whether the long name existed in cyclictest 2.4: such names win the
    /// abbreviation match over names added later.
    pub in_2_4: bool,
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
        /// Its value exactly as given (`-h 3500` in one word gives `" 3500"`).
        value: Option<String>,
    },
    /// A word that is not an option (or anything after `--`).
    Positional(String),
}

/// Why the scan failed. Display is one line without a program prefix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GetoptError {
    /// An argument is not valid UTF-8.
    #[error("argument {position} is not valid UTF-8: '{lossy}'")]
    NotUtf8 {
        /// 1-based position among the arguments given.
        position: usize,
        /// The argument with invalid bytes replaced.
        lossy: String,
    },
    /// No option has this spelling.
    #[error("unrecognized option '{0}'")]
    Unrecognized(String),
    /// A long-option prefix matches several options.
    #[error("option '{spelled}' is ambiguous (could be {})", .candidates.join(", "))]
    Ambiguous {
        /// The prefix as written, with its dashes.
        spelled: String,
        /// The full names it matches, with dashes, in table order.
        candidates: Vec<String>,
    },
    /// A value-taking option is the last word.
    #[error("option '{0}' requires a value")]
    MissingValue(String),
    /// `--flag=value` for an option without a value.
    #[error("option '{0}' takes no value")]
    UnexpectedValue(String),
}

/// Scans `args` (without the program name) against `specs`.
pub fn getopt_long<T: Clone>(
    args: &[OsString],
    specs: &[OptSpec<T>],
) -> Result<Vec<Parsed<T>>, GetoptError> {
    let words = args
        .iter()
        .enumerate()
        .map(|(i, arg)| {
            arg.to_str().ok_or_else(|| GetoptError::NotUtf8 {
                position: i + 1,
                lossy: arg.to_string_lossy().into_owned(),
            })
        })
        .collect::<Result<Vec<&str>, _>>()?;

    let mut out = Vec::new();
    let mut next = 0;
    while next < words.len() {
        let word = words[next];
        next += 1;
        if word == "--" {
            out.extend(
                words[next..]
                    .iter()
                    .map(|w| Parsed::Positional((*w).to_owned())),
            );
            break;
        }
        if let Some(body) = word.strip_prefix("--") {
            out.push(scan_long(body, specs, &words, &mut next)?);
        } else if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) {
            scan_cluster(cluster, specs, &words, &mut next, &mut out)?;
        } else {
            out.push(Parsed::Positional(word.to_owned()));
        }
    }
    Ok(out)
}

/// `--name`, `--name=value`, `--name value`.
fn scan_long<T: Clone>(
    body: &str,
    specs: &[OptSpec<T>],
    words: &[&str],
    next: &mut usize,
) -> Result<Parsed<T>, GetoptError> {
    let (name, attached) = match body.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (body, None),
    };
    if name.is_empty() {
        return Err(GetoptError::Unrecognized(format!("--{body}")));
    }
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
            Some(value) => Some(value.to_owned()),
            None => Some(take_next(words, next).ok_or(GetoptError::MissingValue(full))?),
        },
        ValueKind::Optional(peek) => match attached {
            Some(value) => Some(value.to_owned()),
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
    cluster: &str,
    specs: &[OptSpec<T>],
    words: &[&str],
    next: &mut usize,
    out: &mut Vec<Parsed<T>>,
) -> Result<(), GetoptError> {
    for (pos, c) in cluster.char_indices() {
        let spec = specs
            .iter()
            .find(|s| s.short == Some(c))
            .ok_or_else(|| GetoptError::Unrecognized(format!("-{c}")))?;
        let spelled = format!("-{c}");
        let rest = &cluster[pos + c.len_utf8()..];
        let value = match spec.value {
            ValueKind::None => None,
            ValueKind::Required if !rest.is_empty() => Some(rest.to_owned()),
            ValueKind::Required => Some(
                take_next(words, next).ok_or_else(|| GetoptError::MissingValue(spelled.clone()))?,
            ),
            ValueKind::Optional(_) if !rest.is_empty() => Some(rest.to_owned()),
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

fn take_next(words: &[&str], next: &mut usize) -> Option<String> {
    let word = words.get(*next)?;
    *next += 1;
    Some((*word).to_owned())
}

fn peek_next(words: &[&str], next: &mut usize, peek: Peek) -> Option<String> {
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
    Err(GetoptError::Unrecognized(format!("--{name}")))
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
            value: value.map(str::to_owned),
        }
    }

    fn pos(word: &str) -> Parsed<Id> {
        Parsed::Positional(word.to_owned())
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
                Err(e) => assert_eq!(e, GetoptError::Unrecognized("-3".into())),
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
            },
            OptSpec {
                id: 2u8,
                short: None,
                long: Some("spike-nodes"),
                value: ValueKind::None,
                in_2_4: true,
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
    fn non_utf8_is_an_error() {
        use std::os::unix::ffi::OsStringExt;
        let args = vec![OsString::from("-q"), OsString::from_vec(vec![b'a', 0xff])];
        let e = getopt_long(&args, SPECS).unwrap_err();
        assert!(
            matches!(e, GetoptError::NotUtf8 { position: 2, .. }),
            "{e:?}"
        );
        assert!(!e.to_string().contains('\n'));
    }

    #[test]
    fn empty_args() {
        assert_eq!(scan(&[]).unwrap(), vec![]);
    }
}
