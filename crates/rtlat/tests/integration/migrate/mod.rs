//! `rtlat rt-migrate-test` for real (root, SCHED_FIFO tasks on every CPU,
//! so each test holds the whole machine's lease, `CpuLease::all()`, and
//! runs a few short intervals): against `/usr/bin/rt-migrate-test`
//! (rt-tests 2.4) the same report by line shape, the same verdict line,
//! exit status and JSON keys; the JSON read the way Linaro's
//! `parse_rt_tests_results.py` reads it; signals; bad input.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::{
    Run, json_key_paths, read_json, rtlat_tool, run, shape, spawn, wait_for_realtime_threads,
};

const C_TOOL: &str = "/usr/bin/rt-migrate-test";

fn ours(args: &[&str]) -> Command {
    let mut cmd = rtlat_tool("rt-migrate-test", args);
    cmd.stdin(Stdio::null());
    cmd
}

/// The report's lines by shape (numbers replaced), without the pids.
fn shapes(stdout: &str) -> Vec<String> {
    stdout.lines().map(shape).collect()
}

/// What Linaro's `parse_rt_tests_results.py` does with a document: every
/// thread `0..num_threads` (as strings) with its `min`, `avg` and `max`,
/// then pass or fail by `return_code`. Returns its output lines.
pub fn linaro_lines(name: &str, doc: &serde_json::Value) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(n) = doc.get("num_threads") {
        let n = n.as_i64().expect("num_threads is an integer");
        for t in 0..n {
            let thread = &doc["thread"][t.to_string()];
            let data = thread.get("receiver").unwrap_or(thread);
            for key in ["min", "avg", "max"] {
                let v = data[key]
                    .as_i64()
                    .unwrap_or_else(|| panic!("t{t}.{key}: {data}"));
                lines.push(format!("t{t}-{key}-latency pass {v} us"));
            }
        }
    }
    let code = doc["return_code"].as_i64().expect("return_code");
    lines.push(format!(
        "{name} {}",
        if code == 0 { "pass" } else { "fail" }
    ));
    lines
}

#[test]
fn same_report_verdict_and_keys_as_c() {
    require_root!();
    skip_if_emulated!(crate::support::SEVERAL_PRIORITIES_EMULATED);
    if !Path::new(C_TOOL).is_file() {
        skip_note!("SKIPPED (needs {C_TOOL}): {}", function_name!());
        return;
    }
    let _lease = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let (cj, oj) = (dir.path().join("c.json"), dir.path().join("o.json"));
    // 2.4 ignores -s and -r (its intervals are fixed): the same command
    // runs 100 ms sleeps there, 50 ms here.
    let args = ["-c", "-l", "2", "-s", "50"];
    let c = run(Command::new(C_TOOL)
        .args(args)
        .arg(format!("--json={}", cj.display()))
        .stdin(Stdio::null()));
    let o = run(ours(&args).arg(format!("--json={}", oj.display())));
    c.expect_code(0);
    o.expect_code(0);
    assert_eq!(
        shapes(&o.stdout),
        shapes(&c.stdout),
        "{}\n{}",
        o.stdout,
        c.stdout
    );
    assert!(o.stdout.ends_with("\n Passed!\n"), "{}", o.stdout);
    // The tasks: 0 waited for a CPU (one task more than CPUs), the
    // highest did not.
    let (cdoc, odoc) = (read_json(&cj), read_json(&oj));
    let (ckeys, okeys) = (json_key_paths(&cdoc), json_key_paths(&odoc));
    let missing: BTreeSet<_> = ckeys.difference(&okeys).collect();
    assert!(missing.is_empty(), "keys C has and we do not: {missing:?}");
    assert!(odoc["environment"].is_object());
    assert_eq!(odoc["num_threads"], cdoc["num_threads"]);
    for doc in [&cdoc, &odoc] {
        for t in 0..doc["num_threads"].as_u64().unwrap() {
            let th = &doc["thread"][t.to_string()];
            let (min, avg, max) = (th["min"].as_u64(), th["avg"].as_u64(), th["max"].as_u64());
            assert!(min <= avg && avg <= max, "{th}");
            assert_eq!(th["prio"].as_u64(), Some(2 + t));
        }
    }
    let (cl, ol) = (
        linaro_lines("rt-migrate-test", &cdoc),
        linaro_lines("rt-migrate-test", &odoc),
    );
    assert_eq!(cl.len(), ol.len());
    assert_eq!(ol.last().unwrap(), "rt-migrate-test pass");
    assert_eq!(cl.last(), ol.last());
}

