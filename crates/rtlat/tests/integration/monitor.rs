//! `rtlat monitor`: real scrapes of `/metrics` checked by the counters'
//! growth and by `promtool check metrics`, the textfile read while it is
//! rewritten, SIGKILL then `--resume`, and bad input. Real runs (root),
//! each a few seconds, on leased CPUs: every CPU for the default of one
//! thread per CPU, one CPU (`-a`) where the test is about something else.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::support::cpus::CpuLease;
use crate::support::realtime_check::assert_kept_to_its_lease;
use crate::support::*;

/// A monitor started by a test: its address, its stderr drained in the
/// background after the first line.
struct Monitor {
    child: Child,
    address: Option<SocketAddr>,
    rest_of_stderr: Option<JoinHandle<String>>,
    stdout: Option<JoinHandle<String>>,
}

impl Monitor {
    /// `rtlat monitor ARGS`; when it serves, waits for the line saying
    /// where.
    fn start(args: &[&str]) -> Monitor {
        let mut child = rtlat()
            .arg("monitor")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn_checked()
            .expect("spawning rtlat monitor");
        let mut stdout = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stdout.read_to_string(&mut s);
            s
        });
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let serves = args.contains(&"--listen");
        let mut first = String::new();
        let address = if serves {
            stderr.read_line(&mut first).unwrap();
            let at = first
                .split("http://")
                .nth(1)
                .and_then(|s| s.split('/').next())
                .unwrap_or_else(|| panic!("no address in {first:?}"));
            Some(at.parse().unwrap())
        } else {
            None
        };
        let rest_of_stderr = std::thread::spawn(move || {
            let mut s = first;
            let _ = stderr.read_to_string(&mut s);
            s
        });
        Monitor {
            child,
            address,
            rest_of_stderr: Some(rest_of_stderr),
            stdout: Some(stdout),
        }
    }

    /// `GET /metrics` with `accept`; the body.
    fn scrape(&self, accept: &str) -> String {
        let mut s = TcpStream::connect(self.address.unwrap()).unwrap();
        s.set_read_timeout(Some(safety_net(Duration::from_secs(5))))
            .unwrap();
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: t\r\nAccept: {accept}\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
        body.to_owned()
    }

    /// Sends `signal` and waits for the end: (exit code, stdout, stderr).
    fn stop(mut self, signal: &str) -> (Option<i32>, String, String) {
        send_signal(self.child.id(), signal);
        self.wait()
    }

    /// SIGKILL, reaped; its threads kept to the test's lease.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        assert_kept_to_its_lease(self.child.id());
    }

    /// The end, within a safety net: (exit code, stdout, stderr); its
    /// threads kept to the test's lease.
    fn wait(&mut self) -> (Option<i32>, String, String) {
        let deadline = Instant::now() + safety_net(Duration::from_secs(15));
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the monitor did not end");
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = self.stdout.take().unwrap().join().unwrap();
        let err = self.rest_of_stderr.take().unwrap().join().unwrap();
        assert_kept_to_its_lease(self.child.id());
        (status.code(), out, err)
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of the sample `name{labels}` (labels as written, in order).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

/// Every `(cpu, thread)` label pair of the samples counter.
fn threads_of(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("rtlat_samples_total"))
        .filter_map(|l| l.split(' ').next())
        .map(str::to_owned)
        .collect()
}

/// `promtool check metrics` on `text`; `None` when promtool is missing.
fn promtool(text: &str) -> Option<(bool, String)> {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_checked()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success() && said.trim().is_empty(), said))
}

impl Monitor {
    /// Scrapes (`*/*`) until the monitor has published an update other
    /// than `seen` (it updates once a second; before the first, the
    /// samples are not there): the new one.
    fn next_update(&self, seen: Option<&str>) -> String {
        let mut scraped = String::new();
        let updated = wait_until(Duration::from_secs(10), || {
            scraped = self.scrape("*/*");
            !threads_of(&scraped).is_empty() && Some(scraped.as_str()) != seen
        });
        assert!(
            updated,
            "no new update within 10 s; the last scrape:\n{scraped}"
        );
        scraped
    }
}

