//! The `rtlat plot` command line: input files (positional, `-` for
//! standard input), `-o/--output`, `-k/--kind`, `-s/--size`, `-T/--title`,
//! `--xmax`, `--log-x`, `-h/--help` and `-V/--version`, turned into
//! validated [`Settings`]. A bad value is a one-line [`UsageError`]; the
//! inputs themselves are read later, by the `rtlat-plot` binary.
//!
//! Each option is defined once, in `FLAGS`: `rtlat-plot` parses with it
//! and prints [`help_text`], and `rtlat --generate` makes rtlat plot's man
//! page and completions from [`table`] and [`help_model`].

use std::ffi::OsString;
use std::path::Path;
use std::sync::LazyLock;

use crate::settings::{
    DEFAULT_SIZE, Kind, LatencyAxis, MAX_SIDE, MAX_XMAX_US, MIN_SIDE, OutputFormat, Settings,
};
use rtlat_args::UsageError;
use rtlat_args::docs::help::{Help, Term};
use rtlat_args::getopt::{OptSpec, ValueKind};
use rtlat_args::options::{self, DefaultAt, Flag, Layout, Name, Page, Part, Read, name_of};
use rtlat_args::values::{DirReport, OptionName, invalid, new_file_path};
use rtlat_results::file::StdinOr;

/// `rtlat plot`'s options, each defined once, in getopt's order.
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::new(Some('o'), "output", ValueKind::Required, "FILE")
            .help(rtlat_args::lines![
                "the picture to write; FILE ends in .svg or .png",
                "(required). It is written whole or not at all.",
            ])
            .apply(|r: &mut Raw, v| {
                r.output = Some(v.os());
                Ok(())
            }),
        Flag::new(Some('k'), "kind", ValueKind::Required, "KIND")
            .help(rtlat_args::lines!["latency, percentile or timeline"])
            .default("latency")
            .apply(|r: &mut Raw, v| {
                r.kind = Some(v.text()?);
                Ok(())
            }),
        Flag::new(Some('s'), "size", ValueKind::Required, "WxH")
            .help_owned(vec![
                format!("picture size in pixels, each {MIN_SIDE} to {MAX_SIDE}"),
                String::new(),
            ])
            .default_owned(format!("{}x{}", DEFAULT_SIZE.0, DEFAULT_SIZE.1))
            .apply(|r: &mut Raw, v| {
                r.size = Some(v.text()?);
                Ok(())
            }),
        Flag::new(Some('T'), "title", ValueKind::Required, "TEXT")
            .help(rtlat_args::lines![
                "title (default: host, kernel and start time of the",
                "run when the input says them, else the file name;",
                "inputs of different tools or programs: each named,",
                "'cyclictest (rtlat) vs cyclictest (rt-tests)'; the",
                "timeline plot: the inputs' names)",
            ])
            .apply(|r: &mut Raw, v| {
                r.title = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("xmax", ValueKind::Required, "US")
            .help(rtlat_args::lines![
                "latency plot: the latency axis ends at US; samples",
                "beyond are counted in the legend ('N beyond xmax')",
                // Not where the layout puts defaults: in the line.
                "and the axis label, not drawn     [the largest bucket]",
            ])
            .apply(|r: &mut Raw, v| {
                r.xmax = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("log-x", ValueKind::None, "")
            .help(rtlat_args::lines![
                "latency plot: a log scale for latency, so that one",
                "spike far out does not squeeze the rest into a column",
            ])
            .apply(|r: &mut Raw, _| {
                r.log_x = true;
                Ok(())
            }),
        Flag::help_option(Some('h')),
        Flag::new(Some('V'), "version", ValueKind::None, "")
            .help(rtlat_args::lines![
                "print the version, the commit and the target"
            ])
            .apply(|r: &mut Raw, _| {
                r.version = true;
                Ok(())
            }),
    ]
});

/// How messages spell the option whose long name is `long`.
fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Invocation {
    /// `-h`, `--help`: print [`help_text`].
    Help,
    /// `-V`, `--version`: print [`rtlat_args::version::line`].
    Version,
    /// Draw a plot with these settings.
    Run(Settings),
}

/// The words of the command line, before their values are checked.
#[derive(Default)]
struct Raw {
    inputs: Vec<OsString>,
    output: Option<OsString>,
    kind: Option<String>,
    size: Option<String>,
    title: Option<String>,
    xmax: Option<String>,
    log_x: bool,
    /// `-V` came: nothing after it counts.
    version: bool,
}

/// Reads the `rtlat plot` command line (`args` without the program name).
pub fn parse(args: &[OsString]) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    let read = options::parse_with_operands(&FLAGS, args, &mut raw, |r, word| {
        r.inputs.push(word);
        Ok(())
    });
    // -V wins over whatever comes after it (a bad value, --help), as
    // --help wins over what comes after it.
    if raw.version {
        return Ok(Invocation::Version);
    }
    if read? == Read::Help {
        return Ok(Invocation::Help);
    }
    build(raw).map(Invocation::Run)
}

