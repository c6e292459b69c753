//! `rtlat evaluate` (first cut): a short real evaluation writes every
//! phase's files and a report with each phase's exact command; the user's
//! workload ends with its phase and leaves no process; bad input is one
//! line and exit 2, checked before the first phase. Its loads reach every
//! CPU: each run leases them all.

use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::{rtlat, run_with_timeout};

#[test]
fn a_short_evaluation_writes_every_phase_and_the_report() {
    require_root!();
    let _all = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let r = run_with_timeout(
        rtlat()
            .args(["evaluate", "-q", "-D", "3"])
            .args([
                "--phase", "cpu:0", "--phase", "memory:0", "--phase", "cache:0",
            ])
            // No sample wakes within 1 µs: the deadline is exceeded in
            // every phase, and --fail-on makes that exit status 3.
            .args([
                "--phase",
                "fork:0",
                "--deadline",
                "1",
                "--fail-on",
                "deadline",
            ])
            .arg("-o")
            .arg(&out),
        Duration::from_secs(60),
    );
    assert_eq!(r.code(), Some(3), "{}", r.describe());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        r.stdout
            .contains("\nDeadline 1 us: exceeded in every phase (samples): "),
        "{}",
        r.stdout
    );
    assert!(
        lines.len() <= 10 && lines.iter().all(|l| l.chars().count() <= 80),
        "{}",
        r.stdout
    );
    assert!(lines[0].starts_with("Evaluation: "), "{}", r.stdout);
    assert!(r.stdout.contains("Report: "), "{}", r.stdout);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let names: Vec<&str> = report["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["idle", "io", "timers"]);
    // The page: every section, each phase's three plots inline, nothing
    // fetched from anywhere.
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    for id in [
        "answer",
        "machine",
        "phase-idle",
        "phase-io",
        "phase-timers",
        "method",
    ] {
        assert!(page.contains(&format!("<section id=\"{id}\">")), "{id}");
    }
    assert_eq!(page.matches("<svg role=\"img\" aria-label=").count(), 9);
    assert!(
        !page.contains(" src=") && !page.contains(" href="),
        "nothing external"
    );
    assert_eq!(report["cut_short"], false);
    for phase in report["phases"].as_array().unwrap() {
        let name = phase["name"].as_str().unwrap();
        assert_eq!(phase["seconds"], 1.0, "{phase}");
        assert_eq!(phase["exit_status"], 0, "{phase}");
        assert!(out.join(format!("{name}.json")).exists(), "{name}");
        assert!(out.join(format!("{name}.hgrm")).exists(), "{name}");
        let command: Vec<&str> = phase["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert_eq!(&command[..2], ["rtlat", "cyclictest"], "{phase}");
        assert_eq!(command.contains(&"--load"), name != "idle", "{phase}");
        assert!(phase["all_threads"]["max"].is_number(), "{phase}");
    }
}

#[test]
fn the_workload_ends_with_its_phase_and_leaves_nothing() {
    require_root!();
    let _all = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    // A sleep no other process has: its own long duration.
    let marker = format!("sleep {}", 100_000 + std::process::id());
    let command = format!("{marker} & {marker} & wait");
    let skip: Vec<String> = ["idle", "cpu", "memory", "cache", "io", "fork", "timers"]
        .iter()
        .flat_map(|p| ["--phase".to_owned(), format!("{p}:0")])
        .collect();
    let r = run_with_timeout(
        rtlat()
            .args(["evaluate", "-q", "--no-explain", "--phase", "command:1"])
            .args(&skip)
            .args(["--load-command", &command, "-o"])
            .arg(&out),
        Duration::from_secs(60),
    );
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["phases"][0]["name"], "command");
    assert_eq!(report["phases"][0]["workload"], "ended at the phase's end");
    let left = std::process::Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn bad_input_is_one_line_before_the_first_phase() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    for (args, want) in [
        (
            vec!["--phase", "nope:5"],
            "rtlat evaluate: --phase: unknown phase 'nope': the phases are idle, cpu,",
        ),
        (
            vec!["-D", "3"],
            "rtlat evaluate: -D/--duration: 3 s too short to split over 7 phases",
        ),
        (
            vec!["--phase", "idle"],
            "rtlat evaluate: --phase: invalid value 'idle'",
        ),
        (
            vec!["--explain", "--no-explain"],
            "rtlat evaluate: --explain and --no-explain together",
        ),
        (
            vec!["--fail-on", "deadline"],
            "rtlat evaluate: --fail-on: invalid value 'deadline': deadline needs --deadline",
        ),
        (
            vec!["--fail-on", "not-ready,late"],
            "rtlat evaluate: --fail-on: invalid value 'not-ready,late': expected not-ready,",
        ),
    ] {
        let r = run_with_timeout(
            rtlat()
                .arg("evaluate")
                .args(&args)
                .arg("-o")
                .arg(dir.path().join("out")),
            Duration::from_secs(10),
        );
        assert_eq!(r.code(), Some(2), "{args:?}: {}", r.describe());
        assert!(r.stderr.starts_with(want), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    let r = run_with_timeout(
        rtlat().args(["evaluate", "-o"]).arg(file.join("sub")),
        Duration::from_secs(10),
    );
    assert_eq!(r.code(), Some(2), "{}", r.describe());
    assert!(
        r.stderr
            .starts_with("rtlat evaluate: -o/--output: invalid value"),
        "{}",
        r.stderr
    );
}

/// The running processes whose command line starts with `start`.
fn processes_with(start: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .starts_with(start)
            })
        })
        .filter(|&pid| {
            // Zombies wait for init; they run nothing.
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rfind(')')
                    .is_some_and(|c| !s[c + 1..].trim_start().starts_with('Z'))
            })
        })
        .collect()
}

