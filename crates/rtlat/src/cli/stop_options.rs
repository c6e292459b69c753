//! `-l/--loops N` and `-D/--duration TIME`, when a run stops: the same
//! rows, values, messages and help line in cyclictest, signaltest and the
//! IPC tools (latency's `-T` reads its value with the same
//! [`duration_option`]).

use rtlat_core::Nanos;

use rtlat_args::UsageError;
use rtlat_args::getopt::REQ;
use rtlat_args::options::Flag;

use rtlat_args::values::{OptionName, duration_option, loop_limit};

/// A tool's raw state that keeps the raw values of -l and -D (every
/// tool's through its shared values: `cli::shared`).
pub trait HasStop {
    /// Where they go.
    fn stop_args(&mut self) -> &mut StopArgs;
}

/// The definition of `-l/--loops N` (2.4); `help` says what a loop is in the
/// tool (a wake-up, a trip round the ring, a hand-off).
pub fn loops<R: HasStop>(help: &'static str) -> Flag<R> {
    Flag::c(Some('l'), "loops", REQ, "N")
        .help(help)
        .default("0")
        .apply(|r: &mut R, v| {
            r.stop_args().loops = Some(v.text()?);
            Ok(())
        })
}

/// The definition of `-D/--duration TIME` (2.4), the same in every tool.
pub fn duration<R: HasStop>() -> Flag<R> {
    Flag::c(Some('D'), "duration", REQ, "TIME")
        .help(rtlat_args::lines![
            "stop after TIME: seconds, or a number followed by",
            "s, m, h or d (30s, 10m, 2h, 1d); 0: no limit",
        ])
        .default("0")
        .apply(|r: &mut R, v| {
            r.stop_args().duration = Some(v.text()?);
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
    /// The limits; `name` spells an option of the tool by its long name. What a loop is (a wake-up, a trip round the ring, a
    /// hand-off) each tool's help says; the message is the same in all.
    pub fn validate<O: OptionName>(&self, name: impl Fn(&str) -> O) -> Result<Stop, UsageError> {
        let loops = match &self.loops {
            Some(text) => loop_limit(name("loops"), text, "a number of loops")?,
            None => None,
        };
        let duration = match &self.duration {
            Some(text) => duration_option(name("duration"), text)?,
            None => None,
        };
        Ok(Stop { loops, duration })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::shared::SharedArgs;
    use crate::cli::shared::tests::name;

    fn stop(loops: Option<&str>, duration: Option<&str>) -> Result<Stop, String> {
        let args = StopArgs {
            loops: loops.map(str::to_owned),
            duration: duration.map(str::to_owned),
        };
        args.validate(name).map_err(|e| e.0)
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
