//! `rtlat signaltest` for real (root, SCHED_FIFO, each run bounded by `-l`
//! and well under 2 s): structure and invariants, never latency values;
//! and differential tests against `/usr/bin/signaltest` (rt-tests 2.4):
//! same lines, same line shapes, JSON keys a superset of C's. Each run
//! holds a CPU lease and keeps its ring on it (`-a`).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::signaltest::synthetic::{final_lines, ring_lines, rtlat_signaltest};
use crate::support::cpus::CpuLease;
use crate::support::tracefs::TraceGuard;
use crate::support::{
    Run, json_key_paths, read_json, rtlat_path, run, run_with_timeout, shape, spawn,
    wait_for_realtime_threads,
};

const C_SIGNALTEST: &str = "/usr/bin/signaltest";

macro_rules! require_c_signaltest {
    () => {
        if !Path::new(C_SIGNALTEST).is_file() {
            skip_note!("SKIPPED (needs {}): {}", C_SIGNALTEST, function_name!());
            return;
        }
    };
}

fn ours(args: &[&str]) -> Run {
    let r = run(&mut rtlat_signaltest(args));
    r.expect_code(0);
    r
}

fn c_tool(args: &[&str]) -> Run {
    let r = run(Command::new(C_SIGNALTEST).args(args).stdin(Stdio::null()));
    r.expect_code(0);
    r
}

/// Our run with `args`, the whole process kept on the lease's CPU
/// (`taskset`): its display thread too, which is neither real-time nor
/// pinned by `-a`. There the only real-time threads beside it are the
/// run's own ring: another test's real-time threads, kept to that test's
/// lease, cannot hold it off. For the tests that look at its frames.
fn ours_confined(lease: &CpuLease, args: &[&str]) -> Run {
    let r = run(lease
        .pinned(&rtlat_path().to_string_lossy())
        .arg("signaltest")
        .args(args));
    r.expect_code(0);
    r
}

/// [`ours_confined`] for the C tool (whose `-a` pins its main thread,
/// which draws, as well).
fn c_tool_confined(lease: &CpuLease, args: &[&str]) -> Run {
    let r = run(lease.pinned(C_SIGNALTEST).args(args));
    r.expect_code(0);
    r
}

#[test]
fn quiet_ring_of_three() {
    require_root!();
    let lease = CpuLease::one();
    let r = ours(&[
        "-q",
        "-p",
        "80",
        "-t",
        "3",
        "-l",
        "500",
        "-a",
        &lease.list(),
    ]);
    assert_eq!(ring_lines(&r.stdout).len(), 3, "one T: line per thread");
    let last = final_lines(&r.stdout, 3);
    assert_eq!(last[0].cycles, 500, "thread 0 reaches -l");
    for l in &last {
        assert!(l.cycles > 0 && l.tid > 0, "{l:?}");
        assert_eq!(l.prio, 80);
    }
    assert_faster_than!(r.elapsed, Duration::from_secs(2), "{:?}", r.elapsed);
}

#[test]
fn live_display_shows_thread_0_then_every_thread() {
    require_root!();
    let lease = CpuLease::one();
    let r = ours_confined(&lease, &["-p", "80", "-l", "300", "-a", &lease.list()]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].ends_with("          "),
        "loadavg header {:?}",
        lines[0]
    );
    assert!(!lines[0].starts_with("policy:"));
    assert_eq!(lines[1], "");
    assert!(lines[2].starts_with("T: 0 ("), "{:?}", lines[2]);
    let n = lines.len();
    assert!(lines[n - 2].starts_with("T: 0 (") && lines[n - 1].starts_with("T: 1 ("));
    assert_eq!(
        lines[n - 3],
        lines[n - 2],
        "last frame = thread 0's final line"
    );
    for frame in r.stdout.split("\x1b[3A").skip(1) {
        let f: Vec<&str> = frame.lines().collect();
        assert!(f[0].ends_with("          ") && f[1].is_empty() && f[2].starts_with("T: 0"));
    }
    let last = final_lines(&r.stdout, 2);
    assert_eq!(last[0].cycles, 300);
}