#[test]
fn sigkill_of_the_evaluation_leaves_no_phase_and_no_workload() {
    require_root!();
    let _all = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let marker = format!("sleep {}", 200_000 + std::process::id());
    let command = format!("{marker} & {marker} & wait");
    let skip: Vec<String> = ["idle", "cpu", "memory", "cache", "io", "fork", "timers"]
        .iter()
        .flat_map(|p| ["--phase".to_owned(), format!("{p}:0")])
        .collect();
    let running = crate::support::spawn(
        rtlat()
            .args(["evaluate", "-q", "--no-explain", "--phase", "command:60"])
            .args(&skip)
            .args(["--load-command", &command, "-o"])
            .arg(&out),
    );
    // The phase's run of this evaluation: its own output file names it.
    let json = out.join("command.json").display().to_string();
    let ours = || -> Vec<i32> {
        processes_with("rtlat-phase cyclictest ")
            .into_iter()
            .filter(|&p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&json))
            })
            .collect()
    };
    assert!(
        crate::support::wait_until(Duration::from_secs(20), || {
            processes_with(&marker).len() == 2 && ours().len() == 1
        }),
        "the phase and its workload never ran: {:?} {:?}",
        processes_with(&marker),
        ours()
    );
    running.signal("KILL");
    let _ = running.wait(Duration::from_secs(10));
    assert!(
        crate::support::wait_until(Duration::from_secs(10), || {
            processes_with(&marker).is_empty() && ours().is_empty()
        }),
        "left: workload {:?}, phase {:?}",
        processes_with(&marker),
        ours()
    );
}

#[test]
fn ctrl_c_ends_the_phase_and_the_report_says_cut_short() {
    use std::os::unix::process::CommandExt;
    require_root!();
    let _all = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    // Its own process group, as a terminal's foreground job: Ctrl-C
    // reaches the evaluation and its phase's run, not this test.
    let mut cmd = rtlat();
    cmd.args(["evaluate", "--no-explain", "-D", "140", "-o"])
        .arg(&out)
        .process_group(0);
    let running = crate::support::spawn(&mut cmd);
    running.wait_for_stderr(Duration::from_secs(20), "the first phase", |err| {
        err.contains("# phase idle: 20 s")
    });
    let json = out.join("idle.json");
    // The phase's run has its signal handlers: it starts its janitor right
    // after installing them, so a janitor whose parent is the phase (whose
    // parent is this evaluation) says so.
    let parent_of = |pid: i32| -> Option<i32> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))?
            .trim()
            .parse()
            .ok()
    };
    let evaluation = running.pid() as i32;
    assert!(
        crate::support::wait_until(Duration::from_secs(20), || {
            processes_with("rtlat-janitor").into_iter().any(|janitor| {
                parent_of(janitor).is_some_and(|phase| parent_of(phase) == Some(evaluation))
            })
        }),
        "the phase never started its janitor"
    );
    let pgid = running.pid() as i32;
    rtlat_sys::signals::signal_process_group(pgid, 2 /* SIGINT */).unwrap();
    let r = running.wait(Duration::from_secs(30));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert!(
        r.stdout.starts_with("Evaluation (cut short): "),
        "{}",
        r.stdout
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["cut_short"], true);
    let phases = report["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1, "no phase after the cut: {report}");
    assert_eq!(phases[0]["name"], "idle");
    assert!(json.exists(), "the cut phase's result is written");
    assert!(phases[0]["all_threads"]["max"].is_number(), "{report}");
}
