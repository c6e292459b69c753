//! Missing privilege (root, to drop it with setpriv): a real-time run refuses with one clear line and exit 1; a `--policy other` run works unprivileged.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::{Run, parse_status_lines, rtlat_path, run_with_timeout};

/// A copy of rtlat that `nobody` can read and execute, in a 0755 tempdir.
struct NobodyBinary {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn nobody_binary() -> NobodyBinary {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("rtlat");
    std::fs::copy(rtlat_path(), &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    NobodyBinary { _dir: dir, path }
}

fn has_setpriv() -> bool {
    ["/usr/bin/setpriv", "/bin/setpriv"]
        .iter()
        .any(|p| Path::new(p).exists())
}

/// `setpriv --reuid=65534 ... <copy of rtlat> cyclictest ARGS`, run from /.
/// The copy's exec fails with ETXTBSY ("Text file busy") while a child
/// another test thread forked meanwhile still holds the copy's write
/// descriptor (until that child's own exec): the run is tried again then,
/// up to 5 times.
fn as_nobody(args: &[&str]) -> Run {
    let bin = nobody_binary();
    let mut attempt = 0;
    loop {
        let mut cmd = Command::new("setpriv");
        cmd.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&bin.path)
        .arg("cyclictest")
        .args(args)
        .current_dir("/")
        .stdin(std::process::Stdio::null());
        let r = run_with_timeout(&mut cmd, Duration::from_secs(5));
        attempt += 1;
        if !r.stderr.contains("Text file busy") || attempt == 5 {
            return r;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

macro_rules! require_root_and_setpriv {
    () => {
        require_root!();
        if !has_setpriv() {
            skip_note!("SKIPPED (needs setpriv): {}", function_name!());
            return;
        }
    };
}

const NEEDLES: [&str; 3] = ["CAP_SYS_NICE", "RLIMIT_RTPRIO", "--policy other"];

#[test]
fn nobody_with_priority_is_refused() {
    require_root_and_setpriv!();
    let r = as_nobody(&["-p", "80", "-q", "-l", "10"]);
    assert_eq!(r.code(), Some(1), "{}", r.describe());
    assert!(
        parse_status_lines(&r.stdout).is_empty(),
        "nothing measured\n{}",
        r.describe()
    );
    let explaining: Vec<&str> = r
        .stderr_lines()
        .into_iter()
        .filter(|l| NEEDLES.iter().all(|n| l.contains(n)))
        .collect();
    assert_eq!(
        explaining.len(),
        1,
        "one line naming {NEEDLES:?}\n{}",
        r.describe()
    );
}

/// Regression: the refusal used to follow a spurious `policy and priority
/// don't match` warning line.
#[test]
fn nobody_with_priority_gets_exactly_one_stderr_line() {
    require_root_and_setpriv!();
    let r = as_nobody(&["-p", "80", "-q", "-l", "10"]);
    assert_eq!(r.code(), Some(1), "{}", r.describe());
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.describe());
}

#[test]
fn nobody_with_policy_other_runs() {
    require_root_and_setpriv!();
    let r = as_nobody(&["--policy", "other", "-q", "-l", "20", "-i", "1000"]);
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let lines = parse_status_lines(&r.stdout);
    assert_eq!(lines.len(), 1, "{}", r.describe());
    assert_eq!((lines[0].prio, lines[0].cycles), (0, 20));
    assert!(
        r.stderr_lines()
            .iter()
            .any(|l| l.contains("note") && l.contains("SCHED_OTHER")),
        "a note on stderr\n{}",
        r.describe()
    );
}

#[test]
fn nobody_asking_for_explain_is_refused_before_any_sample() {
    require_root_and_setpriv!();
    let r = as_nobody(&["-q", "-l", "100", "--explain"]);
    r.expect_code(1);
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].contains("--explain: recording kernel events needs root"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("T:"), "nothing measured: {}", r.stdout);
}
