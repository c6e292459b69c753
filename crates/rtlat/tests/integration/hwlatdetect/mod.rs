//! `rtlat hwlatdetect`. The kernel's hwlat tracer is rarely built in (not
//! on the test machines): the runs drive a fixture tree that imitates the
//! tracer's files (`RTLAT_HWLAT_TRACEFS`, the hidden seam), with a thread
//! standing for the kernel that writes hwlat lines into `trace_pipe` (a
//! FIFO) once the tracer is on. The script itself cannot be pointed at a
//! fixture: its report is compared with its own format strings (2.4's
//! `/usr/sbin/hwlatdetect`), and it is run only where it refuses, as here.
//! Every run proves the tracer's settings back as they were: at the end,
//! after an error, after SIGINT and SIGTERM, and after a SIGKILL (the
//! janitor).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::support::{Run, Running, rtlat_tool, spawn, wait_until};

/// The settings as a fresh kernel has them (tracing on, no tracer).
const INITIAL: [(&str, &str); 6] = [
    ("current_tracer", "nop\n"),
    ("tracing_on", "1\n"),
    ("tracing_thresh", "0\n"),
    ("tracing_cpumask", "3\n"),
    ("hwlat_detector/window", "1000000\n"),
    ("hwlat_detector/width", "500000\n"),
];

/// Two samples as a 5.14+ kernel writes them: the largest 30 µs, the
/// `count:` fields adding up to 3, 2 s apart.
const LINES: [&str; 2] = [
    "           <...>-1730  [001] d...   567.190353: #1     inner/outer(us):   12/14    ts:1508.123456789 count:2",
    "           <...>-1730  [000] d...   568.190353: #2     inner/outer(us):   30/4     ts:1510.123456789 count:1",
];

/// A tracing directory with the hwlat tracer's files.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("hwlat_detector")).unwrap();
        std::fs::write(
            dir.path().join("available_tracers"),
            "hwlat blk function nop\n",
        )
        .unwrap();
        for (file, value) in INITIAL {
            std::fs::write(dir.path().join(file), value).unwrap();
        }
        let fifo = dir.path().join("trace_pipe");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        Fixture { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.path().join(file))
            .unwrap()
            .trim_end()
            .to_owned()
    }

    /// Every setting now, without line ends.
    fn settings(&self) -> BTreeMap<&'static str, String> {
        INITIAL.iter().map(|(f, _)| (*f, self.read(f))).collect()
    }

    fn initial() -> BTreeMap<&'static str, String> {
        INITIAL
            .iter()
            .map(|(f, v)| (*f, v.trim_end().to_owned()))
            .collect()
    }

    fn tracer_on(&self) -> bool {
        self.read("current_tracer") == "hwlat" && self.read("tracing_on") == "1"
    }

    /// The kernel: once the tracer is on, writes `lines` to `trace_pipe`,
    /// and keeps the pipe open until the tracer is off again (or 20 s).
    fn kernel(&self, lines: &'static [&'static str]) -> JoinHandle<()> {
        let dir = self.path().to_path_buf();
        let on = move |dir: &PathBuf| {
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
            read("current_tracer").trim() == "hwlat" && read("tracing_on").trim() == "1"
        };
        std::thread::spawn(move || {
            // Read and write: opening never waits for a reader.
            let mut pipe = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(dir.join("trace_pipe"))
                .unwrap();
            if !wait_until(Duration::from_secs(20), || on(&dir)) {
                return;
            }
            for line in lines {
                writeln!(pipe, "{line}").unwrap();
            }
            wait_until(Duration::from_secs(20), || !on(&dir));
        })
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = rtlat_tool("hwlatdetect", args);
        cmd.env("RTLAT_HWLAT_TRACEFS", self.path());
        cmd
    }

    fn run(&self, args: &[&str]) -> Run {
        spawn(&mut self.command(args)).wait(Duration::from_secs(20))
    }
}

/// The value of the line starting with `label` (`Max Latency:`), as an
/// OpenShift-style check reads it: the text after the label, trimmed,
/// `Below threshold` or a number with `us`.
fn reported(stdout: &str, label: &str) -> Option<String> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .map(|v| v.trim().to_owned())
}

/// What an OpenShift platform check does with the report: the maximum in
/// µs (0 below the threshold) against `HWLATDETECT_MAXIMUM_LATENCY`.
fn openshift_maximum(stdout: &str) -> u64 {
    let value = reported(stdout, "Max Latency:").expect("a Max Latency: line");
    if value == "Below threshold" {
        return 0;
    }
    value
        .strip_suffix("us")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("Max Latency: {value}"))
}

