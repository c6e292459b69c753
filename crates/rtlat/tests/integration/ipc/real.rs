//! Real runs of the IPC tools (root: SCHED_FIFO and mlockall), threads and
//! fork mode: structure and invariants, never absolute latencies. Plus the
//! bad-input and missing-privilege answers. Each real-time run holds a CPU
//! lease and keeps every pair on its CPU (`--affinity`).

use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::ipc::{
    FORK_TOOLS, TOOLS, check_frame, frames, last_frame, on_leased_cpu, rtlat_ipc,
    rtlat_ipc_confined,
};
use crate::support::tracefs::TraceGuard;
use crate::support::{
    SEVERAL_PRIORITIES_EMULATED, read_json, run, run_with_timeout, spawn, wait_for_realtime_threads,
};

#[test]
fn threads_mode_quiet_two_pairs_with_json() {
    skip_if_emulated!(SEVERAL_PRIORITIES_EMULATED);
    require_root!();
    let lease = CpuLease::one();
    for tool in TOOLS {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        let r = run(&mut rtlat_ipc(
            tool,
            &[
                "-q",
                "-p",
                "80",
                "-i",
                "200",
                "-l",
                "300",
                "-t",
                "2",
                &on_leased_cpu(&lease),
                &format!("--json={}", json.display()),
            ],
        ));
        r.expect_code(0);
        assert!(
            r.elapsed < Duration::from_secs(2),
            "{tool}: {:?}",
            r.elapsed
        );
        let f = last_frame(&r.stdout, 2);
        check_frame(&f, 2, Some(300));
        assert_eq!(f.headers[0].cycles, 300, "{tool}: pair 0 ends the run");
        assert_eq!(
            f.headers
                .iter()
                .map(|h| (h.priority, h.interval))
                .collect::<Vec<_>>(),
            [(80, 200), (79, 700)]
        );
        for h in &f.headers {
            let cpu = lease.cpu() as i64;
            assert_eq!((h.receiver_cpu, h.sender_cpu), (cpu, cpu), "{h:?}");
        }
        let j = read_json(&json);
        assert_eq!(j["num_threads"], 2);
        assert_eq!(j["return_code"], 0);
        for (i, (h, fig)) in f.headers.iter().zip(&f.figures).enumerate() {
            let t = &j["thread"][i.to_string()];
            assert_eq!(t["sender"]["samples"], h.cycles);
            assert_eq!(t["receiver"]["tid"], h.receiver_id);
            let fig = fig.expect("results for both pairs");
            assert_eq!(t["receiver"]["max"], fig.max);
            let (min_ns, max_ns) = (
                t["receiver"]["min_ns"].as_i64().unwrap(),
                t["receiver"]["max_ns"].as_i64().unwrap(),
            );
            assert!(min_ns <= max_ns);
            assert_eq!(min_ns / 1000, fig.min, "the shown figures are truncated ns");
        }
    }
}

#[test]
fn fork_mode_sides_are_processes() {
    skip_if_emulated!("the sides are looked for within a time an emulated start does not keep");
    require_root!();
    let lease = CpuLease::one();
    let on_cpu = on_leased_cpu(&lease);
    for tool in FORK_TOOLS {
        let r = run(&mut rtlat_ipc(
            tool,
            &[
                "-f", "-q", "-p", "80", "-i", "200", "-l", "300", "-t", "2", &on_cpu,
            ],
        ));
        r.expect_code(0);
        assert!(
            r.elapsed < Duration::from_secs(2),
            "{tool}: {:?}",
            r.elapsed
        );
        let f = last_frame(&r.stdout, 2);
        check_frame(&f, 2, Some(300));
        assert_eq!(f.headers[0].cycles, 300);
        for h in &f.headers {
            // Process ids of children: not threads of the main process.
            assert!(
                h.receiver_id as u32 > r.pid && h.sender_id as u32 > r.pid,
                "{h:?}"
            );
            assert!(
                !std::path::Path::new(&format!("/proc/{}/task/{}", r.pid, h.receiver_id)).exists()
            );
        }
    }
}

#[test]
fn fork_mode_json_and_live_frames() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("fork.json");
    let r = run(&mut rtlat_ipc(
        "svsematest",
        &[
            "-f",
            "-p",
            "80",
            "-i",
            "500",
            "-l",
            "400",
            &on_leased_cpu(&lease),
            &format!("--json={}", json.display()),
        ],
    ));
    r.expect_code(0);
    assert!(r.stdout.ends_with("\x1b[2A\x1b[4B"));
    let f = last_frame(&r.stdout, 1);
    check_frame(&f, 1, Some(400));
    let j = read_json(&json);
    assert_eq!(j["thread"]["0"]["sender"]["samples"], f.headers[0].cycles);
}