#[test]
fn a_real_scrape_grows_and_promtool_has_nothing_to_say() {
    require_root!();
    // The default: one thread on each CPU.
    let lease = CpuLease::all();
    let m = Monitor::start(&["--listen", "127.0.0.1:0", "-D", "6", "--window", "2s,1m"]);
    let mut scrapes = vec![m.next_update(None)];
    for _ in 1..3 {
        let next = m.next_update(scrapes.last().map(String::as_str));
        scrapes.push(next);
    }
    let threads = threads_of(&scrapes[0]);
    assert_eq!(threads.len(), lease.cpus().len(), "{}", scrapes[0]);
    for labels in &threads {
        let samples: Vec<f64> = scrapes
            .iter()
            .map(|s| sample(s, &format!("rtlat_samples_total{labels}")).unwrap())
            .collect();
        assert!(samples.windows(2).all(|w| w[0] < w[1]), "{samples:?}");
        for s in &scrapes {
            let count = sample(s, &format!("rtlat_latency_seconds_count{labels}"));
            let total = sample(s, &format!("rtlat_samples_total{labels}"));
            assert_eq!(count, total, "the histogram's _count is the samples");
            let inner = labels.trim_end_matches('}');
            let inf = sample(
                s,
                &format!("rtlat_latency_seconds_bucket{inner},le=\"+Inf\"}}"),
            );
            assert_eq!(inf, count);
            let window_max = sample(
                s,
                &format!("rtlat_latency_max_seconds{inner},window=\"2s\"}}"),
            );
            let all_max = sample(
                s,
                &format!("rtlat_latency_max_seconds{inner},window=\"all\"}}"),
            );
            assert!(window_max.unwrap() <= all_max.unwrap(), "{s}");
        }
    }
    let om = m.scrape("application/openmetrics-text; version=1.0.0");
    assert!(om.ends_with("# EOF\n") && om.contains("# TYPE rtlat_samples counter"));
    match promtool(&scrapes[2]) {
        Some((clean, said)) => assert!(clean, "promtool check metrics: {said}"),
        None => skip_note!(
            "SKIPPED promtool check (promtool not installed): {}",
            function_name!()
        ),
    }
    let (code, out, err) = m.stop("INT");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(parse_status_lines(&out).len(), threads.len(), "{out}");
}

#[test]
fn the_textfile_is_always_whole() {
    skip_if_emulated!(
        "two versions of the file must come within a window an emulated run does not keep"
    );
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rtlat.prom");
    let mut m = Monitor::start(&[
        "--textfile",
        path.to_str().unwrap(),
        "-D",
        "4",
        "-a",
        &lease.list(),
    ]);
    // Read for as long as the monitor runs (its -D 4 writes a version a
    // second), not for a fixed time: a start slowed down by a busy
    // machine must not cost the versions the test counts.
    let limit = Instant::now() + safety_net(Duration::from_secs(30));
    let (mut reads, mut contents) = (0, std::collections::HashSet::new());
    while m.child.try_wait().unwrap().is_none() && Instant::now() < limit {
        if let Ok(text) = std::fs::read_to_string(&path) {
            reads += 1;
            assert!(
                text.ends_with('\n') && text.contains("\nrtlat_checkpoint_failures_total 0\n"),
                "a partial textfile:\n{text}"
            );
            contents.insert(text);
        }
    }
    let (code, _, err) = { m }.wait_for_end();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        reads > 100 && contents.len() >= 3,
        "{reads} reads, {} versions",
        contents.len()
    );
    // No temporary file is left beside it.
    assert_eq!(listing(dir.path()), ["rtlat.prom"]);
    let last = std::fs::read_to_string(&path).unwrap();
    if let Some((clean, said)) = promtool(&last) {
        assert!(clean, "promtool check metrics: {said}");
    }
}

