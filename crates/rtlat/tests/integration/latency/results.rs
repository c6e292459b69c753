//! `rtlat latency`'s results: `--json` (cyclictest's document, to a file
//! or stdout, its path checked before anything is measured), `--verdict`
//! (the verdict's `#` lines after everything else, none without it), and
//! the audit made before the warm-up for `--json`, `--verdict` and a
//! verdict gate, whose warn and bad findings are the verdict's `setup.`
//! reasons. Synthetic runs for the shapes and the order of the outputs,
//! short real runs (root, on leased CPUs) for the environment and the
//! audit.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::latency::runs::latency;
use crate::results::environment::check_environment;
use crate::results::verdict::json_of;
use crate::support::cpus::CpuLease;
use crate::support::{Run, read_json, rtlat, run, synthetic};

/// `rtlat latency --synthetic SEED ARGS...`, expected to end with 0.
fn synthetic_run(seed: u64, args: &[&str]) -> Run {
    let mut cmd = latency(["--synthetic", &seed.to_string()]);
    cmd.args(args);
    let r = run(&mut cmd);
    r.expect_code(0);
    r
}

/// The top-level keys of a pretty-printed document, in the text's order.
fn top_level_keys(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("  \"")?.split_once("\":").map(|(k, _)| k))
        .map(str::to_owned)
        .collect()
}

/// The keys of an object, sorted.
fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

/// The `RTS|` columns.
fn rts(stdout: &str) -> Vec<String> {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RTS|"))
        .unwrap_or_else(|| panic!("no RTS line in\n{stdout}"));
    line.split('|').map(|c| c.trim().to_owned()).collect()
}

/// `stdout` without the JSON document it carries (`--json=-`): from the
/// line `{` to the line `}`.
fn without_json(stdout: &str) -> String {
    let start = stdout.find("{\n").expect("a JSON document");
    let end = stdout.find("\n}\n").expect("its end") + 3;
    format!("{}{}", &stdout[..start], &stdout[end..])
}

#[test]
fn synthetic_json_is_cyclictests_document() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latency.json");
    let json = format!("--json={}", path.display());
    let plain = synthetic_run(3, &["-q", "-T", "2", "-p", "200", "-P", "80"]);
    let with = synthetic_run(3, &["-q", "-T", "2", "-p", "200", "-P", "80", &json]);
    // The text is Xenomai's, unchanged by the file.
    assert_eq!(with.stdout, plain.stdout);
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = read_json(&path);

    let c_path = dir.path().join("cyclictest.json");
    let r = run(synthetic(3, ["-q", "-l", "100"]).arg(format!("--json={}", c_path.display())));
    r.expect_code(0);
    let c_text = std::fs::read_to_string(&c_path).unwrap();
    let c_doc = read_json(&c_path);
    // C's envelope, our keys, then environment, audit and verdict last.
    assert_eq!(top_level_keys(&text), top_level_keys(&c_text));
    assert_eq!(
        top_level_keys(&text)[top_level_keys(&text).len() - 3..],
        ["environment", "audit", "verdict"]
    );
    assert_eq!(keys(&doc["thread"]["0"]), keys(&c_doc["thread"]["0"]));
    // A synthetic run makes no audit, as in every tool.
    assert_eq!(doc["environment"], Value::Null);
    assert_eq!(doc["audit"], Value::Null);
    assert!(doc["verdict"]["level"].is_string(), "{}", doc["verdict"]);

    // The run's own command line and figures.
    let cmdline = doc["cmdline:"].as_str().unwrap();
    assert!(
        cmdline.ends_with(&format!(
            "latency --synthetic 3 -q -T 2 -p 200 -P 80 {json}"
        )),
        "{cmdline}"
    );
    assert_eq!(doc["num_threads"], 1);
    assert_eq!(doc["return_code"], 0);
    assert_eq!(doc["wait_method"], "timerfd");
    let t0 = &doc["thread"]["0"];
    assert_eq!(t0["priority"], 80);
    assert_eq!(t0["interval_us"], 200);
    assert_eq!(t0["overruns"], 0);
    // The samples after the warm-up: the summary's.
    let columns = rts(&plain.stdout);
    let us = |key: &str| format!("{:.3}", t0[key].as_i64().unwrap() as f64 / 1000.0);
    assert_eq!(
        (us("min_ns"), us("max_ns")),
        (columns[0].clone(), columns[2].clone())
    );
    let cycles = t0["cycles"].as_u64().unwrap();
    assert!((2 * 5000..=2 * 5000 + 1).contains(&cycles), "{cycles}");

    // The same document on stdout, but for the command line.
    let to_stdout = synthetic_run(3, &["-q", "-T", "2", "-p", "200", "-P", "80", "--json=-"]);
    let mut on_stdout = json_of(&to_stdout.stdout);
    let mut in_file = doc.clone();
    on_stdout["cmdline:"] = Value::Null;
    in_file["cmdline:"] = Value::Null;
    assert_eq!(on_stdout, in_file);
}