#[test]
fn live_frames_every_50_ms_then_cursor_below() {
    require_root!();
    let lease = CpuLease::one();
    for tool in TOOLS {
        // The frames are the display thread's: confined with the run.
        let r = run(&mut rtlat_ipc_confined(
            &lease,
            tool,
            &["-p", "80", "-i", "500", "-l", "500"],
        ));
        r.expect_code(0);
        let all = frames(&r.stdout, 1);
        assert!(all.len() >= 2, "{tool}: {} frames", all.len());
        for f in &all {
            check_frame(f, 1, Some(500));
        }
        let counts: Vec<i64> = all.iter().map(|f| f.headers[0].cycles).collect();
        assert!(counts.is_sorted(), "{counts:?}");
        assert_eq!(*counts.last().unwrap(), 500);
        assert!(r.stdout.ends_with("\x1b[2A\x1b[4B"), "{tool}");
        assert_eq!(
            r.stdout.matches("\x1b[2A").count(),
            all.len(),
            "one cursor-up per frame"
        );
    }
}

#[test]
fn duration_ends_the_run() {
    skip_if_emulated!("the run's length is timed, and emulated start-up and exit take seconds");
    require_root!();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_ipc(
        "ptsematest",
        &["-q", "-p", "80", "-D", "1", &on_leased_cpu(&lease)],
    ));
    r.expect_code(0);
    assert!(
        r.elapsed >= Duration::from_millis(950) && r.elapsed < Duration::from_secs(2),
        "{:?}",
        r.elapsed
    );
    let h = last_frame(&r.stdout, 1).headers[0];
    assert!(h.cycles > 100, "{h:?}");
}

#[test]
fn sigint_stops_with_the_final_frame() {
    require_root!();
    let lease = CpuLease::one();
    let on_cpu = on_leased_cpu(&lease);
    for tool in ["svsematest", "sigwaittest"] {
        for fork in [false, true] {
            let mut args = vec!["-q", "-p", "80", "-i", "1000", &on_cpu];
            if fork {
                args.push("-f");
            }
            let child = spawn(&mut rtlat_ipc(tool, &args));
            // Both sides: in fork mode, each is a process of its own.
            wait_for_realtime_threads(child.pid(), 2);
            // The duration is the point: a quiet run shows nothing before
            // its end, and it must have measured more than 10 cycles.
            std::thread::sleep(Duration::from_millis(300));
            child.signal("INT");
            let r = child.wait(Duration::from_secs(5));
            r.expect_code(0);
            let f = last_frame(&r.stdout, 1);
            check_frame(&f, 1, None);
            assert!(f.headers[0].cycles > 10, "{tool} fork={fork}: {f:?}");
        }
    }
}

#[test]
fn back_to_back_hand_offs_with_interval_zero() {
    require_root!();
    let lease = CpuLease::one();
    for tool in TOOLS {
        let r = run(&mut rtlat_ipc(
            tool,
            &[
                "-q",
                "-p",
                "80",
                "-i",
                "0",
                "-l",
                "5000",
                &on_leased_cpu(&lease),
            ],
        ));
        r.expect_code(0);
        assert!(r.stdout.contains(", I0; "));
        assert_eq!(last_frame(&r.stdout, 1).headers[0].cycles, 5000);
    }
}

#[test]
fn pmqtest_timeout_does_not_break_the_run() {
    // C pmqtest receives the sync message twice with -T and its receiver
    // times out after two cycles; ours runs to the end.
    require_root!();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_ipc(
        "pmqtest",
        &[
            "-q",
            "-p",
            "80",
            "-T",
            "1",
            "-i",
            "100",
            "-l",
            "300",
            &on_leased_cpu(&lease),
        ],
    ));
    r.expect_code(0);
    let h = last_frame(&r.stdout, 1).headers[0];
    assert_eq!((h.cycles, h.timeouts), (300, Some(0)));
}

