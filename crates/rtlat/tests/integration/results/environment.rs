//! The environment in every result: each measuring tool's JSON ends with
//! `"environment"` (the keys of `rtlat_audit::environment`, checked for
//! shape, never for this machine's values) and `"audit"` (the checks),
//! with nothing added to the text; `rtlat plot` puts the environment's
//! summary in its title; `rtlat compare` lists what differs between two
//! runs' environments, in its text and its JSON.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::signaltest::synthetic::rtlat_signaltest;
use crate::support::cpus::CpuLease;
use crate::support::ipc::{TOOLS, rtlat_ipc};
use crate::support::{Run, read_json, rtlat, rtlat_cyclictest, rtlat_tool, run, synthetic};

/// The keys of an object, sorted.
fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

/// Checks that `doc` ends with `"environment"` and `"audit"` of the
/// contract's shape (then the verdict), its measured CPUs `measured` (`None`: not checked).
pub(crate) fn check_environment(what: &str, text: &str, measured: Option<&[usize]>) {
    let doc: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: {e}"));
    // Last, after C's keys (serde_json's map keeps the text's order only
    // with a feature; read it from the text).
    let top: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  \"")?.split_once("\":").map(|(k, _)| k))
        .collect();
    assert_eq!(
        top[top.len() - 3..],
        ["environment", "audit", "verdict"],
        "{what}: top-level keys {top:?}"
    );

    let env = &doc["environment"];
    assert_eq!(
        keys(env),
        set(&[
            "rtlat_version",
            "kernel",
            "cpu",
            "measured_cpus",
            "cpus",
            "clocksource",
            "isolation",
            "sched_rt_runtime_us",
            "virtualization",
            "limits"
        ]),
        "{what}"
    );
    assert_eq!(env["rtlat_version"], doc["rtlat_version"], "{what}");
    assert_eq!(
        keys(&env["kernel"]),
        set(&[
            "release",
            "version",
            "preemption",
            "hz",
            "nohz_full",
            "cmdline"
        ]),
        "{what}"
    );
    // Read from the same machine as sysinfo.
    assert_eq!(
        env["kernel"]["release"], doc["sysinfo"]["release"],
        "{what}"
    );
    assert_eq!(keys(&env["cpu"]), set(&["model", "count", "smt"]), "{what}");
    assert!(
        env["cpu"]["count"].as_u64().is_some_and(|n| n > 0),
        "{what}"
    );
    let measured_cpus: Vec<usize> = env["measured_cpus"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: measured_cpus {}", env["measured_cpus"]))
        .iter()
        .map(|c| c.as_u64().unwrap() as usize)
        .collect();
    assert!(!measured_cpus.is_empty(), "{what}");
    if let Some(measured) = measured {
        assert_eq!(measured_cpus, measured, "{what}: the run's CPUs");
    }
    let cpus = env["cpus"].as_array().expect("cpus");
    let listed: Vec<usize> = cpus
        .iter()
        .map(|c| c["cpu"].as_u64().unwrap() as usize)
        .collect();
    assert_eq!(listed, measured_cpus, "{what}: one entry per measured CPU");
    for c in cpus {
        assert_eq!(keys(c), set(&["cpu", "governor", "idle_states"]), "{what}");
        for state in c["idle_states"].as_array().expect("idle_states") {
            assert_eq!(
                keys(state),
                set(&["name", "exit_latency_us", "disabled"]),
                "{what}"
            );
        }
    }
    assert_eq!(
        keys(&env["isolation"]),
        set(&[
            "isolated",
            "nohz_full",
            "isolcpus",
            "rcu_nocbs",
            "irqaffinity"
        ]),
        "{what}"
    );
    assert_eq!(
        keys(&env["virtualization"]),
        set(&["hypervisor", "steal_time_seen"]),
        "{what}"
    );
    assert_eq!(
        keys(&env["limits"]),
        set(&[
            "rlimit_rtprio",
            "rlimit_memlock",
            "cap_sys_nice",
            "cap_ipc_lock"
        ]),
        "{what}"
    );

    let checks = doc["audit"].as_array().expect("audit is an array");
    assert!(!checks.is_empty(), "{what}: no checks");
    let mut ids = BTreeSet::new();
    for check in checks {
        assert_eq!(
            keys(check),
            set(&["id", "status", "fact", "why", "fix"]),
            "{what}"
        );
        let status = check["status"].as_str().unwrap();
        assert!(
            ["ok", "info", "unknown", "warn", "bad"].contains(&status),
            "{what}: {check}"
        );
        assert!(check["fact"].is_string(), "{what}: {check}");
        if matches!(status, "warn" | "bad") {
            assert!(check["why"].is_string(), "{what}: {check}");
            assert!(check["fix"].is_string(), "{what}: {check}");
        }
        assert!(
            ids.insert(check["id"].as_str().unwrap().to_owned()),
            "{what}: {} twice",
            check["id"]
        );
    }
}

