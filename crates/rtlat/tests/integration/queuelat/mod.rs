//! `rtlat queuelat`: the packet queue simulation, against
//! `/usr/bin/queuelat` (rt-tests 2.4): the same first lines exactly, the
//! same exit block by shape (histogram, `...` runs, `[70000 - END]`,
//! min/max/average), exit 0 at the timeout; "exceeded" for a queue that
//! cannot keep up and not for one that can, read the way
//! determine_maximum_mpps reads it (a script calling `queuelat` through
//! PATH and grepping "exceeded"); SIGINT/SIGTERM end with the exit block;
//! bad input in one line. The copy loop runs on a leased CPU, at the
//! normal policy; every run is bounded by -t or a signal.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::{rtlat_path, run, shape, spawn};

const C_TOOL: &str = "/usr/bin/queuelat";

/// `rtlat queuelat ARGS` kept on the lease's CPU.
fn ours(lease: &CpuLease, args: &[&str]) -> Command {
    let mut cmd = lease.pinned(&rtlat_path().to_string_lossy());
    cmd.arg("queuelat").args(args).stdin(Stdio::null());
    cmd
}

/// The exit block's lines: from the first histogram line after the last
/// `default_n=`/`exceeded` line (or the header) to the end, by shape.
fn exit_block(stdout: &str) -> Vec<String> {
    let lines: Vec<&str> = stdout.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| {
            l.starts_with("max_queue_len = ")
                || l.starts_with("default_n=")
                || l.starts_with("queue length exceeded:")
        })
        .expect("a header line")
        + 1;
    lines[start..].iter().map(|l| shape(l)).collect()
}

/// Checks the exit block's form: bucket lines or `...`, the outlier
/// bucket last, the separator and the three figures.
fn check_exit_block(block: &[String]) {
    let n = block.len();
    assert!(n >= 6, "{block:?}");
    assert_eq!(block[n - 6], "[N - END] = N", "{block:?}");
    assert_eq!(block[n - 5], "", "{block:?}");
    assert_eq!(block[n - 4], " ---------------- ", "{block:?}");
    assert_eq!(block[n - 3], "Min loop processing time: [N - N] = N");
    assert_eq!(block[n - 2], "Max loop processing time: [N - N] = N");
    assert_eq!(block[n - 1], "Avg loop processing time:N");
    for line in &block[..n - 6] {
        assert!(
            line == "..." || line == "[N - N] = N",
            "{line:?} in {block:?}"
        );
    }
}

#[test]
fn same_header_and_exit_block_as_c_at_the_timeout() {
    if !Path::new(C_TOOL).is_file() {
        skip_note!("SKIPPED (needs {C_TOOL}): {}", function_name!());
        return;
    }
    let lease = CpuLease::one();
    let args = [
        "-m", "20000", "-c", "300", "-f", "2100", "-p", "0.001", "-t", "1",
    ];
    let mut c = lease.pinned(C_TOOL);
    c.args(args);
    let c = run(&mut c);
    let o = run(&mut ours(&lease, &args));
    c.expect_code(0);
    o.expect_code(0);
    let head = "tsc_freq_ghz = 2.100000, cycles_to_ns = 0.476191\nmax_queue_len = 140\n";
    assert!(c.stdout.starts_with(head), "{}", c.stdout);
    assert!(o.stdout.starts_with(head), "{}", o.stdout);
    check_exit_block(&exit_block(&c.stdout));
    check_exit_block(&exit_block(&o.stdout));
    // 0.001 Mpps fills nothing in a block: never exceeded.
    assert!(!o.stdout.contains("exceeded"), "{}", o.stdout);
    if let Some(calibrated) = o.stdout.lines().find(|l| l.starts_with("default_n=")) {
        assert_eq!(
            shape(calibrated),
            "default_n=N nr_packets_drain_per_block=N"
        );
        let fill = o
            .stdout
            .lines()
            .find(|l| l.contains("packetfillrates"))
            .unwrap();
        assert_eq!(shape(fill), "[N - N] = N packetfillrates=[N - N]");
    }
}

/// What determine_maximum_mpps does with each rate it tries: run
/// `queuelat` by name through PATH, pinned, and grep "exceeded".
const PROBE: &str = r#"taskset -c "$CPU" queuelat -m 2000 -c 300 -f 2100 -p "$MPPS" -t "$T" > "$OUT"
exceeded=$(grep exceeded "$OUT")
if [ ! -z "$exceeded" ]; then echo "mpps $MPPS failed"; else echo "mpps $MPPS ok"; fi
"#;

#[test]
fn determine_maximum_mpps_reads_exceeded_through_path() {
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(rtlat_path(), bin.join("queuelat")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (mpps, timeout, verdict) in [("100", "5", "failed"), ("0.001", "1", "ok")] {
        let out = dir.path().join(format!("out-{mpps}"));
        let r = run(Command::new("sh")
            .args(["-c", PROBE])
            .env("PATH", &path)
            .env("CPU", lease.list())
            .env("MPPS", mpps)
            .env("T", timeout)
            .env("OUT", &out)
            .stdin(Stdio::null()));
        r.expect_code(0);
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(r.stdout, format!("mpps {mpps} {verdict}\n"), "{text}");
        check_exit_block(&exit_block(&text));
        if verdict == "failed" {
            let line = text.lines().find(|l| l.contains("exceeded")).unwrap();
            assert_eq!(
                shape(line),
                "queue length exceeded: queue_size=N max_queue_len=N"
            );
            assert!(line.ends_with("max_queue_len=14"), "{line}");
        }
    }
}

#[test]
fn a_stop_signal_ends_with_the_exit_block() {
    let lease = CpuLease::one();
    for sig in ["INT", "TERM"] {
        let child = spawn(&mut ours(
            &lease,
            &["-m", "2000", "-c", "300", "-f", "2100", "-p", "0.001"],
        ));
        child.wait_for_stdout(Duration::from_secs(10), "the header", |s| {
            s.contains("max_queue_len = ")
        });
        std::thread::sleep(Duration::from_millis(300));
        child.signal(sig);
        let r = child.wait(Duration::from_secs(10));
        r.expect_code(0);
        check_exit_block(&exit_block(&r.stdout));
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let base = [
        "-m", "2000", "-c", "300", "-f", "2100", "-p", "3", "-t", "1",
    ];
    for (bad, prefix) in [
        (&["-m", "x"][..], "-m/--max-len: invalid value 'x'"),
        (&["-c", "0"], "-c/--cycles: invalid value '0'"),
        (&["-f", "abc"], "-f/--freq: invalid value 'abc'"),
        (&["-p", "0"], "-p/--packets: invalid value '0'"),
        (&["-t", "-1"], "-t/--timeout: invalid value '-1'"),
        (&["-q", "y"], "-q/--queue-len: invalid value 'y'"),
        (&["-z"], "unrecognized option '-z'"),
    ] {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(bad);
        let r = run(crate::support::rtlat_tool("queuelat", &args).stdin(Stdio::null()));
        r.expect_code(2);
        assert_eq!(r.stdout, "", "{args:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(prefix), "{args:?}: {}", r.stderr);
    }
    let r = run(crate::support::rtlat_tool("queuelat", ["-m", "2000"]).stdin(Stdio::null()));
    r.expect_code(2);
    assert!(
        r.stderr.contains("options -m, -c, -p and -f are required"),
        "{}",
        r.stderr
    );
    let h = run(crate::support::rtlat_tool("queuelat", ["--help"]).stdin(Stdio::null()));
    h.expect_code(0);
    assert!(h.stdout.contains("--max-len"));
}
