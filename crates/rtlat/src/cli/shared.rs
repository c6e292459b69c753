//! The shared option groups together in a tool's command line: one id
//! variant (`Opt::Shared(SharedOpt)`), one field of raw values
//! (`Raw::shared`) and one match arm for all of them, and a validating
//! method per group. The groups themselves (rows, values, messages, help
//! lines) live in [`stop_options`](super::stop_options),
//! [`output_options`](super::output_options), [`gates`](super::gates) and
//! [`load_options`](super::load_options); the hidden `--synthetic SEED`,
//! one option, lives here, and so does [`Measure`], what a measuring
//! tool's command line asks it to run.

use rtlat_core::config::TimeSourceKind;
use rtlat_core::load::schedule::LoadSchedule;

use super::gates::{self, GateArgs, GateOpt};
use super::load_options::{self, LoadArgs, LoadOpt};
use super::output_options::{
    HISTFILE_C, HISTOFALL_C, HISTOGRAM_C, JSON, OutputArgs, OutputOpt, Outputs,
};
use super::stop_options::{DURATION, LOOPS, Stop, StopArgs, StopOpt};
use super::verdict_options::{self, VerdictArgs, VerdictOpt};
use crate::gate::GatePlan;
use rtlat_args::UsageError;
use rtlat_args::getopt::{OptSpec, REQ};
use rtlat_args::options::Flag;
use rtlat_args::values::{OptionName, SystemView, time_source};

/// A measuring tool's run: what its command line asks for is
/// `Invocation<Measure<its settings>>` (the pair tools add the fork child).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Measure<S> {
    /// The validated settings.
    pub settings: S,
    /// Complete stderr lines (no newline) to print, in order, before
    /// anything else.
    pub warnings: Vec<String>,
}

/// An option of one of the shared groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedOpt {
    /// `-l`, `-D`.
    Stop(StopOpt),
    /// `--json`, the histogram, `--histfile`.
    Out(OutputOpt),
    /// `--fail-if`, `--junit`.
    Gate(GateOpt),
    /// `--load`, `--load-schedule`, `--load-cpus`.
    Load(LoadOpt),
    /// `--horizon`, `--deadline`.
    Verdict(VerdictOpt),
    /// `--synthetic SEED`.
    Synthetic,
}

/// The hidden `--synthetic SEED`: the deterministic test seam, not in any
/// help. Newer than 2.4, so it never changes what a 2.4 abbreviation
/// means (`--sy` stays cyclictest's --system).
pub const SYNTHETIC: OptSpec<SharedOpt> =
    OptSpec::new_long(SharedOpt::Synthetic, "synthetic", REQ).hidden();

/// A tool's raw state that holds the shared groups' raw values: what a
/// shared option's definition changes.
pub trait HasShared {
    /// The shared groups' raw values.
    fn shared(&mut self) -> &mut SharedArgs;
}

impl HasShared for SharedArgs {
    fn shared(&mut self) -> &mut SharedArgs {
        self
    }
}

/// The definition of the hidden `--synthetic SEED`.
pub fn synthetic<R: HasShared>() -> Flag<R> {
    Flag::from_row(&SYNTHETIC, "SEED").apply(|r: &mut R, v| {
        r.shared().synthetic = Some(v.text()?);
        Ok(())
    })
}

/// The definitions of `--fail-if`, `--junit`, `--horizon`, `--deadline`,
/// `--load`, `--load-schedule` and `--load-cpus`, in that order (every
/// measuring tool has them).
pub fn gate_and_load_flags<R: HasShared>() -> Vec<Flag<R>> {
    let mut flags = gates::flags();
    flags.extend(verdict_options::flags());
    flags.extend(load_options::flags());
    flags
}

impl SharedOpt {
    /// The long spelling (every shared option has one), with which a
    /// tool finds the option's definition in its list.
    pub fn long(self) -> &'static str {
        let rows = [LOOPS, DURATION]
            .map(|r| row(r, std::convert::identity))
            .into_iter()
            .chain(
                [JSON, HISTOGRAM_C, HISTOFALL_C, HISTFILE_C]
                    .map(|r| row(r, std::convert::identity)),
            )
            .chain(gate_and_load_rows(std::convert::identity))
            .chain([SYNTHETIC]);
        rows.into_iter()
            .find(|r| r.id == self)
            .and_then(|r| r.long)
            .expect("every shared option has a long name")
    }
}

/// A group's row in a tool's table, `wrap` being the tool's variant
/// (`Opt::Shared`).
pub fn row<G, O>(spec: OptSpec<G>, wrap: fn(SharedOpt) -> O) -> OptSpec<O>
where
    SharedOpt: From<G>,
{
    spec.map(|g| wrap(SharedOpt::from(g)))
}