/// Runs `cmd` with `--json=FILE` added, expects exit 0 and nothing on
/// stderr (the audit adds no line), and returns the run and the file's
/// text.
fn run_json(what: &str, cmd: &mut Command) -> (Run, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let r = run(cmd.arg(format!("--json={}", path.display())));
    r.expect_code(0);
    assert_eq!(r.stderr, "", "{what}: {}", r.describe());
    (r, std::fs::read_to_string(&path).unwrap())
}

#[test]
fn every_measuring_tools_json_has_the_environment_and_the_audit() {
    require_root!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let (r, text) = run_json(
        "cyclictest",
        &mut rtlat_cyclictest(["-q", "-p", "80", "-a", &cpu, "-t", "1", "-l", "20"]),
    );
    check_environment("cyclictest", &text, Some(lease.cpus()));
    // The text is C's: the latency line and one T: line, nothing else.
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("T: 0 ")).count(),
        1,
        "{}",
        r.stdout
    );
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("T: 0 ") || l.starts_with("# /dev/cpu_dma_latency set to")),
        "{}",
        r.stdout
    );

    // Attached: `-a 0` as two words is `-a` alone for the IPC tools (one
    // pair per CPU, as in C).
    let affinity = format!("-a{cpu}");
    for tool in TOOLS {
        let (_, text) = run_json(
            tool,
            &mut rtlat_ipc(tool, &["-q", "-p", "80", &affinity, "-l", "20"]),
        );
        check_environment(tool, &text, Some(lease.cpus()));
    }
    let (_, text) = run_json(
        "signaltest",
        &mut rtlat_signaltest(&["-q", "-p", "80", "-a", &cpu, "-l", "20"]),
    );
    check_environment("signaltest", &text, Some(lease.cpus()));
}

#[test]
fn unpinned_threads_measure_every_allowed_cpu() {
    require_root!();
    // Unpinned real-time threads may run on any CPU.
    let lease = CpuLease::all();
    let (_, text) = run_json(
        "cyclictest",
        &mut rtlat_cyclictest(["-q", "-p", "80", "-t", "2", "-l", "10"]),
    );
    check_environment("cyclictest", &text, Some(lease.cpus()));
}

#[test]
fn only_a_run_that_writes_a_result_audits() {
    require_root!();
    if !Path::new("/usr/bin/strace").exists() {
        skip_note!("SKIPPED (needs /usr/bin/strace): {}", function_name!());
        return;
    }
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let json = format!("--json={}", dir.path().join("run.json").display());
    for (args, audits) in [(vec![], false), (vec![json.as_str()], true)] {
        let mut cmd = Command::new("strace");
        cmd.args(["-f", "-e", "trace=openat", "-o"])
            .arg(&trace)
            .arg(crate::support::rtlat_path())
            .args([
                "cyclictest",
                "-q",
                "-p",
                "80",
                "-a",
                &lease.list(),
                "-l",
                "5",
            ])
            .args(&args);
        run(&mut cmd).expect_code(0);
        // The audit reads the isolated CPUs; nothing else in rtlat does.
        let opened = std::fs::read_to_string(&trace).unwrap();
        assert_eq!(
            opened.contains("\"/sys/devices/system/cpu/isolated\""),
            audits,
            "{args:?}"
        );
    }
}

#[test]
fn synthetic_runs_have_null_environment_and_audit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let r = run(synthetic(3, ["-q", "-l", "100"]).arg(format!("--json={}", path.display())));
    r.expect_code(0);
    assert_eq!(r.stderr, "");
    let doc = read_json(&path);
    assert_eq!(doc["environment"], Value::Null);
    assert_eq!(doc["audit"], Value::Null);
}

/// A machine's facts as the contract writes them, with `release`,
/// `governor` on CPUs 2 and 3, and `cmdline`.
fn environment(release: &str, governor: &str, cmdline: &str) -> Value {
    json!({
        "rtlat_version": "0.1.0",
        "kernel": {"release": release, "version": "#1 SMP PREEMPT_RT",
                   "preemption": "PREEMPT_RT", "hz": 1000, "nohz_full": true,
                   "cmdline": cmdline},
        "cpu": {"model": "Test CPU 3000", "count": 4, "smt": false},
        "measured_cpus": [2, 3],
        "cpus": [{"cpu": 2, "governor": governor, "idle_states": []},
                 {"cpu": 3, "governor": governor, "idle_states": []}],
        "clocksource": "tsc",
        "isolation": {"isolated": "2-3", "nohz_full": "2-3", "isolcpus": "2-3",
                      "rcu_nocbs": "2-3", "irqaffinity": "0-1"},
        "sched_rt_runtime_us": -1,
        "virtualization": {"hypervisor": false, "steal_time_seen": false},
        "limits": {"rlimit_rtprio": "unlimited", "rlimit_memlock": "unlimited",
                   "cap_sys_nice": true, "cap_ipc_lock": true}
    })
}

