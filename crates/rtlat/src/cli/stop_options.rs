//! `-l/--loops N` and `-D/--duration TIME`, when a run stops: the same
//! rows, values, messages and help line in cyclictest, signaltest and the
//! IPC tools (latency's `-T` reads its value with the same
//! [`duration_option`]).

use rtlat_core::units::Nanos;

use rtlat_args::UsageError;
use rtlat_args::getopt::{OptSpec, REQ};
use rtlat_args::options::Flag;

use super::shared::HasShared;
use rtlat_args::values::{OptionName, duration_option, loop_limit};

/// The two options, as a tool's table wraps them (`Opt::Stop`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopOpt {
    /// `-l/--loops N`.
    Loops,
    /// `-D/--duration TIME`.
    Duration,
}

/// `-l/--loops` (2.4).
pub const LOOPS: OptSpec<StopOpt> = OptSpec::c(StopOpt::Loops, Some('l'), "loops", REQ);
/// `-D/--duration` (2.4).
pub const DURATION: OptSpec<StopOpt> = OptSpec::c(StopOpt::Duration, Some('D'), "duration", REQ);

/// The definition of `-l/--loops N`; `help` says what a loop is in the
/// tool (a wake-up, a trip round the ring, a hand-off).
pub fn loops<R: HasShared>(help: &'static [&'static str]) -> Flag<R> {
    Flag::from_row(&LOOPS, "N")
        .help(help)
        .default("0")
        .apply(|r: &mut R, v| {
            r.shared().stop.set(StopOpt::Loops, v.text()?);
            Ok(())
        })
}

/// The definition of `-D/--duration TIME`, the same in every tool.
pub fn duration<R: HasShared>() -> Flag<R> {
    Flag::from_row(&DURATION, "TIME")
        .help(&[
            "stop after TIME: seconds, or a number followed by",
            "s, m, h or d (30s, 10m, 2h, 1d); 0: no limit",
        ])
        .default("0")
        .apply(|r: &mut R, v| {
            r.shared().stop.set(StopOpt::Duration, v.text()?);
            Ok(())
        })
}

/// The raw values as the parser collects them (the last one wins).
#[derive(Clone, Debug, Default)]
pub struct StopArgs {
    /// `-l`.
    pub loops: Option<String>,
    /// `-D`.
    pub duration: Option<String>,
}

/// The validated limits: `None` for no limit (0 or not given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// `-l`: samples of one thread (or side) before the run ends.
    pub loops: Option<u64>,
    /// `-D`: how long the run lasts.
    pub duration: Option<Nanos>,
}

impl StopArgs {
    /// Keeps `value` for `which`.
    pub fn set(&mut self, which: StopOpt, value: String) {
        match which {
            StopOpt::Loops => self.loops = Some(value),
            StopOpt::Duration => self.duration = Some(value),
        }
    }

    /// The limits; `wrap` turns [`StopOpt`] into the tool's id (which
    /// spells it). What a loop is (a wake-up, a trip round the ring, a
    /// hand-off) each tool's help says; the message is the same in all.
    pub fn validate<O: OptionName>(&self, wrap: impl Fn(StopOpt) -> O) -> Result<Stop, UsageError> {
        let loops = match &self.loops {
            Some(text) => loop_limit(wrap(StopOpt::Loops), text, "a number of loops")?,
            None => None,
        };
        let duration = match &self.duration {
            Some(text) => duration_option(wrap(StopOpt::Duration), text)?,
            None => None,
        };
        Ok(Stop { loops, duration })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::shared::SharedArgs;
    use rtlat_args::values::spelling;

    impl OptionName for StopOpt {
        fn spelling(self) -> String {
            spelling(self, &[LOOPS, DURATION])
        }
    }

    fn stop(loops: Option<&str>, duration: Option<&str>) -> Result<Stop, String> {
        let mut args = StopArgs::default();
        if let Some(l) = loops {
            args.set(StopOpt::Loops, l.to_string());
        }
        if let Some(d) = duration {
            args.set(StopOpt::Duration, d.to_string());
        }
        args.validate(|o| o).map_err(|e| e.0)
    }

    #[test]
    fn zero_is_no_limit() {
        assert_eq!(
            stop(Some("0"), Some("0")),
            Ok(Stop {
                loops: None,
                duration: None
            })
        );
        assert_eq!(
            stop(Some("7"), Some("2m")),
            Ok(Stop {
                loops: Some(7),
                duration: Some(Nanos::from_secs(120))
            })
        );
    }

    #[test]
    fn bad_values_are_one_line() {
        for (loops, duration, want) in [
            (
                Some("-1"),
                None,
                "-l/--loops: invalid value '-1': expected a number of loops, 0 (no limit) or more",
            ),
            (
                None,
                Some("1.5"),
                "-D/--duration: invalid value '1.5': expected a whole number of seconds",
            ),
            (
                None,
                Some("300000000000d"),
                "-D/--duration: invalid value '300000000000d': too long: at most 292 years \
                 (9223372036 seconds)",
            ),
            (
                None,
                Some("99999999999999999999"),
                "-D/--duration: invalid value '99999999999999999999': too long",
            ),
        ] {
            let e = stop(loops, duration).unwrap_err();
            assert!(e.starts_with(want), "{e}\nwanted: {want}");
        }
    }

    #[test]
    fn help_line_fits() {
        assert_eq!(
            duration::<SharedArgs>().render(),
            concat!(
                "  -D, --duration=TIME    stop after TIME: seconds, or a number followed by\n",
                "                         s, m, h or d (30s, 10m, 2h, 1d); 0: no limit [0]\n",
            )
        );
    }
}
