//! `--verdict[=STYLE]`, `--horizon DURATION[,DURATION...]` and
//! `--deadline TIME`, the same in every measuring tool's command line:
//! how the verdict is printed and what its projection is asked for (the
//! run's [`Request`], in `RunMeta.projection`). `--verdict` is a row of
//! each tool's own table (its place in C's abbreviation order differs);
//! its value and help line are the same everywhere and live here.

use std::ffi::OsStr;

use rtlat_args::UsageError;
use rtlat_args::getopt::{Peek, REQ, ValueKind};
use rtlat_args::options::Flag;

use rtlat_args::values::{DURATION_TOO_LONG, DurationError, OptionName, duration, invalid, text};
use rtlat_stats::projection::{DEFAULT_HORIZONS_S, Request};

use crate::report::verdict::text::Style;

/// A tool's raw state that keeps the raw values of --horizon and --deadline (every
/// tool's through its shared values: `cli::shared`).
pub trait HasVerdict {
    /// Where they go.
    fn verdict_args(&mut self) -> &mut VerdictArgs;
}

/// How `--verdict` takes its value: only attached (`--verdict=full`);
/// `--verdict full` is `--verdict` and a word of its own, as getopt reads
/// an optional value.
pub const VERDICT_VALUE: ValueKind = ValueKind::Optional(Peek::Never);

/// A tool's raw state that keeps `--verdict`'s style.
pub trait HasVerdictStyle: HasVerdict {
    /// Where `--verdict`'s style goes.
    fn verdict_style(&mut self) -> &mut Option<Style>;
}

/// The definition of `--verdict[=STYLE]` (each tool places it in its own
/// list: its place in C's abbreviation order differs).
pub fn verdict<R: HasVerdictStyle>() -> Flag<R> {
    Flag::new_long("verdict", VERDICT_VALUE, "STYLE")
        .help(rtlat_args::lines![
            "after everything else, the verdict on the run: was",
            "it measured right (measurement: valid, doubtful,",
            "invalid), is the machine set up for real-time work",
            "(machine: ready, caveats, not ready), the worst",
            "case projected; STYLE short (6 lines, the default)",
            "or full (every reason, wrapped); always in the JSON",
        ])
        .apply(|r: &mut R, v| {
            *r.verdict_style() = Some(verdict_style(v.name, v.raw)?);
            Ok(())
        })
}

