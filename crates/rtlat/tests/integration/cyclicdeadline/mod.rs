//! `rtlat cyclicdeadline`: bad input (no privilege needed), and, as root,
//! real runs of one second against `/usr/bin/cyclicdeadline` (rt-tests
//! 2.4): same lines and line shapes, JSON keys a superset of C's; the
//! signals; the refusals (no privilege, an affinity narrower than the root
//! domain, admission control). SCHED_DEADLINE threads cannot be pinned to
//! part of the root domain, so every real run holds the whole machine's
//! lease (`CpuLease::all`).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::{
    Run, json_key_paths, rtlat_path, rtlat_tool, run, run_with_timeout, shape, spawn,
};

const C_CYCLICDEADLINE: &str = "/usr/bin/cyclicdeadline";
/// The safety net of a one-second run.
const NET: Duration = Duration::from_secs(10);

macro_rules! require_c_cyclicdeadline {
    () => {
        if !Path::new(C_CYCLICDEADLINE).is_file() {
            skip_note!("SKIPPED (needs {}): {}", C_CYCLICDEADLINE, function_name!());
            return;
        }
    };
}

fn ours(args: &[&str]) -> Command {
    rtlat_tool("cyclicdeadline", args)
}

/// The numbers of a `T:` line: index, tid, interval, cycles, min, act, avg,
/// max.
fn t_fields(line: &str) -> Vec<i64> {
    line.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

fn read(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The lines of a `-q` run, with each number made `N`, and "main thread"
/// (which C prints before or after the threads' lines, as they race) left
/// out.
fn shapes(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| !l.starts_with("main thread"))
        .map(shape)
        .collect()
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["-i", "0"][..],
        &["-i", "x"],
        &["-i", "99"],
        &["-s", "-1"],
        &["-t", "0"],
        &["-t", "100000"],
        &["-D", "-1"],
        &["-D", "x"],
        &["-b", "0"],
        &["-b", "x"],
        &["-a", "99"],
        &["--json=/nonexistent/x.json"],
        &["--hgrm=/nonexistent/x.hgrm"],
        &["--hgrm-per-thread"],
        &["--fail-if", "p99>x"],
        &["--load", "bogus"],
        &["-Z"],
        &["--bogus"],
        &["extra"],
    ] {
        let r = run(ours(args).current_dir(dir.path()));
        r.expect_code(2);
        assert_eq!(r.stderr_lines().len(), 1, "{args:?}: {}", r.describe());
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.describe());
    }
    assert_eq!(crate::support::listing(dir.path()), Vec::<String>::new());
}

#[test]
fn help_and_the_symlink_name() {
    let r = run(&mut ours(&["--help"]));
    r.expect_code(0);
    assert!(r.stdout.contains("--interval"), "{}", r.stdout);
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("cyclicdeadline");
    std::os::unix::fs::symlink(rtlat_path(), &link).unwrap();
    let r = run(Command::new(&link).arg("-h"));
    r.expect_code(0);
    assert!(r.stdout.contains("SCHED_DEADLINE"), "{}", r.stdout);
}

/// The same `-q --json` command, C's and ours side by side (their
/// bandwidth together is 1.2 CPUs of the 1.9 admitted on two).
#[test]
fn quiet_json_run_against_c() {
    require_root!();
    require_c_cyclicdeadline!();
    let _lease = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let (cj, rj) = (dir.path().join("c.json"), dir.path().join("r.json"));
    let args = |json: &Path| {
        vec![
            "-i".to_owned(),
            "10000".to_owned(),
            "-D".to_owned(),
            "1".to_owned(),
            "-q".to_owned(),
            format!("--json={}", json.display()),
        ]
    };
    let c = spawn(Command::new(C_CYCLICDEADLINE).args(args(&cj)));
    let r = spawn(&mut rtlat_tool("cyclicdeadline", args(&rj)));
    let (c, r) = (c.wait(NET), r.wait(NET));
    c.expect_code(0);
    r.expect_code(0);
    assert_eq!(shapes(&r.stdout), shapes(&c.stdout), "{}", r.describe());
    let t = r.stdout.lines().find(|l| l.starts_with("T:")).unwrap();
    let f = t_fields(t);
    // index, tid, I:10000, ~100 jobs in a second, min <= avg <= max.
    assert_eq!((f[0], f[2]), (0, 10000), "{t}");
    assert!((50..=110).contains(&f[3]), "{t}");
    assert!(f[4] <= f[6] && f[6] <= f[7], "{t}");
    let (cdoc, rdoc) = (read(&cj), read(&rj));
    let (ckeys, rkeys) = (json_key_paths(&cdoc), json_key_paths(&rdoc));
    let missing: BTreeSet<_> = ckeys.difference(&rkeys).collect();
    assert!(missing.is_empty(), "keys of C's missing: {missing:?}");
    let t0 = &rdoc["thread"]["0"];
    assert_eq!(t0["cycles"].as_i64(), Some(f[3]));
    assert_eq!(t0["max"].as_i64(), Some(f[7]));
    assert_eq!(rdoc["return_code"].as_i64(), Some(0));
    assert_eq!(rdoc["num_threads"].as_i64(), Some(1));
    // rtlat's additions: exact percentiles, which rtlat compare reads.
    assert!(t0["percentiles"]["p99"].as_f64().is_some(), "{t0}");
    let cmp = run(&mut rtlat_tool("compare", [&rj, &rj]));
    cmp.expect_code(0);
    assert!(cmp.stdout.contains("p99"), "{}", cmp.describe());
}

