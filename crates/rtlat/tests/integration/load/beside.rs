//! `--load`, `--load-schedule` and `--load-cpus` in the measuring tools:
//! phases reported in order with sample counts that add up to the run's,
//! each phase's load measured, no process or directory left behind after
//! a signal or an error, and bad input refused with one line. A real load
//! keeps a CPU busy: each run with one holds a CPU lease and keeps both
//! its measurement and its load on it (`-a`, `--load-cpus`); synthetic runs
//! start no load.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::load::tool::{open_files_in, wait_for_load_workers};
use crate::support::cpus::CpuLease;
use crate::support::ipc::on_leased_cpu;
use crate::support::{
    SpawnChecked, is_root, read_json, rtlat, rtlat_cyclictest, run, run_with_timeout, spawn,
    wait_until,
};

/// The processes of process group `pgrp` still there, zombies included.
fn processes_in_group(pgrp: u32) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command's closing parenthesis: state ppid pgrp ...
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2) == Some(&pgrp.to_string().as_str()) {
            found.push(stat);
        }
    }
    found
}

/// Each thread's cycles in each phase, and each thread's total.
fn phase_cycles(json: &Value) -> (Vec<Vec<u64>>, Vec<u64>) {
    let threads = json["thread"].as_object().expect("thread");
    let totals: Vec<u64> = (0..threads.len())
        .map(|i| json["thread"][i.to_string()]["cycles"].as_u64().unwrap())
        .collect();
    let phases = json["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|p| {
            (0..threads.len())
                .map(|i| p["thread"][i.to_string()]["cycles"].as_u64().unwrap())
                .collect()
        })
        .collect();
    (phases, totals)
}

fn names(json: &Value) -> Vec<String> {
    json["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect()
}

fn assert_phases_add_up(json: &Value) {
    let (phases, totals) = phase_cycles(json);
    for (t, total) in totals.iter().enumerate() {
        let sum: u64 = phases.iter().map(|p| p[t]).sum();
        assert_eq!(sum, *total, "thread {t}: phases {phases:?}");
    }
}

fn cyclictest_json(args: &[&str], dir: &Path) -> (crate::support::Run, Value) {
    let path = dir.join("run.json");
    let mut cmd = rtlat_cyclictest(args);
    cmd.arg(format!("--json={}", path.display()));
    let r = run_with_timeout(&mut cmd, Duration::from_secs(20));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    (r, read_json(&path))
}

#[test]
fn schedule_phases_come_in_order_and_their_cycles_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let schedule = "idle=1,cpu:1=1s,messaging:1+timers:1=2";
    let (r, json) = cyclictest_json(
        &[
            "--synthetic=7",
            "-t",
            "3",
            "-i",
            "1000",
            "-q",
            "--load-schedule",
            schedule,
        ],
        dir.path(),
    );
    assert_eq!(names(&json), ["idle", "cpu:1", "messaging:1+timers:1"]);
    let starts: Vec<f64> = json["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["start"].as_f64().unwrap())
        .collect();
    assert_eq!(starts, [0.0, 1.0, 2.0]);
    let (phases, _) = phase_cycles(&json);
    assert!(phases.iter().flatten().all(|&c| c > 0), "{phases:?}");
    assert_phases_add_up(&json);
    // The run ended with the schedule: 4 s of 1 ms periods for thread 0.
    let cycles = json["thread"]["0"]["cycles"].as_u64().unwrap();
    assert!((3999..=4000).contains(&cycles), "{cycles}");
    assert_eq!(json["load"]["spec"], schedule);
    // The text block: one '# phase' line per phase, in order.
    let phase_lines: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("# phase "))
        .collect();
    assert_eq!(phase_lines.len(), 3, "{}", r.describe());
    assert!(phase_lines[1].starts_with("# phase 2 'cpu:1' from 1.000 s for 1.000 s"));
}

#[test]
fn a_loop_count_ends_the_schedule_early_and_the_phases_still_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let (_, json) = cyclictest_json(
        &[
            "--synthetic=3",
            "-t",
            "2",
            "-i",
            "1000",
            "-q",
            "-l",
            "1500",
            "--load-schedule",
            "idle=1,cpu:1=1,idle=5",
        ],
        dir.path(),
    );
    // Thread 0 takes 1500 samples: the run ends in the second phase.
    assert_eq!(names(&json), ["idle", "cpu:1"]);
    assert_phases_add_up(&json);
    let last = &json["phases"][1];
    assert!(last["duration"].as_f64().unwrap() <= last["planned_duration"].as_f64().unwrap());
}