#[test]
fn a_run_prints_the_scripts_report_and_puts_every_setting_back() {
    let fixture = Fixture::new();
    let kernel = fixture.kernel(&LINES);
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("samples.txt");
    let json = out.path().join("run.json");
    let run = fixture.run(&[
        "--duration=1",
        "--threshold=10us",
        "--window=100ms",
        "--cpu-list=0-1",
        &format!("--report={}", report.display()),
        &format!("--json={}", json.display()),
    ]);
    kernel.join().unwrap();
    // 30 µs above the hard limit (the threshold): exit status 1.
    run.expect_code(1);
    let expected = format!(
        "hwlatdetect:  test duration 1 seconds
   detector: tracer
   parameters:
        CPU list:          0-1
        Latency threshold: 10us
        Sample window:     100000us
        Sample width:      50000us
     Non-sampling period:  50000us
        Output File:       {report}

Starting test
test finished
Max Latency: 30us
Samples recorded: 2
Samples exceeding threshold: 2
report saved to {report} (2 samples)
ts: 1508.123456789, inner:12, outer:14
ts: 1510.123456789, inner:30, outer:4
",
        report = report.display()
    );
    assert_eq!(run.stdout, expected, "{}", run.describe());
    assert_eq!(run.stderr, "");
    assert_eq!(openshift_maximum(&run.stdout), 30);
    assert_eq!(fixture.settings(), Fixture::initial());
    assert_eq!(
        std::fs::read_to_string(&report).unwrap(),
        "ts: 1508.123456789, inner:12, outer:14\nts: 1510.123456789, inner:30, outer:4\n"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["return_code"], 1);
    assert!(doc["cmdline:"].as_str().unwrap().contains("--duration=1"));
    let h = &doc["hwlatdetect"];
    assert_eq!(h["max_latency_us"], 30);
    assert_eq!(h["samples_recorded"], 2);
    assert_eq!(h["latencies_above_threshold"], 3);
    // 2.10's MTBF: (1510 - 1508) s * 100000 / ((3 - 1) * 50000).
    assert_eq!(h["mtbf_s"], 2.0);
    assert_eq!(h["samples"][1]["cpu"], 0);
    assert_eq!(h["samples"][0]["count"], 2);
    assert!(doc["environment"].is_object(), "{doc}");
}

/// The report of the same run in a newer rt-tests' words: 2.6 adds each
/// sample's CPU; 2.10 moves `Sample window:` one space, counts the
/// latencies above the threshold by the kernel's `count:` fields, adds
/// them to the sample lines and prints the MTBF. The dialect from the
/// option and from the environment.
#[test]
fn the_2_6_and_2_10_reports() {
    let report = |dialect: &str, by_env: bool| {
        let fixture = Fixture::new();
        let kernel = fixture.kernel(&LINES);
        let json = fixture.path().join("run.json");
        let json_arg = format!("--json={}", json.display());
        let mut args = vec![
            "--duration=1",
            "--threshold=10us",
            "--window=100ms",
            &json_arg,
        ];
        let option = format!("--rt-tests={dialect}");
        let mut cmd = if by_env {
            let mut cmd = fixture.command(&args);
            cmd.env("RTLAT_RT_TESTS", dialect);
            cmd
        } else {
            args.push(&option);
            fixture.command(&args)
        };
        let run = spawn(&mut cmd).wait(Duration::from_secs(20));
        kernel.join().unwrap();
        run.expect_code(1);
        assert_eq!(fixture.settings(), Fixture::initial());
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        (
            run.stdout,
            doc["rt_test_version:"].as_str().unwrap().to_owned(),
        )
    };
    let (v2_6, version) = report("2.6", true);
    assert_eq!(version, "2.60");
    assert!(
        v2_6.contains("        Sample window:     100000us\n"),
        "{v2_6}"
    );
    assert!(v2_6.contains("Samples exceeding threshold: 2\n"), "{v2_6}");
    assert!(!v2_6.contains("MTBF"), "{v2_6}");
    assert!(v2_6.ends_with(
        "ts: 1508.123456789, inner:12, outer:14, cpu:1\nts: 1510.123456789, inner:30, outer:4, cpu:0\n"
    ), "{v2_6}");
    let (v2_10, version) = report("2.10", false);
    assert_eq!(version, "2.10");
    assert!(
        v2_10.contains("        Sample window:      100000us\n"),
        "{v2_10}"
    );
    // (1510 - 1508) s * 100000 / ((3 - 1) * 50000).
    assert!(
        v2_10.contains("Samples exceeding threshold: 3\nMTBF: 2.000 seconds\n"),
        "{v2_10}"
    );
    assert!(
        v2_10.ends_with(
            "ts: 1508.123456789, inner:12, outer:14, cpu:1, count:2\n\
         ts: 1510.123456789, inner:30, outer:4, cpu:0, count:1\n"
        ),
        "{v2_10}"
    );
}