/// The definitions of `--horizon` and `--deadline` (ours, newer than 2.4:
/// they never change what a 2.4 abbreviation means).
pub fn flags<R: HasVerdict>() -> Vec<Flag<R>> {
    vec![
        Flag::new_long("horizon", REQ, "LIST")
            .help(rtlat_args::lines![
                "project the worst case over these durations, comma-",
                "separated (30m, 1h, 24h, 7d)",
            ])
            .default("1h,24h")
            .apply(|r: &mut R, v| {
                r.verdict_args().horizon = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("deadline", REQ, "TIME")
            .help(rtlat_args::lines![
                "also estimate how often a latency above TIME comes",
                "(100us, 1ms; us without a unit)",
            ])
            .apply(|r: &mut R, v| {
                r.verdict_args().deadline = Some(v.text()?);
                Ok(())
            }),
    ]
}

/// What `--horizon` accepts, for its messages.
const HORIZON_EXPECTED: &str = "expected durations longer than 0, separated by commas, each a \
                                whole number of seconds optionally followed by s, m, h or d \
                                (30m, 1h, 24h, 7d)";

/// `--verdict`'s value: none is `short`.
pub fn verdict_style(id: impl OptionName, value: Option<&OsStr>) -> Result<Style, UsageError> {
    let Some(value) = value else {
        return Ok(Style::Short);
    };
    let value = text(id, Some(value))?;
    Style::from_name(&value).ok_or_else(|| invalid(id, &value, "expected short or full"))
}

/// What `--horizon` and `--deadline` ask, exactly (whole seconds, ns):
/// a tool's settings compare equal; [`Asked::request`] is what the
/// verdict projects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    /// The horizons, s, shortest first, each once.
    pub horizons_s: Vec<u64>,
    /// The deadline, ns.
    pub deadline_ns: Option<i64>,
}

impl Default for Asked {
    /// 1 h and 24 h, no deadline.
    fn default() -> Asked {
        Asked {
            horizons_s: DEFAULT_HORIZONS_S.map(|s| s as u64).to_vec(),
            deadline_ns: None,
        }
    }
}

impl Asked {
    /// The projection's request (the run's `RunMeta.projection`).
    pub fn request(&self) -> Request {
        Request {
            horizons_s: self.horizons_s.iter().map(|&s| s as f64).collect(),
            deadline_ns: self.deadline_ns,
        }
    }
}

/// The raw values as the parser collects them (the last one wins).
#[derive(Clone, Debug, Default)]
pub struct VerdictArgs {
    /// `--horizon`.
    pub horizon: Option<String>,
    /// `--deadline`.
    pub deadline: Option<String>,
}

impl VerdictArgs {
    /// What the verdict projects; `name` spells an option of the tool by
    /// its long name.
    pub fn validate<O: OptionName>(&self, name: impl Fn(&str) -> O) -> Result<Asked, UsageError> {
        let horizons_s = match &self.horizon {
            Some(list) => horizons(name("horizon"), list)?,
            None => Asked::default().horizons_s,
        };
        let deadline_ns = match &self.deadline {
            Some(value) => Some(deadline(name("deadline"), value)?),
            None => None,
        };
        Ok(Asked {
            horizons_s,
            deadline_ns,
        })
    }
}

/// `--horizon`'s list, in seconds, shortest first, each once.
fn horizons(id: impl OptionName, list: &str) -> Result<Vec<u64>, UsageError> {
    let mut seconds = Vec::new();
    for item in list.split(',') {
        let ns = match duration(item) {
            Ok(Some(ns)) => ns.as_nanos(),
            Ok(None) | Err(DurationError::Malformed) => {
                return Err(invalid(
                    id,
                    list,
                    format_args!("'{item}': {HORIZON_EXPECTED}"),
                ));
            }
            Err(DurationError::SecondsOverflow | DurationError::TooLong) => {
                return Err(invalid(
                    id,
                    list,
                    format_args!("'{item}': {DURATION_TOO_LONG}"),
                ));
            }
        };
        seconds.push((ns / 1_000_000_000) as u64);
    }
    seconds.sort_unstable();
    seconds.dedup();
    Ok(seconds)
}

/// `--deadline`'s latency, above 0.
fn deadline(id: impl OptionName, value: &str) -> Result<i64, UsageError> {
    match crate::gate::latency_ns(value) {
        Ok(ns) if ns > 0 => Ok(ns),
        Ok(_) => Err(invalid(id, value, "expected a latency above 0: 100us, 1ms")),
        Err(why) => Err(invalid(id, value, why)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::shared::tests::name;

    fn request(horizon: Option<&str>, deadline: Option<&str>) -> Result<Asked, String> {
        let args = VerdictArgs {
            horizon: horizon.map(str::to_owned),
            deadline: deadline.map(str::to_owned),
        };
        args.validate(name).map_err(|e| e.0)
    }

    #[test]
    fn horizons_and_deadlines() {
        assert_eq!(request(None, None).unwrap().request(), Request::default());
        let r = request(Some("24h,30m,1h,7d,1h"), Some("100us")).unwrap();
        assert_eq!(r.horizons_s, [1_800, 3_600, 86_400, 604_800]);
        assert_eq!(
            r.request().horizons_s,
            [1_800.0, 3_600.0, 86_400.0, 604_800.0]
        );
        assert_eq!(r.deadline_ns, Some(100_000));
        assert_eq!(
            request(None, Some("1ms")).unwrap().deadline_ns,
            Some(1_000_000)
        );
        assert_eq!(
            request(None, Some("250")).unwrap().deadline_ns,
            Some(250_000)
        );
        assert_eq!(request(Some("90"), None).unwrap().horizons_s, [90]);
    }

    #[test]
    fn bad_values_are_one_line_with_what_is_accepted() {
        for (horizon, deadline, want) in [
            (
                Some("1x"),
                None,
                "--horizon: invalid value '1x': '1x': expected durations longer than 0",
            ),
            (
                Some("1h,"),
                None,
                "--horizon: invalid value '1h,': '': expected",
            ),
            (
                Some("0"),
                None,
                "--horizon: invalid value '0': '0': expected",
            ),
            (Some("-1h"), None, "--horizon: invalid value '-1h'"),
            (
                Some("99999999999999d"),
                None,
                "--horizon: invalid value '99999999999999d': '99999999999999d': too long",
            ),
            (
                None,
                Some("fast"),
                "--deadline: invalid value 'fast': expected a latency, a number with an \
                 optional unit ns, us, µs, ms or s (us by default): 100us, 1ms",
            ),
            (
                None,
                Some("0us"),
                "--deadline: invalid value '0us': expected a latency above 0",
            ),
            (
                None,
                Some("-5us"),
                "--deadline: invalid value '-5us': expected a latency",
            ),
            (
                None,
                Some("1min"),
                "--deadline: invalid value '1min': unknown unit 'min'",
            ),
            (
                None,
                Some("0.5ns"),
                "--deadline: invalid value '0.5ns': not a whole number of nanoseconds",
            ),
        ] {
            let e = request(horizon, deadline).unwrap_err();
            assert!(e.starts_with(want), "{horizon:?} {deadline:?}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn verdict_styles() {
        let id = name("horizon");
        assert_eq!(verdict_style(id, None).unwrap(), Style::Short);
        assert_eq!(
            verdict_style(id, Some("full".as_ref())).unwrap(),
            Style::Full
        );
        assert_eq!(
            verdict_style(id, Some("short".as_ref())).unwrap(),
            Style::Short
        );
        let e = verdict_style(id, Some("long".as_ref())).unwrap_err().0;
        assert_eq!(e, "--horizon: invalid value 'long': expected short or full");
    }

    /// The help entries of `--verdict`, `--horizon` and `--deadline`.
    fn help() -> String {
        struct Only(VerdictArgs, Option<Style>);
        impl HasVerdict for Only {
            fn verdict_args(&mut self) -> &mut VerdictArgs {
                &mut self.0
            }
        }
        impl HasVerdictStyle for Only {
            fn verdict_style(&mut self) -> &mut Option<Style> {
                &mut self.1
            }
        }
        let mut text = verdict::<Only>().render();
        for flag in flags::<Only>() {
            text.push_str(&flag.render());
        }
        text
    }

    #[test]
    fn help_lines_fit() {
        let help = help();
        assert!(help.lines().all(|l| l.chars().count() <= 80), "{help}");
        for name in ["--verdict[=STYLE]", "--horizon=LIST", "--deadline=TIME"] {
            assert!(help.contains(name), "{name}");
        }
    }
}
