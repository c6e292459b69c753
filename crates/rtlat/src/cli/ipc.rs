//! The command lines of `rtlat svsematest`, `pmqtest`, `ptsematest` and
//! `sigwaittest`: the options of the rt-tests 2.4 tools of those names, read
//! the way their getopt reads them, turned into validated [`IpcSettings`].
//!
//! As in the C tools `-h` is help here. Unlike them, every value is checked
//! and a bad one is a one-line [`UsageError`] naming the option, the value
//! and what is accepted (exit status 2).

use std::ffi::OsString;

use rtlat_core::DistributionPlan;
use rtlat_core::Nanos;
use rtlat_core::RunConfig;
use rtlat_core::ipc::{PairConfig, Side};

use super::load_options::run_duration;
use super::shared::Measure;
use crate::ipc::PairTool;
use crate::ipc::settings::IpcSettings;
pub use rtlat_args::UsageError;
use rtlat_args::docs::help::Help;
use rtlat_args::getopt::{GetoptError, OptSpec, ValueKind};
use rtlat_args::options::{self, Flag, Read};
pub use rtlat_args::values::SystemView;
use rtlat_args::values::invalid;
use rtlat_core::load::LoadSchedule;

mod flags;
mod gates_and_load;
mod help;
mod outputs_and_source;
mod pairs;
mod raw;
mod stopping;
#[cfg(test)]
mod tests;
mod timing;

use flags::{flags, name};
pub use help::summary;
use raw::Raw;

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "built once per process; boxing would only complicate the callers"
)]
pub enum Invocation {
    /// `-h`/`--help`: print [`help_text`] to stdout and exit 0.
    Help,
    /// Measure.
    Run(Measure<IpcSettings>),
    /// `-fr<N>` / `-fs<N>`: be side `side` of pair `pair` of a fork-mode
    /// run started by another rtlat process.
    ForkChild {
        /// Which side.
        side: Side,
        /// Which pair.
        pair: usize,
    },
}

/// Whether the command line gives `-a` its value in the same word (`-a0`,
/// `-qa0`, `--affinity=0`). The C tools read a value in the next word only
/// when it is not 0, so `-a 0` means `-a` alone while `-a0` means CPU 0.
fn affinity_attached(args: &[OsString], specs: &[OptSpec<usize>]) -> bool {
    let short = |c: char| specs.iter().find(|s| s.short == Some(c));
    let long = |name: &str| {
        specs.iter().find(|s| {
            s.long
                .is_some_and(|l| !name.is_empty() && l.starts_with(name))
        })
    };
    let mut attached = false;
    // Every word counts, UTF-8 or not (a file name), so that a value is
    // never taken for an option.
    let words: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
    let mut words = words.iter().map(|w| w.as_ref());
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        let (spec, rest) = if let Some(body) = word.strip_prefix("--") {
            match body.split_once('=') {
                Some((name, value)) => (long(name), Some(value)),
                None => (long(body), None),
            }
        } else if let Some(cluster) = word.strip_prefix('-') {
            // The first option of the cluster that takes a value ends it.
            let found = cluster.char_indices().find_map(|(pos, c)| {
                short(c)
                    .filter(|s| s.value != ValueKind::None)
                    .map(|s| (s, &cluster[pos + c.len_utf8()..]))
            });
            match found {
                Some((spec, rest)) => (Some(spec), (!rest.is_empty()).then_some(rest)),
                None => (None, None),
            }
        } else {
            (None, None)
        };
        let Some(spec) = spec else { continue };
        if spec.long == Some("affinity") {
            attached = rest.is_some();
        }
        if rest.is_none() && spec.value == ValueKind::Required {
            words.next();
        }
    }
    attached
}