#[test]
fn breaktrace_stops_the_run() {
    require_root!();
    // -b stops the global trace (tracing_on): no other -b run or trace
    // test of this process at the same time, and tracing_on put back when
    // the guard drops. The guard before the lease (a holder of the guard
    // may wait for a CPU).
    let _trace = TraceGuard::acquire();
    let lease = CpuLease::one();
    let r = run(&mut rtlat_ipc(
        "svsematest",
        &[
            "-q",
            "-p",
            "80",
            "-i",
            "0",
            "-b",
            "1",
            "-l",
            "10000000",
            &on_leased_cpu(&lease),
        ],
    ));
    r.expect_code(0);
    let f = last_frame(&r.stdout, 1);
    assert!(f.headers[0].cycles < 10_000_000);
    assert!(f.figures[0].unwrap().max > 1);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let beyond = (cpus + 62).to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["-t", "-2"],
        vec!["-p", "100"],
        vec!["-D", "-5"],
        vec!["-l", "-1"],
        vec!["-a", &beyond],
        vec!["-Z"],
        vec!["--bogus"],
        vec!["-i", "-5"],
    ];
    for tool in TOOLS {
        for args in &cases {
            let r = run_with_timeout(&mut rtlat_ipc(tool, args), Duration::from_secs(5));
            r.expect_code(2);
            assert_eq!(r.stderr.lines().count(), 1, "{tool} {args:?}: {}", r.stderr);
            assert!(
                r.stderr.starts_with(&format!("rtlat {tool}: ")),
                "{}",
                r.stderr
            );
            assert!(r.stdout.is_empty());
        }
    }
}

#[test]
fn help_exits_0() {
    for tool in TOOLS {
        let r = run(&mut rtlat_ipc(tool, &["-h"]));
        r.expect_code(0);
        assert!(r.stdout.contains("Usage: rtlat"));
    }
}

#[test]
fn fork_child_role_by_hand_is_refused() {
    let r = run(&mut rtlat_ipc("svsematest", &["-fr0"]));
    r.expect_code(2);
    assert!(r.stderr.contains("fork-mode run"), "{}", r.stderr);
}

#[test]
fn realtime_priority_without_privilege_exits_1_with_advice() {
    require_root_and_setpriv!();
    let as_nobody = crate::support::nobody::run_as_nobody;
    for tool in TOOLS {
        let r = as_nobody(&[tool, "-q", "-p", "80", "-l", "10"]);
        r.expect_code(1);
        assert!(r.stderr.contains("CAP_SYS_NICE"), "{}", r.stderr);
        assert!(r.stdout.is_empty());
        // SCHED_OTHER needs no privilege (C refuses it anyway).
        let r = as_nobody(&[tool, "-q", "-i", "100", "-l", "50"]);
        r.expect_code(0);
        assert_eq!(last_frame(&r.stdout, 1).headers[0].cycles, 50);
    }
}

/// The IPC tools lock their memory as C's do, unasked. Under a locked-memory
/// limit too small for the run (a container's 64 KiB) and without
/// CAP_IPC_LOCK, a real-time run is one line naming RLIMIT_MEMLOCK and exit 1
/// before anything is measured, while a SCHED_OTHER run goes on unlocked
/// with a note saying so. Without the privilege for -p, that refusal comes
/// first: no limit matters then.
#[test]
fn a_memlock_limit_too_small_refuses_realtime_and_notes_other() {
    require_root_and_setpriv!();
    use crate::support::nobody::{Who, run_restricted};
    let small = Some(64 << 10);
    for tool in TOOLS {
        let with = |who: Who, args: &[&str]| {
            let mut all = vec![tool];
            all.extend_from_slice(args);
            run_restricted(who, small, &all)
        };
        let r = with(Who::RootWithoutIpcLock, &["-q", "-p", "80", "-l", "10"]);
        r.expect_code(1);
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{}", r.describe());
        assert!(
            lines[0].contains("RLIMIT_MEMLOCK") && lines[0].contains("ulimit -l"),
            "{}",
            r.describe()
        );
        assert!(r.stdout.is_empty(), "{}", r.describe());
        let r = with(Who::Nobody, &["-q", "-p", "80", "-l", "10"]);
        r.expect_code(1);
        assert!(r.stderr.contains("CAP_SYS_NICE"), "{}", r.describe());
        assert!(!r.stderr.contains("RLIMIT_MEMLOCK"), "{}", r.describe());
        let r = with(Who::Nobody, &["-q", "-i", "100", "-l", "50"]);
        r.expect_code(0);
        assert!(
            r.stderr.contains("mlockall failed") && r.stderr.contains("memory unlocked"),
            "{}",
            r.describe()
        );
        assert_eq!(last_frame(&r.stdout, 1).headers[0].cycles, 50);
    }
}
