//! `rtlat monitor`'s files: a FIFO or a file under /proc as `--textfile`
//! or `--checkpoint` is refused before the run (one line, exit 2) instead
//! of hanging it or failing after it; `--resume` refuses a checkpoint of
//! another host, of other options, or whose counters or buckets do not add
//! up, with one line, exit 2, the file left byte for byte; a checkpoint of
//! an older rtlat (no `measured` member) is resumed with a warning; the
//! temporary files a killed run left beside the checkpoint are removed,
//! and nothing else. Real runs (root) on one leased CPU, a second or two
//! each.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::support::cpus::CpuLease;
use crate::support::*;

/// A monitor bounded by `-D` that must be refused before it measures ends
/// well within it.
const REFUSED_WITHIN: Duration = Duration::from_secs(10);

/// `rtlat monitor` pinned to `lease` (one thread), serving on any free
/// port, then `args`.
fn monitor(lease: &CpuLease, args: &[&str]) -> std::process::Command {
    let mut cmd = rtlat();
    cmd.args([
        "monitor",
        "-a",
        &lease.list(),
        "-t",
        "1",
        "--listen",
        "127.0.0.1:0",
    ])
    .args(args);
    cmd
}

/// Refused before any sample: exit 2, one stderr line starting `rtlat
/// monitor: ` and containing every one of `wanted`, no status line, well
/// within the run's `-D`.
fn expect_refused(r: &Run, wanted: &[&str]) {
    let context = r.describe();
    assert_eq!(r.code(), Some(2), "{context}");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "one line\n{context}");
    assert!(lines[0].starts_with("rtlat monitor: "), "{context}");
    for want in wanted {
        assert!(lines[0].contains(want), "{want:?}\n{context}");
    }
    assert!(!lines[0].contains("  "), "a gap in the line\n{context}");
    assert!(parse_status_lines(&r.stdout).is_empty(), "{context}");
    assert!(r.elapsed < REFUSED_WITHIN, "{context}");
}

#[test]
fn a_fifo_or_a_proc_file_is_refused_before_the_run() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    rtlat_sys::fifo::make_fifo(&fifo).expect("mkfifo");
    let fifo_text = fifo.to_str().unwrap();
    for option in ["--textfile", "--checkpoint"] {
        let r = run_with_timeout(
            &mut monitor(&lease, &["-D", "30", option, fifo_text]),
            REFUSED_WITHIN,
        );
        expect_refused(
            &r,
            &[
                &format!("{option}: cannot write '{fifo_text}': it is a FIFO"),
                "regular file",
            ],
        );
    }
    let r = run_with_timeout(
        &mut monitor(&lease, &["-D", "30", "--checkpoint", "/proc/self/mem"]),
        REFUSED_WITHIN,
    );
    expect_refused(
        &r,
        &["--checkpoint: cannot write '/proc/self/mem': it is a file under /dev, /proc or /sys"],
    );
    assert_eq!(listing(dir.path()), ["fifo"]);
}

#[test]
fn refusals_of_cyclictest_options_have_no_gap() {
    // Refused while the command line is read: no thread starts.
    for (args, want) in [
        (&["-h", "100"][..], "-h/--histogram: not with rtlat monitor"),
        (&["--synthetic", "1"], "--synthetic: not with rtlat monitor"),
        (
            &["--stats-interval", "5", "--stats-file", "/tmp/x"],
            "at most 1 s with rtlat monitor",
        ),
    ] {
        let r = run(rtlat().arg("monitor").args(args));
        expect_refused(&r, &[want]);
    }
}

