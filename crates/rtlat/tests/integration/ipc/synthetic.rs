//! The IPC tools through the real binary with `--synthetic SEED`:
//! deterministic output snapshots (insta) and invariants; no privilege,
//! no real IPC.

use crate::cyclictest::synthetic::printable;
use crate::support::ipc::{TOOLS, check_frame, frames, last_frame, rtlat_ipc};
use crate::support::{Run, json_key_paths, run};

const SEED: &str = "11";

fn synthetic_run(tool: &str, args: &[&str]) -> Run {
    let mut all = vec!["--synthetic", SEED];
    all.extend_from_slice(args);
    let r = run(&mut rtlat_ipc(tool, &all));
    r.expect_code(0);
    r
}

#[test]
fn quiet_two_pairs() {
    for tool in TOOLS {
        let r = synthetic_run(tool, &["-q", "-l", "200", "-t", "2", "-p", "80"]);
        insta::assert_snapshot!(format!("quiet_two_pairs_{tool}"), printable(&r.stdout));
        let f = last_frame(&r.stdout, 2);
        check_frame(&f, 2, Some(200));
        // Pair 0 (the shorter interval) ends the run with its loops done.
        assert_eq!(f.headers[0].cycles, 200);
        assert!(f.headers[1].cycles < 200);
        assert_eq!(
            f.headers.iter().map(|h| h.priority).collect::<Vec<_>>(),
            [80, 79]
        );
        assert_eq!(
            f.headers.iter().map(|h| h.interval).collect::<Vec<_>>(),
            [1000, 1500]
        );
        assert_eq!(
            f.headers[0].timeouts.is_some(),
            tool == "pmqtest",
            "TO column only in pmqtest"
        );
        assert_eq!(frames(&r.stdout, 2).len(), 1, "-q: one frame");
        assert!(!r.stdout.contains('\x1b'));
    }
}

#[test]
fn live_one_pair_ends_with_cursor_moves() {
    for tool in TOOLS {
        let r = synthetic_run(tool, &["-l", "50"]);
        insta::assert_snapshot!(format!("live_one_pair_{tool}"), printable(&r.stdout));
        assert!(r.stdout.ends_with("\x1b[2A\x1b[4B"), "{:?}", r.stdout);
        check_frame(&last_frame(&r.stdout, 1), 1, Some(50));
    }
}

#[test]
fn json_and_histogram_to_stdout() {
    for tool in TOOLS {
        let r = synthetic_run(
            tool,
            &[
                "-q",
                "-l",
                "100",
                "-t",
                "2",
                "--json=-",
                "--histogram",
                "40",
            ],
        );
        insta::assert_snapshot!(format!("json_histogram_{tool}"), printable(&r.stdout));
        let start = r.stdout.find('{').unwrap();
        let end = r.stdout.rfind('}').unwrap();
        let json: serde_json::Value = serde_json::from_str(&r.stdout[start..=end]).unwrap();
        assert_eq!(json["num_threads"], 2);
        let keys = json_key_paths(&json);
        for key in [
            "thread.*.sender.cpu",
            "thread.*.sender.priority",
            "thread.*.sender.samples",
            "thread.*.sender.interval",
            "thread.*.receiver.cpu",
            "thread.*.receiver.priority",
            "thread.*.receiver.min",
            "thread.*.receiver.avg",
            "thread.*.receiver.max",
            "thread.*.receiver.min_ns",
            "thread.*.receiver.histogram",
        ] {
            assert!(keys.contains(key), "{tool}: {key}");
        }
        assert_eq!(
            keys.contains("thread.*.receiver.timeoutcount"),
            tool == "pmqtest"
        );
        let f = last_frame(&r.stdout, 2);
        for (i, h) in f.headers.iter().enumerate() {
            let t = &json["thread"][i.to_string()];
            assert_eq!(t["sender"]["samples"], h.cycles);
            let fig = f.figures[i].unwrap();
            assert_eq!(t["receiver"]["min"], fig.min);
            assert_eq!(t["receiver"]["max"], fig.max);
            let hist: u64 = t["receiver"]["histogram"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            assert!(hist <= t["receiver"]["samples"].as_u64().unwrap());
        }
        assert!(r.stdout.contains("# Histogram\n"));
        assert!(r.stdout.contains("# Max Latencies:"));
    }
}

#[test]
fn nanoseconds_duration_and_breaktrace() {
    let r = synthetic_run("svsematest", &["-q", "--nsecs", "-l", "20"]);
    insta::assert_snapshot!("svsematest_nsecs", printable(&r.stdout));
    let f = last_frame(&r.stdout, 1).figures[0].unwrap();
    assert!(f.min > 1000, "nanoseconds: {f:?}");

    // -D in virtual time: 1 s at 10 ms intervals.
    let r = synthetic_run("ptsematest", &["-q", "-D", "1", "-i", "10000"]);
    let h = last_frame(&r.stdout, 1).headers[0];
    assert!((95..=100).contains(&h.cycles), "{h:?}");

    // -b: the run stops at the first latency above 100 us.
    let r = synthetic_run(
        "sigwaittest",
        &["-q", "-b", "100", "-l", "100000", "-t", "2"],
    );
    insta::assert_snapshot!("sigwaittest_breaktrace", printable(&r.stdout));
    let f = last_frame(&r.stdout, 2);
    assert!(f.headers[0].cycles < 100_000);
    assert!(f.figures.iter().flatten().any(|x| x.max > 100));
}

#[test]
fn pmqtest_counts_forced_timeouts() {
    let r = synthetic_run("pmqtest", &["-q", "-l", "10", "-T", "1", "-f", "3"]);
    let h = last_frame(&r.stdout, 1).headers[0];
    assert_eq!(h.timeouts, Some(30), "3 time-outs of 1 s per 3 s delay");
    assert_eq!(h.cycles, 10);
}

#[test]
fn interval_above_one_second_is_shown_whole() {
    let r = synthetic_run("svsematest", &["-q", "-l", "3", "-i", "1500000"]);
    assert!(r.stdout.contains(", I1500000; "), "{}", r.stdout);
}

#[test]
fn same_seed_same_output_and_seeds_differ() {
    let a = synthetic_run("svsematest", &["-q", "-l", "50", "-t", "3"]);
    let b = synthetic_run("svsematest", &["-q", "-l", "50", "-t", "3"]);
    assert_eq!(a.stdout, b.stdout);
    let other = run(&mut rtlat_ipc(
        "svsematest",
        &["--synthetic", "12", "-q", "-l", "50", "-t", "3"],
    ));
    assert_ne!(a.stdout, other.stdout);
}

#[test]
fn started_through_a_symlink_named_after_the_tool() {
    for tool in TOOLS {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join(tool);
        std::os::unix::fs::symlink(crate::support::rtlat_path(), &link).unwrap();
        let r =
            run(std::process::Command::new(&link).args(["--synthetic", SEED, "-q", "-l", "10"]));
        r.expect_code(0);
        let direct = synthetic_run(tool, &["-q", "-l", "10"]);
        assert_eq!(r.stdout, direct.stdout, "{tool}");
        let help = run(std::process::Command::new(&link).arg("-h"));
        help.expect_code(0);
        assert!(help.stdout.contains(&format!("rtlat {tool}")));
    }
}
