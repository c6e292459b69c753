//! `rtlat oslat`: bad input (no privilege, no run), and real runs (root,
//! one leased CPU each, 1 s of measurement after C's 1 s pre-heat):
//! differential against `/usr/bin/oslat` (rt-tests 2.4) by shape and
//! invariants, the signals, SIGKILL, `-T`, and the way an OpenShift-style
//! check reads the `Maximum:` line.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::cpus::CpuLease;
use crate::support::tracefs::TraceGuard;
use crate::support::{Run, json_key_paths, read_json, rtlat_path, rtlat_tool, run, shape, spawn};

const C_OSLAT: &str = "/usr/bin/oslat";

macro_rules! require_c_oslat {
    () => {
        if !Path::new(C_OSLAT).is_file() {
            skip_note!("SKIPPED (needs {}): {}", C_OSLAT, function_name!());
            return;
        }
    };
}

/// `oslat` as a symlink to the rtlat under test, in a temporary directory
/// (kept alive by the returned guard).
fn symlinked() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("oslat");
    std::os::unix::fs::symlink(rtlat_path(), &link).unwrap();
    (dir, link)
}

fn ours(args: &[&str]) -> Run {
    let (_dir, link) = symlinked();
    run(Command::new(link).args(args).stdin(Stdio::null()))
}

fn c_oslat(args: &[&str]) -> Run {
    run(Command::new(C_OSLAT).args(args).stdin(Stdio::null()))
}

/// The summary table's rows: (label, values, unit), from `Core:` on.
fn table(stdout: &str) -> Vec<(String, Vec<String>, String)> {
    stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("Core:"))
        .filter(|l| l.contains(":\t"))
        .map(|l| {
            let (label, rest) = l.split_once(":\t").unwrap();
            assert_eq!(label.len(), 12, "label right-aligned in 12: {l:?}");
            let mut words: Vec<String> = rest.split(' ').skip(1).map(str::to_owned).collect();
            let values_end = words
                .iter()
                .position(|w| w.starts_with('('))
                .unwrap_or(words.len());
            let unit = words.split_off(values_end).join(" ");
            (label.trim().to_owned(), words, unit)
        })
        .collect()
}

fn row<'a>(rows: &'a [(String, Vec<String>, String)], label: &str) -> &'a [String] {
    &rows
        .iter()
        .find(|r| r.0 == label)
        .unwrap_or_else(|| panic!("no {label} row"))
        .1
}

fn nums(values: &[String]) -> Vec<f64> {
    values.iter().map(|v| v.parse().unwrap()).collect()
}

/// The invariants of a summary: per CPU min <= avg <= max (C's average
/// can exceed max only through the overflow excess of thread 0, fixed in
/// ours), Max-Min = max - min, a bucket row per label from `first`, the
/// last with `(including overflows)`; and with the JSON, each thread's
/// non-empty buckets the table's.
fn check_summary(stdout: &str, json: Option<&Value>, ours: bool) -> Vec<String> {
    let rows = table(stdout);
    let cores = row(&rows, "Core").to_vec();
    let (min, avg, max) = (
        nums(row(&rows, "Minimum")),
        nums(row(&rows, "Average")),
        nums(row(&rows, "Maximum")),
    );
    let spread = nums(row(&rows, "Max-Min"));
    for i in 0..cores.len() {
        assert!(min[i] >= 1.0 && min[i] <= max[i], "{stdout}");
        assert!(min[i] <= avg[i], "{stdout}");
        if ours || cores.len() == 1 {
            assert!(avg[i] <= max[i], "{stdout}");
        }
        assert_eq!(spread[i], max[i] - min[i], "{stdout}");
    }
    let buckets: Vec<&(String, Vec<String>, String)> =
        rows.iter().filter(|r| r.0.ends_with("(us)")).collect();
    let last = buckets.last().expect("bucket rows");
    assert_eq!(last.2, "(including overflows)", "{stdout}");
    if let Some(json) = json {
        for (i, _) in cores.iter().enumerate() {
            let t = &json["thread"][i.to_string()];
            let hist = t["histogram"].as_object().unwrap();
            for (label, values, _) in &buckets {
                let n: u64 = values[i].parse().unwrap();
                let key = label.trim_end_matches(" (us)").trim_start_matches('0');
                assert_eq!(
                    hist.get(key).and_then(Value::as_u64).unwrap_or(0),
                    n,
                    "bucket {label} of thread {i}"
                );
            }
            assert_eq!(t["max"].as_f64().unwrap(), max[i]);
            assert_eq!(t["min"].as_f64().unwrap(), min[i]);
        }
    }
    buckets.iter().map(|b| b.0.clone()).collect()
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        &["-b", "3"][..],
        &["-b", "2000"],
        &["-c", "99999"],
        &["-C", "99999"],
        &["-D", "0"],
        &["-D", "soon"],
        &["-f", "0"],
        &["-f", "100"],
        &["-m", "12q"],
        &["-T", "0"],
        &["-w", "bogus"],
        &["--json=/nonexistent/dir/x.json"],
        &["--hgrm=/nonexistent/dir/x.hgrm"],
        &["--hgrm-per-thread"],
        &["--verdict=long"],
        &["--fail-if", "bogus"],
        &["--load", "bogus"],
        &["-X"],
        &["--bogus"],
    ] {
        let r = run(&mut rtlat_tool("oslat", args));
        r.expect_code(2);
        assert_eq!(r.stdout, "", "{args:?}: nothing measured");
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
    }
}