#[test]
fn json_on_stdout_comes_between_the_rtd_lines_and_the_histograms() {
    let args = ["-T", "3", "-h", "-s"];
    let plain = synthetic_run(5, &args);
    let with = synthetic_run(5, &[&args[..], &["--json=-"]].concat());
    let lines: Vec<&str> = with.stdout.lines().collect();
    let open = lines.iter().position(|l| *l == "{").expect("JSON start");
    let close = lines.iter().position(|l| *l == "}").expect("JSON end");
    let last_rtd = lines.iter().rposition(|l| l.starts_with("RTD|")).unwrap();
    let first_hs = lines.iter().position(|l| l.starts_with("HS")).unwrap();
    let rts = lines.iter().position(|l| l.starts_with("RTS|")).unwrap();
    assert!(
        last_rtd < open && close < first_hs && first_hs < rts,
        "{}",
        with.stdout
    );
    // Nothing else changes.
    assert_eq!(without_json(&with.stdout), plain.stdout);
    assert_eq!(json_of(&with.stdout)["thread"]["0"]["overruns"], 0);
}

#[test]
fn verdict_lines_follow_the_summary_and_only_with_the_option() {
    let args = ["-T", "2", "-h", "-s", "-p", "500"];
    let plain = synthetic_run(2, &args);
    assert!(!plain.stdout.contains("# "), "{}", plain.stdout);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let json = format!("--json={}", path.display());
    let with = synthetic_run(2, &[&args[..], &["--verdict=full", &json]].concat());
    let tail = with
        .stdout
        .strip_prefix(&plain.stdout)
        .unwrap_or_else(|| panic!("Xenomai's output first, unchanged:\n{}", with.stdout));
    assert!(tail.lines().all(|l| l.chars().count() <= 80), "{tail}");
    let doc = read_json(&path);
    let v = crate::results::verdict::verdict(&doc);
    let mut lines = crate::results::verdict::unwrapped(tail);
    // Last, when the thread's maximum was taken.
    let max_time = lines
        .pop()
        .as_deref()
        .and_then(crate::support::parse_max_time_line)
        .unwrap_or_else(|| panic!("a max-time line last:\n{}", with.stdout));
    crate::support::check_max_time_line(&max_time, &doc["thread"]["0"]);
    assert_eq!(
        lines[0],
        format!(
            "# Thread 0: missed periods: {}",
            doc["thread"]["0"]["overruns"]
        )
    );
    assert_eq!(
        lines[1],
        format!(
            "# Verdict: {} (measurement {}, machine ready)",
            v["level"].as_str().unwrap(),
            v["measurement"].as_str().unwrap()
        )
    );
    for reason in v["reasons"].as_array().unwrap() {
        let line = format!(
            "#   {} ({}): {}",
            reason["id"].as_str().unwrap(),
            reason["level"].as_str().unwrap(),
            reason["text"].as_str().unwrap()
        );
        assert!(lines.contains(&line), "{line}\n{tail}");
    }
    // 2 s at 500 us: 4000 samples; p99.999 needs 1000000, 500 s (more when
    // the run keeps blocks to project from).
    if v["projection"].is_null() {
        assert_eq!(v["suggested_duration_s"], 500.0);
        assert!(
            lines.contains(
                &"# Suggested duration: 500 s, for 10 samples beyond the highest percentile quoted"
                    .to_owned()
            )
        );
    }
    assert_eq!(v["level"], "caveats");
    // Short, the default: the answer in at most 6 lines.
    let short = synthetic_run(2, &[&args[..], &["--verdict"]].concat());
    let tail = short.stdout.strip_prefix(&plain.stdout).unwrap();
    let verdict_lines: Vec<&str> = tail
        .lines()
        .take_while(|l| !l.starts_with("# Thread "))
        .collect();
    assert!(verdict_lines.len() <= 6, "{tail}");
    assert!(
        verdict_lines[0].starts_with("# Verdict: caveats (details: --verdict=full"),
        "{tail}"
    );
}

#[test]
fn a_bad_json_path_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let dir_text = dir.path().display().to_string();
    for (value, message) in [
        (
            "/nonexistent/dir/x.json".to_owned(),
            "rtlat latency: --json: cannot write '/nonexistent/dir/x.json': directory \
             '/nonexistent/dir' does not exist"
                .to_owned(),
        ),
        (
            dir_text.clone(),
            format!("rtlat latency: --json: cannot write '{dir_text}': it is a directory"),
        ),
        (
            String::new(),
            "rtlat latency: --json: invalid value '': expected a file name".to_owned(),
        ),
    ] {
        // A real run (no --synthetic): refused before the privilege check.
        let r = run(latency(["-T", "1"]).arg(format!("--json={value}")));
        r.expect_code(2);
        assert_eq!(r.stderr.trim_end(), message, "{}", r.describe());
        assert_eq!(r.stdout, "", "nothing measured: {}", r.describe());
    }
}