/// A synthetic cyclictest result in `dir`, its `"environment"` replaced
/// by `env` (a hand-edited result).
fn result_with(dir: &Path, name: &str, seed: u64, env: Value) -> PathBuf {
    let path = dir.join(name);
    let r = run(synthetic(seed, ["-q", "-l", "2000"]).arg(format!("--json={}", path.display())));
    r.expect_code(0);
    let mut doc = read_json(&path);
    doc["environment"] = env;
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

#[test]
fn plot_title_has_the_environment_summary() {
    let dir = tempfile::tempdir().unwrap();
    let json = result_with(
        dir.path(),
        "run.json",
        1,
        environment("6.1.0-rt7", "performance", "quiet"),
    );
    let svg = dir.path().join("plot.svg");
    let r = run(rtlat_tool("plot", [&json]).arg("-o").arg(&svg));
    r.expect_code(0);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("kernel 6.1.0-rt7, PREEMPT_RT, Test CPU 3000"),
        "no summary in the SVG's text"
    );
    // Without an environment (synthetic: null), the kernel of sysinfo.
    let plain = result_with(dir.path(), "plain.json", 1, Value::Null);
    run(rtlat_tool("plot", [&plain]).arg("-o").arg(&svg)).expect_code(0);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(!text.contains("PREEMPT_RT"));
    assert!(text.contains("synthetic · kernel 0.0.0"));
}

fn compare(args: &[&Path]) -> Run {
    let r = run(rtlat().arg("compare").args(args));
    r.expect_code(0);
    r
}

#[test]
fn compare_lists_what_differs_above_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let base = result_with(
        dir.path(),
        "base.json",
        1,
        environment("6.1.0-rt7", "performance", "isolcpus=2-3 quiet"),
    );
    let new = result_with(
        dir.path(),
        "new.json",
        2,
        environment("6.6.0", "powersave", "quiet"),
    );
    let r = compare(&[&base, &new]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "environment differs (BASE -> NEW):")
        .unwrap_or_else(|| panic!("no environment section:\n{}", r.stdout));
    assert_eq!(
        lines[at + 1..at + 4],
        [
            "  kernel.release  6.1.0-rt7 -> 6.6.0",
            "  kernel.cmdline  isolcpus=2-3 quiet -> quiet",
            "  governors       performance -> powersave",
        ]
    );
    assert_eq!(lines[at + 4], "");
    assert_eq!(lines[at + 5], "verdict", "{}", r.stdout);

    // The same in the JSON, alone on stdout with --json -.
    let r = compare(&[Path::new("--json"), Path::new("-"), &base, &new]);
    let doc: Value = serde_json::from_str(&r.stdout).expect("only JSON on stdout");
    assert_eq!(
        doc["environment_changes"],
        json!([
            {"key": "kernel.release", "base": "6.1.0-rt7", "new": "6.6.0"},
            {"key": "kernel.cmdline", "base": "isolcpus=2-3 quiet", "new": "quiet"},
            {"key": "governors", "base": "performance", "new": "powersave"}
        ])
    );
    assert!(doc["verdicts"]["p99"].is_string());

    // To a file, beside the text.
    let out = dir.path().join("cmp.json");
    let r = compare(&[Path::new("--json"), &out, &base, &new]);
    assert!(r.stdout.contains("environment differs"));
    assert_eq!(
        read_json(&out)["environment_changes"],
        doc["environment_changes"]
    );

    // A JSON that cannot be written: the text still, one line, exit 1.
    let r = run(rtlat()
        .arg("compare")
        .args(["--json", "/dev/full"])
        .args([&base, &new]));
    r.expect_code(1);
    assert!(r.stdout.contains("environment differs"));
    assert_eq!(
        r.stderr_lines(),
        ["rtlat compare: --json: cannot write '/dev/full': No space left on device"]
    );
}

#[test]
fn compare_says_when_only_one_run_records_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    let env = environment("6.1.0-rt7", "performance", "quiet");
    let with = result_with(dir.path(), "with.json", 1, env.clone());
    let without = result_with(dir.path(), "without.json", 2, Value::Null);
    let r = compare(&[&without, &with]);
    assert!(
        r.stdout.contains(
            "\nenvironment: only NEW records one (BASE has no \"environment\"): not compared\n"
        ),
        "{}",
        r.stdout
    );
    // Neither: nothing is said.
    let r = compare(&[&without, &without]);
    assert!(!r.stdout.contains("environment"), "{}", r.stdout);
    // Both the same: said in one line.
    let same = result_with(dir.path(), "same.json", 3, env);
    let r = compare(&[&with, &same]);
    assert!(
        r.stdout.contains("\nenvironment: the same in both runs"),
        "{}",
        r.stdout
    );
}