#[test]
fn each_real_phase_runs_and_measures_its_own_load() {
    let lease = CpuLease::one();
    let cpu = lease.list();
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "-q",
        "-i",
        "500",
        "-t",
        "2",
        "-a",
        &cpu,
        "--load-cpus",
        &cpu,
    ];
    if is_root() {
        args.extend(["-m", "-p", "80"]);
    }
    args.extend(["--load-schedule", "idle=1,cpu:1+syscalls:1=1"]);
    // No -l or -D: the schedule ends the run.
    let (r, json) = cyclictest_json(&args, dir.path());
    assert_eq!(names(&json), ["idle", "cpu:1+syscalls:1"]);
    assert_phases_add_up(&json);
    let idle = &json["phases"][0]["load"];
    assert_eq!(idle["kinds"].as_array().unwrap().len(), 0, "{idle}");
    let loaded = &json["phases"][1]["load"];
    let kinds: Vec<(&str, u64)> = loaded["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["kind"].as_str().unwrap(), k["ops"].as_u64().unwrap()))
        .collect();
    assert_eq!(kinds.len(), 2, "{loaded}");
    assert_eq!((kinds[0].0, kinds[1].0), ("cpu", "syscalls"));
    assert!(kinds.iter().all(|k| k.1 > 0), "{loaded}");
    for phase in json["phases"].as_array().unwrap() {
        for key in [
            "cpu_busy_percent",
            "context_switches_per_sec",
            "interrupts_per_sec",
        ] {
            assert!(phase["load"][key].as_f64().is_some(), "{key}: {phase}");
        }
    }
    assert!(json["load"]["interrupts_per_sec"].as_f64().unwrap() > 0.0);
    assert!(r.stdout.contains("\n# load cpu: "), "{}", r.describe());
    assert!(r.stdout.contains("\n# load syscalls: "), "{}", r.describe());
}

