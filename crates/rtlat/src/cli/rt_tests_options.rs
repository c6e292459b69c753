//! `--rt-tests=VERSION`: which rt-tests release the tool's output
//! imitates (its dialect, [`RtTests`]), the same row in every tool that
//! replaces an rt-tests program. Without it the environment variable
//! `RTLAT_RT_TESTS` decides (so that a script can pin its dialect once),
//! and without that 2.4 ([`RtTests::DEFAULT`]); the option wins over the
//! variable. A bad value of either is one line, exit 2.
//!
//! A tool includes [`rt_tests`] in its table and lists `"rt-tests"` in its
//! help page; its settings keep the validated [`RtTests`] (the run's
//! `RunMeta.rt_tests`, which the JSON envelope and the outputs read).

use std::ffi::OsStr;

use rtlat_args::UsageError;
use rtlat_args::getopt::REQ;
use rtlat_args::options::Flag;
use rtlat_args::values::{OptionName, invalid};
use rtlat_core::RtTests;

use super::shared::HasShared;

/// The definition of `--rt-tests=VERSION` (ours: no 2.4 abbreviation
/// reaches it, no 2.4 long option starts with `rt`).
pub fn rt_tests<R: HasShared>() -> Flag<R> {
    Flag::new_long("rt-tests", REQ, "VERSION")
        .help(rtlat_args::lines![
            "write what this rt-tests release writes: 2.4",
            "(Debian 12's) to 2.10 (JSON version, histogram",
            "lines); else $RTLAT_RT_TESTS, else 2.4",
        ])
        .default("2.4")
        .apply(|r: &mut R, v| {
            r.shared().rt_tests = Some(v.text()?);
            Ok(())
        })
}

/// The dialect: `--rt-tests`'s `option` if given, else the environment
/// variable's value `env` ([`RtTests::ENV`], read by the caller), else
/// [`RtTests::DEFAULT`].
pub fn validate<O: OptionName>(
    id: O,
    option: Option<&str>,
    env: Option<&OsStr>,
) -> Result<RtTests, UsageError> {
    if let Some(text) = option {
        return RtTests::parse(text).ok_or_else(|| invalid(id, text, RtTests::EXPECTED));
    }
    match env {
        None => Ok(RtTests::DEFAULT),
        Some(value) => {
            let text = value.to_string_lossy();
            RtTests::parse(&text).ok_or_else(|| {
                UsageError(format!(
                    "{}={}: {} (or leave it unset)",
                    RtTests::ENV,
                    rtlat_args::escape::escape(&text),
                    RtTests::EXPECTED
                ))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_args::options::Name;

    fn name() -> Name {
        Name {
            short: None,
            long: Some("rt-tests"),
        }
    }

    #[test]
    fn the_option_wins_over_the_variable_which_wins_over_the_default() {
        let env = |s: &str| Some(OsStr::new(s).to_owned());
        assert_eq!(validate(name(), None, None).unwrap(), RtTests::V2_4);
        assert_eq!(
            validate(name(), None, env("2.10").as_deref()).unwrap(),
            RtTests::V2_10
        );
        assert_eq!(
            validate(name(), Some("2.4"), env("2.10").as_deref()).unwrap(),
            RtTests::V2_4
        );
        // A bad variable does not matter when the option decides.
        assert_eq!(
            validate(name(), Some("2.6"), env("x").as_deref()).unwrap(),
            RtTests::V2_6
        );
    }

    #[test]
    fn a_bad_value_is_one_line_naming_where_it_came_from() {
        let e = validate(name(), Some("3"), None).unwrap_err().0;
        assert!(
            e.starts_with(
                "--rt-tests: invalid value '3': expected an rt-tests release from 2.4 to 2.10"
            ),
            "{e}"
        );
        assert!(!e.contains('\n'));
        let e = validate(name(), None, Some(OsStr::new("2.11\x1b[2J")))
            .unwrap_err()
            .0;
        assert!(e.starts_with("RTLAT_RT_TESTS=2.11"), "{e}");
        assert!(!e.contains('\x1b') && !e.contains('\n'), "{e}");
    }
}
