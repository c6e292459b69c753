//! rtlat's `--rt-tests` dialects side by side with the real newer rt-tests
//! programs (2.10, 2.6), which `ci/rt-tests-newer install` unpacks and
//! which start through their own loader (`support::newer`): the same
//! command, both tools, outputs compared by shape and invariants, JSON
//! keys exactly (C's keys, in C's order, are ours too). Root and a CPU
//! lease; each run is bounded by `-l` and well under a second. Without
//! the unpacked release a test says SKIPPED. And, with no privilege, the
//! environment variable that pins a dialect.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use crate::support::cpus::CpuLease;
use crate::support::ipc::{c_ipc_tools_lock, on_leased_cpu};
use crate::support::newer::Release;
use crate::support::{
    Run, json_key_paths, read_json, rtlat_path, rtlat_tool, run, shape, synthetic,
};

/// `rtlat PROGRAM --rt-tests=VERSION ARGS...` kept on the lease's CPU.
fn ours(lease: &CpuLease, version: &str, program: &str, args: &[&str]) -> Run {
    let mut cmd = lease.pinned(&rtlat_path().to_string_lossy());
    cmd.arg(program)
        .arg(format!("--rt-tests={version}"))
        .args(args)
        .env_remove("RTLAT_RT_TESTS");
    let r = run(&mut cmd);
    r.expect_code(0);
    r
}

/// The release's `PROGRAM ARGS...` kept on the lease's CPU.
fn theirs(release: &Release, lease: &CpuLease, program: &str, args: &[&str]) -> Run {
    let r = run(&mut release.pinned(lease, program, args));
    r.expect_code(0);
    r
}

/// One comparison's set-up: the release, the CPU lease (and its CPU list
/// for the tools' options), a temporary directory and, in it, C's JSON
/// file and ours.
struct SideBySide {
    release: Release,
    lease: CpuLease,
    cpu: String,
    dir: tempfile::TempDir,
    c_json: PathBuf,
    r_json: PathBuf,
}

impl SideBySide {
    /// `c.json` and `r.json` in a new temporary directory.
    fn new(release: Release, lease: CpuLease) -> SideBySide {
        let dir = tempfile::tempdir().unwrap();
        SideBySide {
            release,
            cpu: lease.list(),
            lease,
            c_json: dir.path().join("c.json"),
            r_json: dir.path().join("r.json"),
            dir,
        }
    }

    /// From now on, `NAME-c.json` and `NAME-r.json`.
    fn name_json(&mut self, name: &str) {
        self.c_json = self.dir.path().join(format!("{name}-c.json"));
        self.r_json = self.dir.path().join(format!("{name}-r.json"));
    }

    /// `args` and then `--json=FILE`.
    fn with_json(args: &[&str], file: &std::path::Path) -> Vec<String> {
        let mut words: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        words.push(format!("--json={}", file.display()));
        words
    }

    /// C's arguments: `args` and its `--json`.
    fn c_args(&self, args: &[&str]) -> Vec<String> {
        Self::with_json(args, &self.c_json)
    }

    /// Our arguments: `args` and our `--json`.
    fn r_args(&self, args: &[&str]) -> Vec<String> {
        Self::with_json(args, &self.r_json)
    }

    /// The release's `PROGRAM ARGS... --json=c.json` on the leased CPU.
    fn theirs(&self, program: &str, args: &[&str]) -> Run {
        let words = self.c_args(args);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        theirs(&self.release, &self.lease, program, &words)
    }

    /// `rtlat PROGRAM --rt-tests=VERSION ARGS... --json=r.json` on the
    /// leased CPU.
    fn ours(&self, version: &str, program: &str, args: &[&str]) -> Run {
        let words = self.r_args(args);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        ours(&self.lease, version, program, &words)
    }

    /// The text of C's JSON and of ours.
    fn json_texts(&self) -> (String, String) {
        (
            std::fs::read_to_string(&self.c_json).unwrap(),
            std::fs::read_to_string(&self.r_json).unwrap(),
        )
    }

