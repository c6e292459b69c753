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
            .contains("\nDeadline 1 us: missed in 3 of 3 phases ("),
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
    // The command's phase alone.
    let skip = ["--load", "none", "--phase", "idle:0"];
    let r = run_with_timeout(
        rtlat()
            .args(["evaluate", "-q", "--no-explain", "--phase", "command:1"])
            .args(skip)
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
            vec!["--load", "cpu,gpu"],
            "rtlat evaluate: --load: invalid value 'cpu,gpu': unknown load 'gpu': expected \
             none, or some of cpu, memory,",
        ),
        (
            vec!["--load-on", "nowhere"],
            "rtlat evaluate: --load-on: invalid value 'nowhere': expected all, measured or others",
        ),
        (
            vec!["-t", "0"],
            "rtlat evaluate: -t/--threads: invalid value '0'",
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
    // The command's phase alone.
    let skip = ["--load", "none", "--phase", "idle:0"];
    let running = crate::support::spawn(
        rtlat()
            .args(["evaluate", "-q", "--no-explain", "--phase", "command:60"])
            .args(skip)
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

/// An evaluation of one phase, `phase`, of 60 s (with `--load-command`
/// `workload` when given), started in a process group of its own as a
/// terminal's foreground job: a Ctrl-C reaches the evaluation and its
/// phase's run, not this test. Returns once the phase's run has its
/// signal handlers: it starts its janitor right after installing them,
/// so a janitor whose parent is the phase (whose parent is this
/// evaluation) says so.
fn running_phase(
    out: &std::path::Path,
    phase: &str,
    workload: Option<&str>,
) -> crate::support::Running {
    use std::os::unix::process::CommandExt;
    let mut cmd = rtlat();
    cmd.args([
        "evaluate",
        "--no-explain",
        "--load",
        "cpu",
        "--phase",
        "idle:0",
    ]);
    if phase != "idle" {
        cmd.args(["--phase", "cpu:0"]);
    }
    if let Some(command) = workload {
        cmd.args(["--load-command", command]);
    }
    cmd.args(["--phase", &format!("{phase}:60"), "-o"])
        .arg(out)
        .process_group(0);
    let running = crate::support::spawn(&mut cmd);
    running.wait_for_stderr(Duration::from_secs(20), "the phase", |err| {
        err.contains(&format!("# phase {phase}: 60 s"))
    });
    let evaluation = running.pid() as i32;
    assert!(
        crate::support::wait_until(Duration::from_secs(20), || {
            processes_with("rtlat-janitor").into_iter().any(|janitor| {
                parent_of(janitor).is_some_and(|phase| parent_of(phase) == Some(evaluation))
            })
        }),
        "the phase never started its janitor"
    );
    running
}

/// The parent of process `pid`.
fn parent_of(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))?
        .trim()
        .parse()
        .ok()
}

/// Ctrl-C: SIGINT to the evaluation's process group.
fn ctrl_c(running: &crate::support::Running) {
    rtlat_sys::signals::signal_process_group(running.pid() as i32, 2 /* SIGINT */).unwrap();
}

/// A Ctrl-C in `phase` ends it: its result is written, no phase follows,
/// the report is complete and says it was cut short.
fn ctrl_c_ends(phase: &str, workload: Option<&str>) {
    require_root!();
    let _all = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let running = running_phase(&out, phase, workload);
    ctrl_c(&running);
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
    assert_eq!(report["ended_at_once"], false);
    let phases = report["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1, "no phase after the cut: {report}");
    assert_eq!(phases[0]["name"], phase);
    assert!(
        out.join(format!("{phase}.json")).exists(),
        "the cut phase's result is written"
    );
    assert!(phases[0]["all_threads"]["max"].is_number(), "{report}");
    assert!(
        phases[0]["threads"][0]["samples"].as_u64() > Some(0),
        "{report}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains(&format!("<section id=\"phase-{phase}\">")));
    assert!(page.contains("was cut short (Ctrl-C)"));
}

#[test]
fn ctrl_c_ends_the_idle_phase_and_the_report_says_cut_short() {
    ctrl_c_ends("idle", None);
}

#[test]
fn ctrl_c_ends_a_loaded_phase_and_the_report_says_cut_short() {
    ctrl_c_ends("cpu", None);
}

#[test]
fn ctrl_c_ends_the_command_phase_and_the_report_says_cut_short() {
    ctrl_c_ends("command", Some("sleep 300"));
}