/// Reads the command line of `tool`. `args` excludes the program name (and
/// the subcommand); `cmdline` is kept for the JSON output.
pub fn parse(
    tool: PairTool,
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let flags = flags(tool);
    let mut raw = Raw::default();
    // getopt's errors, with the ipc tools' own message for `-t -2`.
    let read = options::parse_with(flags, args, &mut raw, |e| match e {
        // `-t -2`: getopt takes `-2` for an option of its own.
        GetoptError::Unrecognized(word, _)
            if word.len() > 1 && word[1..].starts_with(|c: char| c.is_ascii_digit()) =>
        {
            UsageError(format!(
                "unrecognized option '{word}' (-t/--threads and -a/--affinity take no \
                 negative numbers)"
            ))
        }
        e => UsageError(e.to_string()),
    })?;
    if read == Read::Help {
        return Ok(Invocation::Help);
    }
    if let Some(Some(role)) = &raw.fork {
        return fork_role(role).map(|(side, pair)| Invocation::ForkChild { side, pair });
    }
    let affinity_zero_is_cpu = affinity_attached(args, &options::table(flags));
    let (settings, warnings) = build(tool, raw, affinity_zero_is_cpu, cmdline, system)?;
    Ok(Invocation::Run(Measure { settings, warnings }))
}

/// `-fr<N>` / `-fs<N>`: the hidden values of `-f` that name a fork-mode
/// child's part.
fn fork_role(text: &str) -> Result<(Side, usize), UsageError> {
    let bad = || {
        invalid(
            name("fork"),
            text,
            "expected no value (fork mode); r<N> and s<N> are for the processes it starts",
        )
    };
    let (side, number) = match text.split_at_checked(1) {
        Some(("r", n)) => (Side::Receiver, n),
        Some(("s", n)) => (Side::Sender, n),
        _ => return Err(bad()),
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let pair = number.parse::<usize>().map_err(|_| bad())?;
    Ok((side, pair))
}

/// Checks the values, concern by concern, in the order their errors are
/// reported, and puts the settings together.
fn build(
    tool: PairTool,
    raw: Raw,
    affinity_zero_is_cpu: bool,
    cmdline: String,
    system: &SystemView,
) -> Result<(IpcSettings, Vec<String>), UsageError> {
    let mut warnings = Vec::new();
    let allowed = pairs::allowed_cpus(system)?;
    let (npairs, pinning) =
        pairs::pairs_and_pinning(&raw, affinity_zero_is_cpu, &allowed, system, &mut warnings)?;
    let plans = timing::plans(tool, &raw, npairs, &pinning, &allowed)?;
    let stopping = stopping::stopping(&raw)?;
    let (outputs, source) = outputs_and_source::outputs_and_source(&raw, &stopping, &mut warnings)?;
    let fork = matches!(raw.fork, Some(None));
    let (gates, projection, load) = gates_and_load::gates_and_load(&raw, fork, system)?;
    let rt_tests = raw.shared.rt_tests(name)?;
    // A schedule ends the run when it ends, unless -D comes first.
    let duration = run_duration(stopping.duration, load.as_ref());
    let resolution = stopping.resolution;
    let buckets = outputs.buckets;
    let settings = IpcSettings {
        tool,
        engine: PairConfig {
            mechanism: tool.mechanism(),
            pairs: plans,
            run: RunConfig {
                loops: stopping.loops,
                duration,
                resolution,
                source,
                // Percentiles for --fail-if; fork mode keeps its results in
                // shared cells, without one.
                distribution: (!fork)
                    .then(|| {
                        let buckets = i64::try_from(buckets.unwrap_or(0)).unwrap_or(i64::MAX);
                        let range = Nanos(buckets.saturating_mul(resolution.nanos_per_unit()));
                        DistributionPlan::new(1000, range).ok()
                    })
                    .flatten(),
                phases: load.as_ref().and_then(LoadSchedule::phase_plan),
            },
            histogram: buckets,
            breaktrace: stopping.breaktrace,
            mq_timeouts: stopping.mq_timeouts,
        },
        quiet: raw.quiet,
        fork,
        json: outputs.json,
        verdict: raw.verdict,
        projection,
        rt_tests,
        histogram: outputs.histogram,
        cmdline,
        gates,
        load,
    };
    Ok((settings, warnings))
}

/// The option table of `tool`, as the man page and the completions see
/// it.
pub fn table(tool: PairTool) -> Vec<OptSpec<()>> {
    flags(tool).iter().map(Flag::row).collect()
}

/// The text of `rtlat <tool> --help`.
pub fn help_text(tool: PairTool) -> String {
    help::help_page(tool).render()
}

/// What the man page and the completions of `tool` read of its help.
pub fn help_model(tool: PairTool) -> Help {
    help::help_page(tool).model()
}
