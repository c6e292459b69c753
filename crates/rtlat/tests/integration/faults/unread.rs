//! Outputs nobody reads cannot hang a run: a FIFO without a reader given
//! as an output file ends the run within the time rtlat waits for a reader
//! (5 s), with one line naming the option and the file, exit 1, the
//! summary still printed; a reader that opened the FIFO and then stopped
//! reading holds the end for at most the 5 s rtlat waits for it to take
//! something; a pipe whose reader reads (`--json=>(cat)`) is written
//! whole as before. Synthetic runs: no privilege needed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use crate::support::*;

/// rtlat waits this long for a reader to open the FIFO, and as long for a
/// reader to take something (output_file::READER_WAIT, STALL_LIMIT).
const GIVE_UP_AFTER: Duration = Duration::from_secs(5);
/// The most a run that gives up may take: a hang is killed here.
const ENDS_WITHIN: Duration = Duration::from_secs(20);

/// A short synthetic cyclictest with `args` then the path.
fn cyclictest_to(args: &[&str], path: &Path) -> Command {
    let mut cmd = synthetic(7, ["-q", "-l", "200"]);
    cmd.args(args).arg(path);
    cmd
}

/// Exit 1 within [`ENDS_WITHIN`], after the wait, the summary on stdout,
/// and one stderr line: `OPTION: cannot VERB 'PATH': WHY`.
fn expect_given_up(r: &Run, line_start: &str, why: &str) {
    let context = r.describe();
    assert_eq!(r.code(), Some(1), "{context}");
    assert!(r.elapsed >= GIVE_UP_AFTER, "gave up too soon\n{context}");
    let lines = r.stderr_lines();
    let told: Vec<&&str> = lines.iter().filter(|l| l.contains(line_start)).collect();
    assert_eq!(told.len(), 1, "{line_start:?}\n{context}");
    assert!(told[0].contains(why), "{why:?}\n{context}");
}

#[test]
fn a_fifo_nobody_reads_ends_the_run_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("unread");
    rtlat_sys::fifo::make_fifo(&fifo).expect("mkfifo");
    let shown = |opt: &str| format!("{opt}: cannot write '{}': ", fifo.display());
    // Side by side: each waits for its reader, in parallel.
    let json = spawn(&mut cyclictest_to(&["--json"], &fifo));
    let histfile = spawn(&mut cyclictest_to(&["-h", "20", "--histfile"], &fifo));
    let stats = spawn(&mut cyclictest_to(
        &["--stats-interval", "10ms", "--stats-file"],
        &fifo,
    ));

    let r = json.wait(ENDS_WITHIN);
    expect_given_up(
        &r,
        &shown("--json"),
        "nobody opened it for reading within 5 s",
    );
    assert_eq!(parse_status_lines(&r.stdout).len(), 1, "{}", r.stdout);
    let r = histfile.wait(ENDS_WITHIN);
    expect_given_up(
        &r,
        &shown("--histfile"),
        "nobody opened it for reading within 5 s",
    );
    let r = stats.wait(ENDS_WITHIN);
    expect_given_up(
        &r,
        &format!("--stats-file: cannot create '{}': ", fifo.display()),
        "nobody opened it for reading within 5 s",
    );
    // The FIFO is left as it was.
    assert_eq!(listing(dir.path()), ["unread"]);
}

/// A reader that opens `fifo` and holds it without reading until told to
/// let go.
fn idle_reader(fifo: PathBuf) -> (mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (let_go, told) = mpsc::channel::<()>();
    let reader = std::thread::spawn(move || {
        let _held = std::fs::File::open(&fifo).expect("opening the FIFO for reading");
        let _ = told.recv();
    });
    (let_go, reader)
}

#[test]
fn a_reader_that_stops_reading_does_not_hold_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("stalled");
    rtlat_sys::fifo::make_fifo(&fifo).expect("mkfifo");
    let (let_go, reader) = idle_reader(fifo.clone());
    // 100000 one-µs buckets, each a line: far more than a pipe holds.
    let r = run_with_timeout(
        &mut cyclictest_to(&["-h", "100000", "--histfile"], &fifo),
        ENDS_WITHIN,
    );
    let _ = let_go.send(());
    reader.join().unwrap();
    expect_given_up(
        &r,
        &format!("--histfile: cannot write '{}': ", fifo.display()),
        "its reader took nothing for 5 s",
    );
}

#[test]
fn a_pipe_with_its_reader_is_written_whole() {
    if !Path::new("/bin/bash").exists() {
        skip_note!("SKIPPED (needs bash for >(...)): {}", function_name!());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("through-cat.json");
    let script = format!(
        "\"$0\" cyclictest --synthetic 7 -q -l 200 --json >(cat > '{}'); s=$?; wait; exit $s",
        out.display()
    );
    let r = run_with_timeout(
        Command::new("/bin/bash")
            .args(["-c", &script])
            .arg(rtlat_path()),
        ENDS_WITHIN,
    );
    r.expect_code(0);
    assert!(r.elapsed < GIVE_UP_AFTER, "{}", r.describe());
    let ok = wait_until(Duration::from_secs(5), || {
        std::fs::read_to_string(&out)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some()
    });
    assert!(ok, "no whole JSON came through the pipe");
}
