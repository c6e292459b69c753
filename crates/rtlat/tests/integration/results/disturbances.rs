//! Each measuring thread's `"disturbances"` in the JSON: what disturbed it
//! between its first and last sample (involuntary switches, migrations,
//! page faults), for cyclictest, signaltest and the IPC receivers (threads
//! and fork mode). Real runs check presence and, under a competing
//! higher-priority thread, that involuntary switches were seen (> 0, never
//! an exact count); synthetic runs have no such key.

use serde_json::Value;
use std::path::Path;
use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::spinner::Spinner;
use crate::support::{rtlat, run, run_with_json};

const KEYS: [&str; 4] = [
    "involuntary_switches",
    "migrations",
    "minor_faults",
    "major_faults",
];

/// The `"disturbances"` object of a thread (or receiver) object, checked
/// for its four keys: counts are non-negative integers, `migrations` is
/// one too where the kernel has `/proc/thread-self/sched` (else `null`).
fn disturbances(thread: &Value) -> &serde_json::Map<String, Value> {
    let d = thread["disturbances"]
        .as_object()
        .unwrap_or_else(|| panic!("no \"disturbances\" object in {thread}"));
    let keys: Vec<&str> = d.keys().map(String::as_str).collect();
    assert_eq!(keys.len(), KEYS.len(), "{d:?}");
    for key in KEYS {
        let value = &d[key];
        if key == "migrations" && !Path::new("/proc/thread-self/sched").exists() {
            assert!(value.is_null(), "{d:?}");
        } else {
            assert!(value.is_u64(), "{key}: {d:?}");
        }
    }
    d
}

fn json_file(dir: &tempfile::TempDir) -> String {
    dir.path().join("run.json").display().to_string()
}

fn read_json(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_quiet_cyclictest_run_reports_each_threads_disturbances() {
    let (_, doc) = run_with_json(&["-q", "-t", "2", "-i", "1000", "-l", "200"]);
    let threads = doc["thread"].as_object().unwrap();
    assert_eq!(threads.len(), 2);
    for t in threads.values() {
        disturbances(t);
    }
}

#[test]
fn a_higher_priority_fifo_competitor_shows_as_involuntary_switches() {
    require_root!();
    let lease = CpuLease::one();
    let cpu = lease.cpu();
    let cpu_arg = cpu.to_string();
    // The measuring thread spins (--wait busy) at FIFO 50 on `cpu`; a FIFO
    // 90 thread pinned there wakes every 10 ms for as long as the run
    // lasts and so preempts it each time.
    let competitor = Spinner::start(
        &lease,
        "competitor",
        90,
        Duration::ZERO,
        Duration::from_millis(10),
    );
    let (_, doc) = run_with_json(&[
        "-q", "-a", &cpu_arg, "-p", "50", "-i", "1000", "-l", "500", "--wait", "busy",
    ]);
    drop(competitor);
    let d = disturbances(&doc["thread"]["0"]);
    assert!(
        d["involuntary_switches"].as_u64().unwrap() > 0,
        "a FIFO 90 thread woke on CPU {cpu} every 10 ms: {d:?}"
    );
}

#[test]
fn signaltest_members_report_their_disturbances() {
    let dir = tempfile::tempdir().unwrap();
    let json = json_file(&dir);
    let mut cmd = rtlat();
    cmd.args(["signaltest", "-q", "-t", "3", "-l", "200", "--json", &json]);
    run(&mut cmd).expect_code(0);
    let doc = read_json(&json);
    let threads = doc["thread"].as_object().unwrap();
    assert_eq!(threads.len(), 3);
    for t in threads.values() {
        disturbances(t);
    }
}

#[test]
fn ipc_receivers_report_their_disturbances_in_threads_and_fork_mode() {
    let runs: [&[&str]; 5] = [
        &["svsematest"],
        &["svsematest", "-f"],
        &["sigwaittest", "-f"],
        &["pmqtest"],
        &["ptsematest"],
    ];
    for tool in runs {
        let dir = tempfile::tempdir().unwrap();
        let json = json_file(&dir);
        let mut cmd = rtlat();
        cmd.args(tool)
            .args(["-q", "-t", "2", "-i", "500", "-l", "100", "--json", &json]);
        run(&mut cmd).expect_code(0);
        let doc = read_json(&json);
        let pairs = doc["thread"].as_object().unwrap();
        assert_eq!(pairs.len(), 2, "{tool:?}");
        for pair in pairs.values() {
            disturbances(&pair["receiver"]);
        }
    }
}

#[test]
fn synthetic_runs_have_no_disturbances() {
    // Nothing real ran: no counts, rather than zeros that would read as a
    // quiet machine.
    for tool in ["cyclictest", "signaltest", "svsematest"] {
        let dir = tempfile::tempdir().unwrap();
        let json = json_file(&dir);
        let mut cmd = rtlat();
        cmd.args([tool, "--synthetic", "3", "-q", "-t", "2", "-l", "100"])
            .args(["--json", &json]);
        run(&mut cmd).expect_code(0);
        let doc = read_json(&json);
        for t in doc["thread"].as_object().unwrap().values() {
            let side = t.get("receiver").unwrap_or(t);
            assert!(side.get("disturbances").is_none(), "{tool}: {t}");
        }
    }
}