/// Checks the values in the order their errors are reported.
fn build(raw: Raw) -> Result<Settings, UsageError> {
    let kind = kind(raw.kind.as_deref())?;
    let size = match &raw.size {
        None => DEFAULT_SIZE,
        Some(text) => parse_size(text).ok_or_else(|| {
            invalid(
                name("size"),
                text,
                format_args!(
                    "expected WIDTHxHEIGHT in pixels, each {MIN_SIDE} to {MAX_SIDE} \
                     (e.g. {}x{})",
                    DEFAULT_SIZE.0, DEFAULT_SIZE.1
                ),
            )
        })?,
    };
    let xmax_us = match &raw.xmax {
        None => None,
        Some(text) => Some(parse_xmax(text).ok_or_else(|| {
            invalid(
                name("xmax"),
                text,
                format_args!(
                    "expected a latency in us above 0, at most {MAX_XMAX_US:.0} (e.g. 500)"
                ),
            )
        })?),
    };
    if kind != Kind::Latency {
        let given = [
            (name("xmax"), raw.xmax.is_some()),
            (name("log-x"), raw.log_x),
        ];
        if let Some((id, _)) = given.iter().find(|(_, given)| *given) {
            return Err(UsageError(format!(
                "{}: applies to the latency plot (-k latency), not to -k {}",
                id.spelling(),
                kind.name()
            )));
        }
    }
    check_inputs(&raw.inputs, kind)?;
    let (output, format) = output(raw.output, &raw.inputs)?;
    Ok(Settings {
        inputs: raw.inputs.into_iter().map(StdinOr::from_arg).collect(),
        output,
        format,
        kind,
        latency_axis: LatencyAxis {
            xmax_us,
            log: raw.log_x,
        },
        size,
        title: raw.title.filter(|t| !t.trim().is_empty()),
    })
}

/// `-k`: the latency plot when not given.
fn kind(given: Option<&str>) -> Result<Kind, UsageError> {
    let Some(text) = given else {
        return Ok(Kind::Latency);
    };
    match text.trim() {
        "latency" => Ok(Kind::Latency),
        "percentile" | "percentiles" => Ok(Kind::Percentile),
        "timeline" => Ok(Kind::Timeline),
        _ => Err(invalid(
            name("kind"),
            text,
            "expected latency, percentile or timeline",
        )),
    }
}

/// At least one input, standard input at most once.
fn check_inputs(inputs: &[OsString], kind: Kind) -> Result<(), UsageError> {
    if inputs.is_empty() {
        return Err(UsageError(
            match kind {
                Kind::Timeline => {
                    "no input file: give one or more cyclictest --stats-file files \
                               or monitor checkpoints ('-' for standard input), see 'rtlat \
                               plot --help'"
                }
                _ => {
                    "no input file: give one or more cyclictest --json files or -h histogram \
                  outputs ('-' for standard input), see 'rtlat plot --help'"
                }
            }
            .to_string(),
        ));
    }
    if inputs.iter().filter(|i| *i == "-").count() > 1 {
        return Err(UsageError(
            "standard input ('-') given more than once".to_string(),
        ));
    }
    Ok(())
}

