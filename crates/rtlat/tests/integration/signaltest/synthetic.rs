//! `rtlat signaltest` without privilege: whole runs with `--synthetic SEED`
//! (deterministic snapshots and invariants), the `signaltest` symlink, bad
//! input (exit 2, one line, nothing created) and, as root dropping to
//! `nobody`, the missing-privilege refusal.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::cyclictest::synthetic::printable;
use crate::support::{Run, int_after, read_json, rtlat, rtlat_path, run, run_with_timeout};

/// One signaltest `T:` line:
/// `T:%2d (%5d) P:%2d C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RingLine {
    pub index: i64,
    pub tid: i64,
    pub prio: i64,
    pub cycles: i64,
    pub min: i64,
    pub act: i64,
    pub avg: i64,
    pub max: i64,
}

pub(crate) fn parse_ring_line(line: &str) -> Option<RingLine> {
    let body = format!(" {}", line.strip_prefix("T:")?);
    if body.contains(" I:") {
        return None;
    }
    Some(RingLine {
        index: int_after(&body, " ")?,
        tid: int_after(&body, "(")?,
        prio: int_after(&body, " P:")?,
        cycles: int_after(&body, " C:")?,
        min: int_after(&body, " Min:")?,
        act: int_after(&body, " Act:")?,
        avg: int_after(&body, " Avg:")?,
        max: int_after(&body, " Max:")?,
    })
}

/// Every `T:` line of `text`, in order; panics on one that does not parse.
pub(crate) fn ring_lines(text: &str) -> Vec<RingLine> {
    text.lines()
        .filter(|l| l.starts_with("T:"))
        .map(|l| parse_ring_line(l).unwrap_or_else(|| panic!("bad T: line {l:?}")))
        .collect()
}

/// The final `T:` lines: the last `threads` of them, one per thread in
/// order, each with min <= act, avg <= max when it has samples.
pub(crate) fn final_lines(text: &str, threads: usize) -> Vec<RingLine> {
    let lines = ring_lines(text);
    assert!(lines.len() >= threads, "{threads} T: lines in\n{text}");
    let last = lines[lines.len() - threads..].to_vec();
    for (i, l) in last.iter().enumerate() {
        assert_eq!(l.index, i as i64, "{text}");
        if l.cycles > 0 {
            assert!(l.min <= l.avg && l.avg <= l.max, "min <= avg <= max: {l:?}");
            assert!(l.min <= l.act && l.act <= l.max, "min <= act <= max: {l:?}");
        } else {
            assert_eq!((l.min, l.max), (1_000_000, -1_000_000), "{l:?}");
        }
    }
    last
}

/// `rtlat signaltest ARGS...`.
pub(crate) fn rtlat_signaltest(args: &[&str]) -> Command {
    let mut cmd = rtlat();
    cmd.arg("signaltest").args(args);
    cmd
}

fn synthetic(seed: u64, args: &[&str]) -> Run {
    let r = run(rtlat_signaltest(&["--synthetic", &seed.to_string()]).args(args));
    r.expect_code(0);
    let again = run(rtlat_signaltest(&["--synthetic", &seed.to_string()]).args(args));
    assert_eq!(r.stdout, again.stdout, "same seed, same output");
    r
}

#[test]
fn synthetic_quiet_three_threads() {
    let r = synthetic(5, &["-q", "-l", "1000", "-t", "3"]);
    let lines = final_lines(&r.stdout, 3);
    assert_eq!(ring_lines(&r.stdout).len(), 3, "one line per thread");
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l.cycles, 1000, "every thread takes the last lap too");
        assert_eq!(l.tid, 1000 + i as i64, "synthetic tids are pinned");
        assert_eq!(l.prio, 0);
        // A lap is three hops of at least 2 us, and never holds the 10 ms
        // pause.
        assert!(l.min >= 6 && l.max < 6_000, "{l:?}");
    }
    insta::assert_snapshot!("signaltest_quiet", printable(&r.stdout));
}

#[test]
fn synthetic_live_final_frame() {
    let r = synthetic(5, &["-l", "500", "-p", "80"]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "0.00 0.00 0.00 1/100 1000          ");
    assert_eq!(lines[1], "");
    // Only thread 0 live, then every thread at the end.
    assert_eq!(lines.len(), 5, "{}", r.stdout);
    assert_eq!(lines[2], lines[3]);
    let last = final_lines(&r.stdout, 2);
    assert_eq!(last[0].prio, 80);
    assert_eq!(last[0].cycles, 500);
    insta::assert_snapshot!("signaltest_live", printable(&r.stdout));
}