/// The rows of `--fail-if`, `--junit`, `--horizon`, `--deadline`,
/// `--load`, `--load-schedule` and `--load-cpus`, in that order (every
/// measuring tool has them).
pub fn gate_and_load_rows<O>(wrap: fn(SharedOpt) -> O) -> impl Iterator<Item = OptSpec<O>> {
    let gates = gates::ROWS.map(|r| row(r, wrap));
    let verdict = verdict_options::ROWS.map(|r| row(r, wrap));
    let loads = load_options::ROWS.map(|r| row(r, wrap));
    gates.into_iter().chain(verdict).chain(loads)
}

impl From<StopOpt> for SharedOpt {
    fn from(o: StopOpt) -> Self {
        SharedOpt::Stop(o)
    }
}

impl From<OutputOpt> for SharedOpt {
    fn from(o: OutputOpt) -> Self {
        SharedOpt::Out(o)
    }
}

impl From<GateOpt> for SharedOpt {
    fn from(o: GateOpt) -> Self {
        SharedOpt::Gate(o)
    }
}

impl From<VerdictOpt> for SharedOpt {
    fn from(o: VerdictOpt) -> Self {
        SharedOpt::Verdict(o)
    }
}

impl From<LoadOpt> for SharedOpt {
    fn from(o: LoadOpt) -> Self {
        SharedOpt::Load(o)
    }
}

/// The raw values of every shared group (the last one wins).
#[derive(Clone, Debug, Default)]
pub struct SharedArgs {
    /// `-l`, `-D`.
    pub stop: StopArgs,
    /// `--json`, the histogram, `--histfile`.
    pub outputs: OutputArgs,
    /// `--fail-if`, `--junit`.
    pub gates: GateArgs,
    /// `--load`, `--load-schedule`, `--load-cpus`.
    pub load: LoadArgs,
    /// `--horizon`, `--deadline`.
    pub verdict: VerdictArgs,
    /// `--synthetic`'s seed.
    pub synthetic: Option<String>,
}

impl SharedArgs {
    /// `-l` and `-D` ([`StopArgs::validate`]).
    pub fn stop<O: OptionName>(&self, wrap: fn(SharedOpt) -> O) -> Result<Stop, UsageError> {
        self.stop.validate(|o| wrap(o.into()))
    }

    /// The outputs ([`OutputArgs::validate`]); `unit` names the
    /// histogram's.
    pub fn outputs<O: OptionName>(
        &self,
        wrap: fn(SharedOpt) -> O,
        unit: &str,
    ) -> Result<Outputs, UsageError> {
        self.outputs.validate(|o| wrap(o.into()), unit)
    }

    /// The gates ([`GateArgs::validate`]).
    pub fn gates<O: OptionName>(
        &self,
        wrap: fn(SharedOpt) -> O,
    ) -> Result<Option<GatePlan>, UsageError> {
        self.gates.validate(|o| wrap(o.into()))
    }

    /// What the verdict projects ([`VerdictArgs::validate`]).
    pub fn projection<O: OptionName>(
        &self,
        wrap: fn(SharedOpt) -> O,
    ) -> Result<verdict_options::Asked, UsageError> {
        self.verdict.validate(|o| wrap(o.into()))
    }

    /// The clock of the run: the seeded synthetic one with `--synthetic`.
    pub fn source<O: OptionName>(
        &self,
        wrap: fn(SharedOpt) -> O,
    ) -> Result<TimeSourceKind, UsageError> {
        time_source(wrap(SharedOpt::Synthetic), self.synthetic.as_deref())
    }

    /// The load ([`LoadArgs::validate`]).
    pub fn load<O: OptionName>(
        &self,
        wrap: fn(SharedOpt) -> O,
        system: &SystemView,
    ) -> Result<Option<LoadSchedule>, UsageError> {
        self.load.validate(|o| wrap(o.into()), system)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_args::values::spelling;

    /// A tool of shared options only.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Opt {
        Shared(SharedOpt),
    }

    fn rows() -> Vec<OptSpec<Opt>> {
        let mut rows = vec![
            row(LOOPS, Opt::Shared),
            row(DURATION, Opt::Shared),
            row(JSON, Opt::Shared),
            row(SYNTHETIC, Opt::Shared),
        ];
        rows.extend(gate_and_load_rows(Opt::Shared));
        rows
    }

    impl OptionName for Opt {
        fn spelling(self) -> String {
            spelling(self, rows().iter())
        }
    }

    /// The raw values of a command line of shared options.
    fn args(words: &[&str]) -> SharedArgs {
        let words: Vec<std::ffi::OsString> = words.iter().map(Into::into).collect();
        let mut args = SharedArgs::default();
        rtlat_args::options::parse(&definitions(), &words, &mut args).unwrap();
        args
    }