/// `-o`: a new file's path, its format from its name, not one of the
/// inputs.
fn output(
    given: Option<OsString>,
    inputs: &[OsString],
) -> Result<(std::path::PathBuf, OutputFormat), UsageError> {
    let Some(output_text) = given else {
        return Err(UsageError(
            "no output file: give -o OUT.svg or -o OUT.png".to_string(),
        ));
    };
    let format = OutputFormat::from_path(Path::new(&output_text)).ok_or_else(|| {
        invalid(
            name("output"),
            &output_text.to_string_lossy(),
            "expected a file name ending in .svg or .png",
        )
    })?;
    let output_path = new_file_path(name("output"), &output_text, "write", DirReport::Detailed)?;
    for input in inputs {
        if input != "-" && same_file(Path::new(input), &output_path) {
            return Err(UsageError(format!(
                "{}: '{}' is also an input; the plot would overwrite it",
                name("output").spelling(),
                output_text.to_string_lossy()
            )));
        }
    }
    Ok((output_path, format))
}

/// `WxH` (or `W×H`, `W,H`) within [`MIN_SIDE`]..=[`MAX_SIDE`] each.
fn parse_size(text: &str) -> Option<(u32, u32)> {
    let text = text.trim();
    let (w, h) = text
        .split_once(['x', 'X', '×', ','])
        .map(|(w, h)| (w.trim(), h.trim()))?;
    let side = |s: &str| {
        s.parse::<u32>()
            .ok()
            .filter(|v| (MIN_SIDE..=MAX_SIDE).contains(v))
    };
    Some((side(w)?, side(h)?))
}

/// `--xmax`: µs above 0 and at most [`MAX_XMAX_US`], `us` after the
/// number allowed.
fn parse_xmax(text: &str) -> Option<f64> {
    let text = text.trim();
    let number = text
        .strip_suffix("us")
        .or_else(|| text.strip_suffix("µs"))
        .unwrap_or(text)
        .trim_end();
    number
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= MAX_XMAX_US)
}

/// Whether `a` and `b` name the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `rtlat plot --help`.
pub fn help_text() -> String {
    help_page().render()
}

/// `rtlat plot --help` in parts, for its man page and completions.
pub fn help_model() -> Help {
    help_page().model()
}

/// The option table, for the man page and the completions.
pub fn table() -> Vec<OptSpec<()>> {
    FLAGS.iter().map(Flag::row).collect()
}

/// A term of the kinds of plot, its text's lines.
fn term(name: &str, lines: &[&str]) -> Term {
    Term {
        term: name.to_owned(),
        lines: lines.iter().map(|l| (false, (*l).to_owned())).collect(),
    }
}

/// A list's items, each its lines.
fn items(items: &[&[&str]]) -> Vec<Vec<String>> {
    items
        .iter()
        .map(|lines| lines.iter().map(|l| (*l).to_owned()).collect())
        .collect()
}

