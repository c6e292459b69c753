//! Missing privilege (root, to drop it with setpriv): a real-time run refuses with one clear line and exit 1; a `--policy other` run works unprivileged.

use crate::support::nobody::run_as_nobody;
use crate::support::{Run, parse_status_lines};

/// `rtlat cyclictest ARGS` as `nobody` without capabilities.
fn as_nobody(args: &[&str]) -> Run {
    let mut all = vec!["cyclictest"];
    all.extend_from_slice(args);
    run_as_nobody(&all)
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

/// `-m` under a locked-memory limit too small for the run (a container's
/// 64 KiB) and without CAP_IPC_LOCK: one line naming RLIMIT_MEMLOCK and
/// `-t`, exit 1, nothing measured; without the privilege for `-p` as well,
/// the privilege's refusal comes first (no limit matters without it).
#[test]
fn mlockall_beyond_the_memlock_limit_is_refused_after_the_privilege() {
    require_root_and_setpriv!();
    use crate::support::nobody::{Who, run_restricted};
    let args = ["cyclictest", "-m", "-p", "80", "-t", "2", "-q", "-l", "10"];
    let r = run_restricted(Who::RootWithoutIpcLock, Some(64 << 10), &args);
    r.expect_code(1);
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", r.describe());
    assert!(
        lines[0].contains("RLIMIT_MEMLOCK") && lines[0].contains("-t 2"),
        "{}",
        r.describe()
    );
    assert!(parse_status_lines(&r.stdout).is_empty(), "{}", r.describe());
    let r = run_restricted(Who::Nobody, Some(64 << 10), &args);
    r.expect_code(1);
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.describe());
    assert!(r.stderr.contains("CAP_SYS_NICE"), "{}", r.describe());
}