    /// C's keys are ours, in C's order ([`assert_keys_exactly`]).
    fn assert_keys_exactly(&self) {
        let (c_text, r_text) = self.json_texts();
        assert_keys_exactly(&c_text, &r_text);
    }
}

/// The lines of `text` as shapes (numbers as `N`), each `# Thread N:`
/// line of the overflows cut after its colon (how many cycles it lists
/// is the run's).
fn shapes(text: &str) -> Vec<String> {
    text.lines().map(line_shape).collect()
}

fn line_shape(line: &str) -> String {
    let shaped = shape(line);
    match shaped.strip_prefix("# Thread N:") {
        Some(_) => "# Thread N:...".to_owned(),
        None => shaped,
    }
}

/// C's keys are ours, and each of C's objects lists them in C's order
/// (ours may add keys between and after them).
fn assert_keys_exactly(c_text: &str, ours_text: &str) {
    let c: serde_json::Value = serde_json::from_str(c_text).expect("C's JSON");
    let r: serde_json::Value = serde_json::from_str(ours_text).expect("our JSON");
    let (ck, rk) = (json_key_paths(&c), json_key_paths(&r));
    let missing: BTreeSet<_> = ck.difference(&rk).collect();
    assert!(missing.is_empty(), "keys C has and we lack: {missing:?}");
    assert_eq!(c["rt_test_version:"], r["rt_test_version:"]);
    // Key order, in the text: every key C writes, in C's sequence, is in
    // ours in the same sequence.
    let keys = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| {
                let l = l.trim_start();
                let key = l.strip_prefix('"')?.split_once("\":")?.0;
                (key.parse::<u64>().is_err()).then(|| key.to_owned())
            })
            .collect()
    };
    let (c_keys, r_keys) = (keys(c_text), keys(ours_text));
    let mut at = 0;
    for key in &c_keys {
        match r_keys[at..].iter().position(|k| k == key) {
            Some(i) => at += i + 1,
            None => panic!("C's key {key:?} out of C's order in ours:\n{r_keys:?}\nC: {c_keys:?}"),
        }
    }
}

/// rt-tests 2.7+'s histogram block, parsed and checked: bucket lines in
/// increasing order, each with a sample (and the sum column, with `sum`,
/// equal to the counts' sum), no `# Total:`, the figures' lines, one
/// `# Thread N: ` line each; with `cycles` (from the JSON), counts plus
/// overflows make every sample. Returns the lines that are not bucket
/// lines, as shapes.
fn check_2_10_block(text: &str, threads: usize, sum: bool, cycles: &[u64]) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == "# Histogram")
        .unwrap_or_else(|| panic!("no '# Histogram' in\n{text}"));
    assert!(!text.contains("# Total:"), "{text}");
    let mut counts = vec![0u64; threads];
    let mut last: Option<u64> = None;
    let mut i = start + 1;
    while !lines[i].starts_with("# Min Latencies:") {
        let line = lines[i];
        let (bucket, rest) = line.split_once(' ').expect("bucket line");
        assert_eq!(bucket.len(), 6, "{line:?}");
        let bucket: u64 = bucket.parse().unwrap();
        assert!(
            last.is_none_or(|b| b < bucket),
            "buckets in order: {line:?}"
        );
        last = Some(bucket);
        let cols: Vec<u64> = rest
            .split('\t')
            .map(|c| {
                assert_eq!(c.len(), 6, "{line:?}");
                c.parse().unwrap()
            })
            .collect();
        assert_eq!(cols.len(), threads + usize::from(sum), "{line:?}");
        let row = &cols[..threads];
        assert!(row.iter().any(|&c| c > 0), "an empty bucket: {line:?}");
        if sum {
            assert_eq!(cols[threads], row.iter().sum::<u64>(), "{line:?}");
        }
        for (t, c) in row.iter().enumerate() {
            counts[t] += c;
        }
        i += 1;
    }
    let overflows: Vec<u64> = lines[i..]
        .iter()
        .find_map(|l| l.strip_prefix("# Histogram Overflows:"))
        .expect("overflows line")
        .split_whitespace()
        .take(threads)
        .map(|n| n.parse().unwrap())
        .collect();
    for t in 0..threads {
        assert_eq!(counts[t] + overflows[t], cycles[t], "thread {t}\n{text}");
        assert!(
            lines[i..]
                .iter()
                .any(|l| l.starts_with(&format!("# Thread {t}: "))),
            "{text}"
        );
    }
    lines[i..].iter().map(|l| line_shape(l)).collect()
}