/// `rtlat plot --help`: what it reads, the kinds of plot and its options.
fn help_page() -> Page<'static, Raw> {
    let max_input = rtlat_results::file::MAX_INPUT_BYTES >> 20;
    Page {
        title: format!("rtlat plot: {}", rtlat_args::tools::PLOT_SUMMARY),
        usage: vec!["rtlat plot INPUT... -o OUT.svg|OUT.png [OPTIONS]".to_owned()],
        layout: Layout {
            default: DefaultAt::EndsAt(73),
            ..Layout::spaced(22)
        },
        parts: vec![
            Part::Paragraph(
                "\
The latency and percentile plots read one or more results, each one of
(told apart by their content):"
                    .to_owned(),
            ),
            Part::Bullets(items(&[
                &[
                    "the --json file of rtlat cyclictest or another rtlat tool (its",
                    "\"distribution\" of every sample, an IPC pair's receiver's; the",
                    "\"histogram\" when there is none),",
                ],
                &["the --json file of rt-tests cyclictest run with -h/--histogram,"],
                &[
                    "the --json file of oslat, rtlat's or rt-tests' (its \"histogram\":",
                    "each bucket drawn below its label, which is its upper edge; the",
                    "last bucket's samples, with every longer gap, are overflows when",
                    "the maximum is beyond it),",
                ],
                &["the --json file of rt-tests cyclicdeadline run with --histogram (2.7),"],
                &[
                    "the histogram block that cyclictest -h/-H prints (its standard output",
                    "or --histfile), from rt-tests or rtlat: 1 us buckets, one column per",
                    "thread;",
                ],
                &[
                    "the report.json of rtlat evaluate (a JSON object with a \"phases\"",
                    "array of items with a \"result\", and no \"thread\"): each of its",
                    "phases in turn, from its --json result, named after the phase (idle,",
                    "cpu, ...); its files are found relative to the report's directory,",
                    "so a report is not read from standard input;",
                ],
            ])),
            Part::Continued(format!(
                "\
and draws them as one picture. '-' reads standard input. An input is at
most {max_input} MiB; one cut short (a -h block without its summary, JSON that
ends early) is refused."
            )),
            Part::Paragraph(
                "The timeline plot (-k timeline) reads instead, each input one of:".to_owned(),
            ),
            Part::Bullets(items(&[
                &[
                    "the --stats-file of rtlat cyclictest (one JSON line per thread and",
                    "interval of --stats-interval), also while the run writes it: a last",
                    "line cut short is not drawn, and a note on standard error says so;",
                ],
                &[
                    "a JSON document with a \"timeline\" array of such lines (what rtlat",
                    "monitor --checkpoint writes);",
                ],
                &[
                    "the report.json of rtlat evaluate: each phase's --stats-file (its",
                    "\"stats\"), one after the other in time, as the phases ran.",
                ],
            ])),
            Part::Paragraph("Kinds of plot (-k):".to_owned()),
            Part::Terms {
                column: 14,
                hang: 0,
                terms: vec![
                    term(
                        "latency",
                        &[
                            "the OSADL latency plot: number of samples (log scale, from",
                            "below 1 so that single samples show) against latency (us),",
                            "one step line per thread: CPU n when the thread was pinned,",
                            "thread n otherwise, after the file name (or the phase's",
                            "name) when there are several inputs; the maximum in the",
                            "axis label, each thread's maximum and its histogram",
                            "overflows in the legend; --xmax and --log-x shape its",
                            "latency axis",
                        ],
                    ),
                    term(
                        "percentile",
                        &[
                            "latency (us, log scale) against percentile (50 %, 90 %,",
                            "99 %, ... on a log scale of 1 - p), one line per input with",
                            "all its threads together, for comparing runs; overflows are",
                            "drawn between the top of the histogram and the maximum",
                        ],
                    ),
                    term(
                        "timeline",
                        &[
                            "the OSADL long-term plot: each interval's maximum (us,",
                            "linear) against time, a step over the interval, one line",
                            "per thread, and its p99 (a fainter line of the same colour)",
                            "where the input has it; gaps where a thread took no sample;",
                            "times of day in the local time zone (TZ), with dates over",
                            "longer spans; each thread's largest maximum and the end of",
                            "its interval in the legend",
                        ],
                    ),
                ],
            },
            Part::Heading("Options"),
            Part::Options(FLAGS.iter().collect()),
            Part::Paragraph(
                "\
PNG text uses a bundled font (DejaVu Sans); no system font is needed.
SVG text names the font family sans-serif, for the viewer to supply.
A bad input file or option is one line on standard error and exit status 2."
                    .to_owned(),
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_testkit::parsing::{expect_usage_error, os_words as args};
    use std::path::PathBuf;

    fn settings(words: &[&str]) -> Settings {
        match parse(&args(words)) {
            Ok(Invocation::Run(settings)) => settings,
            other => panic!("{words:?}: {other:?}"),
        }
    }

    fn error(words: &[&str]) -> String {
        expect_usage_error(parse(&args(words)), words)
    }

    #[test]
    fn the_help_lists_every_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rtlat_args::options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }

    #[test]
    fn defaults_and_every_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("out.svg");
        let svg = svg.to_str().unwrap();
        let s = settings(&["a.json", "-o", svg]);
        assert_eq!(s.inputs, vec![StdinOr::Path(PathBuf::from("a.json"))]);
        assert_eq!(s.output, PathBuf::from(svg));
        assert_eq!(s.format, OutputFormat::Svg);
        assert_eq!(s.kind, Kind::Latency);
        assert_eq!(s.size, (1000, 600));
        assert_eq!(s.title, None);
        assert_eq!(s.latency_axis, LatencyAxis::default());
        for (words, xmax, log) in [
            (vec!["a", "-o", svg, "--xmax", "500"], Some(500.0), false),
            (
                vec!["a", "-o", svg, "--xmax=2.5us", "--log-x"],
                Some(2.5),
                true,
            ),
            (
                vec!["a", "-o", svg, "--log-x", "--xm", " 20000 µs"],
                Some(20000.0),
                true,
            ),
            (vec!["--log", "a", "-o", svg], None, true),
        ] {
            let s = settings(&words);
            assert_eq!(
                s.latency_axis,
                LatencyAxis { xmax_us: xmax, log },
                "{words:?}"
            );
        }

        let png = dir.path().join("OUT.PNG");
        let png = png.to_str().unwrap();
        for words in [
            vec!["-kpercentile", "-s800x500", "a", "-", &format!("-o{png}")],
            vec![
                "--kind=percentile",
                "--size",
                "800X500",
                "a",
                "-",
                "--output",
                png,
            ],
            vec!["--ki", "percentiles", "--si=800,500", "-o", png, "a", "-"],
        ] {
            let s = settings(&words);
            assert_eq!(s.format, OutputFormat::Png, "{words:?}");
            assert_eq!(s.kind, Kind::Percentile, "{words:?}");
            assert_eq!(s.size, (800, 500), "{words:?}");
            assert_eq!(
                s.inputs,
                vec![StdinOr::Path(PathBuf::from("a")), StdinOr::Stdin],
                "{words:?}"
            );
        }
        let s = settings(&["s.jsonl", "-", "-o", svg, "--kind=timeline"]);
        assert_eq!((s.kind, s.inputs.len()), (Kind::Timeline, 2));
        let s = settings(&["a", "-o", svg, "-T", "my box", "-k", "latency"]);
        assert_eq!(s.title.as_deref(), Some("my box"));
        assert_eq!(parse(&args(&["-h"])).unwrap(), Invocation::Help);
        for version in ["-V", "--version", "--vers"] {
            assert_eq!(
                parse(&args(&["a", version, "-o", "y.jpg"])).unwrap(),
                Invocation::Version
            );
        }
        assert_eq!(
            parse(&args(&["x", "--help", "-o", "y.jpg"])).unwrap(),
            Invocation::Help
        );
    }

    /// rtlat's man page and completions of rtlat plot are made from
    /// [`table`] and [`help_model`] (`rtlat --generate`): the model must
    /// list every option of the table, no other, each with the value the
    /// table says it takes, and say what `rtlat-plot --help` prints.
    #[test]
    fn the_help_model_lists_exactly_the_table() {
        use rtlat_args::docs::{help, undocumented};
        let table = table();
        let model = help_model();
        assert_eq!(undocumented(&table, &model), (vec![], vec![]));
        for row in &table {
            let long = format!("--{}", row.long.unwrap());
            let entry = model
                .entries()
                .find(|e| e.spellings().iter().any(|s| s.name == long))
                .unwrap();
            let documented = match entry.value() {
                None => ValueKind::None,
                Some((_, false)) => ValueKind::Required,
                Some((name, true)) => panic!("{long}: an optional value [{name}]"),
            };
            assert_eq!(documented, row.value, "{long}");
        }
        assert_eq!(help::parse(&help_text()), model);
    }

    #[test]
    fn bad_command_lines_are_one_line_errors() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("out.svg");
        let svg = svg.to_str().unwrap();
        for (words, needle) in [
            (vec!["-o", svg], "no input file"),
            (
                vec!["a.json"],
                "no output file: give -o OUT.svg or -o OUT.png",
            ),
            (
                vec!["a.json", "-o", "x.jpg"],
                "-o/--output: invalid value 'x.jpg': expected a file name ending in .svg or .png",
            ),
            (vec!["a.json", "-o", "svg"], "ending in .svg or .png"),
            (
                vec!["a.json", "-o", "/nonexistent/dir/x.svg"],
                "-o/--output: cannot write '/nonexistent/dir/x.svg': directory '/nonexistent/dir' does not exist",
            ),
            (
                vec!["a.json", "-o", svg, "-k", "bars"],
                "-k/--kind: invalid value 'bars': expected latency, percentile or timeline",
            ),
            (
                vec!["a.json", "-o", svg, "-s", "100x100"],
                "-s/--size: invalid value '100x100'",
            ),
            (vec!["a.json", "-o", svg, "-s", "1000"], "WIDTHxHEIGHT"),
            (vec!["a.json", "-o", svg, "-s", "9000x600"], "200 to 8000"),
            (
                vec!["-", "-", "-o", svg],
                "standard input ('-') given more than once",
            ),
            (
                vec!["a.json", "-o", svg, "--frob"],
                "unrecognized option '--frob'",
            ),
            (vec!["a.json", "-o"], "option '-o' requires a value"),
            (
                vec!["a.json", "-o", svg, "--xmax", "0"],
                "--xmax: invalid value '0': expected a latency in us above 0, at most \
                 1000000000 (e.g. 500)",
            ),
            (vec!["a.json", "-o", svg, "--xmax=-5"], "invalid value '-5'"),
            (
                vec!["a.json", "-o", svg, "--xmax", "2ms"],
                "invalid value '2ms'",
            ),
            (
                vec!["a.json", "-o", svg, "--xmax", "inf"],
                "invalid value 'inf'",
            ),
            (
                vec!["a.json", "-o", svg, "--xmax", "1e10"],
                "invalid value '1e10'",
            ),
            (
                vec!["a.json", "-o", svg, "--xmax"],
                "option '--xmax' requires",
            ),
            (
                vec!["a.json", "-o", svg, "-k", "percentile", "--xmax", "50"],
                "--xmax: applies to the latency plot (-k latency), not to -k percentile",
            ),
            (
                vec!["a.json", "-o", svg, "--log-x", "-kpercentile"],
                "--log-x: applies to the latency plot (-k latency), not to -k percentile",
            ),
            (vec!["a.json", "-o", svg, "--log-x=yes"], "--log-x"),
            (
                vec!["a.json", "-o", svg, "-k", "timeline", "--log-x"],
                "--log-x: applies to the latency plot (-k latency), not to -k timeline",
            ),
            (
                vec!["a.json", "-o", svg, "-k", "timeline", "--xmax", "9"],
                "--xmax: applies to the latency plot (-k latency), not to -k timeline",
            ),
            (
                vec!["-o", svg, "-k", "timeline"],
                "no input file: give one or more cyclictest --stats-file files or monitor \
                 checkpoints",
            ),
        ] {
            let e = error(&words);
            assert!(e.contains(needle), "{words:?}: {e:?} lacks {needle:?}");
            assert!(!e.contains('\n'), "{words:?}: {e:?}");
        }
    }

    #[test]
    fn output_must_not_overwrite_an_input() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.svg");
        std::fs::write(&file, "{}").unwrap();
        let file = file.to_str().unwrap();
        let e = error(&[file, "-o", file]);
        assert!(e.contains("is also an input"), "{e}");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000x600"), Some((1000, 600)));
        assert_eq!(parse_size(" 200 x 8000 "), Some((200, 8000)));
        assert_eq!(parse_size("640×480"), Some((640, 480)));
        for bad in [
            "",
            "x",
            "100x",
            "199x600",
            "1000x8001",
            "-1x600",
            "1e3x600",
            "1000*600",
        ] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }
}
