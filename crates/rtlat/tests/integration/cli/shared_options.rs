//! The options the measuring tools share, defined once: the same bad value
//! gets the same message in every tool (after the program's name and the
//! option's spelling) and exit status 2; every help fits 80 columns and
//! has a blank line before its option list, and each tool's summary is
//! the same in `rtlat --help` and in its own help; signaltest's
//! `--fail-if`, `--junit` and `--load` work end to end.

use std::time::Duration;

use crate::faults::stdio::SUBCOMMANDS as TOOLS;
use crate::support::cpus::CpuLease;
use crate::support::{Run, rtlat, rtlat_tool, run_with_timeout};

/// The tools with `-l`/`-D` (latency's duration is `-T`, its `-l` the
/// lines between headers).
const WITH_LOOPS: [&str; 6] = [
    "cyclictest",
    "signaltest",
    "svsematest",
    "pmqtest",
    "ptsematest",
    "sigwaittest",
];

/// The one stderr line of `rtlat TOOL ARGS`, which must exit 2, after
/// `rtlat TOOL: ` and the option's `spelling: `.
fn refusal(tool: &str, args: &[&str], spelling: &str) -> String {
    let r = run_with_timeout(&mut rtlat_tool(tool, args), Duration::from_secs(20));
    r.expect_code(2);
    let prefix = format!("rtlat {tool}: {spelling}");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{tool} {args:?}: {}", r.describe());
    lines[0]
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{tool} {args:?}: not '{prefix}...': {}", r.describe()))
        .to_string()
}

/// Each `(tool, args, spelling)` refused with the same message.
fn same_message(cases: &[(&str, Vec<&str>, &str)]) {
    let messages: Vec<(String, String)> = cases
        .iter()
        .map(|(tool, args, spelling)| (tool.to_string(), refusal(tool, args, spelling)))
        .collect();
    let (first_tool, first) = &messages[0];
    assert!(first.len() > 2, "{first_tool}: {first}");
    for (tool, message) in &messages {
        assert_eq!(message, first, "{tool} differs from {first_tool}");
    }
}

/// The measuring tools (latency with `-T` for `-D`) given `args`, each
/// spelling the option as `spelling`.
fn measuring<'a>(args: &[&'a str], spelling: &'a str) -> Vec<(&'a str, Vec<&'a str>, &'a str)> {
    let mut cases: Vec<_> = WITH_LOOPS
        .iter()
        .map(|tool| (*tool, args.to_vec(), spelling))
        .collect();
    cases.push(("latency", args.to_vec(), spelling));
    cases
}

#[test]
fn the_same_bad_duration_gets_the_same_message() {
    for bad in ["300000000000d", "99999999999999999999", "1.5", "10x"] {
        let mut cases: Vec<_> = WITH_LOOPS
            .iter()
            .map(|tool| (*tool, vec!["-D", bad], "-D/--duration"))
            .collect();
        cases.push(("latency", vec!["-T", bad], "-T"));
        same_message(&cases);
    }
    assert!(
        refusal("signaltest", &["-D", "300000000000d"], "-D/--duration")
            .contains("too long: at most 292 years (9223372036 seconds)")
    );
}

#[test]
fn the_same_bad_loops_get_the_same_message() {
    for bad in ["-1", "x", "1.5"] {
        let cases: Vec<_> = WITH_LOOPS
            .iter()
            .map(|tool| (*tool, vec!["-l", bad], "-l/--loops"))
            .collect();
        same_message(&cases);
    }
}

#[test]
fn the_same_bad_output_file_gets_the_same_message() {
    for bad in ["--json=/nonexistent/dir/x.json", "--json="] {
        same_message(&measuring(&[bad], "--json"));
    }
    let histfile: Vec<_> = WITH_LOOPS
        .iter()
        .map(|tool| (*tool, vec!["--histfile=/nonexistent/h.txt"], "--histfile"))
        .collect();
    same_message(&histfile);
}

#[test]
fn the_same_bad_histogram_gets_the_same_message() {
    for bad in ["0", "1000001", "x"] {
        // cyclictest's -h is the histogram; the others' -h is help.
        let mut cases = vec![("cyclictest", vec!["-h", bad], "-h/--histogram")];
        for tool in &WITH_LOOPS[1..] {
            cases.push((*tool, vec!["--histogram", bad], "--histogram"));
        }
        same_message(&cases);
    }
}

#[test]
fn the_same_bad_gates_and_loads_get_the_same_message() {
    // What the limits' grammar says of a bad one: no option prefix.
    for bad in ["max>>1", "bogus>1us", "max>1parsec"] {
        same_message(&measuring(&["--fail-if", bad], ""));
    }
    // In a directory of the test's: an output's directory is probed (a
    // file made and removed) as the command line is read, and a relative
    // path would probe the package's own directory, which the build
    // script of rtlat-args watches (the next build would run it again).
    let dir = tempfile::tempdir().unwrap();
    let junit = format!("--junit={}", dir.path().join("j.xml").display());
    same_message(&measuring(&[&junit], "--junit"));
    for bad in ["bogus", "cpu:0", "cpu,cpu"] {
        same_message(&measuring(&["--load", bad], "--load"));
    }
    same_message(&measuring(&["--load-cpus=0"], "--load-cpus"));
}

/// The lines of `rtlat ARGS`, which must exit 0.
fn help(args: &[&str]) -> String {
    let r = run_with_timeout(rtlat().args(args), Duration::from_secs(20));
    r.expect_code(0);
    r.stdout.clone()
}

/// Whether `line` is the first line of an option's entry.
fn is_option_line(line: &str) -> bool {
    let body = line.trim_start();
    let indent = line.len() - body.len();
    (2..=6).contains(&indent)
        && body.starts_with('-')
        && body[1..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '?')
}

