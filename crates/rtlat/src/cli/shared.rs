//! The shared option groups together in a tool's command line: one field
//! of raw values (`Raw::shared`, reached through [`HasShared`]) and a
//! validating method per group. The groups themselves (definitions, raw
//! values, messages) live in [`stop_options`](super::stop_options),
//! [`output_options`](super::output_options), [`gates`](super::gates) and
//! [`load_options`](super::load_options); the hidden `--synthetic SEED`,
//! one option, lives here, and so does [`Measure`], what a measuring
//! tool's command line asks it to run.

use rtlat_core::load::LoadSchedule;
use rtlat_core::{RtTests, TimeSourceKind};

use super::gates::{self, GateArgs};
use super::load_options::{self, LoadArgs};
use super::output_options::{OutputArgs, Outputs};
use super::rt_tests_options;
use super::stop_options::{Stop, StopArgs};
use super::verdict_options::{self, VerdictArgs};
use crate::gate::GatePlan;
use rtlat_args::UsageError;
use rtlat_args::getopt::REQ;
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

impl<R: HasShared> super::stop_options::HasStop for R {
    fn stop_args(&mut self) -> &mut StopArgs {
        &mut self.shared().stop
    }
}

impl<R: HasShared> super::output_options::HasOutputs for R {
    fn output_args(&mut self) -> &mut OutputArgs {
        &mut self.shared().outputs
    }
}

impl<R: HasShared> super::gates::HasGates for R {
    fn gate_args(&mut self) -> &mut GateArgs {
        &mut self.shared().gates
    }
}

impl<R: HasShared> super::load_options::HasLoad for R {
    fn load_args(&mut self) -> &mut LoadArgs {
        &mut self.shared().load
    }
}

impl<R: HasShared> super::verdict_options::HasVerdict for R {
    fn verdict_args(&mut self) -> &mut VerdictArgs {
        &mut self.shared().verdict
    }
}

