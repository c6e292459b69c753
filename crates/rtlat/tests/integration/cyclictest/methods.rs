//! `--wait METHOD` and `--measure METHOD`: short real runs of every method
//! (SCHED_OTHER unprivileged, SCHED_FIFO as root), the `# wait:` line and
//! the JSON keys, and the combinations that are refused. Structure and
//! invariants only, never absolute latencies. The runs that are real-time
//! or busy-wait (a CPU-bound thread, even under SCHED_OTHER) are pinned to
//! the CPU their test leases.

use std::time::Duration;

use crate::cyclictest::wait_for_measuring_threads;
use crate::support::cpus::CpuLease;
use crate::support::{
    check_status_invariants, describe_process, parse_status_lines, proc_stat, rtlat_cyclictest,
    run, run_with_json, spawn, wait_until,
};

const WAITS: [&str; 7] = [
    "abs",
    "rel",
    "nanosleep",
    "posix-timer",
    "timerfd",
    "std-sleep",
    "busy",
];

/// Runs `args` and checks one thread did `loops` cycles with sane figures;
/// returns stdout.
fn short_run(args: &[&str], loops: i64) -> String {
    let r = run(&mut rtlat_cyclictest(args));
    r.expect_code(0);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 1, "{args:?}\n{}", r.describe());
    assert_eq!(lines[0].cycles, loops, "{args:?}\n{}", r.describe());
    check_status_invariants(&lines);
    assert_faster_than!(
        r.elapsed,
        Duration::from_secs(3),
        "{args:?}: {:?}",
        r.elapsed
    );
    r.stdout
}

fn method_line(stdout: &str) -> Option<&str> {
    stdout.lines().find(|l| l.starts_with("# wait:"))
}

#[test]
fn every_wait_method_runs_unprivileged() {
    let lease = CpuLease::one();
    let cpu = lease.list();
    for wait in WAITS {
        let out = short_run(
            &[
                "-q", "--policy", "other", "-i", "500", "-l", "200", "--wait", wait, "-a", &cpu,
            ],
            200,
        );
        let want = format!("# wait: {wait}, measure: clock");
        if wait == "abs" {
            assert_eq!(method_line(&out), None, "{out}");
        } else {
            assert_eq!(method_line(&out), Some(want.as_str()), "{out}");
            // Before the /dev/cpu_dma_latency line, which C prints first.
            let lines: Vec<&str> = out.lines().collect();
            let at = |p: &str| lines.iter().position(|l| l.starts_with(p)).unwrap();
            assert!(at("# wait:") < at("# /dev/cpu_dma_latency"), "{out}");
        }
    }
}

#[test]
fn every_wait_method_runs_under_fifo() {
    require_root!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    for wait in WAITS {
        // A busy SCHED_FIFO thread holds its CPU: few, long periods.
        let (interval, loops) = if wait == "busy" {
            ("2000", 40)
        } else {
            ("500", 200)
        };
        let loops_text = loops.to_string();
        let args = [
            "-q",
            "-m",
            "-p",
            "80",
            "-i",
            interval,
            "-l",
            &loops_text,
            "--wait",
            wait,
            "-a",
            &cpu,
        ];
        short_run(&args, loops);
    }
}

#[test]
fn every_measure_method_runs() {
    let lease = CpuLease::one();
    let cpu = lease.list();
    let tsc_ok = rtlat_sys::tsc::support().is_ok();
    let mut combos: Vec<Vec<&str>> = vec![
        vec!["--measure", "clock"],
        vec!["--wait", "timerfd", "--measure", "timer"],
    ];
    if tsc_ok {
        combos.push(vec!["--measure", "tsc"]);
        combos.push(vec!["--wait", "rel", "--measure", "tsc"]);
        combos.push(vec!["--wait", "busy", "--measure", "tsc"]);
        combos.push(vec!["--wait", "timerfd", "--measure", "tsc"]);
    }
    for combo in &combos {
        let mut args = vec![
            "-q", "--policy", "other", "-i", "500", "-l", "200", "-N", "-a", &cpu,
        ];
        args.extend(combo);
        short_run(&args, 200);
    }
    if is_root_or_skip() {
        for combo in &combos {
            let mut args = vec!["-q", "-m", "-p", "80", "-i", "500", "-l", "200", "-a", &cpu];
            args.extend(combo);
            let out = short_run(&args, 200);
            let measure = combo.last().unwrap();
            if *measure != "clock" {
                assert!(
                    method_line(&out)
                        .unwrap()
                        .ends_with(&format!("measure: {measure}")),
                    "{out}"
                );
            }
        }
    }
}

fn is_root_or_skip() -> bool {
    if crate::support::is_root() {
        return true;
    }
    skip_note!("SKIPPED part (needs root): the SCHED_FIFO measure runs");
    false
}