#[test]
fn synthetic_verbose_prints_every_sample_of_thread_0() {
    let r = synthetic(5, &["-v", "-l", "20"]);
    let samples: Vec<(i64, i64, i64)> = r
        .stdout
        .lines()
        .filter(|l| !l.starts_with("T:"))
        .map(|l| {
            let f: Vec<i64> = l.split(':').map(|x| x.trim().parse().unwrap()).collect();
            (f[0], f[1], f[2])
        })
        .collect();
    assert_eq!(samples.len(), 20, "{}", r.stdout);
    for (k, (thread, cycle, value)) in samples.iter().enumerate() {
        assert_eq!((*thread, *cycle), (0, k as i64));
        assert!(*value > 0, "no C-style 0:0:0 first line");
    }
    let t0 = final_lines(&r.stdout, 2)[0];
    let values: Vec<i64> = samples.iter().map(|s| s.2).collect();
    assert_eq!(t0.min, *values.iter().min().unwrap());
    assert_eq!(t0.max, *values.iter().max().unwrap());
    assert_eq!(
        t0.act,
        *values.last().unwrap(),
        "the last sample is printed"
    );
    assert_eq!(t0.avg, values.iter().sum::<i64>() / 20);
    insta::assert_snapshot!("signaltest_verbose", printable(&r.stdout));
}

#[test]
fn synthetic_json_to_stdout() {
    let r = synthetic(7, &["-q", "-l", "300", "-t", "3", "--json=-"]);
    insta::assert_snapshot!("signaltest_json", printable(&r.stdout));
    let start = r.stdout.find('{').expect("JSON after the T: lines");
    let lines = final_lines(&r.stdout[..start], 3);
    let v: serde_json::Value = serde_json::from_str(&r.stdout[start..]).unwrap();
    assert_eq!(v["num_threads"], 3);
    for (i, l) in lines.iter().enumerate() {
        let t = &v["thread"][i.to_string()];
        assert_eq!(t["cycles"], l.cycles);
        assert_eq!(t["min"], l.min);
        assert_eq!(t["max"], l.max);
        assert_eq!(t["tid"], l.tid);
        assert_eq!(t["cpu"], -1, "not pinned without -a/-S");
        assert!(t.get("histogram").is_none());
    }
}

#[test]
fn verdict_ends_with_the_time_of_each_threads_maximum() {
    let plain = synthetic(7, &["-q", "-l", "300", "-t", "3"]);
    assert!(!plain.stdout.contains("into the run"), "{}", plain.stdout);
    let r = synthetic(7, &["-q", "-l", "300", "-t", "3", "--verdict", "--json=-"]);
    let start = r.stdout.find('{').expect("JSON after the T: lines");
    let end = r.stdout.rfind("\n}\n").expect("the JSON's end") + 3;
    let v: serde_json::Value = serde_json::from_str(&r.stdout[start..end]).unwrap();
    let lines = crate::support::max_time_lines(&r.stdout[end..]);
    let threads: Vec<usize> = lines.iter().map(|l| l.thread).collect();
    assert_eq!(threads, [0, 1, 2], "{}", r.stdout);
    for line in &lines {
        crate::support::check_max_time_line(line, &v["thread"][line.thread.to_string()]);
    }
    let joined = crate::support::joined_thread_lines(&r.stdout);
    assert!(
        joined.last().unwrap().starts_with("# Thread 2: max "),
        "{}",
        r.stdout
    );
    // A signal's maximum: its sending and its reception.
    assert!(lines.iter().all(|l| l.signal), "{lines:?}");
}

#[test]
fn synthetic_json_cpu_is_each_threads_own() {
    // C writes thread 0's CPU for every thread.
    let r = synthetic(7, &["-q", "-l", "30", "-t", "3", "-a", "--json=-"]);
    let start = r.stdout.find('{').unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.stdout[start..]).unwrap();
    let cpus = crate::support::allowed_cpus();
    for i in 0..3 {
        assert_eq!(
            v["thread"][i.to_string()]["cpu"],
            cpus[i % cpus.len()] as i64,
            "-a: thread {i} on the {i}-th allowed CPU"
        );
    }
}

#[test]
fn synthetic_histogram_and_json_file_agree() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let hist = dir.path().join("h.txt");
    let r = synthetic(
        3,
        &[
            "-q",
            "-l",
            "400",
            "--histogram",
            "60",
            &format!("--histfile={}", hist.display()),
            &format!("--json={}", json.display()),
        ],
    );
    let lines = final_lines(&r.stdout, 2);
    let text = std::fs::read_to_string(&hist).unwrap();
    let h = crate::support::parse_histogram(&text).expect("histogram block");
    assert_eq!((h.threads(), h.buckets()), (2, 60));
    let cycles: Vec<u64> = lines.iter().map(|l| l.cycles as u64).collect();
    crate::support::check_histogram_invariants(&h, Some(&cycles));
    let v = read_json(&json);
    for i in 0..2 {
        let t = &v["thread"][i.to_string()];
        assert_eq!(h.min[i], t["min"].as_i64().unwrap());
        assert_eq!(h.max[i], t["max"].as_i64().unwrap());
        let in_json: u64 = t["histogram"]
            .as_object()
            .unwrap()
            .values()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(in_json, h.total[i]);
    }
}