fn cycles(json: &serde_json::Value) -> Vec<u64> {
    let threads = json["thread"].as_object().expect("thread");
    (0..threads.len())
        .map(|t| threads[&t.to_string()]["cycles"].as_u64().unwrap())
        .collect()
}

/// cyclictest 2.10 and `--rt-tests=2.10` with two threads and `-H`: the
/// block without empty buckets or `# Total:`, the same lines after the
/// buckets, the JSON's keys and version; then rtlat compare and rtlat
/// plot read both documents.
#[test]
fn cyclictest_histogram_and_json_as_2_10() {
    require_root!();
    let release = require_rt_tests!("2.10");
    let s = SideBySide::new(release, CpuLease::one());
    let args = [
        "-q", "-m", "-p", "80", "-a", &s.cpu, "-t", "2", "-H", "40", "-i", "200", "-l", "300",
    ];
    let c = s.theirs("cyclictest", &args);
    let r = s.ours("2.10", "cyclictest", &args);
    s.assert_keys_exactly();
    let (cj, rj) = (&s.c_json, &s.r_json);
    let (c_json, r_json) = (read_json(cj), read_json(rj));
    assert_eq!(r_json["rt_test_version:"], "2.10");
    let c_tail = check_2_10_block(&c.stdout, 2, true, &cycles(&c_json));
    let r_tail = check_2_10_block(&r.stdout, 2, true, &cycles(&r_json));
    assert_eq!(
        c_tail, r_tail,
        "\n--- C ---\n{}\n--- rtlat ---\n{}",
        c.stdout, r.stdout
    );
    // Both documents read as results: compared, and plotted.
    let cmp = run(rtlat_tool("compare", ["c.json", "r.json"]).current_dir(s.dir.path()));
    cmp.expect_code(0);
    assert!(
        cmp.stdout.contains("BASE  c.json: 2 threads, 600 samples"),
        "{}",
        cmp.stdout
    );
    let svg = s.dir.path().join("p.svg");
    let plot = run(rtlat_tool("plot", [cj.as_os_str(), rj.as_os_str()])
        .arg("-o")
        .arg(&svg));
    plot.expect_code(0);
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
}

/// Without `-h`, 2.10's threads have no `"histogram"` at all (2.4: `{}`);
/// the `-q` summary is the same lines.
#[test]
fn cyclictest_without_histogram_as_2_10() {
    require_root!();
    let release = require_rt_tests!("2.10");
    let s = SideBySide::new(release, CpuLease::one());
    let base = ["-q", "-p", "80", "-a", &s.cpu, "-i", "200", "-l", "200"];
    let c = s.theirs("cyclictest", &base);
    let r = s.ours("2.10", "cyclictest", &base);
    assert_eq!(shapes(&c.stdout), shapes(&r.stdout));
    s.assert_keys_exactly();
    for (who, doc) in [("C", read_json(&s.c_json)), ("rtlat", read_json(&s.r_json))] {
        assert!(
            doc["thread"]["0"].get("histogram").is_none(),
            "{who}: {doc}"
        );
        assert_eq!(doc["thread"]["0"]["cpu"], s.lease.cpu() as u64, "{who}");
    }
}

