//! Standard output and standard error that cannot be written: every tool,
//! both binaries, fork-mode children and the fork-load helper, with stdout
//! and (separately) stderr on `/dev/full`, and with readers that have gone
//! (a closed pipe). Exit statuses are checked exactly, so that neither a
//! panic (101) nor an abort (134) passes, whatever the panic strategy; what
//! went elsewhere (the files, stdout when only stderr is full) is checked
//! whole, against the same run with nothing full.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::cpus::CpuLease;
use crate::support::ipc::{FORK_TOOLS, TOOLS, last_frame};
use crate::support::{Run, dev_full, int_after, rtlat, run, spawn_with};

/// Every subcommand.
pub const SUBCOMMANDS: &[&str] = &[
    "cyclictest",
    "svsematest",
    "pmqtest",
    "ptsematest",
    "sigwaittest",
    "signaltest",
    "hackbench",
    "hwlatdetect",
    "oslat",
    "latency",
    "load",
    "plot",
    "compare",
    "audit",
];

/// A standard stream of the program under test: the one that goes to
/// `/dev/full` or to a closed pipe; the other one is captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// Runs `cmd` with `full` on `/dev/full` (10 s at most).
fn run_full(cmd: &mut Command, full: Stream) -> Run {
    let (out, err) = match full {
        Stream::Stdout => (dev_full(), Stdio::piped()),
        Stream::Stderr => (Stdio::piped(), dev_full()),
    };
    spawn_with(cmd, out, err).wait(Duration::from_secs(10))
}

/// Runs `cmd` with `closed` on a pipe whose reader has gone before the
/// program starts, so that its first write to it fails with EPIPE.
fn run_closed_pipe(cmd: &mut Command, closed: Stream) -> Run {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let (out, err) = match closed {
        Stream::Stdout => (Stdio::from(writer), Stdio::piped()),
        Stream::Stderr => (Stdio::piped(), Stdio::from(writer)),
    };
    spawn_with(cmd, out, err).wait(Duration::from_secs(10))
}

/// `compare`'s fixtures, two rtlat JSON results.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/compare/testdata")
        .join(name)
}

/// `rtlat` with the words of `line`, where `{FILE}` is `file`, `{BASE}`
/// and `{NEW}` are `compare`'s fixtures and `{SLOW}` is BASE made twice as
/// slow (written beside `file`): a regression compare judges worse.
fn rtlat_line(line: &str, file: &Path) -> Command {
    let mut cmd = rtlat();
    for word in line.split_whitespace() {
        match word {
            "{FILE}" => cmd.arg(file),
            "{BASE}" => cmd.arg(fixture("base.json")),
            "{NEW}" => cmd.arg(fixture("new.json")),
            "{SLOW}" => cmd.arg(crate::results::compare::twice_as_slow(
                file.parent().expect("a file in a directory"),
            )),
            _ => cmd.arg(word),
        };
    }
    cmd
}

/// `rtlat` with the words of `line`, which names no file.
fn rtlat_words(line: &str) -> Command {
    rtlat_line(line, Path::new("/nonexistent"))
}

/// The program name the error lines of `line` start with.
fn program(line: &str) -> String {
    match line.split_whitespace().next() {
        Some(tool) if SUBCOMMANDS.contains(&tool) => format!("rtlat {tool}"),
        _ => "rtlat".to_string(),
    }
}

/// Asserts exit status 1 and that stderr ends with the one line of a
/// stdout that failed: `PROG: writing to standard output: ...`.
fn expect_stdout_failure(r: &Run, line: &str) {
    assert_eq!(r.code(), Some(1), "{line}\n{}", r.describe());
    let last = r.stderr_lines().last().copied().unwrap_or_default();
    assert!(
        last.starts_with(&format!("{}: writing to standard output: ", program(line)))
            && last.contains("No space left on device"),
        "{line}\n{}",
        r.describe()
    );
    let naming_stdout = r
        .stderr_lines()
        .iter()
        .filter(|l| l.contains("standard output"))
        .count();
    assert_eq!(naming_stdout, 1, "{line}: one line\n{}", r.describe());
}

/// `--help` of every tool, top-level `--help` and `--version`.
fn help_lines() -> Vec<String> {
    let mut all = vec!["--help".to_string(), "--version".to_string()];
    all.extend(SUBCOMMANDS.iter().map(|tool| format!("{tool} --help")));
    all
}