#[test]
fn differential_default_run_and_json() {
    require_root!();
    require_c_oslat!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("ours.json"), dir.path().join("c.json"));
    let r = ours(&["-c", &cpu, "-D", "1", &format!("--json={}", a.display())]);
    r.expect_code(0);
    let c = c_oslat(&["-c", &cpu, "-D", "1", &format!("--json={}", b.display())]);
    c.expect_code(0);
    // Same lines, same shapes, every one (the header and the table).
    let shapes = |s: &str| s.lines().map(shape).collect::<Vec<_>>();
    let (ours_shapes, c_shapes) = (shapes(&r.stdout), shapes(&c.stdout));
    assert_eq!(
        ours_shapes.len(),
        c_shapes.len(),
        "{}\n{}",
        r.stdout,
        c.stdout
    );
    for (o, c_line) in ours_shapes.iter().zip(&c_shapes) {
        // The main thread's CPU: C's 0, ours 0 too unless the lease forbids.
        assert_eq!(o, c_line);
    }
    // The verdict's lines only with --verdict.
    assert!(!r.stdout.contains("# Verdict"), "{}", r.stdout);
    let (ours_json, c_json) = (read_json(&a), read_json(&b));
    let labels = check_summary(&r.stdout, Some(&ours_json), true);
    assert_eq!(labels.len(), 32);
    assert_eq!(labels, check_summary(&c.stdout, Some(&c_json), false));
    let (ours_keys, c_keys) = (json_key_paths(&ours_json), json_key_paths(&c_json));
    assert!(
        c_keys.is_subset(&ours_keys),
        "{:?}",
        c_keys.difference(&ours_keys)
    );
    let t = &ours_json["thread"]["0"];
    let loops = t["loops"].as_u64().unwrap();
    let counted: u64 = t["histogram"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(loops, counted);
    assert!(t["ns_per_loop"].as_f64().unwrap() > 0.0);
    assert!(t["min_ns"].as_f64().unwrap() <= t["percentiles_ns"]["p50"].as_f64().unwrap());
    assert_eq!(ours_json["return_code"], 0);
    // rtlat compare reads both documents (C's: its histogram's counts,
    // read as oslat labels them; ours: its percentiles, and its
    // histogram's buckets for the intervals): rows are judged, none
    // for want of buckets.
    let compared = run(&mut rtlat_tool(
        "compare",
        [b.to_str().unwrap(), a.to_str().unwrap()],
    ));
    compared.expect_code(0);
    let out = &compared.stdout;
    assert!(out.contains("thread 0 (us)"), "{out}");
    assert!(
        out.contains("(rt-tests oslat:") && out.contains(" rows judged)"),
        "{out}"
    );
    assert!(!out.contains(" 0 rows judged)"), "{out}");
    assert!(!out.contains("no buckets"), "{out}");

    // An OpenShift-style check: the maxima of the `Maximum:` line, read
    // by awk, against a limit (theirs: OSLAT_MAXIMUM_LATENCY).
    let check = |limit: u64| {
        let script = format!(
            "max=$(grep -E '^ +Maximum:' | awk '{{for (i = 2; i < NF; i++) if ($i + 0 > m) m = $i + 0}} END {{print m + 0}}'); \
             echo \"$max\"; [ \"$max\" -le {limit} ]"
        );
        let mut sh = Command::new("sh");
        sh.args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = sh.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(r.stdout.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (out.status.success(), String::from_utf8(out.stdout).unwrap())
    };
    let max = ours_json["thread"]["0"]["max"].as_u64().unwrap();
    assert_eq!(check(max), (true, format!("{max}\n")));
    assert!(!check(max - 1).0);
}

#[test]
fn differential_quiet_zero_omit_bias_memmove() {
    require_root!();
    require_c_oslat!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let args = [
        "-q", "-z", "-B", "-b", "8", "-w", "memmove", "-m", "4k", "-c", &cpu, "-D", "1",
    ];
    let r = ours(&args);
    r.expect_code(0);
    let c = c_oslat(&args);
    c.expect_code(0);
    for run in [&r, &c] {
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines[0], "oslat V 2.40");
        assert!(
            lines[1].starts_with("Global bias set to "),
            "{}",
            run.stdout
        );
        assert!(lines[2].trim_start().starts_with("Core:"), "-q: no header");
        let bias: u64 = lines[1]
            .trim_start_matches("Global bias set to ")
            .trim_end_matches(" (us)")
            .parse()
            .unwrap();
        let labels = check_summary(&run.stdout, None, std::ptr::eq(run, &r));
        let last = format!("{:03} (us)", bias + 8);
        assert_eq!(labels.last(), Some(&last));
        assert!(labels.len() <= 8);
        // `...` stands for empty rows, never twice in a row, never last.
        for w in lines.windows(2) {
            assert!(!(w[0] == "    ..." && w[1] == "    ..."));
        }
        assert!(labels.windows(2).all(|w| w[0] < w[1]));
    }
}

