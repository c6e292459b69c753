//! `rtlat ssdd`: tracers single-stepping their tracees, against
//! `/usr/bin/ssdd` (rt-tests 2.4): the same lines by shape, verdict, exit
//! status and JSON keys; the JSON read the way Linaro's
//! `parse_rt_tests_results.py` reads it; signals (a stopped run fails and
//! leaves no tracer or tracee, a killed one neither); bad input. ssdd
//! runs nothing under a real-time policy: no CPU lease.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::migrate::linaro_lines;
use crate::support::{json_key_paths, read_json, rtlat_tool, run, shape, spawn};

const C_TOOL: &str = "/usr/bin/ssdd";

/// Why the runs say SKIPPED under qemu-user: it does not emulate ptrace
/// of one guest process by another.
const PTRACE_EMULATED: &str = "qemu-user does not emulate ptrace between guest processes";

fn ours(args: &[&str]) -> Command {
    let mut cmd = rtlat_tool("ssdd", args);
    cmd.stdin(Stdio::null());
    cmd
}

/// The lines by shape, sorted: the tracers' lines interleave as they run.
fn sorted_shapes(stdout: &str) -> Vec<String> {
    let mut lines: Vec<String> = stdout.lines().map(shape).collect();
    lines.sort();
    lines
}

#[test]
fn same_lines_verdict_and_keys_as_c() {
    skip_if_emulated!(PTRACE_EMULATED);
    if !Path::new(C_TOOL).is_file() {
        skip_note!("SKIPPED (needs {C_TOOL}): {}", function_name!());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (cj, oj) = (dir.path().join("c.json"), dir.path().join("o.json"));
    let args = ["-f", "2", "-i", "100"];
    let c = run(Command::new(C_TOOL)
        .args(args)
        .arg(format!("--json={}", cj.display()))
        .stdin(Stdio::null()));
    let o = run(ours(&args).arg(format!("--json={}", oj.display())));
    c.expect_code(0);
    o.expect_code(0);
    assert_eq!(
        sorted_shapes(&o.stdout),
        sorted_shapes(&c.stdout),
        "{}\n{}",
        o.stdout,
        c.stdout
    );
    assert!(o.stdout.starts_with("#main : "));
    assert!(o.stdout.ends_with("\nAll tests PASSED.\n"));
    let (cdoc, odoc) = (read_json(&cj), read_json(&oj));
    let missing: BTreeSet<_> = json_key_paths(&cdoc)
        .difference(&json_key_paths(&odoc))
        .cloned()
        .collect();
    assert!(missing.is_empty(), "keys C has and we do not: {missing:?}");
    assert!(odoc["environment"].is_object());
    assert_eq!(linaro_lines("ssdd", &odoc), ["ssdd pass"]);
    assert_eq!(linaro_lines("ssdd", &cdoc), ["ssdd pass"]);
}

#[test]
fn quiet_prints_the_verdict_only() {
    skip_if_emulated!(PTRACE_EMULATED);
    let r = run(&mut ours(&["-q", "-f", "3", "-i", "50"]));
    r.expect_code(0);
    assert_eq!(r.stdout, "All tests PASSED.\n");
}

/// The tracers (children of `pid`) and their tracees, once `count`
/// tracers have said STARTING.
fn family(pid: u32) -> Vec<u32> {
    let children = |p: u32| -> Vec<u32> {
        std::fs::read_to_string(format!("/proc/{p}/task/{p}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let tracers = children(pid);
    let mut all = tracers.clone();
    for t in tracers {
        all.extend(children(t));
    }
    all
}

/// Whether `pid` is gone or a zombie (dead, not yet reaped by init).
fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

fn stopped_run(signal: &str) -> (crate::support::Run, Vec<u32>) {
    let running = spawn(&mut ours(&["-f", "2", "-i", "2000000000"]));
    running.wait_for_stdout(Duration::from_secs(10), "two tracers starting", |out| {
        out.matches(": STARTING").count() == 2
    });
    let family = family(running.pid());
    assert_eq!(family.len(), 4, "two tracers and their tracees: {family:?}");
    running.signal(signal);
    (running.wait(Duration::from_secs(10)), family)
}

#[test]
fn a_stop_signal_fails_the_run_and_ends_every_tracer_and_tracee() {
    skip_if_emulated!(PTRACE_EMULATED);
    for signal in ["INT", "TERM"] {
        let (r, family) = stopped_run(signal);
        r.expect_code(1);
        assert!(
            r.stdout.ends_with("One or more tests FAILED.\n"),
            "{}",
            r.stdout
        );
        assert!(
            r.stderr.contains("stopped by a signal: 2 of 2 tracers"),
            "{}",
            r.stderr
        );
        for pid in family {
            assert!(dead(pid), "{signal}: {pid} still runs");
        }
    }
}

#[test]
fn sigkill_of_rtlat_ends_every_tracer_and_tracee() {
    skip_if_emulated!(PTRACE_EMULATED);
    let (r, family) = stopped_run("KILL");
    assert_eq!(r.code(), None);
    let gone = crate::support::wait_until(Duration::from_secs(5), || {
        family.iter().all(|&pid| dead(pid))
    });
    assert!(
        gone,
        "left running: {:?}",
        family.iter().filter(|&&p| !dead(p)).collect::<Vec<_>>()
    );
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    for args in [
        &["-f", "0"][..],
        &["-f", "many"],
        &["-i", "0"],
        &["-i", "-1"],
        &["--json=/nonexistent/dir/x.json"],
        &["-x"],
        &["stray"],
    ] {
        let r = run(&mut ours(args));
        r.expect_code(2);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
    }
}