#[test]
fn verbose_samples_and_summary() {
    require_root!();
    let lease = CpuLease::one();
    let r = ours(&["-v", "-p", "80", "-l", "50", "-a", &lease.list()]);
    let samples: Vec<&str> = r.stdout.lines().filter(|l| !l.starts_with("T:")).collect();
    assert_eq!(samples.len(), 50);
    for (k, l) in samples.iter().enumerate() {
        assert_eq!(shape(l), " N:N:N", "{l:?}");
        let f: Vec<i64> = l.split(':').map(|x| x.trim().parse().unwrap()).collect();
        assert_eq!((f[0], f[1]), (0, k as i64));
        assert!(f[2] > 0);
    }
    assert_eq!(final_lines(&r.stdout, 2)[0].cycles, 50);
}

#[test]
fn json_file_and_pinning() {
    require_root!();
    // -S: one thread on each CPU, every CPU.
    let lease = CpuLease::all();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let r = ours(&[
        "-q",
        "-p",
        "80",
        "-t",
        "3",
        "-S",
        "-l",
        "200",
        &format!("--json={}", path.display()),
    ]);
    let v = read_json(&path);
    let cpus = lease.cpus();
    let last = final_lines(&r.stdout, cpus.len());
    assert_eq!(v["num_threads"], cpus.len());
    for (i, l) in last.iter().enumerate() {
        let t = &v["thread"][i.to_string()];
        assert_eq!(t["cycles"], l.cycles);
        assert_eq!(t["cpu"], cpus[i] as i64, "-S: each thread its own CPU");
        assert_eq!(t["tid"], l.tid);
        assert!(t["min_ns"].as_i64().unwrap() <= t["max_ns"].as_i64().unwrap());
    }
}

#[test]
fn break_stops_the_run_and_the_trace() {
    require_root!();
    // tracing_on is global: no other -b run or trace test of this process
    // at the same time; put back as it was when the guard drops. The
    // guard before the lease (a holder of the guard may wait for a CPU).
    let trace = TraceGuard::acquire();
    let lease = CpuLease::one();
    if trace.dir.is_some() {
        trace.set_tracing_on("1");
    }
    let r = run(&mut rtlat_signaltest(&[
        "-q",
        "-p",
        "80",
        "-b",
        "1",
        "-l",
        "100000",
        "-a",
        &lease.list(),
    ]));
    let after = trace.tracing_on();
    r.expect_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "Thread 0 exceeded trace limit.");
    let last = final_lines(&r.stdout, 2);
    assert_eq!(last[0].cycles, 1);
    match after {
        Some(on) => assert_eq!(on.trim(), "0", "-b stopped the kernel trace"),
        None => skip_note!(
            "no tracefs: the tracing_on part of {} is skipped",
            function_name!()
        ),
    }
}

#[test]
fn duration_and_interrupt_end_the_run_cleanly() {
    require_root!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let r = ours(&["-q", "-p", "80", "-D", "1", "-a", &cpu]);
    assert_faster_than!(r.elapsed, Duration::from_millis(1900), "{:?}", r.elapsed);
    assert!(final_lines(&r.stdout, 2)[0].cycles > 0);

    let child = spawn(&mut rtlat_signaltest(&["-q", "-p", "80", "-a", &cpu]));
    // The ring's two threads: the run is set up.
    wait_for_realtime_threads(child.pid(), 2);
    // The duration is the point: a quiet run shows nothing before its
    // end, and it must have measured some cycles.
    std::thread::sleep(Duration::from_millis(200));
    child.signal("INT");
    let r = child.wait(Duration::from_secs(2));
    r.expect_code(0);
    assert!(final_lines(&r.stdout, 2)[0].cycles > 0);
}

#[test]
fn closed_stdout_ends_the_run_quietly() {
    require_root!();
    let lease = CpuLease::one();
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!(
        "'{}' signaltest -p 80 -a {} | head -c 10 >/dev/null; echo done",
        rtlat_path().display(),
        lease.list()
    ));
    let r = run_with_timeout(&mut cmd, Duration::from_secs(3));
    r.expect_code(0);
    assert_eq!(r.stdout, "done\n");
    assert!(!r.stderr.contains("Broken pipe"), "{}", r.stderr);
}

fn assert_same_shapes(c: &Run, ours: &Run) {
    let c_lines: Vec<&str> = c.stdout.lines().collect();
    let our_lines: Vec<&str> = ours.stdout.lines().collect();
    assert_eq!(
        c_lines.len(),
        our_lines.len(),
        "line counts\n--- C ---\n{}\n--- rtlat ---\n{}",
        c.stdout,
        ours.stdout
    );
    for (a, b) in c_lines.iter().zip(&our_lines) {
        assert_eq!(shape(a), shape(b), "\n C:     {a:?}\n rtlat: {b:?}");
    }
}