#[test]
fn a_second_ctrl_c_ends_at_once_a_workload_that_ignores_sigterm() {
    require_root!();
    let _all = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let marker = format!("sleep {}", 300_000 + std::process::id());
    // SIGTERM ignored by the shell and, inherited, by its sleep: only
    // SIGKILL ends this workload, after a grace of 2 s.
    let command = format!("trap '' TERM; {marker}");
    let running = running_phase(&out, "command", Some(&command));
    let json = out.join("command.json").display().to_string();
    let phase_runs = || -> Vec<i32> {
        processes_with("rtlat-phase cyclictest ")
            .into_iter()
            .filter(|&p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&json))
            })
            .collect()
    };
    ctrl_c(&running);
    // The phase's run ends and writes its result; the evaluation then
    // ends the workload, which outlives SIGTERM: the second Ctrl-C comes
    // in its grace.
    assert!(
        crate::support::wait_until(Duration::from_secs(20), || phase_runs().is_empty()),
        "the phase's run never ended"
    );
    ctrl_c(&running);
    let r = running.wait(Duration::from_secs(30));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert!(
        r.stdout.starts_with("Evaluation (ended at once): "),
        "{}",
        r.stdout
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["ended_at_once"], true, "{report}");
    assert_eq!(
        report["phases"][0]["name"], "command",
        "its result was written"
    );
    assert_eq!(
        report["phases"][0]["workload"],
        "killed at the phase's end (it outlived SIGTERM)"
    );
    assert!(
        crate::support::wait_until(Duration::from_secs(5), || processes_with(&marker)
            .is_empty()),
        "the workload was left: {:?}",
        processes_with(&marker)
    );
}