/// The check ids of an audit (`"audit"` of a result, `"checks"` of
/// `rtlat audit --json`), in order.
fn check_ids(checks: &Value) -> Vec<String> {
    checks
        .as_array()
        .unwrap_or_else(|| panic!("not a check list: {checks}"))
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The ids of the checks at `warn` or `bad`.
fn flagged(checks: &Value) -> Vec<String> {
    checks
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| matches!(c["status"].as_str(), Some("warn" | "bad")))
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

/// `rtlat audit -p 99 -i 100 --json -`: latency's defaults, for the CPUs
/// of `measured` (`--cpus`), every allowed one without.
fn machine_audit(measured: Option<&CpuLease>) -> Value {
    let mut cmd = rtlat();
    cmd.args(["audit", "-p", "99", "-i", "100", "--json", "-"]);
    if let Some(lease) = measured {
        cmd.args(["--cpus", &lease.list()]);
    }
    let r = run(&mut cmd);
    r.expect_code(0);
    serde_json::from_str(&r.stdout).unwrap()
}

#[test]
fn a_real_run_records_the_environment_the_audit_and_setup_reasons() {
    require_root!();
    // An unpinned run: every CPU.
    let lease = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let r = run(latency(["-q", "-T", "1"]).arg(format!("--json={}", path.display())));
    r.expect_code(0);
    assert_eq!(
        r.stderr.trim_end(),
        "running quietly for 1 seconds",
        "the audit adds no line: {}",
        r.describe()
    );
    let text = std::fs::read_to_string(&path).unwrap();
    // Not pinned (-c): every allowed CPU is measured.
    check_environment("latency", &text, Some(lease.cpus()));
    let doc: Value = serde_json::from_str(&text).unwrap();
    // Every check of `rtlat audit`, for the run's priority and period.
    assert_eq!(
        check_ids(&doc["audit"]),
        check_ids(&machine_audit(None)["checks"])
    );
    // Each finding at warn or bad is a set-up reason (a run on every CPU:
    // all of them concern it), in the audit's order, and nothing else is.
    let setup: Vec<String> = doc["verdict"]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str()?.strip_prefix("setup."))
        .map(str::to_owned)
        .collect();
    assert_eq!(setup, flagged(&doc["audit"]), "{}", doc["verdict"]);
    assert!(
        doc["thread"]["0"]["disturbances"].is_object(),
        "{}",
        doc["thread"]["0"]
    );
}

/// Runs `rtlat latency ARGS` under strace and returns the run and whether
/// it read the isolated CPUs (the audit does; nothing else in rtlat).
fn audits_under_strace(args: &[&str]) -> (Run, bool) {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-e", "trace=openat", "-o"])
        .arg(&trace)
        .arg(crate::support::rtlat_path())
        .arg("latency")
        .args(args);
    let r = run(&mut cmd);
    let opened = std::fs::read_to_string(&trace).unwrap();
    (r, opened.contains("\"/sys/devices/system/cpu/isolated\""))
}

#[test]
fn a_verdict_gate_makes_the_audit_and_sees_setup_reasons() {
    require_root!();
    if !Path::new("/usr/bin/strace").exists() {
        skip_note!("SKIPPED (needs /usr/bin/strace): {}", function_name!());
        return;
    }
    let lease = CpuLease::one();
    let cpu = lease.list();
    let (r, audited) = audits_under_strace(&["-q", "-T", "1", "-c", &cpu, "--fail-if=max>1s"]);
    assert!(
        !audited,
        "no audit without a verdict to judge: {}",
        r.describe()
    );
    r.expect_code(0);
    let (r, audited) =
        audits_under_strace(&["-q", "-T", "1", "-c", &cpu, "--fail-if=verdict=trustworthy"]);
    assert!(audited, "{}", r.describe());
    // 1 s at 100 us supports no p99.99: never trustworthy.
    r.expect_code(3);
    assert!(
        r.stderr.contains("--fail-if: run: verdict = ")
            && r.stderr.contains(" (trustworthy required)"),
        "{}",
        r.describe()
    );

    // What the gate judged, shown: the machine's findings are among the
    // reasons.
    let r = run(&mut latency([
        "-q",
        "-T",
        "1",
        "-c",
        &cpu,
        "--fail-if=verdict=trustworthy",
        "--verdict=full",
    ]));
    r.expect_code(3);
    // Summarised in the full text: `#   bad ID: FACT`, `#   warn ...`.
    let shown: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| {
            l.strip_prefix("#   bad ")
                .or_else(|| l.strip_prefix("#   warn "))
        })
        .filter_map(|l| l.split_once(": ").map(|(id, _)| id))
        .collect();
    // Statuses can change between two readings (steal time, a thread
    // that comes and goes): the machine-wide kernel findings do not. The
    // audit of the measured CPU, as the run's own.
    let kernel: Vec<String> = flagged(&machine_audit(Some(&lease))["checks"])
        .into_iter()
        .filter(|id| id.starts_with("kernel."))
        .collect();
    for id in &kernel {
        assert!(shown.contains(&id.as_str()), "{id}: {}", r.describe());
    }
    if kernel.is_empty() {
        skip_note!(
            "note: {}: no kernel finding at warn or bad on this machine; only the gate's audit checked",
            function_name!()
        );
    }
}