#[test]
fn help_and_version_on_a_full_stdout_exit_1_and_on_a_full_stderr_exit_0() {
    for line in help_lines() {
        let plain = run(&mut rtlat_words(&line));
        plain.expect_code(0);
        assert!(!plain.stdout.is_empty(), "{line}");

        let r = run_full(&mut rtlat_words(&line), Stream::Stdout);
        expect_stdout_failure(&r, &line);
        assert_eq!(r.stderr_lines().len(), 1, "{line}\n{}", r.describe());

        let r = run_full(&mut rtlat_words(&line), Stream::Stderr);
        assert_eq!(r.code(), Some(0), "{line}\n{}", r.describe());
        assert_eq!(r.stdout, plain.stdout, "{line}: the whole text");
    }
}

#[test]
fn bad_options_exit_2_whatever_is_full() {
    let mut lines = vec!["--no-such-option".to_string(), "no-such-tool".to_string()];
    lines.extend(
        SUBCOMMANDS
            .iter()
            .map(|tool| format!("{tool} --no-such-option")),
    );
    for line in lines {
        // Its one line could not be written: still a usage error.
        let r = run_full(&mut rtlat_words(&line), Stream::Stderr);
        assert_eq!(r.code(), Some(2), "{line}\n{}", r.describe());
        assert_eq!(r.stdout, "", "{line}");

        let r = run_full(&mut rtlat_words(&line), Stream::Stdout);
        assert_eq!(r.code(), Some(2), "{line}\n{}", r.describe());
        assert_eq!(r.stderr_lines().len(), 1, "{line}\n{}", r.describe());
        assert!(r.stderr.contains("no-such"), "{line}\n{}", r.describe());
    }
}

/// The `C:` of every `T:` line.
fn cycles(stdout: &str) -> Vec<i64> {
    stdout
        .lines()
        .filter(|l| l.starts_with("T:"))
        .filter_map(|l| int_after(l, "C:"))
        .collect()
}

#[test]
fn help_and_runs_into_a_closed_pipe_end_quietly_with_0() {
    let mut lines = help_lines();
    lines.push("cyclictest --synthetic 1 -l 200 -t 2".to_string());
    for line in lines {
        let r = run_closed_pipe(&mut rtlat_words(&line), Stream::Stdout);
        assert_eq!(r.code(), Some(0), "{line}\n{}", r.describe());
        assert_eq!(r.stderr, "", "{line}");
    }
    // A real SCHED_OTHER run notes so on stderr; a reader of stderr that
    // has gone is no failure either, and stdout is whole.
    let line = "cyclictest -q -l 50 -i 1000";
    let r = run_closed_pipe(&mut rtlat_words(line), Stream::Stderr);
    assert_eq!(r.code(), Some(0), "{line}\n{}", r.describe());
    assert_eq!(cycles(&r.stdout), [50], "{line}\n{}", r.describe());
}

/// Synthetic runs of every measuring tool, each writing a result file.
fn synthetic_file_runs() -> Vec<String> {
    let mut lines = vec![
        "cyclictest --synthetic 1 -q -l 200 -t 2 --json {FILE}".to_string(),
        // The live frames, not only the summary.
        "cyclictest --synthetic 2 -l 200 -h 20 --histfile {FILE}".to_string(),
        "signaltest --synthetic 5 -q -l 200 -t 3 --json {FILE}".to_string(),
        "latency --synthetic 1 -T 3 -p 1000 -g {FILE}".to_string(),
    ];
    for tool in TOOLS {
        lines.push(format!("{tool} --synthetic 11 -l 200 -t 2 --json {{FILE}}"));
    }
    lines
}

/// Runs `line` with nothing full, then with `full` on `/dev/full`, both
/// writing the same result file; returns both runs and both files.
fn plain_and_full(line: &str, full: Stream) -> ((Run, Vec<u8>), (Run, Vec<u8>)) {
    let dir = tempfile::tempdir().unwrap();
    // A name plot takes too.
    let file = dir.path().join("result.svg");
    let read = |file: &Path| std::fs::read(file).unwrap_or_default();
    let plain = run(&mut rtlat_line(line, &file));
    let plain_file = read(&file);
    let _ = std::fs::remove_file(&file);
    let r = run_full(&mut rtlat_line(line, &file), full);
    let full_file = read(&file);
    ((plain, plain_file), (r, full_file))
}

#[test]
fn synthetic_runs_on_a_full_stdout_write_their_files_whole_and_exit_1() {
    for line in synthetic_file_runs() {
        let ((plain, plain_file), (r, file)) = plain_and_full(&line, Stream::Stdout);
        plain.expect_code(0);
        assert!(!plain_file.is_empty(), "{line}: a file");
        expect_stdout_failure(&r, &line);
        assert_eq!(r.stderr_lines().len(), 1, "{line}\n{}", r.describe());
        assert!(file == plain_file, "{line}: the file as without /dev/full");
    }
}