#[test]
fn below_the_threshold_quiet_watch_and_the_gates() {
    let fixture = Fixture::new();
    // Nothing from the kernel: "Below threshold", exit 0, and a gate on
    // the maximum passes.
    let kernel = fixture.kernel(&[]);
    let junit = tempfile::NamedTempFile::new().unwrap();
    let run = fixture.run(&[
        "--duration=1",
        "--fail-if=max>20us",
        &format!("--junit={}", junit.path().display()),
    ]);
    kernel.join().unwrap();
    run.expect_code(0);
    assert_eq!(
        reported(&run.stdout, "Max Latency:").unwrap(),
        "Below threshold"
    );
    assert_eq!(openshift_maximum(&run.stdout), 0);
    assert_eq!(reported(&run.stdout, "Samples recorded:").unwrap(), "0");
    assert!(
        std::fs::read_to_string(junit.path())
            .unwrap()
            .contains(r#"failures="0""#)
    );
    assert_eq!(fixture.settings(), Fixture::initial());

    // --quiet: only the samples; the hard limit above them: exit 0;
    // --watch prints them as they come (and not again); a gate broken: 3.
    let kernel = fixture.kernel(&LINES);
    let run = fixture.run(&[
        "--duration=1",
        "--quiet",
        "--watch",
        "--hardlimit=100",
        "--fail-if=max>20us",
    ]);
    kernel.join().unwrap();
    run.expect_code(3);
    assert_eq!(
        run.stdout,
        "ts: 1508.123456789, inner:12, outer:14\nts: 1510.123456789, inner:30, outer:4\n"
    );
    assert!(
        run.stderr.contains("--fail-if: hwlat samples: max = 30"),
        "{}",
        run.describe()
    );
    assert_eq!(fixture.settings(), Fixture::initial());
}

/// A run of 60 s, started and waited for until the tracer is on.
fn started(fixture: &Fixture) -> (Running, JoinHandle<()>) {
    let kernel = fixture.kernel(&LINES[..1]);
    let running = spawn(&mut fixture.command(&["--duration=60", "--threshold=20"]));
    running.wait_for_stdout(Duration::from_secs(10), "Starting test", |s| {
        s.contains("Starting test")
    });
    assert!(wait_until(Duration::from_secs(10), || fixture.tracer_on()));
    assert_eq!(fixture.read("tracing_thresh"), "20");
    (running, kernel)
}

#[test]
fn sigint_and_sigterm_end_the_run_with_its_report_and_the_settings_back() {
    let (int, term) = (Fixture::new(), Fixture::new());
    let (a, ka) = started(&int);
    let (b, kb) = started(&term);
    a.signal("INT");
    b.signal("TERM");
    for (run, kernel, fixture) in [(a, ka, &int), (b, kb, &term)] {
        let run = run.wait(Duration::from_secs(10));
        kernel.join().unwrap();
        run.expect_code(0);
        assert!(
            run.stdout.contains("interrupted\ntest finished\n"),
            "{}",
            run.describe()
        );
        assert_eq!(openshift_maximum(&run.stdout), 14);
        assert_eq!(fixture.settings(), Fixture::initial());
    }
}

#[test]
fn sigkill_leaves_the_settings_to_the_janitor() {
    let fixture = Fixture::new();
    let (running, kernel) = started(&fixture);
    running.signal("KILL");
    let run = running.wait(Duration::from_secs(10));
    assert_eq!(run.code(), None);
    let back = wait_until(Duration::from_secs(10), || {
        fixture.settings() == Fixture::initial()
    });
    assert!(back, "not restored after SIGKILL: {:?}", fixture.settings());
    kernel.join().unwrap();
}

#[test]
fn an_error_after_the_set_up_puts_the_settings_back() {
    let fixture = Fixture::new();
    std::fs::remove_file(fixture.path().join("trace_pipe")).unwrap();
    let run = fixture.run(&["--duration=1", "--threshold=50", "--width=2s"]);
    run.expect_code(1);
    let lines = run.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", run.describe());
    assert!(lines[0].contains("trace_pipe"), "{}", run.describe());
    assert_eq!(fixture.settings(), Fixture::initial());
}

#[test]
fn refusals_are_one_line_and_exit_1() {
    // A kernel without the tracer (the fixture's list without it).
    let fixture = Fixture::new();
    std::fs::write(
        fixture.path().join("available_tracers"),
        "blk function nop\n",
    )
    .unwrap();
    let run = fixture.run(&["--duration=1"]);
    run.expect_code(1);
    assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
    assert!(run.stderr.contains("no hwlat tracer"), "{}", run.describe());
    assert!(
        run.stderr.contains("CONFIG_HWLAT_TRACER"),
        "{}",
        run.describe()
    );
    assert_eq!(fixture.settings(), Fixture::initial());

    // This machine: root without the tracer is refused the same way; the
    // script ends in a traceback with the same status.
    let machine_has_it = std::fs::read_to_string("/sys/kernel/tracing/available_tracers")
        .is_ok_and(|t| t.split_whitespace().any(|t| t == "hwlat"));
    if !crate::support::is_root() || machine_has_it {
        skip_note!(
            "SKIPPED (needs root on a kernel without the hwlat tracer): the machine's refusal"
        );
    } else {
        let run =
            spawn(&mut rtlat_tool("hwlatdetect", ["--duration=1"])).wait(Duration::from_secs(10));
        run.expect_code(1);
        assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
        assert!(run.stderr.contains("CONFIG_HWLAT_TRACER"));
        let c_script = Path::new("/usr/sbin/hwlatdetect");
        if c_script.exists() {
            let c = spawn(Command::new(c_script).arg("--duration=1")).wait(Duration::from_secs(20));
            assert_eq!(c.code(), Some(1), "{}", c.describe());
            assert!(
                c.stderr.contains("hwlat tracer not available"),
                "{}",
                c.describe()
            );
        } else {
            skip_note!("SKIPPED (needs /usr/sbin/hwlatdetect): the script's refusal");
        }
    }

    // Not root: refused before anything is read.
    if crate::support::nobody::has_setpriv() && crate::support::is_root() {
        let run = crate::support::nobody::run_as_nobody(&["hwlatdetect", "--duration=1"]);
        run.expect_code(1);
        assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
        assert!(run.stderr.contains("must be root"), "{}", run.describe());
    } else {
        skip_note!("SKIPPED (needs root and setpriv): the refusal without root");
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2_and_touches_nothing() {
    let fixture = Fixture::new();
    for args in [
        &["--duration=10x"][..],
        &["--duration", "-1"],
        &["--threshold=1.5us"],
        &["--hardlimit=abc"],
        &["--window=0"],
        &["--width=1m"],
        &["--cpu-list=0-99999"],
        &["--report=/nonexistent/dir/file"],
        &["--json=/nonexistent/dir/file"],
        &["--fail-if=p99>5us"],
        &["--junit=j.xml"],
        &["--bogus"],
        &["--d=1"],
        &["--duration"],
        &["stray"],
    ] {
        let run = fixture.run(args);
        assert_eq!(run.code(), Some(2), "{args:?}: {}", run.describe());
        assert_eq!(run.stderr_lines().len(), 1, "{args:?}: {}", run.describe());
        assert_eq!(run.stdout, "", "{args:?}");
    }
    assert_eq!(fixture.settings(), Fixture::initial());
    // The script's argparse says exit 2 for an unknown option too.
    let c_script = Path::new("/usr/sbin/hwlatdetect");
    if c_script.exists() {
        let c = spawn(Command::new(c_script).arg("--bogus")).wait(Duration::from_secs(20));
        assert_eq!(c.code(), Some(2), "{}", c.describe());
    } else {
        skip_note!("SKIPPED (needs /usr/sbin/hwlatdetect): the script's exit status");
    }
}

#[test]
fn the_c_name_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("hwlatdetect");
    std::os::unix::fs::symlink(crate::support::rtlat_path(), &link).unwrap();
    let run = spawn(Command::new(&link).arg("--help")).wait(Duration::from_secs(10));
    run.expect_code(0);
    for option in [
        "--duration",
        "--threshold",
        "--hardlimit",
        "--window",
        "--width",
        "--report",
        "--cpu-list",
        "--debug",
        "--quiet",
        "--watch",
        "--json",
        "--fail-if",
    ] {
        assert!(run.stdout.contains(option), "{option}: {}", run.stdout);
    }
}