/// The live display: every thread's line each frame, the cursor back up
/// by the number of threads, and down by two more at the end; SIGINT
/// ends it normally.
#[test]
fn live_display_of_two_threads_and_sigint() {
    require_root!();
    let _lease = CpuLease::all();
    let running = spawn(&mut ours(&["-t", "2", "-i", "10000", "-s", "5000"]));
    running.wait_for_stdout(NET, "a frame", |out| out.matches("T: 1").count() >= 3);
    running.signal("INT");
    let r = running.wait(NET);
    r.expect_code(0);
    assert!(r.stdout.ends_with("\x1b[4B"), "{:?}", r.stdout);
    assert!(r.stdout.contains("thread["), "{}", r.stdout);
    for frame in r.stdout.split("\x1b[2A").skip(1) {
        let lines: Vec<&str> = frame.lines().collect();
        assert!(lines[0].starts_with("T: 0 (") && lines[0].contains(" I:10000 "));
        assert!(lines[1].starts_with("T: 1 (") && lines[1].contains(" I:15000 "));
    }
    assert!(r.stdout.contains("runtime=9000us deadline=15000us"));
}

/// SIGTERM: the `-q` summary and the JSON; SIGKILL: nothing left (the
/// threads die with the process; no cpuset was made).
#[test]
fn sigterm_ends_normally_and_sigkill_leaves_nothing() {
    require_root!();
    let _lease = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let running = spawn(&mut ours(&[
        "-q",
        "-i",
        "10000",
        &format!("--json={}", json.display()),
    ]));
    running.wait_for_stdout(NET, "the threads' start", |o| o.contains("main thread"));
    running.signal("TERM");
    let r = running.wait(NET);
    r.expect_code(0);
    assert!(
        r.stdout.lines().any(|l| l.starts_with("T: 0")),
        "{}",
        r.stdout
    );
    assert!(read(&json)["thread"]["0"]["cycles"].as_i64().is_some());

    let running = spawn(&mut ours(&["-q", "-i", "10000", "-t", "2"]));
    running.wait_for_stdout(NET, "the threads' start", |o| o.contains("main thread"));
    let pid = running.pid();
    running.signal("KILL");
    let r = running.wait(NET);
    assert_eq!(r.code(), None);
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
    let cpusets = std::fs::read_dir("/sys/fs/cgroup/cpuset")
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("my_cpuset"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(cpusets, 0);
}

/// `-b`: the run stops at the first maximum above the limit, with C's two
/// lines.
#[test]
fn breaktrace_stops_with_c_lines() {
    require_root!();
    let _lease = CpuLease::all();
    // 1 µs is passed within the first few jobs on any machine; -D bounds
    // the run if not.
    let r = run_with_timeout(&mut ours(&["-q", "-i", "10000", "-b", "1", "-D", "2"]), NET);
    r.expect_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    if let Some(i) = lines.iter().position(|l| l.starts_with("# Break thread: ")) {
        assert!(lines[i + 1].starts_with("# Break value: "), "{}", r.stdout);
        let value: i64 = lines[i + 1][15..].parse().unwrap();
        assert!(value > 1);
        assert!(r.elapsed < Duration::from_secs(2), "{:?}", r.elapsed);
    } else {
        skip_note!("SKIPPED (no job was 2 µs late in 2 s): the break lines");
    }
}

/// The refusals: one line naming the cause and the fix, exit 1, nothing
/// measured.
#[test]
fn refusals_name_the_cause() {
    require_root!();
    let lease = CpuLease::all();
    // Affinity narrower than the root domain (taskset).
    if lease.cpus().len() > 1 {
        let r = run(Command::new("taskset")
            .args(["-c", "0"])
            .arg(rtlat_path())
            .args(["cyclicdeadline", "-q", "-i", "10000", "-D", "1"]));
        r.expect_code(1);
        let last = r.stderr_lines().last().copied().unwrap_or_default();
        assert!(
            last.contains("Operation not permitted") && last.contains("taskset"),
            "{}",
            r.describe()
        );
        assert!(!r.stdout.contains("T:"), "{}", r.describe());
    }
    // Admission control: a run holding 1.2 CPUs, then one asking for 1.2
    // more of the 1.9 admitted on two (the machine's sched_rt_runtime_us).
    if lease.cpus().len() == 2 {
        let holder = spawn(&mut ours(&["-q", "-t", "2", "-i", "100000", "-D", "3"]));
        holder.wait_for_stdout(NET, "the threads' start", |o| o.contains("main thread"));
        let r = run_with_timeout(&mut ours(&["-q", "-t", "2", "-i", "10000", "-D", "1"]), NET);
        holder.signal("INT");
        holder.wait(NET).expect_code(0);
        r.expect_code(1);
        let last = r.stderr_lines().last().copied().unwrap_or_default();
        assert!(last.contains("admission control"), "{}", r.describe());
    }
    // No CAP_SYS_NICE.
    if crate::support::nobody::has_setpriv() {
        let r = crate::support::nobody::run_as_nobody(&[
            "cyclicdeadline",
            "-q",
            "-i",
            "10000",
            "-D",
            "1",
        ]);
        let r: &Run = r.expect_code(1);
        let last = r.stderr_lines().last().copied().unwrap_or_default();
        assert!(last.contains("CAP_SYS_NICE"), "{}", r.describe());
    }
}
