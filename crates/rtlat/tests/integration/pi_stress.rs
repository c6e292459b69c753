//! `rtlat pi_stress` and `rtlat pip_stress`: differential runs against
//! `/usr/bin/pi_stress` and `/usr/bin/pip_stress` (rt-tests 2.4, same
//! command, compared by shape and invariants), the JSON read the way
//! Linaro's `parse_rt_tests_results.py` reads it, the watchdog's failure,
//! bad input per option, and signals. Every real-time run holds a CPU
//! lease and is kept on it (`taskset`, `-u`); runs last 2 s at most,
//! but for the watchdog's (about 4.5 s: five checks 0.75 s apart).
//! The C tools put everything on CPU 0 (`-u`, pip_stress), so the
//! differential runs lease CPU 0.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::{
    Run, children_of, json_key_paths, proc_stat, read_json, rtlat_path, rtlat_tool, run,
    run_with_timeout, spawn, wait_for_realtime_threads, wait_until,
};

const C_PI_STRESS: &str = "/usr/bin/pi_stress";
const C_PIP_STRESS: &str = "/usr/bin/pip_stress";

macro_rules! require_c {
    ($path:expr) => {
        if !Path::new($path).is_file() {
            skip_note!("SKIPPED (needs {}): {}", $path, function_name!());
            return;
        }
    };
}

/// `tool` (ours) with `args`, kept on the lease's CPUs.
fn ours(lease: &CpuLease, tool: &str, args: &[&str]) -> Command {
    let mut cmd = lease.pinned(&rtlat_path().to_string_lossy());
    cmd.arg(tool).args(args);
    cmd
}

/// The C program with `args`, kept on the lease's CPUs.
fn theirs(lease: &CpuLease, program: &str, args: &[&str]) -> Command {
    let mut cmd = lease.pinned(program);
    cmd.args(args);
    cmd
}

/// The lines of a run's stdout, the cursor moves kept.
fn lines(r: &Run) -> Vec<&str> {
    r.stdout.lines().collect()
}

/// The number after the last `: ` of a line.
fn count_of(line: &str) -> u64 {
    line.rsplit(": ")
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {line:?}"))
}

/// What Linaro test-definitions' parse_rt_tests_results.py makes of a
/// document (from its published behaviour): a document with
/// `num_threads` is read as threads, else one with `num_irqs` as IRQs,
/// else one with `inversion` gives `inversion pass N count`; then
/// `return_code` 0 is `NAME pass`, anything else `NAME fail`.
fn linaro_lines(doc: &serde_json::Value, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    assert!(doc.get("num_threads").is_none(), "read as threads");
    assert!(doc.get("num_irqs").is_none(), "read as IRQs");
    if let Some(n) = doc.get("inversion") {
        out.push(format!(
            "inversion pass {} count",
            n.as_u64().expect("an integer")
        ));
    }
    let code = doc["return_code"].as_i64().expect("an integer return_code");
    out.push(format!(
        "{name} {}",
        if code == 0 { "pass" } else { "fail" }
    ));
    out
}