#[test]
fn every_help_fits_80_columns_with_a_blank_line_before_its_options() {
    let mut helps = vec![(String::from("rtlat"), help(&["--help"]))];
    for tool in TOOLS {
        helps.push((format!("rtlat {tool}"), help(&[tool, "--help"])));
    }
    for (name, text) in &helps {
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "{name} --help: {} columns: {line}",
                line.chars().count()
            );
        }
        let lines: Vec<&str> = text.lines().collect();
        let first = lines
            .iter()
            .position(|l| is_option_line(l))
            .unwrap_or_else(|| panic!("{name} --help lists no option:\n{text}"));
        assert!(first >= 2, "{name} --help:\n{text}");
        let header = lines[first - 1];
        assert!(
            !header.starts_with(' ') && header.ends_with(':') && lines[first - 2].is_empty(),
            "{name} --help: no blank line and header before the options:\n{}\n{}\n{}",
            lines[first - 2],
            header,
            lines[first]
        );
    }
}

#[test]
fn each_tool_is_described_the_same_at_the_top_and_in_its_help() {
    let top = help(&["--help"]);
    for tool in TOOLS {
        let own = help(&[tool, "--help"]);
        let title = own.lines().next().unwrap();
        let summary = title
            .strip_prefix(&format!("rtlat {tool}: "))
            .unwrap_or_else(|| panic!("{tool}: {title}"));
        let listed = format!("\n  {tool:<13}{summary}\n");
        assert!(top.contains(&listed), "{listed:?} not in\n{top}");
    }
}

/// `rtlat signaltest ARGS` (a short real run; no privilege needed).
fn signaltest(args: &[&str]) -> Run {
    run_with_timeout(&mut rtlat_tool("signaltest", args), Duration::from_secs(30))
}

#[test]
fn signaltest_gates_pass_and_fail_with_a_junit_report() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("j.xml");
    let junit_arg = format!("--junit={}", junit.display());
    let r = signaltest(&["-l", "200", "-q", "--fail-if", "max>1s", &junit_arg]);
    r.expect_code(0);
    assert!(!r.stderr.contains("--fail-if"), "{}", r.describe());
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(
        report.contains("<testsuite name=\"signaltest\""),
        "{report}"
    );
    assert!(report.contains("failures=\"0\""), "{report}");
    assert!(
        report.contains("name=\"thread 1: max &gt; 1s\""),
        "{report}"
    );

    // min >= 0 fails whatever the machine.
    let r = signaltest(&["-l", "200", "-q", "--fail-if", "min>=0us", &junit_arg]);
    r.expect_code(3);
    for subject in ["thread 0", "thread 1", "all threads"] {
        assert!(
            r.stderr
                .contains(&format!("rtlat signaltest: --fail-if: {subject}: min = ")),
            "{}",
            r.describe()
        );
    }
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(report.contains("failures=\"3\""), "{report}");
    assert_eq!(r.stdout.lines().filter(|l| l.starts_with("T: ")).count(), 2);

    // A verdict limit is judged too: the run's verdict, whatever it is.
    let r = signaltest(&["-l", "200", "-q", "--fail-if", "verdict!=untrustworthy"]);
    match r.code() {
        Some(0) => assert!(!r.stderr.contains("--fail-if"), "{}", r.describe()),
        Some(3) => assert!(
            r.stderr
                .contains("rtlat signaltest: --fail-if: run: verdict"),
            "{}",
            r.describe()
        ),
        _ => panic!("{}", r.describe()),
    }
}

#[test]
fn signaltest_refuses_what_a_ring_does_not_keep() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("j.xml").display().to_string();
    for (args, want) in [
        (
            &["--fail-if", "p99>1ms"][..],
            "rtlat signaltest: --fail-if: 'p99 > 1ms': a signaltest run keeps no percentiles",
        ),
        (
            &["--load-schedule", "idle=1"][..],
            "rtlat signaltest: --load-schedule: a signaltest run keeps no per-phase figures",
        ),
        (
            // In a directory of the test's, not the package's (see
            // the_same_bad_gates_and_loads_get_the_same_message).
            &["--junit", junit.as_str()][..],
            "rtlat signaltest: --junit needs --fail-if LIMITS",
        ),
    ] {
        let r = signaltest(args);
        r.expect_code(2);
        assert!(r.stderr.starts_with(want), "{args:?}: {}", r.describe());
    }
}

#[test]
fn signaltest_runs_a_load_beside_the_ring() {
    // A CPU-bound load: on the leased CPU.
    let lease = CpuLease::one();
    let load_cpus = format!("--load-cpus={}", lease.list());
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let r = signaltest(&[
        "-l",
        "200",
        "-q",
        "--load",
        "cpu:1",
        &load_cpus,
        &format!("--json={}", json.display()),
    ]);
    r.expect_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let load = lines
        .iter()
        .position(|l| l.starts_with("# load cpu: "))
        .unwrap_or_else(|| panic!("{}", r.describe()));
    // After every thread's line, as cyclictest's.
    assert!(
        lines[..load]
            .iter()
            .filter(|l| l.starts_with("T: "))
            .count()
            == 2
    );
    assert!(lines[load].ends_with("ops/s (1 worker)"), "{}", lines[load]);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(doc["load"].is_object(), "{doc}");
    // The same with --synthetic: the load runs beside the synthetic ring.
    let r = signaltest(&[
        "--synthetic",
        "1",
        "-l",
        "200",
        "-q",
        "--load",
        "cpu:1",
        &load_cpus,
    ]);
    r.expect_code(0);
    assert!(r.stdout.contains("\n# load cpu: "), "{}", r.describe());
}