#[test]
fn sigint_and_sigterm_end_with_the_summary_and_gates_judge_it() {
    require_root!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("j.xml");
    for (signal, gate) in [("INT", true), ("TERM", false)] {
        let mut args = vec!["-c".to_owned(), cpu.clone(), "-D".into(), "60".into()];
        if gate {
            args.extend([
                "--fail-if=max>0us".into(),
                format!("--junit={}", junit.display()),
            ]);
        }
        let child = spawn(rtlat_tool("oslat", &args).stdin(Stdio::null()));
        child.wait_for_stdout(Duration::from_secs(10), "Test starts...", |s| {
            s.contains("Test starts...")
        });
        std::thread::sleep(Duration::from_millis(200));
        child.signal(signal);
        let r = child.wait(Duration::from_secs(10));
        r.expect_code(if gate { 3 } else { 0 });
        assert!(r.stdout.contains("Test completed.\n\n"), "{}", r.stdout);
        check_summary(&r.stdout, None, true);
        let duration = nums(row(&table(&r.stdout), "Duration"))[0];
        assert!(duration < 30.0, "SIG{signal} ended the run: {duration}");
        if gate {
            assert!(r.stderr.contains("max"), "{}", r.stderr);
            assert!(
                std::fs::read_to_string(&junit)
                    .unwrap()
                    .contains("<testsuite")
            );
        }
    }
}

#[test]
fn sigkill_leaves_no_thread_and_no_load_helper() {
    require_root!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let mut cmd = rtlat_tool(
        "oslat",
        [
            "-c",
            &cpu,
            "-D",
            "60",
            "--load",
            "fork:1",
            "--load-cpus",
            &cpu,
        ],
    );
    cmd.stdin(Stdio::null()).process_group(0);
    let child = spawn(&mut cmd);
    let pid = child.pid();
    child.wait_for_stdout(Duration::from_secs(10), "Test starts...", |s| {
        s.contains("Test starts...")
    });
    child.signal("KILL");
    let _ = child.wait(Duration::from_secs(5));
    let alive = || {
        let mut left = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let Some((_, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.get(2) == Some(&pid.to_string().as_str()) && f.first() != Some(&"Z") {
                left.push(stat);
            }
        }
        left
    };
    let gone = crate::support::wait_until(Duration::from_secs(2), || alive().is_empty());
    assert!(gone, "left behind: {:?}", alive());
}

#[test]
fn trace_threshold_marks_and_stops_the_trace() {
    require_root!();
    let guard = TraceGuard::acquire();
    let Some(dir) = guard.dir.clone() else {
        skip_note!("SKIPPED (needs tracefs): {}", function_name!());
        return;
    };
    guard.set_tracing_on("1");
    let lease = CpuLease::one();
    // -T 1: the first gap reaches it (every gap is at least C's 1 us).
    let r = ours(&["-q", "-T", "1", "-c", &lease.list(), "-D", "5"]);
    drop(lease);
    r.expect_code(1);
    assert!(
        r.stderr.ends_with(&format!(
            ": Trace threshold (1 us) triggered on cpu {} with 1 us!\nStopping the test.\n",
            r.stdout
                .lines()
                .find(|l| l.trim_start().starts_with("Core:"))
                .unwrap()
                .split_whitespace()
                .nth(1)
                .unwrap()
        )),
        "{}",
        r.stderr
    );
    assert_eq!(
        guard.tracing_on().as_deref(),
        Some("0"),
        "-T stops the trace"
    );
    let trace = std::fs::read_to_string(dir.join("trace")).unwrap_or_default();
    assert!(
        trace.contains("Trace threshold (1 us) triggered"),
        "no marker"
    );
}