#[test]
fn synthetic_break_on_thread_0() {
    let r = synthetic(5, &["-q", "-b", "5", "-l", "1000"]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "Thread 0 exceeded trace limit.");
    let last = final_lines(&r.stdout, 2);
    assert_eq!(last[0].cycles, 1, "the first lap is above 5 us");
    assert_eq!(last[0].act, last[0].max);
}

#[test]
fn synthetic_duration_in_virtual_time() {
    // 1 s of virtual time: about 1 s / (lap + 10 ms / 16) laps.
    let r = synthetic(5, &["-q", "-D", "1"]);
    let last = final_lines(&r.stdout, 2);
    assert!((300..2_000).contains(&last[0].cycles), "{last:?}");
}

#[test]
fn a_signaltest_symlink_runs_signaltest() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("signaltest");
    std::os::unix::fs::symlink(rtlat_path(), &link).unwrap();
    let via_link = run(Command::new(&link)
        .args(["--synthetic", "2", "-q", "-l", "50"])
        .stdin(Stdio::null()));
    via_link.expect_code(0);
    let direct = synthetic(2, &["-q", "-l", "50"]);
    assert_eq!(via_link.stdout, direct.stdout);
    let help = run(Command::new(&link).arg("--help").stdin(Stdio::null()));
    help.expect_code(0);
    assert!(
        help.stdout.starts_with("rtlat signaltest:"),
        "{}",
        help.stdout
    );
    let bad = run(Command::new(&link).arg("-t1").stdin(Stdio::null()));
    bad.expect_code(2);
    assert!(
        bad.stderr.starts_with("signaltest: -t/--threads"),
        "{}",
        bad.stderr
    );
}

/// Runs `rtlat signaltest ARGS` in an empty directory: exit 2 within 1 s,
/// one stderr line naming `needle`, nothing on stdout, no file made.
fn usage_error(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let r = run_with_timeout(
        rtlat_signaltest(args).current_dir(dir.path()),
        Duration::from_secs(1),
    );
    let context = format!("rtlat signaltest {}\n{}", args.join(" "), r.describe());
    assert_eq!(r.code(), Some(2), "exit status\n{context}");
    assert_eq!(r.stdout, "", "stdout\n{context}");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "exactly one stderr line\n{context}");
    assert!(lines[0].starts_with("rtlat signaltest: "), "{context}");
    assert!(lines[0].contains(needle), "names {needle:?}\n{context}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "files created: {left:?}\n{context}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let beyond = (rtlat_sys_cpus() + 62).max(64).to_string();
    let cases: &[(&[&str], &str)] = &[
        (&["-t", "1"], "-t/--threads"),
        (&["-t", "-2"], "-t/--threads"),
        (&["-t", "0"], "-t/--threads"),
        (&["-p", "100"], "-p/--priority"),
        (&["-p", "-1"], "-p/--priority"),
        (&["-D", "-5"], "-D/--duration"),
        (&["-D", "abc"], "-D/--duration"),
        (&["-l", "-1"], "-l/--loops"),
        (&["-b", "0"], "-b/--breaktrace"),
        (&["--histogram=0"], "--histogram"),
        (&["-Z"], "'-Z'"),
        (&["--bogus"], "'--bogus'"),
        (&["-q", "stray"], "'stray'"),
        (&["--json=out.json", "-t", "1"], "-t/--threads"),
        (&["--json=/nonexistent/x.json"], "--json"),
    ];
    for (args, needle) in cases {
        usage_error(args, needle);
    }
    usage_error(&["-a", &beyond], "-a/--affinity");
}

/// The number of CPUs of this machine (from /proc/cpuinfo's processors).
fn rtlat_sys_cpus() -> usize {
    std::fs::read_to_string("/proc/cpuinfo")
        .map(|t| t.lines().filter(|l| l.starts_with("processor")).count())
        .unwrap_or(1)
}

/// `rtlat signaltest ARGS` as `nobody` without capabilities.
fn as_nobody(args: &[&str]) -> Run {
    let mut all = vec!["signaltest"];
    all.extend_from_slice(args);
    crate::support::nobody::run_as_nobody(&all)
}

#[test]
fn realtime_without_privilege_exits_1_with_advice() {
    require_root_and_setpriv!();
    let r = as_nobody(&["-q", "-p", "80", "-l", "10"]);
    r.expect_code(1);
    assert_eq!(r.stdout, "");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", r.describe());
    for needle in ["SCHED_FIFO", "priority 80", "RLIMIT_RTPRIO", "leave out -p"] {
        assert!(lines[0].contains(needle), "{needle}: {}", lines[0]);
    }
    // Without -p the ring runs unprivileged (C refuses).
    let ok = as_nobody(&["-q", "-l", "50"]);
    ok.expect_code(0);
    let last = final_lines(&ok.stdout, 2);
    assert_eq!(last[0].cycles, 50);
    assert!(ok.stderr.contains("SCHED_OTHER"), "{}", ok.describe());
}