#[test]
fn synthetic_runs_on_a_full_stderr_keep_stdout_whole_and_exit_1_only_for_lost_lines() {
    // (command line, exit status with nothing full, with stderr full): a 0
    // becomes 1 when a line went to the full stderr; 3 (a gate) stays.
    let mut cases: Vec<(String, i32, i32)> = synthetic_file_runs()
        .into_iter()
        .map(|line| (line, 0, 0))
        .collect();
    for (line, plain, full) in [
        ("cyclictest --synthetic 1 -q -l 200 --tracemark", 0, 1),
        ("signaltest --synthetic 5 -q -l 200 -S -t 2", 0, 1),
        ("latency --synthetic 1 -q -T 2", 0, 1),
        (
            "cyclictest --synthetic 1 -q -l 2000 -t 2 --fail-if max>100us",
            3,
            3,
        ),
        ("compare {BASE} {NEW}", 0, 0),
        ("compare {BASE} {SLOW} --fail-on-regression", 3, 3),
        ("plot {BASE} -o {FILE}", 0, 0),
    ] {
        cases.push((line.to_string(), plain, full));
    }
    for tool in TOOLS {
        // Warns that no histogram is written.
        let line = format!("{tool} --synthetic 11 -q -l 200 --histfile {{FILE}}");
        cases.push((line, 0, 1));
    }
    for (line, plain_code, full_code) in cases {
        let ((plain, plain_file), (r, file)) = plain_and_full(&line, Stream::Stderr);
        plain.expect_code(plain_code);
        assert_eq!(
            plain.stderr.is_empty(),
            full_code == 0,
            "{line}: a line on stderr unless the status is 0\n{}",
            plain.describe()
        );
        assert_eq!(r.code(), Some(full_code), "{line}\n{}", r.describe());
        assert_eq!(r.stdout, plain.stdout, "{line}: the whole stdout");
        assert!(file == plain_file, "{line}: the file as without /dev/full");
    }
}

/// Real SCHED_OTHER runs (no privilege needed): each notes on stderr that
/// its figures are not real-time ones, so a full stderr makes it exit 1
/// with stdout whole, and a full stdout exits 1 after that note. Fork mode
/// (its children share the streams) included.
#[test]
fn real_runs_with_a_note_on_a_full_stream_exit_1() {
    let mut cases = vec![
        ("cyclictest -q -l 50 -i 1000".to_string(), vec![50]),
        ("signaltest -q -l 50 -t 2".to_string(), vec![50, 50]),
    ];
    for tool in TOOLS {
        cases.push((format!("{tool} -q -l 20 -i 1000"), vec![20]));
    }
    for tool in FORK_TOOLS {
        cases.push((format!("{tool} -f -q -l 20 -i 1000"), vec![20]));
    }
    for (line, want) in cases {
        let r = run_full(&mut rtlat_words(&line), Stream::Stderr);
        assert_eq!(r.code(), Some(1), "{line}\n{}", r.describe());
        let shown = if line.starts_with("cyclictest") || line.starts_with("signaltest") {
            cycles(&r.stdout)
        } else {
            let frame = last_frame(&r.stdout, 1);
            frame.headers.iter().map(|h| h.cycles).collect()
        };
        assert_eq!(shown, want, "{line}: the whole summary\n{}", r.describe());

        let r = run_full(&mut rtlat_words(&line), Stream::Stdout);
        expect_stdout_failure(&r, &line);
        assert!(
            r.stderr.contains(&format!("{}: note: ", program(&line))),
            "{line}\n{}",
            r.describe()
        );
    }
}

#[test]
fn load_and_its_fork_helpers_exit_1_on_a_full_stdout_and_0_on_a_full_stderr() {
    // The loads on one leased CPU.
    let lease = CpuLease::one();
    let pinned = |line: &str| format!("{line} --cpus {}", lease.list());
    let on_full_stdout = ["load cpu:1 -D 1", "load fork:1 -D 1"].map(|line| {
        let mut cmd = rtlat_words(&pinned(line));
        std::thread::spawn(move || (line, run_full(&mut cmd, Stream::Stdout)))
    });
    let line = "load fork:1 -D 1";
    let r = run_full(&mut rtlat_words(&pinned(line)), Stream::Stderr);
    assert_eq!(r.code(), Some(0), "{line}\n{}", r.describe());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{line}\n{}", r.describe());
    assert!(
        lines[0].starts_with("fork: ") && lines[0].ends_with(" ops/s (1 worker)"),
        "{line}\n{}",
        r.describe()
    );
    for handle in on_full_stdout {
        let (line, r) = handle.join().unwrap();
        expect_stdout_failure(&r, line);
        assert_eq!(r.stderr_lines().len(), 1, "{line}\n{}", r.describe());
    }
}