/// signaltest and the four IPC tools of 2.10 and `--rt-tests=2.10`: the
/// same `-q` lines, C's JSON keys in C's order, version 2.10.
#[test]
fn signaltest_and_ipc_tools_as_2_10() {
    require_root!();
    let release = require_rt_tests!("2.10");
    let mut s = SideBySide::new(release, CpuLease::one());
    let affinity = on_leased_cpu(&s.lease);
    let cpu = s.cpu.clone();
    for program in [
        "signaltest",
        "svsematest",
        "pmqtest",
        "ptsematest",
        "sigwaittest",
    ] {
        s.name_json(program);
        let pin: Vec<&str> = if program == "signaltest" {
            vec!["-a", &cpu, "-t", "2"]
        } else {
            vec![&affinity]
        };
        let base = [&["-q", "-p", "80", "-l", "100"][..], &pin].concat();
        let c = {
            let _c_tools = (program != "signaltest").then(c_ipc_tools_lock);
            s.theirs(program, &base)
        };
        let r = s.ours("2.10", program, &base);
        assert_eq!(
            shapes(&c.stdout),
            shapes(&r.stdout),
            "{program}\n--- C ---\n{}\n--- rtlat ---\n{}",
            c.stdout,
            r.stdout
        );
        s.assert_keys_exactly();
        assert_eq!(
            read_json(&s.r_json)["rt_test_version:"],
            "2.10",
            "{program}"
        );
    }
}

/// cyclictest 2.6 (Debian 13's) and `--rt-tests=2.6`: 2.4's histogram
/// block, line for line, and version 2.60.
#[test]
fn cyclictest_as_2_6() {
    require_root!();
    let release = require_rt_tests!("2.6");
    let s = SideBySide::new(release, CpuLease::one());
    let base = [
        "-q", "-p", "80", "-a", &s.cpu, "-h", "20", "-i", "200", "-l", "200",
    ];
    let c = s.theirs("cyclictest", &base);
    let r = s.ours("2.6", "cyclictest", &base);
    assert_eq!(shapes(&c.stdout), shapes(&r.stdout));
    assert!(r.stdout.contains("\n# Total: "), "{}", r.stdout);
    s.assert_keys_exactly();
    assert_eq!(read_json(&s.r_json)["rt_test_version:"], "2.60");
}

/// `RTLAT_RT_TESTS` pins the dialect of every run a script starts; the
/// option wins over it (no privilege: synthetic runs).
#[test]
fn the_environment_pins_the_dialect_and_the_option_wins() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let json_of = |cmd: &mut Command| -> (String, serde_json::Value) {
        let r = run(cmd);
        r.expect_code(0);
        (r.stdout.clone(), read_json(&json))
    };
    let json_arg = format!("--json={}", json.display());
    let args = ["-q", "-l", "100", "-h", "30", &json_arg];
    let (text, doc) = json_of(synthetic(1, args).env("RTLAT_RT_TESTS", "2.10"));
    assert_eq!(doc["rt_test_version:"], "2.10");
    assert!(!text.contains("# Total:"), "{text}");
    let (text, doc) = json_of(
        synthetic(1, args)
            .arg("--rt-tests=2.4")
            .env("RTLAT_RT_TESTS", "2.10"),
    );
    assert_eq!(doc["rt_test_version:"], "2.40");
    assert!(text.contains("# Total:"), "{text}");
    assert!(
        text.contains("\n000000 000000\n"),
        "2.4 keeps empty buckets: {text}"
    );
}

