//! The measuring loop makes one system call per cycle (the wait) in the
//! default mode: counted with `strace -f -c` over L and 2L loops, so that
//! start-up and shut-down cancel out and only the steady state remains.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::support::cpus::CpuLease;
use crate::support::{rtlat, run};

const INTERVAL_US: u64 = 200;

/// Calls per system call name of one `rtlat cyclictest -q -i 200 -l loops`
/// under `strace -f -c`, on the leased CPU.
fn counts(lease: &CpuLease, loops: u64, realtime: bool, extra: &[&str]) -> BTreeMap<String, u64> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("strace.txt");
    let bin = rtlat().get_program().to_owned();
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-c", "-o"]).arg(&out).arg("--").arg(bin);
    cmd.args([
        "cyclictest",
        "-q",
        "-i",
        &INTERVAL_US.to_string(),
        "-l",
        &loops.to_string(),
        "-a",
        &lease.list(),
    ]);
    cmd.args(extra);
    if realtime {
        cmd.args(["-m", "-p", "80"]);
    } else {
        cmd.args(["--policy", "other"]);
    }
    run(&mut cmd).expect_code(0);
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let is_row = f.len() >= 5 && f[0].starts_with(|c: char| c.is_ascii_digit());
            (is_row && f[f.len() - 1] != "total")
                .then(|| (f[f.len() - 1].to_string(), f[3].parse().unwrap()))
        })
        .collect()
}

/// System calls per cycle (by name, and in all) between L and 2L loops.
fn per_cycle(extra: &[&str]) -> Option<(BTreeMap<String, f64>, f64)> {
    if !Path::new("/usr/bin/strace").exists() {
        return None;
    }
    let lease = CpuLease::one();
    // Real-time when we may (the product's configuration), else SCHED_OTHER:
    // the loop is the same code either way.
    let realtime = crate::support::is_root();
    let loops = 1000;
    let short = counts(&lease, loops, realtime, extra);
    let long = counts(&lease, 2 * loops, realtime, extra);
    let mut by_name = BTreeMap::new();
    for name in short.keys().chain(long.keys()) {
        let diff = *long.get(name).unwrap_or(&0) as f64 - *short.get(name).unwrap_or(&0) as f64;
        by_name.insert(name.clone(), diff / loops as f64);
    }
    let total = by_name.values().sum();
    Some((by_name, total))
}

/// The absolute sleeps per cycle: `clock_nanosleep`, or on 32-bit targets
/// its 64-bit-time twin `clock_nanosleep_time64` (what rustix and 32-bit
/// glibc call there), whichever the kernel was asked for.
fn waits_per_cycle(by_name: &BTreeMap<String, f64>) -> f64 {
    ["clock_nanosleep", "clock_nanosleep_time64"]
        .iter()
        .filter_map(|name| by_name.get(*name))
        .sum()
}

#[test]
fn a_64_bit_time_sleep_counts_as_the_wait() {
    // What strace -c shows for an i686 or armv7 build on a 64-bit kernel.
    let by_name = BTreeMap::from([
        ("clock_nanosleep_time64".to_string(), 1.0),
        ("clock_nanosleep".to_string(), 0.02),
    ]);
    assert!((waits_per_cycle(&by_name) - 1.02).abs() < 1e-9);
}

#[test]
fn one_syscall_per_cycle_in_the_steady_state() {
    skip_if_emulated!("strace counts the emulator's system calls, not the program's");
    let Some((by_name, total)) = per_cycle(&[]) else {
        skip_note!("SKIPPED (needs /usr/bin/strace): {}", function_name!());
        return;
    };
    // The wait: one clock_nanosleep per cycle, plus the main thread's display
    // sleep every 10 ms (0.02 per cycle at 200 us).
    let waits = waits_per_cycle(&by_name);
    assert!(
        (0.98..=1.06).contains(&waits),
        "clock_nanosleep per cycle {waits}: {by_name:?}"
    );
    // Nothing else: a second call per cycle anywhere would add 1.0.
    assert!(
        total <= 1.06,
        "all system calls per cycle {total}: {by_name:?}"
    );
}

#[test]
fn the_count_sees_a_second_call_per_cycle() {
    skip_if_emulated!("strace counts the emulator's system calls, not the program's");
    // -x waits with sigwaitinfo and reads the timer's overrun count: two
    // calls per cycle. The same counting must see both (a control that the
    // test above can fail).
    let Some((by_name, total)) = per_cycle(&["-x"]) else {
        skip_note!("SKIPPED (needs /usr/bin/strace): {}", function_name!());
        return;
    };
    assert!(
        (1.98..=2.06).contains(&total),
        "all system calls per cycle {total}: {by_name:?}"
    );
    assert!(
        by_name
            .get("timer_getoverrun")
            .is_some_and(|n| (0.99..=1.01).contains(n)),
        "{by_name:?}"
    );
}
