//! The user's own workload (`rtlat_core::load::Workload`, for issue 29's
//! `--load-command`), started through the rtlat binary as its helper:
//! ended with everything it started, its status kept, its output logged.

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use rtlat_core::load::{Workload, WorkloadEnd};

use rtlat_sys::process::group_members as members;

use crate::support::rtlat_path;

/// Waits (up to 10 s) until group `pgid` has at least `count` members.
fn wait_for_members(pgid: i32, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while members(pgid).len() < count {
        assert!(
            Instant::now() < deadline,
            "group {pgid}: {:?}",
            members(pgid)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits (up to 10 s) until no process of group `pgid` runs: the
/// grandchildren, orphaned, are reaped by init.
fn wait_for_none(pgid: i32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !members(pgid).is_empty() {
        assert!(Instant::now() < deadline, "left: {:?}", members(pgid));
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_workload_is_ended_with_everything_it_started() {
    let mut w = Workload::start(&rtlat_path(), "sleep 60 & sleep 60 & wait", None).unwrap();
    let pgid = w.pgid();
    wait_for_members(pgid, 3);
    assert_eq!(w.try_status().unwrap(), None);
    let end = w.end(Duration::from_secs(5)).unwrap();
    assert_eq!(end, WorkloadEnd::EndedByRun { killed: false });
    wait_for_none(pgid);
}

#[test]
fn a_workload_that_ignores_sigterm_is_killed_after_the_grace() {
    let mut w = Workload::start(
        &rtlat_path(),
        "trap '' TERM; sleep 60 & sleep 60 & wait",
        None,
    )
    .unwrap();
    let pgid = w.pgid();
    wait_for_members(pgid, 3);
    assert_eq!(w.try_status().unwrap(), None);
    let started = Instant::now();
    let end = w.end(Duration::from_millis(300)).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(end, WorkloadEnd::EndedByRun { killed: true });
    wait_for_none(pgid);
}

#[test]
fn a_failing_workload_keeps_its_status_and_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("load-command.log");
    let mut w =
        Workload::start(&rtlat_path(), "echo out; echo err >&2; exit 3", Some(&log)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while w.try_status().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the workload never ended");
        std::thread::sleep(Duration::from_millis(5));
    }
    match w.end(Duration::from_secs(1)).unwrap() {
        WorkloadEnd::Exited(status) => assert_eq!(status.code(), Some(3), "{status:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "out\nerr\n");
}

#[test]
fn a_workload_whose_log_cannot_be_written_runs_nothing() {
    let mut w = Workload::start(
        &rtlat_path(),
        "touch /tmp/rtlat-workload-must-not-run",
        Some(std::path::Path::new("/nonexistent/dir/log")),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while w.try_status().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the helper never ended");
        std::thread::sleep(Duration::from_millis(5));
    }
    match w.end(Duration::from_secs(1)).unwrap() {
        WorkloadEnd::Exited(status) => {
            assert_eq!(status.code(), Some(127), "{status:?}");
            assert_eq!(status.signal(), None);
        }
        other => panic!("{other:?}"),
    }
    assert!(!std::path::Path::new("/tmp/rtlat-workload-must-not-run").exists());
}