/// Reads `DIR/report.json`.
fn report_of(out: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

/// A phase's command line, as the report quotes it.
fn command_of(phase: &serde_json::Value) -> Vec<&str> {
    phase["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect()
}

#[test]
fn without_root_the_phases_measure_under_sched_other_and_say_so() {
    require_root!();
    let _all = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
    let as_nobody = |args: &[&str]| {
        let mut cmd = std::process::Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(crate::support::rtlat_path())
            .args(["evaluate", "--load", "none", "-D", "2", "-a", "1", "-o"])
            .arg(&out)
            .args(args);
        run_with_timeout(&mut cmd, Duration::from_secs(60))
    };
    let r = as_nobody(&[]);
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert!(
        r.stdout
            .lines()
            .next()
            .unwrap()
            .contains("(SCHED_OTHER, not locked"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr
            .contains("# note: measured under SCHED_OTHER, not SCHED_FIFO"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("# note: worst samples not explained: recording kernel events needs root"),
        "{}",
        r.stderr
    );
    let report = report_of(&out);
    assert_eq!(report["means"]["realtime"], false);
    assert_eq!(report["means"]["locked_memory"], false);
    assert_eq!(report["means"]["explain"], serde_json::Value::Null);
    let command = command_of(&report["phases"][0]);
    for absent in ["-p", "-m"] {
        assert!(!command.contains(&absent), "{command:?}");
    }
    assert!(
        !command.iter().any(|a| a.starts_with("--explain")),
        "{command:?}"
    );
    assert!(report["phases"][0]["threads"][0]["samples"].as_u64() > Some(0));
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("measured under SCHED_OTHER, not SCHED_FIFO"));
    // Asked for by name, what cannot be had is refused, in one line.
    for (args, want) in [
        (
            vec!["-p", "80"],
            "not allowed to run the measuring threads under SCHED_FIFO",
        ),
        (
            vec!["--explain"],
            "--explain: recording kernel events needs root",
        ),
    ] {
        let r = as_nobody(&args);
        assert_eq!(r.code(), Some(1), "{args:?}: {}", r.describe());
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn on_one_cpu_the_loads_share_it_and_others_is_refused() {
    require_root!();
    let _all = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    // A machine of one CPU, as far as rtlat can tell: its affinity.
    let on_one = |args: &[&str]| {
        let mut cmd = std::process::Command::new("taskset");
        cmd.args(["-c", "1"])
            .arg(crate::support::rtlat_path())
            .args([
                "evaluate",
                "-q",
                "--no-explain",
                "--load",
                "cpu",
                "-D",
                "2",
                "-o",
            ])
            .arg(&out)
            .args(args);
        run_with_timeout(&mut cmd, Duration::from_secs(60))
    };
    let r = on_one(&[]);
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let report = report_of(&out);
    assert_eq!(report["settings"]["cpus"], serde_json::json!([1]));
    let cpu = &report["phases"][1];
    assert_eq!(cpu["name"], "cpu");
    assert_eq!(cpu["load"]["kinds"][0]["workers"], 1, "{cpu}");
    assert!(cpu["threads"][0]["samples"].as_u64() > Some(0));
    let r = on_one(&["--load-on", "others"]);
    assert_eq!(r.code(), Some(2), "{}", r.describe());
    assert_eq!(
        r.stderr.trim_end(),
        "rtlat evaluate: --load-on: invalid value 'others': every CPU is measured (-a): no \
         other CPU to load"
    );
}

#[test]
fn sixty_four_threads_stay_readable_and_loads_run_where_asked() {
    require_root!();
    let _all = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let r = run_with_timeout(
        rtlat()
            .args(["evaluate", "-q", "--no-explain", "-t", "64", "-a", "1"])
            .args(["--load", "timers", "--load-on", "others", "-D", "2", "-o"])
            .arg(&out),
        Duration::from_secs(60),
    );
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines.len() <= 10 && lines.iter().all(|l| l.chars().count() <= 80),
        "{}",
        r.stdout
    );
    let report = report_of(&out);
    let timers = &report["phases"][1];
    assert_eq!(timers["name"], "timers");
    let command = command_of(timers);
    assert!(command.windows(2).any(|w| w == ["-t", "64"]), "{command:?}");
    assert!(
        command.windows(2).any(|w| w == ["--load-cpus", "0"]),
        "{command:?}"
    );
    assert_eq!(timers["threads"].as_array().unwrap().len(), 64);
    // The plots draw the 8 threads of the highest maxima, named.
    let plotted: Vec<u64> = timers["plotted_threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap())
        .collect();
    assert_eq!(plotted.len(), 8);
    let max_of = |t: u64| timers["threads"][t as usize]["max_us"].as_f64().unwrap();
    let lowest_plotted = plotted.iter().map(|&t| max_of(t)).fold(f64::MAX, f64::min);
    assert!(
        (0..64)
            .filter(|t| !plotted.contains(t))
            .all(|t| max_of(t) <= lowest_plotted),
        "{timers}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("the 8 threads with the highest maxima of 64"));
    assert!(page.contains("<h3>Per CPU, the highest maximum first</h3>"));
    let svg = std::fs::read_to_string(out.join("timers.latency.svg")).unwrap();
    assert_eq!(svg.matches("CPU 1 (max").count(), 8, "{svg}");
}

#[test]
fn a_workload_that_fails_is_recorded_and_the_phase_still_measures() {
    require_root!();
    let _all = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let r = run_with_timeout(
        rtlat()
            .args([
                "evaluate",
                "-q",
                "--no-explain",
                "--load",
                "none",
                "--phase",
                "idle:0",
            ])
            .args([
                "--phase",
                "command:1",
                "--load-command",
                "echo starting; exit 3",
                "-o",
            ])
            .arg(&out),
        Duration::from_secs(60),
    );
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let report = report_of(&out);
    let phase = &report["phases"][0];
    assert_eq!(phase["name"], "command");
    assert_eq!(phase["workload"], "exited by itself: exit status: 3");
    assert!(phase["threads"][0]["samples"].as_u64() > Some(0), "{phase}");
    assert_eq!(
        std::fs::read_to_string(out.join("command.log")).unwrap(),
        "starting\n"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("exited by itself: exit status: 3"),
        "the page says how the workload ended"
    );
    assert!(
        report["means"]["limits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().starts_with(
                "the workload (--load-command) exited by itself before its phase's end"
            )),
        "{report}"
    );
}

#[test]
fn stdout_or_stderr_on_a_full_disk_loses_nothing_and_says_so() {
    require_root!();
    let _all = CpuLease::all();
    for stream in ["stdout", "stderr"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("eval");
        let mut cmd = rtlat();
        // Synthetic phases: the outputs are what is tried here.
        cmd.args([
            "evaluate",
            "--synthetic",
            "1",
            "--no-explain",
            "--load",
            "none",
        ])
        .args(["-D", "1", "-a", "1", "-o"])
        .arg(&out);
        let piped = std::process::Stdio::piped;
        let r = if stream == "stdout" {
            crate::support::spawn_with(&mut cmd, crate::support::dev_full(), piped())
        } else {
            crate::support::spawn_with(&mut cmd, piped(), crate::support::dev_full())
        }
        .wait(Duration::from_secs(60));
        assert_eq!(r.code(), Some(1), "{stream}: {}", r.describe());
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        if stream == "stdout" {
            assert!(
                r.stderr
                    .ends_with("rtlat evaluate: writing to standard output: No space left on device (os error 28)\n"),
                "{}",
                r.stderr
            );
        } else {
            assert!(r.stdout.starts_with("Evaluation: "), "{}", r.stdout);
        }
        for file in ["report.json", "report.html", "idle.json", "idle.hgrm"] {
            assert!(out.join(file).exists(), "{stream}: {file} not written");
        }
    }
}