/// oslat 2.10 and `--rt-tests=2.10` with 2.5's `-W` below 1 µs: the same
/// lines (labels `0.250 (us)` to `2.000 (us)`, `(MHz)`, the figures with
/// three decimals), C's JSON keys in C's order with the same fractional
/// histogram labels, version 2.10; and `-v`'s version line. One leased
/// CPU, 1 s each after the 1 s pre-heat.
#[test]
fn oslat_bucket_width_as_2_10() {
    require_root!();
    let release = require_rt_tests!("2.10");
    let s = SideBySide::new(release, CpuLease::one());
    let base = [
        "-c", &s.cpu, "-C", &s.cpu, "-D", "1", "-b", "8", "-W", "250",
    ];
    let c = s.theirs("oslat", &base);
    let r = s.ours("2.10", "oslat", &base);
    assert_eq!(
        shapes(&c.stdout),
        shapes(&r.stdout),
        "\n--- C ---\n{}\n--- rtlat ---\n{}",
        c.stdout,
        r.stdout
    );
    let labels: Vec<String> = (1..=8).map(|j| format!("{:.3}", j as f64 * 0.25)).collect();
    for out in [&c.stdout, &r.stdout] {
        assert!(out.starts_with("oslat V 2.10\n"), "{out}");
        assert!(out.contains("Counter Freq:\t "), "{out}");
        assert!(out.lines().any(|l| l.ends_with(" (MHz)")), "{out}");
        for label in &labels {
            assert!(
                out.contains(&format!("{label:>7} (us):\t ")),
                "{label}: {out}"
            );
        }
        for figure in ["Minimum", "Maximum", "Max-Min"] {
            let line = out
                .lines()
                .find(|l| l.trim_start().starts_with(figure))
                .unwrap();
            let value = line.split_whitespace().nth(1).unwrap();
            assert_eq!(
                value.split_once('.').map(|(_, d)| d.len()),
                Some(3),
                "{line}"
            );
        }
    }
    // The histogram's labels (which buckets have gaps is the run's) are
    // checked apart from the other keys.
    let without_buckets = |text: &str| -> String {
        text.lines()
            .filter(|l| {
                let l = l.trim_start();
                let Some((key, value)) = l.strip_prefix('"').and_then(|l| l.split_once("\":"))
                else {
                    return true;
                };
                !(key.contains('.') && key.parse::<f64>().is_ok() && !value.contains('{'))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (c_text, r_text) = s.json_texts();
    assert_keys_exactly(&without_buckets(&c_text), &without_buckets(&r_text));
    for doc in [read_json(&s.c_json), read_json(&s.r_json)] {
        assert_eq!(doc["rt_test_version:"], "2.10");
        let t = &doc["thread"]["0"];
        let h = t["histogram"].as_object().unwrap();
        assert!(
            !h.is_empty() && h.keys().all(|k| labels.contains(k)),
            "{h:?}"
        );
        // min and max in ns: the minimum below a µs, as the text's.
        assert!(t["min"].as_u64().unwrap() < 1000, "{t}");
        assert!(t["max"].as_u64().unwrap() >= t["min"].as_u64().unwrap());
    }
    // rtlat plot reads C's figures as ns there: its maximum in µs.
    let svg = s.dir.path().join("c.svg");
    run(&mut rtlat_tool(
        "plot",
        [s.c_json.as_os_str(), "-o".as_ref(), svg.as_os_str()],
    ))
    .expect_code(0);
    let max_us = read_json(&s.c_json)["thread"]["0"]["max"].as_f64().unwrap() / 1000.0;
    let label = format!("{max_us:.1}");
    let label = label.strip_suffix(".0").unwrap_or(&label);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.contains(&format!("maximum {label} µs")),
        "{label}: {picture}"
    );
    let c = run(&mut s.release.command("oslat", &["-v"]));
    let r = run(Command::new(rtlat_path()).args(["oslat", "--rt-tests=2.10", "-v"]));
    assert_eq!(
        (c.stdout.as_str(), r.stdout.as_str()),
        ("oslat V 2.10\n", "oslat V 2.10\n")
    );
}

/// cyclicdeadline 2.10 and `--rt-tests=2.10` with 2.7's `--histogram`:
/// `-q` prints the block instead of the `T:` lines (and no `interval:`,
/// `Tested at` or thread lines without `--verbose`/`--debug`, 2.6), the
/// block as cyclictest 2.7's (a line per non-empty bucket, no `# Total:`),
/// the JSON's `"histogram"` first in each thread, version 2.10. Every
/// CPU (C's cpusets), 1 s each, side by side.
#[test]
fn cyclicdeadline_histogram_as_2_10() {
    require_root!();
    let release = require_rt_tests!("2.10");
    let s = SideBySide::new(release, CpuLease::all());
    let base = ["-q", "-i", "10000", "-D", "1", "--histogram=30"];
    let c = run(s
        .release
        .command("cyclicdeadline", &s.c_args(&base))
        .current_dir(s.dir.path()));
    c.expect_code(0);
    let mut cmd = Command::new(rtlat_path());
    cmd.arg("cyclicdeadline")
        .arg("--rt-tests=2.10")
        .args(s.r_args(&base))
        .env_remove("RTLAT_RT_TESTS");
    let r = run(&mut cmd);
    r.expect_code(0);
    let strip_buckets =
        |text: &str| -> Vec<String> { shapes(text).into_iter().filter(|l| l != "N N").collect() };
    assert_eq!(
        strip_buckets(&c.stdout),
        strip_buckets(&r.stdout),
        "\n--- C ---\n{}\n--- rtlat ---\n{}",
        c.stdout,
        r.stdout
    );
    for out in [&c.stdout, &r.stdout] {
        assert!(
            out.contains("# Histogram\n") && !out.contains("# Total:"),
            "{out}"
        );
        assert!(!out.contains("T: 0") && !out.contains("Tested at"), "{out}");
        let buckets: Vec<u64> = out
            .lines()
            .filter(|l| l.len() == 13 && l.as_bytes()[6] == b' ')
            .map(|l| {
                let (b, n) = l.split_once(' ').unwrap();
                assert_ne!(n.parse::<u64>().unwrap(), 0, "{l}");
                b.parse().unwrap()
            })
            .collect();
        assert!(buckets.windows(2).all(|w| w[0] < w[1]) && buckets.iter().all(|&b| b < 30));
    }
    s.assert_keys_exactly();
    for file in [&s.c_json, &s.r_json] {
        let text = std::fs::read_to_string(file).unwrap();
        let mut lines = text.lines().skip_while(|l| l.trim() != "\"0\": {");
        lines.next();
        let first = lines.next().unwrap_or_default().trim_start();
        assert!(first.starts_with("\"histogram\": {"), "{text}");
        assert!(read_json(file)["thread"]["0"]["histogram"].is_object());
    }
}

/// The programs whose text and keys are 2.4's in every release (ssdd,
/// rt-migrate-test, pi_stress) write the dialect's version: C 2.10's keys
/// in C's order, `"2.10"`, and pi_stress's `-V` line. The whole machine's
/// lease: rt-migrate-test runs a task per CPU, and pi_stress `-u` runs on
/// CPU 0; each run is well under 2 s.
#[test]
fn pass_fail_tools_json_as_2_10() {
    require_root!();
    let release = require_rt_tests!("2.10");
    let mut s = SideBySide::new(release, CpuLease::all());
    let cases: [(&str, &[&str]); 3] = [
        ("ssdd", &["-f", "1", "-i", "100"]),
        ("rt-migrate-test", &["-c", "-q", "-l", "2", "-s", "50"]),
        ("pi_stress", &["-u", "-q", "-g", "1", "-D", "1"]),
    ];
    for (program, args) in cases {
        s.name_json(program);
        s.theirs(program, args);
        s.ours("2.10", program, args);
        s.assert_keys_exactly();
        assert_eq!(
            read_json(&s.r_json)["rt_test_version:"],
            "2.10",
            "{program}"
        );
    }
    let c = theirs(&s.release, &s.lease, "pi_stress", &["-V"]);
    let r = ours(&s.lease, "2.10", "pi_stress", &["-V"]);
    assert_eq!(c.stdout, "pi_stress v2.10 ");
    assert_eq!(r.stdout, c.stdout);
}