    #[test]
    fn each_group_validates_with_the_tools_spelling() {
        let a = args(&["-l5", "--json=-", "--fail-if=max>1ms", "--synthetic=7"]);
        assert_eq!(a.stop(Opt::Shared).unwrap().loops, Some(5));
        assert!(
            a.outputs(Opt::Shared, "microseconds")
                .unwrap()
                .json
                .is_some()
        );
        assert!(a.gates(Opt::Shared).unwrap().is_some());
        assert_eq!(
            a.source(Opt::Shared).unwrap(),
            TimeSourceKind::Synthetic { seed: 7 }
        );
        let bad = args(&["-D", "x", "--synthetic=-1", "--load-cpus=0"]);
        let system = SystemView {
            allowed_cpus: vec![0],
            configured_cpus: 1,
        };
        assert!(
            bad.stop(Opt::Shared)
                .unwrap_err()
                .0
                .starts_with("-D/--duration: ")
        );
        assert!(
            bad.source(Opt::Shared)
                .unwrap_err()
                .0
                .starts_with("--synthetic: ")
        );
        assert!(
            bad.load(Opt::Shared, &system)
                .unwrap_err()
                .0
                .starts_with("--load-cpus needs --load")
        );
        assert_eq!(rows().len(), 11);
    }

    /// The shared definitions, as a tool includes them.
    fn definitions() -> Vec<Flag<SharedArgs>> {
        let mut flags = vec![
            crate::cli::stop_options::loops(&["loops"]),
            crate::cli::stop_options::duration(),
            crate::cli::output_options::json(&JSON),
            crate::cli::output_options::histogram(&HISTOGRAM_C, &["buckets"]),
            crate::cli::output_options::histofall(),
            crate::cli::output_options::histfile(&HISTFILE_C),
            synthetic(),
        ];
        flags.extend(gate_and_load_flags());
        flags
    }

    #[test]
    fn the_definitions_keep_what_the_rows_do() {
        let flags = definitions();
        let words: Vec<std::ffi::OsString> = [
            "-l5",
            "-D",
            "2m",
            "--json=-",
            "-H",
            "7",
            "--histf",
            "h.txt",
            "--synth",
            "3",
            "--fail-if",
            "max>1ms",
            "--junit",
            "j.xml",
            "--horizon",
            "1h",
            "--deadline",
            "100us",
            "--load",
            "cpu",
            "--load-s",
            "idle=1s",
            "--load-c",
            "0",
        ]
        .iter()
        .map(Into::into)
        .collect();
        let mut raw = SharedArgs::default();
        let read = rtlat_args::options::parse(&flags, &words, &mut raw).unwrap();
        assert_eq!(read, rtlat_args::options::Read::Options);
        assert_eq!(raw.stop.loops.as_deref(), Some("5"));
        assert_eq!(raw.stop.duration.as_deref(), Some("2m"));
        assert_eq!(raw.outputs.json, Some("-".into()));
        assert_eq!(
            raw.outputs.histogram,
            Some((OutputOpt::Histofall, "7".to_owned()))
        );
        assert!(raw.outputs.histofall);
        assert_eq!(raw.outputs.histfile, Some("h.txt".into()));
        assert_eq!(raw.synthetic.as_deref(), Some("3"));
        assert_eq!(raw.gates.fail_if.as_deref(), Some("max>1ms"));
        assert_eq!(raw.gates.junit, Some("j.xml".into()));
        assert_eq!(raw.verdict.horizon.as_deref(), Some("1h"));
        assert_eq!(raw.verdict.deadline.as_deref(), Some("100us"));
        assert_eq!(raw.load.load.as_deref(), Some("cpu"));
        assert_eq!(raw.load.schedule.as_deref(), Some("idle=1s"));
        assert_eq!(raw.load.cpus.as_deref(), Some("0"));
        // Each definition is the row the other tools' tables still use,
        // and each shared option finds its definition by its long name.
        let mut rows = vec![
            row(LOOPS, Opt::Shared),
            row(DURATION, Opt::Shared),
            row(JSON, Opt::Shared),
            row(HISTOGRAM_C, Opt::Shared),
            row(HISTOFALL_C, Opt::Shared),
            row(HISTFILE_C, Opt::Shared),
            row(SYNTHETIC, Opt::Shared),
        ];
        rows.extend(gate_and_load_rows(Opt::Shared));
        assert_eq!(rows.len(), flags.len());
        for (row, flag) in rows.iter().zip(&flags) {
            assert_eq!(row.names().long, flag.row().long);
            assert_eq!(row.names().short, flag.row().short);
            assert_eq!(row.value, flag.value);
            assert_eq!((row.in_2_4, row.hidden), (flag.in_2_4, flag.hidden));
            let Opt::Shared(which) = row.id;
            assert_eq!(Some(which.long()), flag.long);
        }
    }
}
