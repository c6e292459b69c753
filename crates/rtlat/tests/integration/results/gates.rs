//! `--fail-if` and `--junit` in cyclictest, the IPC tools and latency:
//! exit 3 after every output is written, one stderr line per broken limit,
//! a JUnit report CI systems read (one test case per thread and limit),
//! bad limits refused before anything runs.

use std::path::Path;

use crate::support::cpus::CpuLease;
use crate::support::{read_json, rtlat, rtlat_cyclictest, run, synthetic};

/// The JUnit report's (tests, failures) and its test case names, parsed as
/// XML.
fn junit(path: &Path) -> (usize, usize, Vec<String>) {
    let text = std::fs::read_to_string(path).expect("the JUnit file");
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .expect("a testsuite");
    let count = |attr: &str| suite.attribute(attr).unwrap().parse::<usize>().unwrap();
    let cases: Vec<String> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| n.attribute("name").unwrap().to_owned())
        .collect();
    assert_eq!(cases.len(), count("tests"));
    let failed = suite
        .children()
        .filter(|n| n.children().any(|c| c.has_tag_name("failure")))
        .count();
    assert_eq!(failed, count("failures"));
    (count("tests"), failed, cases)
}

#[test]
fn cyclictest_limits_that_hold_exit_0_with_a_passing_report() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("report.xml");
    let r = run(synthetic(
        1,
        [
            "-q",
            "-l",
            "2000",
            "-t",
            "2",
            "--fail-if",
            "max>1s, p99.9 >= 900ms,overruns>5",
            "--junit",
            xml.to_str().unwrap(),
        ],
    )
    .stdin(std::process::Stdio::null()));
    r.expect_code(0);
    assert!(!r.stderr.contains("--fail-if"), "{}", r.stderr);
    let (tests, failures, cases) = junit(&xml);
    assert_eq!((tests, failures), (9, 0), "3 subjects x 3 limits");
    assert_eq!(cases[0], "thread 0: max > 1s");
    assert_eq!(cases[8], "all threads: overruns > 5");
}

#[test]
fn cyclictest_broken_limits_exit_3_after_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("report.xml");
    let json = dir.path().join("run.json");
    let r = run(&mut synthetic(
        1,
        [
            "-q",
            "-l",
            "2000",
            "-t",
            "2",
            "--fail-if",
            "max>100us,p50<1us",
            "--junit",
            xml.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    ));
    r.expect_code(3);
    // The summary and the JSON are there, then the broken limits.
    assert_eq!(r.stdout.lines().filter(|l| l.starts_with("T:")).count(), 2);
    let doc = read_json(&json);
    let max_us = doc["thread"]["0"]["percentiles"]["max"].as_f64().unwrap();
    assert!(max_us > 100.0, "the synthetic source spikes above 100 us");
    let broken: Vec<&str> = r.stderr.lines().collect();
    assert!(
        broken
            .iter()
            .all(|l| l.starts_with("rtlat cyclictest: --fail-if: ")),
        "{broken:?}"
    );
    assert!(broken.contains(
        &format!("rtlat cyclictest: --fail-if: thread 0: max = {max_us} us > 100 us").as_str()
    ));
    let (tests, failures, _) = junit(&xml);
    assert_eq!(tests, 6);
    assert_eq!(failures, broken.len());
    assert!(failures >= 3, "every subject's max is above 100 us");
}

#[test]
fn bad_limits_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("report.xml");
    for (args, needle) in [
        (vec!["--fail-if", "p95>3us"], "unknown metric 'p95'"),
        (vec!["--fail-if", "max>>3"], "'max>>3'"),
        (vec!["--fail-if", "max>3 parsecs"], "'max>3 parsecs'"),
        (vec!["--fail-if", "overruns>2us"], "'overruns>2us'"),
        (
            vec!["--junit", xml.to_str().unwrap()],
            "--junit needs --fail-if",
        ),
        (
            vec!["--fail-if", "max>1ms", "--junit", "/nonexistent/dir/x.xml"],
            "--junit: cannot write '/nonexistent/dir/x.xml'",
        ),
    ] {
        let mut cmd = rtlat_cyclictest(["-q", "-l", "100"]);
        cmd.args(&args);
        let r = run(&mut cmd);
        r.expect_code(2);
        assert_eq!(r.stdout, "", "{args:?}");
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{args:?}: {}", r.stderr);
        assert!(lines[0].contains(needle), "{args:?}: {}", lines[0]);
    }
    assert!(!xml.exists(), "nothing written");
}

#[test]
fn ipc_tools_gate_their_receivers() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("report.xml");
    let r = run(rtlat().args([
        "svsematest",
        "--synthetic",
        "1",
        "-q",
        "-l",
        "1000",
        "-t",
        "2",
        "--fail-if",
        "p99>10us,max>1s",
        "--junit",
        xml.to_str().unwrap(),
    ]));
    r.expect_code(3);
    assert!(
        r.stderr
            .contains("rtlat svsematest: --fail-if: pair 0: p99 = "),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("rtlat svsematest: --fail-if: all pairs: p99 = "),
        "{}",
        r.stderr
    );
    let (tests, failures, cases) = junit(&xml);
    assert_eq!((tests, failures), (6, 3), "{cases:?}");
    // Fork mode keeps no percentiles: refused before the run.
    let r = run(rtlat().args([
        "sigwaittest",
        "-f",
        "-q",
        "-l",
        "10",
        "--fail-if",
        "p99>1ms",
    ]));
    r.expect_code(2);
    assert!(r.stderr.contains("fork-mode"), "{}", r.stderr);
}

#[test]
fn latency_gates_the_samples_after_the_warm_up() {
    let r = run(rtlat().args([
        "latency",
        "--synthetic",
        "1",
        "-T",
        "2",
        "-p",
        "1000",
        "--fail-if",
        "p99.9>100us",
    ]));
    r.expect_code(3);
    assert!(r.stdout.contains("RTS|"), "the summary first");
    assert!(
        r.stderr
            .contains("rtlat latency: --fail-if: thread 0: p99.9 = "),
        "{}",
        r.stderr
    );
}

#[test]
fn real_run_gates() {
    require_root!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    // A maximum below one second is certain: the limit "max < 1s" fails,
    // "max > 1s" holds.
    let r = run(&mut rtlat_cyclictest([
        "-q",
        "-a",
        &cpu,
        "-p",
        "80",
        "-i",
        "1000",
        "-l",
        "500",
        "--fail-if",
        "max>1s",
    ]));
    r.expect_code(0);
    let r = run(&mut rtlat_cyclictest([
        "-q",
        "-a",
        &cpu,
        "-p",
        "80",
        "-i",
        "1000",
        "-l",
        "500",
        "--fail-if",
        "max<1s",
    ]));
    r.expect_code(3);
    assert!(r.stderr.contains("thread 0: max = "), "{}", r.stderr);
}