/// The same command, C's and ours, one group on CPU 0 for 1 s: the same
/// banner line for line, counts that only grow, the same closing lines
/// by shape, exit 0 both, and JSON keys a superset of C's.
#[test]
fn differential_display_summary_and_json() {
    require_root!();
    require_c!(C_PI_STRESS);
    let lease = CpuLease::of(0);
    let dir = tempfile::tempdir().unwrap();
    let (cj, oj) = (dir.path().join("c.json"), dir.path().join("o.json"));
    let args = |json: &Path| {
        vec![
            "-u".to_owned(),
            "-g".to_owned(),
            "1".to_owned(),
            "-D".to_owned(),
            "1".to_owned(),
            format!("--json={}", json.display()),
        ]
    };
    let c_args = args(&cj);
    let o_args = args(&oj);
    let c = run(&mut theirs(
        &lease,
        C_PI_STRESS,
        &c_args.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    let o = run(&mut ours(
        &lease,
        "pi_stress",
        &o_args.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    c.expect_code(0);
    o.expect_code(0);
    let (cl, ol) = (lines(&c), lines(&o));
    assert_eq!(cl[..10], ol[..10], "the banner\n{}\n{}", c.stdout, o.stdout);
    for l in [&cl, &ol] {
        let counts: Vec<u64> = l[10..]
            .iter()
            .take_while(|x| x.starts_with("\x1b[1ACurrent Inversions: "))
            .map(|x| count_of(x))
            .collect();
        assert!(
            !counts.is_empty() && counts.windows(2).all(|w| w[0] <= w[1]),
            "{l:?}"
        );
        let n = l.len();
        assert_eq!(l[n - 3], "\x1b[1BStopping test");
        let total = count_of(l[n - 2]);
        assert!(l[n - 2].starts_with("Total inversion performed: ") && total > 0);
        assert!(total >= *counts.last().unwrap());
        assert!(
            l[n - 1].starts_with("Test Duration: 0 days, 0 hours, 0 minutes, "),
            "{}",
            l[n - 1]
        );
    }
    let (cdoc, odoc) = (read_json(&cj), read_json(&oj));
    let (ck, ok) = (json_key_paths(&cdoc), json_key_paths(&odoc));
    assert!(
        ck.is_subset(&ok),
        "C's keys missing: {:?}",
        ck.difference(&ok)
    );
    assert_eq!(cdoc["return_code"], 0);
    assert_eq!(odoc["return_code"], 0);
    assert_eq!(
        odoc["inversion"].as_u64().unwrap(),
        count_of(ol[ol.len() - 2])
    );
    assert_eq!(odoc["rt_test_version:"], cdoc["rt_test_version:"]);
}

/// `-i N`: the run ends after N + 1 inversions per group, as C's (the
/// round under way when the limit is seen is finished); `-q`: the
/// summary alone. The JSON as Linaro's parser reads it.
#[test]
fn inversion_limit_quiet_and_the_linaro_reading() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("o.json");
    let o = run(&mut ours(
        &lease,
        "pi_stress",
        &["-q", "-i", "1000", &format!("--json={}", json.display())],
    ));
    o.expect_code(0);
    let l = lines(&o);
    assert_eq!(l.len(), 2, "{l:?}");
    assert_eq!(l[0], "Total inversion performed: 1001");
    let doc = read_json(&json);
    assert_eq!(
        linaro_lines(&doc, "pi-stress"),
        ["inversion pass 1001 count", "pi-stress pass"]
    );
    assert_eq!(doc["groups"], 1);
    assert!(doc["environment"].is_object(), "{doc}");
    if Path::new(C_PI_STRESS).is_file() && lease.cpu() == 0 {
        let c = run(&mut theirs(
            &lease,
            C_PI_STRESS,
            &["-u", "-q", "-i", "1000"],
        ));
        c.expect_code(0);
        assert_eq!(lines(&c)[0], l[0]);
    }
}

/// `-v` and `-d`: C's INFO: lines on stderr, and DEBUG: lines as the
/// groups' threads start and end; stdout as without them.
#[test]
fn verbose_and_debug_lines() {
    require_root!();
    let lease = CpuLease::one();
    let o = run(&mut ours(&lease, "pi_stress", &["-v", "-d", "-i", "100"]));
    o.expect_code(0);
    for line in [
        "INFO: admin and test threads running on one processor",
        "INFO: Creating 1 test groups",
        "INFO: Releasing all threads",
        "INFO: waiting for all threads to complete",
        "INFO: All threads terminated!",
        "DEBUG: group 0 bound to cpu",
        "DEBUG: high_priority[0]: exiting",
    ] {
        assert!(o.stderr.contains(line), "{line}: {}", o.stderr);
    }
    assert!(
        o.stdout.starts_with("Starting PI Stress Test\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("Total inversion performed: 101\n"),
        "{}",
        o.stdout
    );
}

/// A group whose inversion is never resolved (the hidden seam keeps the
/// low thread on the mutex): the watchdog finds it after five checks,
/// says so on stderr, and the run ends with the summary, exit 1 and
/// `return_code` 1, which Linaro's parser reads as a failure.
#[test]
fn a_stuck_group_is_the_failure_c_reports() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("o.json");
    let o = run(&mut ours(
        &lease,
        "pi_stress",
        &[
            "-q",
            "--stuck-group=0",
            &format!("--json={}", json.display()),
        ],
    ));
    o.expect_code(1);
    assert!(
        o.stderr
            .contains("WATCHDOG triggered: group 0 is deadlocked!"),
        "{}",
        o.stderr
    );
    assert!(
        o.stdout.starts_with("Total inversion performed: 0\n"),
        "{}",
        o.stdout
    );
    let doc = read_json(&json);
    assert_eq!(doc["stuck_groups"], serde_json::json!([0]));
    assert_eq!(
        linaro_lines(&doc, "pi-stress"),
        ["inversion pass 0 count", "pi-stress fail"]
    );
    assert_faster_than!(o.elapsed, Duration::from_secs(6), "{:?}", o.elapsed);
}

/// SIGINT and SIGTERM end a run normally: the summary, exit 0 (C sends
/// SIGTERM to its whole process group on SIGINT, and dies of SIGTERM,
/// without a summary). SIGKILL leaves no thread behind.
#[test]
fn signals_end_the_run_with_its_summary() {
    require_root!();
    let lease = CpuLease::one();
    for signal in ["INT", "TERM"] {
        let running = spawn(&mut ours(&lease, "pi_stress", &["-q"]));
        wait_for_realtime_threads(running.pid(), 4);
        running.signal(signal);
        let r = running.wait(Duration::from_secs(5));
        r.expect_code(0);
        assert!(
            r.stdout.starts_with("Total inversion performed: "),
            "SIG{signal}: {}",
            r.stdout
        );
    }
    let running = spawn(&mut ours(&lease, "pi_stress", &["-q"]));
    let pid = running.pid();
    wait_for_realtime_threads(pid, 4);
    running.signal("KILL");
    let r = running.wait(Duration::from_secs(5));
    assert_eq!(r.code(), None, "killed");
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
}

/// The pi_stress command line of a deadline high thread: 100 µs every
/// 1 ms.
const DEADLINE_HIGH: &str =
    "id=high,policy=deadline,runtime=100000,deadline=1000000,period=1000000";

/// `-s id=high,policy=deadline,...`, C's and ours, one group for 1 s: the
/// same banner (the high thread's line is SCHED_DEADLINE), inversions
/// counted by both, `inversion` in both documents. The deadline thread
/// may run on every CPU (the kernel's rule, which C follows too), so the
/// run holds the whole machine's lease. Then admission control's refusal:
/// one line, exit 1 (C hangs there).
#[test]
fn deadline_high_thread_differential_and_refusal() {
    fn words(a: &[String]) -> Vec<&str> {
        a.iter().map(String::as_str).collect()
    }
    require_root!();
    require_c!(C_PI_STRESS);
    let lease = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let (cj, oj) = (dir.path().join("c.json"), dir.path().join("o.json"));
    let args = |json: &Path| {
        ["-u", "-g", "1", "-D", "1", "-s", DEADLINE_HIGH]
            .map(str::to_owned)
            .into_iter()
            .chain([format!("--json={}", json.display())])
            .collect::<Vec<_>>()
    };
    let (c_args, o_args) = (args(&cj), args(&oj));
    let c = run_with_timeout(
        &mut theirs(&lease, C_PI_STRESS, &words(&c_args)),
        Duration::from_secs(10),
    );
    let o = run_with_timeout(
        &mut ours(&lease, "pi_stress", &words(&o_args)),
        Duration::from_secs(10),
    );
    c.expect_code(0);
    o.expect_code(0);
    let (cl, ol) = (lines(&c), lines(&o));
    assert_eq!(cl[..10], ol[..10], "the banner\n{}\n{}", c.stdout, o.stdout);
    assert!(ol[6].contains("High thread SCHED_DEADLINE runtime 100000"));
    for (l, doc) in [(&cl, read_json(&cj)), (&ol, read_json(&oj))] {
        let total = count_of(l[l.len() - 2]);
        assert!(total > 0, "{l:?}");
        assert_eq!(doc["inversion"].as_u64(), Some(total));
    }
    if lease.cpus().len() < 2 {
        skip_note!(
            "SKIPPED (needs 2 CPUs for the refusal): {}",
            function_name!()
        );
        return;
    }
    // Two groups of 99 % each: more than the 95 % of two CPUs.
    let r = run_with_timeout(
        &mut ours(
            &lease,
            "pi_stress",
            &[
                "-q",
                "-u",
                "-g",
                "2",
                "-D",
                "1",
                "-s",
                "id=high,policy=deadline,runtime=990000,deadline=1000000",
            ],
        ),
        Duration::from_secs(10),
    );
    r.expect_code(1);
    let err = r.stderr_lines();
    assert_eq!(err.len(), 1, "{}", r.stderr);
    assert!(
        err[0].contains("cannot take SCHED_DEADLINE") && err[0].contains("admission control"),
        "{}",
        err[0]
    );
}

/// SIGKILL of a run whose high thread is SCHED_DEADLINE leaves no thread
/// behind.
#[test]
fn a_killed_deadline_run_leaves_nothing() {
    require_root!();
    let lease = CpuLease::all();
    let running = spawn(&mut ours(
        &lease,
        "pi_stress",
        &["-q", "-u", "-g", "1", "-s", DEADLINE_HIGH],
    ));
    let pid = running.pid();
    let deadline_thread = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|d| {
                d.flatten().any(|t| {
                    proc_stat(&t.path().join("stat"))
                        .is_some_and(|(_, f)| f.get(38).map(String::as_str) == Some("6"))
                })
            })
            .unwrap_or(false)
    };
    assert!(
        wait_until(Duration::from_secs(10), deadline_thread),
        "no SCHED_DEADLINE thread in {pid}"
    );
    running.signal("KILL");
    let r = running.wait(Duration::from_secs(5));
    assert_eq!(r.code(), None, "killed");
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
}

/// The same pip_stress line and status as C's, on CPU 0.
#[test]
fn pip_stress_differential() {
    require_root!();
    require_c!(C_PIP_STRESS);
    let lease = CpuLease::of(0);
    let c = run(&mut theirs(&lease, C_PIP_STRESS, &[]));
    let o = run(&mut ours(&lease, "pip_stress", &[]));
    c.expect_code(0);
    o.expect_code(0);
    assert_eq!(
        o.stdout,
        "Successfully used priority inheritance to handle an inversion\n"
    );
    assert_eq!(c.stdout, o.stdout);
}

/// SIGKILL of rtlat while the low process holds the mutex (held 3 s by
/// the hidden seam): the high and the spinning medium process die with
/// it (each asked for its parent's death signal); nothing is left.
#[test]
fn pip_stress_children_die_with_rtlat() {
    require_root!();
    let lease = CpuLease::one();
    let running = spawn(&mut ours(&lease, "pip_stress", &["--hold-us=3000000"]));
    let pid = running.pid();
    // rtlat (low) and its child (high) at SCHED_FIFO, then the medium
    // grandchild.
    wait_for_realtime_threads(pid, 2);
    let mut family = Vec::new();
    assert!(wait_until(Duration::from_secs(5), || {
        family = children_of(pid);
        for child in family.clone() {
            family.extend(children_of(child));
        }
        family.len() == 2
    }));
    running.signal("KILL");
    let r = running.wait(Duration::from_secs(5));
    assert_eq!(r.code(), None);
    let gone = wait_until(Duration::from_secs(2), || {
        family
            .iter()
            .all(|p| !Path::new(&format!("/proc/{p}")).exists() || is_zombie(*p))
    });
    assert!(gone, "left behind: {family:?}");
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// Bad input: one line naming the option and the value, exit 2, nothing
/// run (C reads `-g x` as 0 groups and runs, ignores a bad `-s`, exits
/// 255 on too many groups and 1 on an unknown option).
#[test]
fn bad_input_per_option() {
    for (tool, words, want) in [
        (
            "pi_stress",
            &["-g", "0"][..],
            "-g/--groups: invalid value '0'",
        ),
        ("pi_stress", &["-g", "x"], "-g/--groups: invalid value 'x'"),
        (
            "pi_stress",
            &["-g", "100000"],
            "-g/--groups: invalid value '100000'",
        ),
        (
            "pi_stress",
            &["-i", "0"],
            "-i/--inversions: invalid value '0'",
        ),
        (
            "pi_stress",
            &["-D", "x"],
            "-D/--duration: invalid value 'x'",
        ),
        (
            "pi_stress",
            &["-s", "id=top"],
            "-s/--sched: invalid value 'id=top'",
        ),
        (
            "pi_stress",
            &["-s", "id=low,priority=0"],
            "-s/--sched: invalid value '0'",
        ),
        (
            "pi_stress",
            &["-s", "id=high,policy=deadline,deadline=50000"],
            "policy=deadline needs runtime=NS and deadline=NS",
        ),
        (
            "pi_stress",
            &["-s", "id=high,policy=deadline,runtime=100,deadline=50000"],
            "-s/--sched: invalid value '100'",
        ),
        (
            "pi_stress",
            &["-s", "id=high,policy=deadline,runtime=9000,deadline=x"],
            "-s/--sched: invalid value 'x'",
        ),
        (
            "pi_stress",
            &[
                "-s",
                "id=high,policy=deadline,runtime=9000,deadline=50000,period=-1",
            ],
            "-s/--sched: invalid value '-1'",
        ),
        (
            "pi_stress",
            &[
                "-s",
                "id=high,policy=deadline,runtime=9000,deadline=50000,period=20000",
            ],
            "runtime <= deadline <= period",
        ),
        (
            "pi_stress",
            &["-s", "id=med,policy=deadline,runtime=9000,deadline=50000"],
            "policy=deadline is for id=high only",
        ),
        (
            "pi_stress",
            &["-s", "id=high,policy=fifo,runtime=9000"],
            "go with policy=deadline",
        ),
        (
            "pi_stress",
            &["--json=/nonexistent/x.json"],
            "--json: cannot write",
        ),
        ("pi_stress", &["-x"], "unrecognized option '-x'"),
        ("pi_stress", &["-g"], "option '-g' requires a value"),
        ("pi_stress", &["extra"], "unexpected argument 'extra'"),
        ("pip_stress", &["-s", "1"], "unrecognized option '-s'"),
        ("pip_stress", &["extra"], "unexpected argument 'extra'"),
    ] {
        let r = run_with_timeout(&mut rtlat_tool(tool, words), Duration::from_secs(5));
        r.expect_code(2);
        assert!(r.stdout.is_empty(), "{words:?}: {}", r.stdout);
        let err = r.stderr_lines();
        assert_eq!(err.len(), 1, "{tool} {words:?}: {}", r.stderr);
        assert!(err[0].contains(want), "{tool} {words:?}: {}", err[0]);
    }
}

/// `-V` prints what C prints (no newline), exit 0; `-h` our help, exit 0.
#[test]
fn version_and_help() {
    let r = run(&mut rtlat_tool("pi_stress", ["-V"]));
    r.expect_code(0);
    assert_eq!(r.stdout, "pi_stress v2.40 ");
    if Path::new(C_PI_STRESS).is_file() {
        let c = run(Command::new(C_PI_STRESS).arg("-V"));
        assert_eq!(c.stdout, r.stdout);
    }
    for tool in ["pi_stress", "pip_stress"] {
        let h = run(&mut rtlat_tool(tool, ["-h"]));
        h.expect_code(0);
        assert!(
            h.stdout.starts_with(&format!("rtlat {tool}")),
            "{}",
            h.stdout
        );
    }
}