/// Sets `file`'s last modification to `when`.
fn modified_at(file: &Path, when: SystemTime) {
    std::fs::write(file, "half a checkpoint").unwrap();
    std::fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[test]
fn resume_refuses_what_does_not_fit_and_leaves_it_as_it_is() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    let cp = path.to_str().unwrap();

    // What a run killed while it wrote left beside it, and what it did not.
    let hour = Duration::from_secs(3600);
    let now = SystemTime::now();
    modified_at(&dir.path().join(".rtlat-0badc0de"), now - hour);
    // A concurrent run's, being written (newer than this run's start).
    modified_at(&dir.path().join(".rtlat-9abcdef0"), now + hour);
    modified_at(&dir.path().join(".rtlat-notours"), now - hour);
    modified_at(&dir.path().join("notes.txt"), now - hour);
    let first = run_with_timeout(
        &mut monitor(&lease, &["-D", "1", "--checkpoint", cp]),
        Duration::from_secs(15),
    );
    first.expect_code(0);
    assert_eq!(
        listing(dir.path()),
        [
            ".rtlat-9abcdef0",
            ".rtlat-notours",
            "notes.txt",
            "state.json"
        ],
        "only the stale temporary file is removed"
    );
    let good: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(good["monitor"]["measured"]["host"].is_string(), "{good}");

    // Another host, or counters and buckets that do not add up.
    type Spoil = fn(&mut serde_json::Value);
    let spoiled: [(Spoil, &[&str]); 4] = [
        (
            |d| d["monitor"]["measured"]["host"] = "elsewhere".into(),
            &["it was written on host 'elsewhere'"],
        ),
        (
            |d| d["monitor"]["threads"][0]["cells"][0][0] = 1_000_000_000u64.into(),
            &["thread 0: a bucket at place 1000000000, outside"],
        ),
        (
            |d| {
                let cycles = d["monitor"]["threads"][0]["cycles"].as_u64().unwrap();
                d["monitor"]["threads"][0]["cycles"] = (cycles + 100_000).into();
            },
            &["samples in its distribution"],
        ),
        (
            |d| d["monitor"]["threads"][0]["cycles"] = u64::MAX.into(),
            &["cycles 18446744073709551615 is more than any run counts"],
        ),
    ];
    for (spoil, wanted) in spoiled {
        let mut doc = good.clone();
        spoil(&mut doc);
        let bytes = serde_json::to_vec_pretty(&doc).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        let r = run_with_timeout(
            &mut monitor(&lease, &["-D", "30", "--checkpoint", cp, "--resume"]),
            REFUSED_WITHIN,
        );
        let named = format!("--resume: '{cp}': ");
        let mut all = vec![named.as_str(), "left as it is"];
        all.extend_from_slice(wanted);
        expect_refused(&r, &all);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "the file unchanged");
    }

    // Other options than the checkpoint's.
    let bytes = serde_json::to_vec_pretty(&good).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    for (options, wanted) in [
        (
            &["-i", "500"][..],
            "-i/--interval (or -d) 1000 us, this run's with 500 us",
        ),
        (&["-p", "80"], "-p/--priority 95, this run's with 80"),
        (
            &["--policy", "rr", "-p", "95"],
            "--policy fifo, this run's with rr",
        ),
        (&["--wait", "rel"], "--wait abs, this run's with rel"),
    ] {
        let mut args = vec!["-D", "30", "--checkpoint", cp, "--resume"];
        args.extend_from_slice(options);
        let r = run_with_timeout(&mut monitor(&lease, &args), REFUSED_WITHIN);
        expect_refused(&r, &["--resume: ", wanted]);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "the file unchanged");
    }

    // A checkpoint of an older rtlat says nothing of its host and options:
    // resumed, with a warning, and the next one records them.
    let mut older = good.clone();
    older["monitor"].as_object_mut().unwrap().remove("measured");
    std::fs::write(&path, serde_json::to_vec_pretty(&older).unwrap()).unwrap();
    let r = run_with_timeout(
        &mut monitor(&lease, &["-D", "1", "--checkpoint", cp, "--resume"]),
        Duration::from_secs(15),
    );
    r.expect_code(0);
    assert!(
        r.stderr.contains("was written by an older rtlat") && r.stderr.contains("resumed:"),
        "{}",
        r.describe()
    );
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        after["monitor"]["measured"], good["monitor"]["measured"],
        "recorded again"
    );
}
