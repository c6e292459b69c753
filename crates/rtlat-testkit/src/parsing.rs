//! What every tool's parser tests ask of a command line: words as the
//! parsers take them, a fixed two-CPU machine, "this must run", "this
//! must be refused", and every way of spelling an option. The parsers'
//! tests live in other crates (`rtlat`, `rtlat-plot`), each of which has
//! this crate as a dev-dependency.

use std::ffi::OsString;
use std::fmt::Debug;

use rtlat_args::UsageError;
use rtlat_args::invocation::Invocation;
use rtlat_args::values::SystemView;

/// `words` as a parser's arguments.
pub fn os_words(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// A machine of two CPUs, 0 and 1, both allowed.
pub fn two_cpus() -> SystemView {
    SystemView {
        allowed_cpus: vec![0, 1],
        configured_cpus: 2,
    }
}

/// The run `parsed` must ask for; otherwise a panic naming `context` (the
/// words, the tool) and what came instead.
pub fn expect_run<R: Debug>(parsed: Result<Invocation<R>, UsageError>, context: impl Debug) -> R {
    match parsed {
        Ok(Invocation::Run(run)) => run,
        other => panic!("{context:?}: {other:?}"),
    }
}

/// The message `parsed` must be refused with; otherwise a panic naming
/// `context` and what was accepted.
pub fn expect_usage_error<T: Debug>(parsed: Result<T, UsageError>, context: impl Debug) -> String {
    match parsed {
        Err(e) => e.0,
        Ok(other) => panic!("{context:?}: expected an error, got {other:?}"),
    }
}

/// One option as a spelling test writes it.
#[derive(Clone, Copy, Debug)]
pub struct Spelled<'a> {
    /// The letter, if it has one.
    pub short: Option<char>,
    /// The long name.
    pub long: &'a str,
    /// A shortened long name that must still mean this option.
    pub abbrev: &'a str,
    /// The value to give it, if it takes one.
    pub value: Option<&'a str>,
}

/// Every way getopt_long accepts of writing `option`, each with the flag
/// `partner` before, after or clustered with it, behind the words `extra`.
/// `optional`: the value is optional, so nothing but the value may follow
/// the letter in the same word. `space_in_word`: also `"-X VALUE"` as one
/// word (the value then starts with a space: not for a value taken
/// verbatim, such as a path).
pub fn spellings(
    option: &Spelled,
    optional: bool,
    space_in_word: bool,
    partner: char,
    extra: &[&str],
) -> Vec<Vec<String>> {
    let p = partner;
    let pf = format!("-{p}");
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut add = |words: Vec<String>| {
        let mut argv: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        argv.extend(words);
        out.push(argv);
    };
    match (option.short, option.value) {
        (Some(s), Some(v)) => {
            add(vec![pf.clone(), format!("-{s}"), v.into()]);
            add(vec![pf.clone(), format!("-{s}{v}")]);
            add(vec![format!("-{p}{s}{v}")]);
            add(vec![format!("-{p}{s}"), v.into()]);
            if space_in_word {
                add(vec![pf.clone(), format!("-{s} {v}")]);
            }
            add(vec![format!("-{s}"), v.into(), pf.clone()]);
        }
        (Some(s), None) => {
            add(vec![pf.clone(), format!("-{s}")]);
            add(vec![format!("-{p}{s}")]);
            add(vec![format!("-{s}"), pf.clone()]);
            if !optional {
                add(vec![format!("-{s}{p}")]);
            }
        }
        (None, _) => {}
    }
    for name in [option.long, option.abbrev] {
        match option.value {
            Some(v) => {
                add(vec![pf.clone(), format!("--{name}"), v.into()]);
                add(vec![pf.clone(), format!("--{name}={v}")]);
                add(vec![format!("--{name}={v}"), pf.clone()]);
            }
            None => {
                add(vec![pf.clone(), format!("--{name}")]);
                add(vec![format!("--{name}"), pf.clone()]);
            }
        }
    }
    out
}

/// The helpers a measuring tool's parser tests call, defined in the test
/// module that calls the macro, over its `parse_words(&[&str])` (which
/// gives a `Result<Invocation<Measure<Settings>>, UsageError>`):
/// `settings(words)`, the settings the words must run with;
/// `warnings(words)`, the warnings that run prints; `error(words)`, the
/// message they must be refused with.
#[macro_export]
macro_rules! measured_parser_checks {
    () => {
        #[allow(dead_code)]
        fn settings(words: &[&str]) -> Settings {
            *$crate::parsing::expect_run(parse_words(words), words).settings
        }

        #[allow(dead_code)]
        fn warnings(words: &[&str]) -> Vec<String> {
            $crate::parsing::expect_run(parse_words(words), words).warnings
        }

        #[allow(dead_code)]
        fn error(words: &[&str]) -> String {
            $crate::parsing::expect_usage_error(parse_words(words), words)
        }
    };
}
