//! The `rtlat oslat` command line: oslat 2.4's options, read the way its
//! getopt reads them (`b:Bc:C:D:f:hm:qsw:T:vz` and the long names), plus
//! the shared `--fail-if`/`--junit`, `--verdict`, `--horizon`/`--deadline`,
//! `--hgrm` and `--load`/`--load-cpus`, turned into validated [`Settings`].
//!
//! Unlike C, every value is checked and a bad one is a one-line
//! [`UsageError`] on stderr (exit 2) naming the option, the value and what
//! is accepted; C prints its message on stdout and exits 1.

use std::ffi::OsString;

use rtlat_core::Nanos;
use rtlat_core::oslat::{LatencyRule, OslatConfig, Scale, Workload};

use super::shared::{HasShared, Measure, SharedArgs, gate_and_load_flags};
use super::verdict_options::{self, HasVerdictStyle};
use super::{gates, load_options, output_options as outputs};
use crate::oslat::settings::Settings;
use crate::report::verdict::text::Style;
use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, find, like, name_of, pick,
};
use rtlat_args::values::{OptionName, SystemView, duration_option, int_in, invalid};
use rtlat_core::parse_cpu_list;

use std::sync::LazyLock;

/// What `rtlat oslat` is for, in one line (at most 65 characters).
pub const SUMMARY: &str = "OS noise: the gaps in a busy loop on each chosen CPU";

/// What the command line asks for: [`help_text`], or to measure.
pub type Invocation = rtlat_args::Invocation<Measure<Box<Settings>>>;

/// The most buckets `-b` takes (C's limit).
const MAX_BUCKETS: i64 = 1024;
/// The fewest buckets `-b` takes: 4, as C's help says (C itself refuses 4).
const MIN_BUCKETS: i64 = 4;
/// The largest `-m`: 1 GiB per buffer.
const MAX_WORKLOAD_MEM: u64 = 1 << 30;

/// The raw values as the parser collects them (the last one wins).
#[derive(Default)]
struct Raw {
    bucket_size: Option<String>,
    bias: bool,
    cpu_list: Option<String>,
    cpu_main_thread: Option<String>,
    duration: Option<String>,
    rtprio: Option<String>,
    workload_mem: Option<String>,
    quiet: bool,
    single_preheat: bool,
    trace_threshold: Option<String>,
    version: bool,
    workload: Option<String>,
    bucket_width: Option<String>,
    zero_omit: bool,
    verdict: Option<Style>,
    shared: SharedArgs,
}

impl HasShared for Raw {
    fn shared(&mut self) -> &mut SharedArgs {
        &mut self.shared
    }
}

impl HasVerdictStyle for Raw {
    fn verdict_style(&mut self) -> &mut Option<Style> {
        &mut self.verdict
    }
}