/// The definition of the hidden `--synthetic SEED`: the deterministic test
/// seam, not in any help. Newer than 2.4, so it never changes what a 2.4
/// abbreviation means (`--sy` stays cyclictest's --system).
pub fn synthetic<R: HasShared>() -> Flag<R> {
    Flag::new_long("synthetic", REQ, "SEED")
        .hidden()
        .apply(|r: &mut R, v| {
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
    /// `--rt-tests`'s version.
    pub rt_tests: Option<String>,
}

impl SharedArgs {
    /// `-l` and `-D` ([`StopArgs::validate`]).
    pub fn stop<O: OptionName>(&self, name: fn(&str) -> O) -> Result<Stop, UsageError> {
        self.stop.validate(name)
    }

    /// The outputs ([`OutputArgs::validate`]); `unit` names the
    /// histogram's.
    pub fn outputs<O: OptionName>(
        &self,
        name: fn(&str) -> O,
        unit: &str,
    ) -> Result<Outputs, UsageError> {
        self.outputs.validate(name, unit)
    }

    /// The gates ([`GateArgs::validate`]).
    pub fn gates<O: OptionName>(
        &self,
        name: fn(&str) -> O,
    ) -> Result<Option<GatePlan>, UsageError> {
        self.gates.validate(name)
    }

    /// What the verdict projects ([`VerdictArgs::validate`]).
    pub fn projection<O: OptionName>(
        &self,
        name: fn(&str) -> O,
    ) -> Result<verdict_options::Asked, UsageError> {
        self.verdict.validate(name)
    }

    /// The clock of the run: the seeded synthetic one with `--synthetic`.
    pub fn source<O: OptionName>(&self, name: fn(&str) -> O) -> Result<TimeSourceKind, UsageError> {
        time_source(name("synthetic"), self.synthetic.as_deref())
    }

    /// The dialect: `--rt-tests`, else `$RTLAT_RT_TESTS`, else 2.4
    /// ([`rt_tests_options::validate`]).
    /// The unit tests of the parsers never read the variable (a
    /// developer's own `RTLAT_RT_TESTS` would change their defaults):
    /// [`rt_tests_options::validate`]'s tests and the integration tests
    /// cover it.
    pub fn rt_tests<O: OptionName>(&self, name: fn(&str) -> O) -> Result<RtTests, UsageError> {
        #[cfg(not(test))]
        let env = std::env::var_os(RtTests::ENV);
        #[cfg(test)]
        let env: Option<std::ffi::OsString> = None;
        rt_tests_options::validate(name("rt-tests"), self.rt_tests.as_deref(), env.as_deref())
    }

    /// The load ([`LoadArgs::validate`]).
    pub fn load<O: OptionName>(
        &self,
        name: fn(&str) -> O,
        system: &SystemView,
    ) -> Result<Option<LoadSchedule>, UsageError> {
        self.load.validate(name, system)
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    use crate::cli::output_options::{HISTFILE_C, HISTOGRAM_C, JSON};
    use rtlat_args::options::{Name, name_of};

    /// How a tool of every shared option spells `long`.
    pub fn name(long: &str) -> Name {
        name_of(&definitions(), long)
    }

    /// The raw values of a command line of shared options.
    pub fn args(words: &[&str]) -> SharedArgs {
        let words: Vec<std::ffi::OsString> = words.iter().map(Into::into).collect();
        let mut args = SharedArgs::default();
        rtlat_args::options::parse(&definitions(), &words, &mut args).unwrap();
        args
    }

    #[test]
    fn each_group_validates_with_the_tools_spelling() {
        let a = args(&["-l5", "--json=-", "--fail-if=max>1ms", "--synthetic=7"]);
        assert_eq!(a.stop(name).unwrap().loops, Some(5));
        assert!(a.outputs(name, "microseconds").unwrap().json.is_some());
        assert!(a.gates(name).unwrap().is_some());
        assert_eq!(
            a.source(name).unwrap(),
            TimeSourceKind::Synthetic { seed: 7 }
        );
        let bad = args(&["-D", "x", "--synthetic=-1", "--load-cpus=0"]);
        let system = SystemView {
            allowed_cpus: vec![0],
            configured_cpus: 1,
        };
        assert!(bad.stop(name).unwrap_err().0.starts_with("-D/--duration: "));
        assert!(bad.source(name).unwrap_err().0.starts_with("--synthetic: "));
        assert!(
            bad.load(name, &system)
                .unwrap_err()
                .0
                .starts_with("--load-cpus needs --load")
        );
    }

    /// The shared definitions, as a tool includes them.
    fn definitions() -> Vec<Flag<SharedArgs>> {
        let mut flags = vec![
            crate::cli::stop_options::loops("loops"),
            crate::cli::stop_options::duration(),
            crate::cli::output_options::json(&JSON),
            crate::cli::output_options::histogram(&HISTOGRAM_C, "buckets"),
            crate::cli::output_options::histofall(),
            crate::cli::output_options::histfile(&HISTFILE_C),
            crate::cli::output_options::hgrm(),
            crate::cli::output_options::hgrm_per_thread(),
            synthetic(),
        ];
        flags.extend(gate_and_load_flags());
        flags.push(crate::cli::rt_tests_options::rt_tests());
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
            "--rt",
            "2.10",
            "--hgrm=a.hgrm",
            "--hgrm-p",
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
        assert_eq!(raw.outputs.histogram, Some(("histofall", "7".to_owned())));
        assert!(raw.outputs.histofall);
        assert_eq!(raw.outputs.histfile, Some("h.txt".into()));
        assert_eq!(raw.outputs.hgrm, Some("a.hgrm".into()));
        assert!(raw.outputs.hgrm_per_thread);
        assert_eq!(raw.synthetic.as_deref(), Some("3"));
        assert_eq!(raw.gates.fail_if.as_deref(), Some("max>1ms"));
        assert_eq!(raw.gates.junit, Some("j.xml".into()));
        assert_eq!(raw.verdict.horizon.as_deref(), Some("1h"));
        assert_eq!(raw.verdict.deadline.as_deref(), Some("100us"));
        assert_eq!(raw.load.load.as_deref(), Some("cpu"));
        assert_eq!(raw.load.schedule.as_deref(), Some("idle=1s"));
        assert_eq!(raw.load.cpus.as_deref(), Some("0"));
        assert_eq!(raw.rt_tests.as_deref(), Some("2.10"));
        // The spellings, ages and visibility getopt reads (a 2.4 name
        // wins an abbreviation over ours).
        let rows: Vec<(String, bool, bool)> = flags
            .iter()
            .map(|f| (f.spec(), f.in_2_4, f.hidden))
            .collect();
        let row = |spec: &str, in_2_4, hidden| (spec.to_owned(), in_2_4, hidden);
        assert_eq!(
            rows,
            [
                row("-l, --loops=N", true, false),
                row("-D, --duration=TIME", true, false),
                row("--json=FILE", true, false),
                row("-h, --histogram=US", true, false),
                row("-H, --histofall=US", true, false),
                row("--histfile=PATH", true, false),
                row("--hgrm=FILE", false, false),
                row("--hgrm-per-thread", false, false),
                row("--synthetic=SEED", false, true),
                row("--fail-if=LIMITS", false, false),
                row("--junit=FILE", false, false),
                row("--horizon=LIST", false, false),
                row("--deadline=TIME", false, false),
                row("--load=SPEC", false, false),
                row("--load-schedule=SCHEDULE", false, false),
                row("--load-cpus=LIST", false, false),
                row("--rt-tests=VERSION", false, false),
            ]
        );
    }
}