impl Monitor {
    fn wait_for_end(mut self) -> (Option<i32>, String, String) {
        self.wait()
    }
}

/// The checkpoint's `monitor` member, once it has been written `times`
/// times (its `written` changed).
fn checkpoint_written(path: &Path, times: usize, limit: Duration) -> serde_json::Value {
    let limit = safety_net(limit);
    let began = Instant::now();
    let mut seen = Vec::new();
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            let doc: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("a checkpoint that is not whole: {e}\n{text}"));
            let written = doc["monitor"]["written"].as_f64().unwrap();
            if !seen.contains(&written.to_bits()) {
                seen.push(written.to_bits());
            }
            if seen.len() >= times {
                return doc;
            }
        }
        assert!(
            began.elapsed() < limit,
            "checkpoint not written {times} times"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn cycles(doc: &serde_json::Value) -> Vec<u64> {
    doc["monitor"]["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cycles"].as_u64().unwrap())
        .collect()
}

#[test]
fn sigkill_then_resume_carries_the_totals_on_and_records_the_gap() {
    require_root!();
    let lease = CpuLease::one();
    let cpu = lease.list();
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("state.json");
    let cp = checkpoint.to_str().unwrap();
    let m = Monitor::start(&[
        "-a",
        &cpu,
        "--checkpoint",
        cp,
        "--checkpoint-interval",
        "1",
        "--textfile",
        dir.path().join("m.prom").to_str().unwrap(),
    ]);
    checkpoint_written(&checkpoint, 2, Duration::from_secs(10));
    let pid = m.child.id();
    let killed_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    m.kill();
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "nothing outlives it"
    );
    let before: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&checkpoint).unwrap()).unwrap();
    let lost = killed_at - before["monitor"]["written"].as_f64().unwrap();
    assert!(
        lost < 2.5,
        "lost {lost:.2} s: more than one interval (1 s) and its slack"
    );
    let base = cycles(&before);
    assert!(base.iter().all(|&c| c > 500), "{base:?}");

    let json = dir.path().join("final.json");
    let r = run_with_timeout(
        rtlat()
            .args([
                "monitor",
                "-a",
                &cpu,
                "-D",
                "2",
                "--checkpoint",
                cp,
                "--resume",
                "--json",
            ])
            .arg(&json),
        Duration::from_secs(15),
    );
    r.expect_code(0);
    assert!(
        r.stderr.contains("resumed:") && r.stderr.contains("gap of"),
        "{}",
        r.stderr
    );
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let last_checkpoint: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&checkpoint).unwrap()).unwrap();
    assert_eq!(
        after, last_checkpoint,
        "the last checkpoint is the final --json"
    );
    let total = cycles(&after);
    for (t, (&b, &n)) in base.iter().zip(&total).enumerate() {
        let this_run = n - b;
        assert!(
            (1500..=2100).contains(&this_run),
            "thread {t}: {b} then {n}"
        );
        let thread = &after["thread"][t.to_string()];
        assert_eq!(
            thread["cycles"].as_u64(),
            Some(n),
            "the summary counts both"
        );
        let in_distribution: u64 = thread["distribution"]["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[2].as_u64().unwrap())
            .sum();
        assert_eq!(in_distribution, n, "every sample counted once");
    }
    let gaps = after["monitor"]["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0]["from"], before["monitor"]["written"]);
    assert!(gaps[0]["seconds"].as_f64().unwrap() >= 0.0);
    assert_eq!(
        after["monitor"]["first_start"],
        before["monitor"]["first_start"]
    );
    // Read like any result.
    let compared = run(rtlat().args(["compare", cp]).arg(&json));
    compared.expect_code(0);
    let svg = dir.path().join("c.svg");
    run(rtlat().args(["plot", cp, "-o"]).arg(&svg)).expect_code(0);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));

    // A checkpoint of other threads does not fit (two on the CPU of its
    // one).
    let r = run(rtlat().args([
        "monitor",
        "-a",
        &cpu,
        "-t",
        "2",
        "-D",
        "1",
        "--checkpoint",
        cp,
        "--resume",
    ]));
    r.expect_code(2);
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--resume") && r.stderr.contains("CPUs"),
        "{}",
        r.stderr
    );
}