/// oslat 2.4's options in getopt's order, then ours (long only, never
/// changing what a 2.4 abbreviation means).
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    let mut flags = vec![
        Flag::c(Some('b'), "bucket-size", REQ, "N")
            .help(rtlat_args::lines![
                "buckets of the histogram, 1 us each, 4 to 1024; the",
                "last one also counts every longer gap",
            ])
            .default("32")
            .apply(|r: &mut Raw, v| {
                r.bucket_size = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('B'), "bias", NO, "")
            .help(rtlat_args::lines![
                "start the buckets at the smallest gap the pre-heat saw",
            ])
            .apply(|r: &mut Raw, _| {
                r.bias = true;
                Ok(())
            }),
        Flag::c(Some('c'), "cpu-list", REQ, "CPUS")
            .help(rtlat_args::lines![
                "one busy thread per CPU of CPUS (like 1,3,5-7 or",
                "all, !LIST for all but LIST)",
            ])
            .default("all")
            .apply(|r: &mut Raw, v| {
                r.cpu_list = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('C'), "cpu-main-thread", REQ, "CPU")
            .help(rtlat_args::lines![
                "the CPU the main thread runs on (0, or the first",
                "allowed CPU when 0 is not)",
            ])
            .apply(|r: &mut Raw, v| {
                r.cpu_main_thread = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('D'), "duration", REQ, "TIME")
            .help(rtlat_args::lines![
                "measure for TIME: seconds, or a number followed by",
                "s, m, h or d (60, 20m, 2h)",
            ])
            .default("1")
            .apply(|r: &mut Raw, v| {
                r.duration = Some(v.text()?);
                Ok(())
            }),
        outputs::json(&outputs::JSON),
        Flag::c(Some('f'), "rtprio", REQ, "PRIO")
            .help(rtlat_args::lines![
                "run the busy threads under SCHED_FIFO at PRIO, 1 to",
                "99",
            ])
            .apply(|r: &mut Raw, v| {
                r.rtprio = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        Flag::c(Some('m'), "workload-mem", REQ, "SIZE")
            .help(rtlat_args::lines![
                "bytes of each of a thread's two buffers for -w",
                "memmove: a number with k, m, g or b (4k, 1m)",
            ])
            .default("16k")
            .apply(|r: &mut Raw, v| {
                r.workload_mem = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('q'), "quiet", NO, "")
            .help(rtlat_args::lines!["print the summary only"])
            .apply(|r: &mut Raw, _| {
                r.quiet = true;
                Ok(())
            }),
        Flag::c(Some('s'), "single-preheat", NO, "")
            .help(rtlat_args::lines![
                "pre-heat with one thread only (lock the CPU",
                "frequencies first)",
            ])
            .apply(|r: &mut Raw, _| {
                r.single_preheat = true;
                Ok(())
            }),
        Flag::c(Some('w'), "workload", REQ, "KIND")
            .help(rtlat_args::lines![
                "what the loop does between two reads: no or",
                "memmove",
            ])
            .default("no")
            .apply(|r: &mut Raw, v| {
                r.workload = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('W'), "bucket-width", REQ, "NS")
            .help(rtlat_args::lines![
                "each bucket NS ns wide (rt-tests 2.5's, in every",
                "dialect); not a multiple of 1000: the figures in",
                "ns (3 decimals of us) and, without -b, 32000/NS",
                "buckets",
            ])
            .default("1000")
            .apply(|r: &mut Raw, v| {
                r.bucket_width = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('T'), "trace-threshold", REQ, "US")
            .help(rtlat_args::lines![
                "stop at the first gap of US us or more: a marker in",
                "the kernel trace, which is then stopped; exit 1",
            ])
            .apply(|r: &mut Raw, v| {
                r.trace_threshold = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('v'), "version", NO, "")
            .help(rtlat_args::lines!["print the version line and exit"])
            .apply(|r: &mut Raw, _| {
                r.version = true;
                Ok(())
            }),
        Flag::c(Some('z'), "zero-omit", NO, "")
            .help(rtlat_args::lines![
                "leave out the buckets that are empty on every CPU",
            ])
            .apply(|r: &mut Raw, _| {
                r.zero_omit = true;
                Ok(())
            }),
    ];
    // The busy loop keeps no per-phase figures: --load-schedule is read
    // to be refused (not in the help, the man page or the completions).
    flags.extend(
        gate_and_load_flags()
            .into_iter()
            .map(|flag| match flag.long {
                Some("fail-if") => flag.help(FAIL_IF_HELP),
                Some("load") => flag.help(LOAD_HELP),
                Some("load-schedule") => flag.hidden(),
                _ => flag,
            }),
    );
    flags.push(super::rt_tests_options::rt_tests());
    flags.extend([
        verdict_options::verdict(),
        outputs::hgrm(),
        outputs::hgrm_per_thread(),
    ]);
    flags
});

/// oslat's `--fail-if`: C's figures, no percentiles.
const FAIL_IF_HELP: &str = rtlat_args::lines![
    "fail when a thread's gaps, or all threads' together,",
    "break a limit: comma-separated METRIC OP VALUE,",
    "METRIC one of min avg max p50 p90 p99 p99.9 p99.99",
    "p99.999, OP one of > >= < <= (the failing",
    "condition), VALUE with ns, us, ms or s (us if",
    "none): 'max>20us,p99.9>5us'; and verdict=LEVEL or",
    "verdict!=LEVEL",
];

/// oslat's `--load`: beside the busy loops.
const LOAD_HELP: &str = rtlat_args::lines![
    "run load beside the busy loops (on --load-cpus),",
    "from before the pre-heat to the end:",
    "KIND[:WORKERS],...; \"load\" in the JSON",
];

fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// Reads the `rtlat oslat` command line (`args` without the program
/// name); `cmdline` is kept for the JSON output.
pub fn parse(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    let settings = build(raw, cmdline, system)?;
    Ok(Invocation::Run(Measure {
        settings: Box::new(settings),
        warnings: Vec::new(),
    }))
}

/// Checks the values in C's order and puts the settings together.
fn build(raw: Raw, cmdline: String, system: &SystemView) -> Result<Settings, UsageError> {
    let mut allowed = system.allowed_cpus.clone();
    allowed.sort_unstable();
    allowed.dedup();
    let rt_tests = raw.shared.rt_tests(name)?;
    let width_ns = match &raw.bucket_width {
        Some(text) => int_in(
            name("bucket-width"),
            text,
            1..=i64::from(i32::MAX),
            "a bucket width in ns",
        )? as u64,
        None => 1000,
    };
    let scale = scale_of(width_ns, rt_tests);
    let bucket_size = match &raw.bucket_size {
        Some(text) => int_in(
            name("bucket-size"),
            text,
            MIN_BUCKETS..=MAX_BUCKETS,
            "a number of buckets",
        )? as usize,
        // C 2.5: narrower buckets than 1 us cover 32 us together.
        None if scale.unit_per_us > 1 && width_ns < 1000 => (32_000 / width_ns) as usize,
        None => 32,
    };
    let cpus = match &raw.cpu_list {
        Some(text) => parse_cpu_list(text, &allowed, system.configured_cpus)
            .map_err(|e| invalid(name("cpu-list"), text, e))?,
        None => allowed.clone(),
    };
    let main_cpu = match &raw.cpu_main_thread {
        Some(text) => {
            let cpu = int_in(
                name("cpu-main-thread"),
                text,
                0..=(system.configured_cpus.max(1) as i64 - 1),
                "a CPU number",
            )? as usize;
            if !allowed.contains(&cpu) {
                return Err(invalid(
                    name("cpu-main-thread"),
                    text,
                    format_args!(
                        "CPU {cpu} is not one this process may run on ({})",
                        rtlat_core::format_cpu_list(&allowed)
                    ),
                ));
            }
            cpu
        }
        None if allowed.contains(&0) || allowed.is_empty() => 0,
        None => allowed[0],
    };
    let duration = match &raw.duration {
        Some(text) => duration_option(name("duration"), text)?.ok_or_else(|| {
            invalid(
                name("duration"),
                text,
                "expected a duration above 0: seconds, or a number followed by s, m, h or d",
            )
        })?,
        None => Nanos::from_secs(1),
    };
    let rtprio = match &raw.rtprio {
        Some(text) => int_in(name("rtprio"), text, 1..=99, "a SCHED_FIFO priority")? as u8,
        None => 0,
    };
    let json = raw.shared.outputs(name, "microseconds")?.json;
    let hgrm = raw.shared.outputs.hgrm(name, cpus.len())?;
    let trace_threshold_us = match &raw.trace_threshold {
        Some(text) => Some(int_in(
            name("trace-threshold"),
            text,
            1..=i64::from(i32::MAX),
            "a threshold in us",
        )? as u64),
        None => None,
    };
    let workload = match raw.workload.as_deref() {
        None | Some("no") => Workload::None,
        Some("memmove") => Workload::Memmove,
        Some(other) => {
            return Err(invalid(
                name("workload"),
                other,
                "expected 'no' or 'memmove'",
            ));
        }
    };
    let workload_mem = match &raw.workload_mem {
        Some(text) => memory_size(name("workload-mem"), text)?,
        None => 16 << 10,
    };
    let gates = raw.shared.gates(name)?;
    let projection = raw.shared.projection(name)?;
    if raw.shared.load.schedule.is_some() {
        return Err(UsageError(format!(
            "{}: an oslat run keeps no per-phase figures; use {} SPEC for a constant load",
            name("load-schedule").spelling(),
            name("load").spelling()
        )));
    }
    let load = raw.shared.load(name, system)?;
    Ok(Settings {
        config: OslatConfig {
            cpus,
            rtprio,
            bucket_size,
            scale,
            workload,
            workload_mem,
            trace_threshold_us,
            duration,
        },
        cpu_list_text: raw.cpu_list.clone(),
        main_cpu,
        bias: raw.bias,
        quiet: raw.quiet,
        single_preheat: raw.single_preheat,
        zero_omit: raw.zero_omit,
        rt_tests,
        version_only: raw.version,
        json,
        hgrm,
        verdict: raw.verdict,
        cmdline,
        gates,
        projection,
        load,
    })
}

/// The buckets' unit, width and rounding: `-W` in whole µs keeps µs
/// (C 2.5's `bucket_width /= 1000`), any other width counts in ns; each
/// release rounds a gap its own way (2.4 `index + 1`, 2.5-2.6 up, from
/// 2.7 down).
fn scale_of(width_ns: u64, rt_tests: rtlat_core::RtTests) -> Scale {
    let (unit_per_us, width) = if width_ns.is_multiple_of(1000) {
        (1, width_ns / 1000)
    } else {
        (1000, width_ns)
    };
    let rule = if !rt_tests.oslat_latency_in_units() {
        LatencyRule::NextUnit
    } else if rt_tests.oslat_latency_truncated() {
        LatencyRule::Truncate
    } else {
        LatencyRule::RoundUp
    };
    Scale {
        unit_per_us,
        width,
        rule,
    }
}

/// `-m`: digits and an optional suffix k, m, g (powers of 1024) or b
/// (bytes, as no suffix), 1 byte to 1 GiB.
fn memory_size(id: Name, text: &str) -> Result<usize, UsageError> {
    let t = text.trim();
    let (digits, scale) = match t.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => {
            let scale = match c.to_ascii_lowercase() {
                'k' => 1u64 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                'b' => 1,
                _ => 0,
            };
            (&t[..t.len() - 1], scale)
        }
        _ => (t, 1),
    };
    let bytes = digits
        .parse::<u64>()
        .ok()
        .filter(|_| scale > 0)
        .and_then(|n| n.checked_mul(scale))
        .filter(|&b| (1..=MAX_WORKLOAD_MEM).contains(&b));
    match bytes {
        Some(b) => Ok(b as usize),
        None => Err(invalid(
            id,
            text,
            "expected a size of 1 byte to 1g: a number with k, m, g or b (4k, 1m)",
        )),
    }
}

/// The options and the help of `rtlat oslat`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    let group = |longs: &[&str]| pick(&FLAGS, longs);
    Page {
        title: rtlat_args::tools::help_title("oslat", SUMMARY),
        usage: vec!["rtlat oslat [OPTIONS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
One thread per chosen CPU reads the CPU's counter (the TSC on x86, the
virtual counter on arm64) over and over and counts the gaps between two
reads in 1 us buckets: a gap is the time the CPU was taken from the loop
(interrupts, other tasks, SMIs). A 1-second pre-heat comes first. The
options and the output are those of rt-tests oslat 2.4: short options
group (-qz), values may be attached (-D10) or separate (-D 10), and long
options may be shortened while unambiguous (--dur)."
                    .to_owned(),
            ),
            Part::Heading("Threads"),
            group(&[
                "cpu-list",
                "cpu-main-thread",
                "rtprio",
                "workload",
                "workload-mem",
                "single-preheat",
            ]),
            Part::Heading("When to stop"),
            group(&["duration", "trace-threshold"]),
            Part::Heading("Output"),
            Part::Options(
                [
                    find(
                        &FLAGS,
                        &[
                            "bucket-size",
                            "bias",
                            "zero-omit",
                            "quiet",
                            "bucket-width",
                            "json",
                            "hgrm",
                            "hgrm-per-thread",
                            "rt-tests",
                            "version",
                            "verdict",
                        ],
                    ),
                    like(&FLAGS, &verdict_options::flags::<Raw>()),
                ]
                .concat(),
            ),
            Part::Heading("Gates for CI (checked after every output is written; exit status 3)"),
            Part::Options(like(&FLAGS, &gates::flags::<Raw>())),
            Part::Heading("Background load (see rtlat load --help for the kinds)"),
            Part::Options(like(&FLAGS, &load_options::flags::<Raw>())),
            group(&["help"]),
            Part::Paragraph(
                "Example: CPUs 2 and 3 under SCHED_FIFO 95 for a minute, summary only:".to_owned(),
            ),
            Part::Example("rtlat oslat -c 2-3 -f 95 -D 60 -q"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::OutputTarget;
    use rtlat_testkit::parsing::{os_words, two_cpus};

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        parse(&os_words(words), "oslat".into(), &two_cpus())
    }

    rtlat_testkit::measured_parser_checks!();

    #[test]
    fn defaults_like_c() {
        let s = settings(&[]);
        assert_eq!(s.config.cpus, [0, 1]);
        assert_eq!(s.config.bucket_size, 32);
        assert_eq!(s.config.duration, Nanos::from_secs(1));
        assert_eq!(s.config.rtprio, 0);
        assert_eq!(s.config.workload, Workload::None);
        assert_eq!(s.config.workload_mem, 16 << 10);
        assert_eq!(s.main_cpu, 0);
        assert!(!s.quiet && !s.bias && !s.zero_omit && !s.single_preheat);
    }

    #[test]
    fn the_help_lists_every_visible_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rtlat_args::options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }

    #[test]
    fn spelling_table() {
        type Check = fn(&Settings) -> bool;
        let table: &[(&[&str], Check)] = &[
            (&["-b", "64"], |s| s.config.bucket_size == 64),
            (&["-b4"], |s| s.config.bucket_size == 4),
            (&["--bucket-size=1024"], |s| s.config.bucket_size == 1024),
            (&["--bucket-s", "8"], |s| s.config.bucket_size == 8),
            (&["-W", "2000"], |s| {
                s.config.scale.width == 2 && s.config.scale.unit_per_us == 1
            }),
            (&["--bucket-w=250"], |s| {
                s.config.scale.width == 250
                    && s.config.scale.unit_per_us == 1000
                    && s.config.bucket_size == 128
            }),
            (&["-W1500", "-b", "8"], |s| {
                s.config.scale.width == 1500 && s.config.bucket_size == 8
            }),
            (&["-W", "250", "--rt-tests=2.10"], |s| {
                s.config.scale.rule == LatencyRule::Truncate && s.config.bucket_size == 128
            }),
            (&["--rt-tests=2.6"], |s| {
                s.config.scale.rule == LatencyRule::RoundUp
            }),
            (&[], |s| {
                s.config.scale == Scale::DEFAULT && s.rt_tests == rtlat_core::RtTests::V2_4
            }),
            (&["-B"], |s| s.bias),
            (&["--bias"], |s| s.bias),
            (&["-c", "1"], |s| s.config.cpus == [1]),
            (&["-c1"], |s| s.config.cpus == [1]),
            (&["--cpu-list=0-1"], |s| s.config.cpus == [0, 1]),
            (&["-C", "1"], |s| s.main_cpu == 1),
            (&["--cpu-main", "1"], |s| s.main_cpu == 1),
            (&["-D", "10"], |s| s.config.duration == Nanos::from_secs(10)),
            (&["-D2m"], |s| s.config.duration == Nanos::from_secs(120)),
            (&["--dur=1h"], |s| {
                s.config.duration == Nanos::from_secs(3600)
            }),
            (&["--json=x.json"], |s| {
                s.json == Some(OutputTarget::File("x.json".into()))
            }),
            (&["--j", "-"], |s| s.json == Some(OutputTarget::Stdout)),
            (&["--hgrm", "x.hgrm", "--hgrm-per-thread"], |s| {
                s.hgrm.as_ref().is_some_and(|h| h.per_thread)
            }),
            (&["--verdict"], |s| s.verdict == Some(Style::Short)),
            (&[], |s| s.verdict.is_none() && s.hgrm.is_none()),
            (&["-f", "95"], |s| s.config.rtprio == 95),
            (&["--rtprio=1"], |s| s.config.rtprio == 1),
            (&["-m", "4k"], |s| s.config.workload_mem == 4096),
            (&["-m1M"], |s| s.config.workload_mem == 1 << 20),
            (&["--workload-mem=512"], |s| s.config.workload_mem == 512),
            (&["-q"], |s| s.quiet),
            (&["-s"], |s| s.single_preheat),
            (&["-T", "50"], |s| s.config.trace_threshold_us == Some(50)),
            (&["--trace=5"], |s| s.config.trace_threshold_us == Some(5)),
            (&["-v"], |s| s.version_only),
            (&["-w", "memmove"], |s| {
                s.config.workload == Workload::Memmove
            }),
            (&["--workload=no"], |s| s.config.workload == Workload::None),
            (&["-z"], |s| s.zero_omit),
            (&["-qzsB"], |s| {
                s.quiet && s.zero_omit && s.single_preheat && s.bias
            }),
            (&["--fail-if", "p99.9>5us,max>1ms"], |s| {
                s.gates.as_ref().is_some_and(|g| g.limits.len() == 2)
            }),
            (&["-D", "5", "-D", "9"], |s| {
                s.config.duration == Nanos::from_secs(9)
            }),
        ];
        for (words, check) in table {
            let s = settings(words);
            assert!(check(&s), "{words:?}: {s:?}");
        }
    }

    #[test]
    fn bad_values_name_the_option() {
        for (words, prefix) in [
            (&["-b", "3"][..], "-b/--bucket-size: invalid value '3'"),
            (&["-b", "1025"], "-b/--bucket-size: invalid value '1025'"),
            (&["-b", "x"], "-b/--bucket-size: invalid value 'x'"),
            (&["-c", "7"], "-c/--cpu-list: invalid value '7'"),
            (&["-c", "x"], "-c/--cpu-list: invalid value 'x'"),
            (&["-C", "5"], "-C/--cpu-main-thread: invalid value '5'"),
            (&["-C", "-1"], "-C/--cpu-main-thread: invalid value '-1'"),
            (&["-D", "0"], "-D/--duration: invalid value '0'"),
            (&["-D", "x"], "-D/--duration: invalid value 'x'"),
            (&["-f", "0"], "-f/--rtprio: invalid value '0'"),
            (&["-f", "100"], "-f/--rtprio: invalid value '100'"),
            (&["-m", "4x"], "-m/--workload-mem: invalid value '4x'"),
            (&["-m", "0"], "-m/--workload-mem: invalid value '0'"),
            (&["-m", "2g"], "-m/--workload-mem: invalid value '2g'"),
            (&["-T", "0"], "-T/--trace-threshold: invalid value '0'"),
            (&["-w", "bogus"], "-w/--workload: invalid value 'bogus'"),
            (&["-W", "0"], "-W/--bucket-width: invalid value '0'"),
            (&["-W", "-5"], "-W/--bucket-width: invalid value '-5'"),
            (&["-W", "1us"], "-W/--bucket-width: invalid value '1us'"),
            (&["--rt-tests=2.3"], "--rt-tests: invalid value '2.3'"),
            (&["--buck", "8"], "option '--buck' is ambiguous"),
            (&["--json=/nonexistent/x.json"], "--json: cannot write"),
            (&["--hgrm=/nonexistent/x.hgrm"], "--hgrm: cannot write"),
            (&["--hgrm-per-thread"], "--hgrm-per-thread needs"),
            (&["-Z"], "unrecognized option '-Z'"),
            (&["-b"], "option '-b' requires a value"),
            (&["extra"], "unexpected argument 'extra'"),
            (
                &["--load-schedule", "idle=5"],
                "--load-schedule: an oslat run",
            ),
        ] {
            let e = error(words);
            assert!(e.starts_with(prefix), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{words:?}: one line: {e}");
        }
    }

    #[test]
    fn help_spellings() {
        for words in [&["-h"][..], &["--help"], &["--he"], &["-qh"]] {
            assert!(
                matches!(parse_words(words), Ok(Invocation::Help)),
                "{words:?}"
            );
        }
    }
}