#[test]
fn tasks_operand_equal_and_quiet() {
    require_root!();
    skip_if_emulated!(crate::support::SEVERAL_PRIORITIES_EMULATED);
    let _lease = CpuLease::all();
    let r = run(&mut ours(&[
        "-q", "-e", "-l", "2", "-r", "2", "-s", "10", "4",
    ]));
    r.expect_code(0);
    assert!(
        r.stdout
            .starts_with("Iter:      0       1       2       3  \n"),
        "{}",
        r.stdout
    );
    for (t, prio) in [(0, 2), (1, 3), (2, 3), (3, 5)] {
        assert!(
            r.stdout.contains(&format!(" Task {t} (prio {prio}) (pid ")),
            "{}",
            r.stdout
        );
    }
    assert!(!r.stdout.contains("Passed!"), "no verdict without -c");
    // -q: no progress bar, only the line C ends it with.
    assert_eq!(r.stderr, "\n");
}

fn started(args: &[&str]) -> crate::support::Running {
    let running = spawn(&mut ours(args));
    // The tasks and the main thread at SCHED_FIFO: the run has started.
    wait_for_realtime_threads(running.pid(), 4);
    running
}

#[test]
fn sigint_and_sigterm_end_with_the_report_and_status_1() {
    require_root!();
    skip_if_emulated!(crate::support::SEVERAL_PRIORITIES_EMULATED);
    let _lease = CpuLease::all();
    for signal in ["INT", "TERM"] {
        let running = started(&["-q", "-l", "10000", "-r", "2", "-s", "10"]);
        running.signal(signal);
        let r: Run = running.wait(Duration::from_secs(10));
        r.expect_code(1);
        assert!(r.stdout.contains("Parent pid: "), "{signal}: {}", r.stdout);
        assert!(r.stdout.contains("   Avg: "), "{signal}: {}", r.stdout);
    }
}

#[test]
fn sigkill_leaves_no_task() {
    require_root!();
    skip_if_emulated!(crate::support::SEVERAL_PRIORITIES_EMULATED);
    let _lease = CpuLease::all();
    let running = started(&["-q", "-l", "10000", "-r", "2", "-s", "10"]);
    let pid = running.pid();
    running.signal("KILL");
    let r = running.wait(Duration::from_secs(10));
    assert_eq!(r.code(), None, "killed");
    // The tasks are threads of the killed process: nothing of it runs.
    assert!(
        !Path::new(&format!("/proc/{pid}/task")).exists() || {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            state.contains(") Z") || state.is_empty()
        }
    );
}

#[test]
fn a_d_limit_ends_the_run_like_c_with_status_1() {
    require_root!();
    skip_if_emulated!(crate::support::SEVERAL_PRIORITIES_EMULATED);
    let _lease = CpuLease::all();
    let r = run(&mut ours(&[
        "-q", "-D", "1", "-l", "10000", "-r", "2", "-s", "10",
    ]));
    r.expect_code(1);
    assert!(r.stdout.contains("Parent pid: "));
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    for args in [
        &["-l", "0"][..],
        &["-l", "x"],
        &["-m", "-1"],
        &["-p", "0"],
        &["-p", "99"],
        &["-r", "0"],
        &["-s", "-3"],
        &["-D", "soon"],
        &["0"],
        &["2", "3"],
        &["--json=/nonexistent/dir/x.json"],
        &["-Z"],
        &["--bogus"],
    ] {
        let r = run(&mut ours(args));
        r.expect_code(2);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: nothing run: {}", r.stdout);
    }
}

#[test]
fn without_the_privilege_one_line_and_status_1() {
    require_root_and_setpriv!();
    let r = crate::support::nobody::run_as_nobody(&["rt-migrate-test", "-q", "-l", "1"]);
    r.expect_code(1);
    assert!(r.stdout.is_empty(), "nothing run: {}", r.describe());
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", r.describe());
    assert!(
        lines[0].contains("CAP_SYS_NICE") && lines[0].contains("RLIMIT_RTPRIO"),
        "{}",
        lines[0]
    );
}