#[test]
fn sigint_stops_the_load_with_nothing_left_behind() {
    let lease = CpuLease::one();
    let cpu = lease.list();
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("run.json");
    let io_root = tempfile::tempdir().unwrap();
    let mut cmd = rtlat_cyclictest([
        "-q",
        "-i",
        "1000",
        "-a",
        &cpu,
        "--load",
        "fork:1,io:1,messaging:1",
        "--load-cpus",
        &cpu,
        &format!("--json={}", json.display()),
    ]);
    cmd.env("TMPDIR", io_root.path()).process_group(0);
    let child = spawn(&mut cmd);
    let pid = child.pid();
    wait_for_load_workers(pid, 3);
    // The duration is the point: each kind must count operations.
    std::thread::sleep(Duration::from_millis(200));
    // The io files have no name (they cannot be left behind).
    assert_eq!(std::fs::read_dir(io_root.path()).unwrap().count(), 0);
    child.signal("INT");
    let r = child.wait(Duration::from_secs(10));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let kinds: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("# load "))
        .filter_map(|l| l.split_once(": ").map(|(k, _)| k))
        .collect();
    assert_eq!(
        kinds,
        ["fork", "io", "messaging", "machine"],
        "{}",
        r.describe()
    );
    let doc = read_json(&json);
    let ops: Vec<u64> = doc["load"]["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["ops"].as_u64().unwrap())
        .collect();
    assert!(ops.len() == 3 && ops.iter().all(|&n| n > 0), "{ops:?}");
    assert!(doc.get("phases").is_none(), "{}", doc["phases"]);
    assert_eq!(std::fs::read_dir(io_root.path()).unwrap().count(), 0);
    let left = processes_in_group(pid);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn fork_helpers_die_with_a_killed_run() {
    // The fork kind forks in helper processes of its own; SIGKILL gives
    // rtlat no chance to stop them: the kernel's parent death signal does.
    let lease = CpuLease::one();
    let mut cmd = rtlat();
    cmd.args(["load", "fork:2", "--cpus", &lease.list()])
        .process_group(0);
    let child = spawn(&mut cmd);
    let pid = child.pid();
    let started = wait_until(Duration::from_secs(10), || {
        processes_in_group(pid).len() >= 3
    });
    assert!(
        started,
        "rtlat and two helpers: {:?}",
        processes_in_group(pid)
    );
    child.signal("KILL");
    let _ = child.wait(Duration::from_secs(5));
    // Dead helpers are reparented to init, which reaps them when it does:
    // what matters is that none still runs (state Z is a dead process).
    let running = || {
        processes_in_group(pid)
            .into_iter()
            .filter(|stat| {
                stat.rsplit_once(')')
                    .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
            })
            .collect::<Vec<_>>()
    };
    let gone = wait_until(Duration::from_secs(1), || running().is_empty());
    assert!(gone, "still running: {:?}", running());
}

#[test]
fn a_run_ending_in_error_leaves_nothing_behind() {
    // The JSON's directory disappears during the run: writing it fails at
    // the end (exit 1), after the load has been stopped.
    let lease = CpuLease::one();
    let cpu = lease.list();
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("gone");
    std::fs::create_dir(&sub).unwrap();
    let io_root = tempfile::tempdir().unwrap();
    let mut cmd = rtlat_cyclictest([
        "-q",
        "-i",
        "1000",
        "-D",
        "2",
        "-a",
        &cpu,
        "--load",
        "fork:1,io:1",
        "--load-cpus",
        &cpu,
        &format!("--json={}", sub.join("run.json").display()),
    ]);
    cmd.env("TMPDIR", io_root.path()).process_group(0);
    let child = spawn(&mut cmd);
    let pid = child.pid();
    // The io worker's file: the load runs, so the run is past its checks
    // of --json, which would refuse a directory already gone.
    let io_root_path = io_root.path().canonicalize().unwrap();
    let io_file_open = || open_files_in(pid, &io_root_path) > 0;
    assert!(
        wait_until(Duration::from_secs(10), io_file_open),
        "no io file open: {}",
        crate::support::describe_process(pid)
    );
    std::fs::remove_dir(&sub).unwrap();
    let r = child.wait(Duration::from_secs(10));
    assert_eq!(r.code(), Some(1), "{}", r.describe());
    assert!(r.stderr.contains("--json"), "{}", r.describe());
    // The other outputs are still written.
    assert!(r.stdout.contains("\n# load fork: "), "{}", r.describe());
    assert_eq!(std::fs::read_dir(io_root.path()).unwrap().count(), 0);
    let left = processes_in_group(pid);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_load_that_fails_during_the_run_ends_it_with_status_1() {
    if !is_root() {
        skip_note!(
            "SKIPPED (needs root to mount a tmpfs): {}",
            function_name!()
        );
        return;
    }
    // io on a 1 MiB tmpfs: its first writes fill it up, the worker fails.
    let mount_point = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(mount_point.path())
        .status_checked()
        .is_ok_and(|s| s.success());
    if !mounted {
        skip_note!("SKIPPED (cannot mount a tmpfs here): {}", function_name!());
        return;
    }
    let json = tempfile::tempdir().unwrap();
    let json_path = json.path().join("run.json");
    let lease = CpuLease::one();
    let cpu = lease.list();
    let mut cmd = rtlat_cyclictest([
        "-q",
        "-i",
        "1000",
        "-D",
        "20",
        "-a",
        &cpu,
        "--load",
        "io:1,fork:1",
        "--load-cpus",
        &cpu,
        &format!("--json={}", json_path.display()),
    ]);
    cmd.env("TMPDIR", mount_point.path()).process_group(0);
    let child = spawn(&mut cmd);
    let pid = child.pid();
    let r = child.wait(Duration::from_secs(15));
    let left = processes_in_group(pid);
    let entries = std::fs::read_dir(mount_point.path()).unwrap().count();
    let _ = Command::new("umount")
        .arg(mount_point.path())
        .status_checked();
    assert_eq!(r.code(), Some(1), "{}", r.describe());
    assert!(
        r.stderr.contains("io load, worker 0: writing"),
        "{}",
        r.describe()
    );
    // Nothing is lost: the summary and the JSON are written.
    assert!(r.stdout.contains("T: 0 "), "{}", r.describe());
    assert_eq!(read_json(&json_path)["return_code"], 1);
    assert_eq!(entries, 0, "the io files have no name");
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_directory_io_cannot_use_stops_the_run_before_it_starts() {
    let mut cmd = rtlat_cyclictest(["--synthetic=1", "-q", "-l", "100", "--load", "cpu:1,io:1"]);
    cmd.env("TMPDIR", "/proc");
    let r = run(&mut cmd);
    assert_eq!(r.code(), Some(1), "{}", r.describe());
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.describe());
    assert!(
        r.stderr
            .starts_with("rtlat cyclictest: io load: cannot create a file in '/proc': "),
        "{}",
        r.describe()
    );
    assert!(!r.stdout.contains("T: 0"), "{}", r.describe());
}

#[test]
fn bad_load_options_are_one_line_and_status_2() {
    for (tool, args, want) in [
        (
            "cyclictest",
            &["--load", "bogus"][..],
            "--load: invalid value 'bogus': unknown load kind 'bogus'",
        ),
        (
            "cyclictest",
            &["--load", "cpu:0"][..],
            "--load: invalid value 'cpu:0': worker count '0' of cpu",
        ),
        (
            "cyclictest",
            &["--load-schedule", "idle=30s,cpu=x"][..],
            "--load-schedule: invalid value 'idle=30s,cpu=x': phase 'cpu=x': length 'x'",
        ),
        (
            "cyclictest",
            &["--load-schedule", "idle=30s,cpu"][..],
            "phase 'cpu': expected LOAD=DURATION",
        ),
        (
            "cyclictest",
            &["--load-cpus", "0"][..],
            "--load-cpus needs --load or --load-schedule",
        ),
        (
            "cyclictest",
            &["--load", "cpu", "--load-schedule", "cpu=1"][..],
            "cannot be combined",
        ),
        (
            "svsematest",
            &["--load", "cpu:x"][..],
            "--load: invalid value 'cpu:x'",
        ),
        (
            "sigwaittest",
            &["-f", "--load-schedule", "idle=1"][..],
            "--load-schedule: a fork-mode run (-f/--fork) keeps no per-phase figures",
        ),
        (
            "latency",
            &["--load-schedule", "cpu=0"][..],
            "--load-schedule: invalid value 'cpu=0': phase 'cpu=0': length '0'",
        ),
    ] {
        let mut cmd = rtlat();
        cmd.arg(tool).args(args);
        let r = run_with_timeout(&mut cmd, Duration::from_secs(5));
        assert_eq!(r.code(), Some(2), "{tool} {args:?}\n{}", r.describe());
        assert!(r.stdout.is_empty(), "{tool} {args:?}\n{}", r.describe());
        assert_eq!(
            r.stderr.lines().count(),
            1,
            "{tool} {args:?}\n{}",
            r.describe()
        );
        assert!(r.stderr.contains(want), "{tool} {args:?}\n{}", r.describe());
    }
}

#[test]
fn ipc_tools_report_their_load() {
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let mut cmd = rtlat();
    cmd.args([
        "svsematest",
        "-q",
        "-i",
        "1000",
        "-l",
        "500",
        &on_leased_cpu(&lease),
        "--load",
        "cpu:1",
        "--load-cpus",
        &lease.list(),
    ])
    .arg(format!("--json={}", path.display()));
    let r = run_with_timeout(&mut cmd, Duration::from_secs(10));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert!(r.stdout.contains("\n# load cpu: "), "{}", r.describe());
    let json = read_json(&path);
    assert_eq!(json["load"]["spec"], "cpu:1");
    assert!(json["load"]["kinds"][0]["ops"].as_u64().unwrap() > 0);
    // A constant load has no phases.
    assert!(json.get("phases").is_none(), "{}", json["phases"]);
}

#[test]
fn ipc_receivers_are_reported_per_phase() {
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let mut cmd = rtlat();
    cmd.args([
        "pmqtest",
        "-q",
        "-i",
        "1000",
        "-t",
        "2",
        &on_leased_cpu(&lease),
        "--load-schedule",
        "idle=1,cpu:1=1",
        "--load-cpus",
        &lease.list(),
    ])
    .arg(format!("--json={}", path.display()));
    // No -l or -D: the schedule ends the run.
    let r = run_with_timeout(&mut cmd, Duration::from_secs(15));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let json = read_json(&path);
    assert_eq!(names(&json), ["idle", "cpu:1"]);
    for pair in 0..2 {
        let total = json["thread"][pair.to_string()]["receiver"]["samples"]
            .as_u64()
            .unwrap();
        let per_phase: Vec<u64> = json["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["thread"][pair.to_string()]["cycles"].as_u64().unwrap())
            .collect();
        assert!(per_phase.iter().all(|&c| c > 0), "{per_phase:?}");
        assert_eq!(per_phase.iter().sum::<u64>(), total, "pair {pair}");
    }
    assert_eq!(
        r.stdout.matches("\n# phase ").count(),
        2,
        "{}",
        r.describe()
    );
}

#[test]
fn latency_reports_each_phase_after_the_warm_up() {
    if !is_root() {
        skip_note!("SKIPPED (needs root): {}", function_name!());
        return;
    }
    let lease = CpuLease::one();
    let cpu = lease.list();
    let mut cmd = rtlat();
    cmd.args([
        "latency",
        "-q",
        "-T",
        "5",
        "-p",
        "1000",
        "-c",
        &cpu,
        "--load-schedule",
        "idle=1,cpu:1=1",
        "--load-cpus",
        &cpu,
    ]);
    let r = run_with_timeout(&mut cmd, Duration::from_secs(15));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    // The schedule (2 s) ends the run before -T.
    assert!(
        r.stderr.contains("running quietly for 2 seconds"),
        "{}",
        r.describe()
    );
    let phases: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("# phase "))
        .collect();
    assert_eq!(phases.len(), 2, "{}", r.describe());
    assert!(phases[0].starts_with("# phase 1 'idle' from 0.000 s"));
    assert!(phases[1].starts_with("# phase 2 'cpu:1' from 1.000 s"));
    let cycles: Vec<u64> = r
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("#   T: 0 Cycles: "))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(cycles.len(), 2, "{}", r.describe());
    assert!(cycles.iter().all(|&c| c > 500), "{cycles:?}");
}