#[test]
fn tsc_is_refused_where_it_cannot_measure_time() {
    let r = run(&mut rtlat_cyclictest([
        "-q",
        "--policy",
        "other",
        "-l",
        "10",
        "--measure",
        "tsc",
    ]));
    match rtlat_sys::tsc::support() {
        Ok(()) => {
            r.expect_code(0);
        }
        Err(why) => {
            r.expect_code(1);
            assert!(r.stderr.contains(&why), "{}", r.describe());
        }
    }
}

#[test]
fn json_names_the_methods() {
    let (_, json) = run_with_json(&[
        "-q",
        "--policy",
        "other",
        "-l",
        "20",
        "-i",
        "500",
        "--wait",
        "timerfd",
        "--measure",
        "timer",
    ]);
    assert_eq!(json["wait_method"], "timerfd");
    assert_eq!(json["measure_method"], "timer");
    assert_eq!(json["thread"]["0"]["cycles"], 20);
    let (_, json) = run_with_json(&["-q", "--policy", "other", "-l", "20", "-i", "500"]);
    assert_eq!(json["wait_method"], "abs");
    assert_eq!(json["measure_method"], "clock");
    let (_, json) = run_with_json(&["-q", "--policy", "other", "-l", "20", "-i", "500", "-r"]);
    assert_eq!(json["wait_method"], "rel");
}

#[test]
fn default_output_has_no_method_line() {
    for extra in [&[][..], &["-r"], &["-s"], &["-x"], &["--wait", "abs"]] {
        let mut args = vec!["-q", "--policy", "other", "-l", "20", "-i", "500"];
        args.extend(extra);
        let out = short_run(&args, 20);
        assert_eq!(method_line(&out), None, "{extra:?}: {out}");
    }
}

#[test]
fn refused_combinations_say_so_in_one_line() {
    for (args, message) in [
        (
            &["--wait", "busy", "-x"][..],
            "--wait busy: cannot be combined with -x/--posix_timers",
        ),
        (
            &["--wait", "timerfd", "-r"],
            "--wait timerfd: cannot be combined with -r/--relative",
        ),
        (
            &["--measure", "timer"],
            "--measure timer: reads the timerfd's own time, so it needs --wait timerfd (not abs)",
        ),
        (
            &["--measure", "tsc", "--synthetic", "3"],
            "--measure tsc: measures real time, not the --synthetic clock",
        ),
        (
            &["--wait", "spin"],
            "--wait: invalid value 'spin': expected one of abs, rel, nanosleep, posix-timer, \
             timerfd, std-sleep, busy",
        ),
    ] {
        let r = run(&mut rtlat_cyclictest(args));
        r.expect_code(2);
        assert_eq!(
            r.stderr_lines(),
            [format!("rtlat cyclictest: {message}")],
            "{args:?}"
        );
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
    }
}

/// The CPU time thread `rtlat-t0` of run `pid` has used, in clock ticks
/// (user and system: fields 14 and 15 of proc(5)'s `stat`).
fn measuring_thread_ticks(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| proc_stat(&task.path().join("stat")))
        .filter(|(name, _)| name == "rtlat-t0")
        .map(|(_, fields)| {
            let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
            tick(11).unwrap_or(0) + tick(12).unwrap_or(0)
        })
        .sum()
}

#[test]
fn a_busy_wait_still_stops_on_a_signal() {
    let lease = CpuLease::one();
    // One-second periods: the thread spins almost all the time.
    let child = spawn(&mut rtlat_cyclictest([
        "-q",
        "--policy",
        "other",
        "-i",
        "1000000",
        "--wait",
        "busy",
        "-a",
        &lease.list(),
    ]));
    wait_for_measuring_threads(child.pid(), 1);
    // Its first period spins: once it has used a few ticks of CPU time,
    // it is in its busy wait, where the stop must reach it.
    let pid = child.pid();
    assert!(
        wait_until(Duration::from_secs(5), || measuring_thread_ticks(pid) >= 3),
        "the measuring thread does not spin: {}",
        describe_process(pid)
    );
    child.signal("INT");
    let r = child.wait(Duration::from_secs(5));
    r.expect_code(0);
    assert_faster_than!(r.elapsed, Duration::from_millis(1500), "{:?}", r.elapsed);
    assert_eq!(parse_status_lines(&r.stdout).len(), 1, "{}", r.describe());
}

#[test]
fn synthetic_runs_accept_the_new_wait_methods() {
    for wait in ["timerfd", "std-sleep", "busy"] {
        let r = run(&mut crate::support::synthetic(
            5,
            ["-q", "-l", "100", "--wait", wait],
        ));
        r.expect_code(0);
        assert_eq!(parse_status_lines(&r.stdout)[0].cycles, 100, "{wait}");
    }
}