#[test]
fn an_address_in_use_is_one_line_and_exit_1_before_any_sample() {
    require_root!();
    // No lease: it ends before its first thread starts, and a real-time
    // thread of a run without one would fail the test.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let r = run(rtlat().args(["monitor", "-D", "2", "--listen", &address]));
    r.expect_code(1);
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&address) && r.stderr.contains("in use"),
        "{}",
        r.stderr
    );
    assert!(parse_status_lines(&r.stdout).is_empty(), "{}", r.stdout);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.json");
    let corrupt = dir.path().join("corrupt.json");
    std::fs::write(&corrupt, "{\"monitor\": ").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--listen".into(), "nothere".into()],
            "--listen: invalid value 'nothere'",
        ),
        (
            vec![
                "--checkpoint".into(),
                dir.path().join("c").display().to_string(),
                "--checkpoint-interval".into(),
                "0".into(),
            ],
            "--checkpoint-interval: invalid value '0'",
        ),
        (
            vec![
                "--checkpoint".into(),
                missing.display().to_string(),
                "--resume".into(),
            ],
            "--resume: there is no checkpoint at",
        ),
        (vec!["--resume".into()], "--resume needs --checkpoint FILE"),
        (
            vec![
                "--checkpoint".into(),
                corrupt.display().to_string(),
                "--resume".into(),
            ],
            "--resume: '",
        ),
        (
            vec!["--window".into(), "0s".into()],
            "--window: invalid value '0s'",
        ),
        (vec!["-v".into()], "-v/--verbose: not with rtlat monitor"),
        (vec!["-h".into(), "100".into()], "not with rtlat monitor"),
        (
            vec!["--synthetic".into(), "1".into()],
            "--synthetic: not with rtlat monitor",
        ),
        (
            vec![
                "--stats-interval".into(),
                "5".into(),
                "--stats-file".into(),
                dir.path().join("s").display().to_string(),
            ],
            "at most 1 s",
        ),
    ];
    for (args, want) in cases {
        let r = run(rtlat().arg("monitor").args(&args));
        r.expect_code(2);
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{args:?}: {}", r.stderr);
        assert!(lines[0].starts_with("rtlat monitor: "), "{}", lines[0]);
        assert!(
            lines[0].contains(want),
            "{args:?}: {}\nwanted: {want}",
            lines[0]
        );
        assert!(r.stdout.is_empty());
    }
    // cyclictest does not take the monitor's options.
    let r = run(&mut rtlat_cyclictest([
        "--listen",
        "127.0.0.1:0",
        "-l",
        "1",
    ]));
    r.expect_code(2);
    assert!(
        r.stderr.contains("--listen: an option of rtlat monitor"),
        "{}",
        r.stderr
    );
}

/// The assignments of an environment file as systemd reads it (`KEY=VALUE`
/// lines, a value in double quotes taken without them; comments and
/// blank lines skipped), in order.
fn environment_file(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (key, value) = l
                .split_once('=')
                .unwrap_or_else(|| panic!("not KEY=VALUE: {l:?}"));
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            (key.to_owned(), value.to_owned())
        })
        .collect()
}

