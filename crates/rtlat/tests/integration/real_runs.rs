//! Short real runs (root, SCHED_FIFO): structure and invariants of the output, never absolute latencies.

use crate::util::{
    allowed_cpus, check_histogram_invariants, check_status_invariants, json_thread_ints,
    parse_histogram, parse_status_lines, rtlat_cyclictest, run, run_with_json,
};

#[test]
fn quiet_two_threads_fifo() {
    require_root!();
    let r = run(&mut rtlat_cyclictest([
        "-q", "-m", "-p", "80", "-i", "500", "-l", "200", "-t", "2",
    ]));
    r.expect_code(0);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 2, "one T: line per thread\n{}", r.describe());
    check_status_invariants(&lines);
    assert_eq!((lines[0].index, lines[1].index), (0, 1));
    assert_eq!(
        lines[0].cycles, 200,
        "-l 200 ends the run when thread 0 is done"
    );
    assert!(
        0 < lines[1].cycles && lines[1].cycles < 200,
        "thread 1 (I:1000) has fewer cycles: {:?}",
        lines[1]
    );
    assert_eq!((lines[0].prio, lines[1].prio), (80, 80));
    assert_eq!((lines[0].interval, lines[1].interval), (500, 1000));
    assert!(lines[0].tid > 0 && lines[1].tid > 0 && lines[0].tid != lines[1].tid);
    assert_eq!(
        r.stdout.lines().next(),
        Some("# /dev/cpu_dma_latency set to 0us")
    );
}

#[test]
fn histogram_total_plus_overflows_is_cycles() {
    require_root!();
    let (r, json) = run_with_json(&[
        "-q", "-m", "-p80", "-i200", "-h", "100", "-l", "300", "-t", "2",
    ]);
    assert!(
        parse_status_lines(&r.stdout).is_empty(),
        "-q -h: no T: lines"
    );
    let h = parse_histogram(&r.stdout).expect("histogram block");
    assert_eq!((h.threads(), h.buckets()), (2, 100));
    let cycles: Vec<u64> = json_thread_ints(&json, "cycles")
        .into_iter()
        .map(|c| c as u64)
        .collect();
    // -h forces one interval for both threads: the one that completes its
    // 300 loops first ends the run (under load thread 0 may have skipped a
    // deadline and be the one behind).
    assert_eq!(cycles.iter().max(), Some(&300), "{cycles:?}");
    assert!(cycles.iter().all(|&c| c > 0 && c <= 300), "{cycles:?}");
    check_histogram_invariants(&h, Some(&cycles));
    assert_eq!(h.min, json_thread_ints(&json, "min"));
    assert_eq!(h.max, json_thread_ints(&json, "max"));
}

#[test]
fn policy_other_runs_with_a_note() {
    require_root!();
    let r = run(&mut rtlat_cyclictest([
        "--policy", "other", "-q", "-l", "100", "-i", "1000",
    ]));
    r.expect_code(0);
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 1, "{}", r.describe());
    check_status_invariants(&lines);
    assert_eq!((lines[0].prio, lines[0].cycles), (0, 100));
    assert!(
        r.stderr.contains("note") && r.stderr.contains("SCHED_OTHER"),
        "a note about SCHED_OTHER on stderr\n{}",
        r.describe()
    );
}

#[test]
fn duration_one_second() {
    require_root!();
    let r = run(&mut rtlat_cyclictest(["-q", "-D", "1", "-i", "1000"]));
    r.expect_code(0);
    let wall = r.elapsed.as_secs_f64();
    assert!((0.9..3.0).contains(&wall), "-D 1 took {wall} s");
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 1);
    check_status_invariants(&lines);
    assert!(
        (500..=1100).contains(&lines[0].cycles),
        "about 1000 cycles of 1 ms: {:?}",
        lines[0]
    );
}

#[test]
fn smp_one_thread_per_allowed_cpu() {
    require_root!();
    let (r, json) = run_with_json(&["-S", "-q", "-p", "80", "-l", "100", "-i", "500"]);
    let cpus = allowed_cpus();
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), cpus.len(), "one thread per allowed CPU");
    check_status_invariants(&lines);
    let mut used = json_thread_ints(&json, "cpu");
    assert!(
        used.iter().all(|&c| cpus.contains(&(c as usize))),
        "{used:?} within {cpus:?}"
    );
    used.sort();
    used.dedup();
    assert_eq!(used.len(), cpus.len(), "distinct cpu values");
}

#[test]
fn affinity_pins_every_thread() {
    require_root!();
    if !allowed_cpus().contains(&1) {
        skip_note!("SKIPPED (needs CPU 1): {}", function_name!());
        return;
    }
    let (r, json) = run_with_json(&["-a", "1", "-t", "2", "-q", "-l", "50", "-p", "80"]);
    assert_eq!(parse_status_lines(&r.stdout).len(), 2);
    assert_eq!(json_thread_ints(&json, "cpu"), [1, 1]);
}

#[test]
fn no_affinity_means_not_pinned() {
    require_root!();
    let (_, json) = run_with_json(&["-t", "2", "-q", "-l", "50", "-p", "80"]);
    assert_eq!(json_thread_ints(&json, "cpu"), [-1, -1], "2.5+ behaviour");
}