#[test]
fn differential_quiet() {
    require_root!();
    require_c_signaltest!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let args = ["-q", "-p", "80", "-t", "3", "-l", "300", "-a", &cpu];
    let (c, r) = (c_tool(&args), ours(&args));
    assert_same_shapes(&c, &r);
    let (cl, rl) = (final_lines(&c.stdout, 3), final_lines(&r.stdout, 3));
    for (a, b) in cl.iter().zip(&rl) {
        assert_eq!((a.index, a.prio), (b.index, b.prio));
    }
    assert_eq!(cl[0].cycles, rl[0].cycles, "both stop at thread 0's -l");
}

#[test]
fn differential_break() {
    require_root!();
    require_c_signaltest!();
    // Both stop the global trace: see break_stops_the_run_and_the_trace.
    let _trace = TraceGuard::acquire();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let args = ["-q", "-p", "80", "-b", "1", "-l", "1000", "-a", &cpu];
    let (c, r) = (c_tool(&args), ours(&args));
    assert_same_shapes(&c, &r);
    assert_eq!(c.stdout.lines().next(), r.stdout.lines().next());
}

#[test]
fn differential_verbose() {
    require_root!();
    require_c_signaltest!();
    let lease = CpuLease::one();
    // Kept on the leased CPU by taskset, not -a: with -a and -v, C prints
    // `Using 1 cpus.` and a `Thread N using cpu C.` line per thread first,
    // which rtlat's signaltest does not: a difference of its own, not the
    // samples this test compares.
    let args = ["-v", "-p", "80", "-l", "30"];
    let (c, r) = (c_tool_confined(&lease, &args), ours_confined(&lease, &args));
    // Same number of lines and shapes; C's first line is its off-by-one
    // `0:0:0`, ours the first sample.
    assert_same_shapes(&c, &r);
    assert!(c.stdout.starts_with("       0:       0:       0\n"));
    assert!(!r.stdout.starts_with("       0:       0:       0\n"));
}

#[test]
fn differential_live_frames() {
    require_root!();
    require_c_signaltest!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let args = ["-p", "80", "-l", "200", "-a", &cpu];
    let (c, r) = (c_tool_confined(&lease, &args), ours_confined(&lease, &args));
    for (who, run) in [("C", &c), ("rtlat", &r)] {
        let frames: Vec<&str> = run.stdout.split("\x1b[3A").collect();
        assert!(frames.len() >= 2, "{who}: several frames");
        for f in &frames[..frames.len() - 1] {
            let shapes: Vec<String> = f.lines().map(shape).collect();
            assert_eq!(shapes.len(), 3, "{who}: {f:?}");
        }
        let last: Vec<String> = frames.last().unwrap().lines().map(shape).collect();
        assert_eq!(last.len(), 5, "{who}: last frame + 2 final lines");
    }
    let c_last: Vec<String> = c
        .stdout
        .rsplit("\x1b[3A")
        .next()
        .unwrap()
        .lines()
        .map(shape)
        .collect();
    let r_last: Vec<String> = r
        .stdout
        .rsplit("\x1b[3A")
        .next()
        .unwrap()
        .lines()
        .map(shape)
        .collect();
    assert_eq!(c_last, r_last);
}

#[test]
fn differential_json_keys_are_a_superset() {
    require_root!();
    require_c_signaltest!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let dir = tempfile::tempdir().unwrap();
    let (cj, rj) = (dir.path().join("c.json"), dir.path().join("r.json"));
    c_tool(&[
        "-q",
        "-p",
        "80",
        "-t",
        "3",
        "-l",
        "100",
        "-a",
        &cpu,
        &format!("--json={}", cj.display()),
    ]);
    ours(&[
        "-q",
        "-p",
        "80",
        "-t",
        "3",
        "-l",
        "100",
        "-a",
        &cpu,
        &format!("--json={}", rj.display()),
    ]);
    let (c, r) = (read_json(&cj), read_json(&rj));
    let (ck, rk) = (json_key_paths(&c), json_key_paths(&r));
    let missing: BTreeSet<_> = ck.difference(&rk).collect();
    assert!(missing.is_empty(), "keys C has and we lack: {missing:?}");
    for added in ["thread.*.min_ns", "thread.*.tid", "thread.*.priority"] {
        assert!(rk.contains(added), "{added}");
    }
    assert_eq!(c["num_threads"], r["num_threads"]);
    assert_eq!(c["rt_test_version:"], r["rt_test_version:"]);
}