/// contrib/systemd/rtlat-monitor.service with its environment file
/// (rtlat-monitor.default, installed as /etc/default/rtlat-monitor):
/// `systemd-analyze verify` accepts the unit (when there) with rtlat's
/// generated man pages on MANPATH, so that its `man:` references name
/// pages rtlat has; the file's listen address is the one the scrape
/// config beside the alert rules scrapes; and the unit's ExecStart, run
/// as systemd would run it (with `$$` as `$`, the file's variables in its
/// environment, rtlat and the state directory where the test has them,
/// port 0 for 9489, and `-D 2 -a CPU` added to the file's options as a
/// user would add them), starts fresh, then resumes.
#[test]
fn the_systemd_unit_starts_fresh_then_resumes() {
    require_root!();
    let lease = CpuLease::one();
    let contrib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib");
    let unit = contrib.join("systemd/rtlat-monitor.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    let pages = tempfile::tempdir().unwrap();
    rtlat_plot_path();
    run(rtlat().arg("--generate").arg("man").arg(pages.path())).expect_code(0);
    match Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .env("MANPATH", pages.path().join("share/man"))
        .output_checked()
    {
        Ok(out) => assert!(
            out.status.success() && out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => skip_note!(
            "SKIPPED systemd-analyze verify (not installed): {}",
            function_name!()
        ),
    }
    assert!(text.contains("\nKillSignal=SIGINT\n") && text.contains("\nRestart=always\n"));
    assert!(text.contains("\nEnvironmentFile=-/etc/default/rtlat-monitor\n"));
    let documentation = text
        .lines()
        .find_map(|l| l.strip_prefix("Documentation="))
        .expect("Documentation=");
    for reference in documentation.split_whitespace() {
        let page = reference
            .strip_prefix("man:")
            .and_then(|r| r.strip_suffix("(1)"))
            .unwrap_or_else(|| panic!("not a man: page of section 1: {reference}"));
        assert!(
            pages
                .path()
                .join(format!("share/man/man1/{page}.1"))
                .is_file(),
            "{reference}: rtlat --generate makes no such page"
        );
    }
    let defaults = environment_file(
        &std::fs::read_to_string(contrib.join("systemd/rtlat-monitor.default")).unwrap(),
    );
    let keys: Vec<&str> = defaults.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["RTLAT_MONITOR_LISTEN", "RTLAT_MONITOR_OPTIONS"]);
    // As shipped, this machine only (a port open to the network is the
    // user's choice), and the scrape config shipped scrapes it there.
    let listen: SocketAddr = defaults[0].1.parse().expect("an IP:PORT");
    assert!(
        listen.ip().is_loopback() && listen.port() == 9489,
        "{listen}"
    );
    let scrape = std::fs::read_to_string(contrib.join("prometheus/prometheus-scrape.yml")).unwrap();
    assert!(scrape.contains("targets: ['localhost:9489']"), "{scrape}");
    let exec = text
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart=/bin/sh -c '"))
        .and_then(|l| l.strip_suffix('\''))
        .expect("ExecStart=/bin/sh -c '...'");
    assert!(
        exec.contains("$${RTLAT_MONITOR_LISTEN") && exec.contains("$$RTLAT_MONITOR_OPTIONS"),
        "{exec}"
    );
    let state = tempfile::tempdir().unwrap();
    let script = exec
        .replace("$$", "$")
        .replace("/usr/bin/rtlat", rtlat_path().to_str().unwrap())
        .replace("/var/lib/rtlat", state.path().to_str().unwrap());
    let options = format!("{} -D 2 -a {}", defaults[1].1, lease.list());
    let start = || {
        run(Command::new("sh")
            .args(["-c", &script])
            .env("RTLAT_MONITOR_LISTEN", "127.0.0.1:0")
            .env("RTLAT_MONITOR_OPTIONS", &options))
    };
    let first = start();
    first.expect_code(0);
    assert!(
        first
            .stderr
            .contains("serving metrics on http://127.0.0.1:"),
        "{}",
        first.stderr
    );
    assert!(!first.stderr.contains("resumed"), "{}", first.stderr);
    assert!(state.path().join("monitor.json").is_file());
    let second = start();
    second.expect_code(0);
    assert!(second.stderr.contains("resumed:"), "{}", second.stderr);
}
