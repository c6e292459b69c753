//! Bad input and help (no root needed): usage errors exit 2 at once with one line naming the option; accepted-with-warning combinations warn like C.

use std::path::Path;
use std::time::Duration;

use crate::support::{
    Run, allowed_cpus, parse_status_lines, rtlat, run_with_timeout, symlinked_cyclictest, synthetic,
};

/// Runs `rtlat cyclictest ARGS` in an empty directory and checks a usage
/// error: exit 2 within 1 s, exactly one stderr line containing `needle`,
/// nothing on stdout, no file created (in the directory, or a snapshot file
/// in /dev/shm).
fn usage_error(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let r = run_with_timeout(
        rtlat().arg("cyclictest").args(args).current_dir(dir.path()),
        Duration::from_secs(1),
    );
    let context = format!("rtlat cyclictest {}\n{}", args.join(" "), r.describe());
    assert_eq!(r.code(), Some(2), "exit status\n{context}");
    assert_eq!(r.stdout, "", "stdout\n{context}");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "exactly one stderr line\n{context}");
    assert!(
        lines[0].contains(needle),
        "stderr names {needle:?}\n{context}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "files created: {left:?}\n{context}");
    assert!(!Path::new(&format!("/dev/shm/cyclictest{}", r.pid)).exists());
    assert!(!Path::new("/nonexistent").exists());
}

#[test]
fn rt_tests_unknown_release() {
    usage_error(&["--rt-tests=2.11"], "--rt-tests: invalid value '2.11'");
    usage_error(
        &["--rt-tests", "2.40"],
        "expected an rt-tests release from 2.4 to 2.10",
    );
}

/// A bad `RTLAT_RT_TESTS` is the same one line, naming the variable; the
/// option, when given, decides alone.
#[test]
fn rt_tests_variable_bad() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_with_timeout(
        rtlat()
            .args(["cyclictest", "-l", "1"])
            .env("RTLAT_RT_TESTS", "newest")
            .current_dir(dir.path()),
        Duration::from_secs(1),
    );
    r.expect_code(2);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr_lines(),
        [
            "rtlat cyclictest: RTLAT_RT_TESTS=newest: expected an rt-tests release from 2.4 to \
          2.10 (2.4: Debian 12's, the default; 2.6: Debian 13's; 2.10: the newest) (or leave it \
          unset)"
        ]
    );
    let r = run_with_timeout(
        synthetic(1, ["-l", "10", "-q", "--rt-tests=2.4"]).env("RTLAT_RT_TESTS", "newest"),
        Duration::from_secs(5),
    );
    r.expect_code(0);
}

#[test]
fn interval_zero() {
    usage_error(&["-i", "0"], "-i");
}

#[test]
fn interval_negative() {
    usage_error(&["-i", "-5"], "-i");
}

#[test]
fn priority_too_high() {
    usage_error(&["-p", "100"], "-p");
}

#[test]
fn clock_two() {
    usage_error(&["-c", "2"], "-c");
}

#[test]
fn duration_garbage() {
    usage_error(&["-D", "abc"], "-D");
}

#[test]
fn duration_negative() {
    usage_error(&["-D", "-1"], "-D");
}

#[test]
fn histogram_zero() {
    usage_error(&["-h", "0"], "-h");
}

#[test]
fn loops_negative() {
    usage_error(&["-l", "-3"], "-l");
}

#[test]
fn threads_trailing_garbage() {
    usage_error(&["-t", "4x"], "-t");
}

#[test]
fn unknown_policy() {
    usage_error(&["--policy=foo"], "--policy");
}

#[test]
fn affinity_out_of_range() {
    usage_error(&["-a", "64"], "-a");
}

#[test]
fn json_in_missing_directory() {
    usage_error(&["--json", "/nonexistent/dir/out.json"], "--json");
}

#[test]
fn unknown_long_option() {
    usage_error(&["--bogus"], "--bogus");
}

#[test]
fn breaktrace_zero() {
    usage_error(&["-b", "0"], "-b");
}

#[test]
fn spike_negative() {
    usage_error(&["--spike", "-1"], "--spike");
}

#[test]
fn oscope_zero() {
    usage_error(&["-o", "0"], "-o");
}

#[test]
fn oscope_without_verbose() {
    usage_error(&["-o", "5"], "-o");
}

#[test]
fn aligned_with_secaligned() {
    usage_error(&["-A", "10", "--secaligned"], "--secaligned");
}

#[test]
fn secaligned_with_aligned() {
    usage_error(&["--secaligned", "-A"], "--secaligned");
    usage_error(&["--secaligned", "-A"], "-A");
    usage_error(&["--secaligned=5", "-A20"], "--secaligned");
}

#[test]
fn smi_without_affinity() {
    usage_error(&["--smi"], "--smi");
    usage_error(&["--smi", "-l", "10", "-q"], "-a");
}

#[test]
fn spike_nodes_zero() {
    usage_error(&["--spike-nodes", "0"], "--spike-nodes");
    usage_error(&["--spike", "10", "--spike-nodes", "0"], "--spike-nodes");
}

#[test]
fn fifo_in_missing_directory() {
    usage_error(&["-F", "/nonexistent/dir/fifo"], "-F");
}

#[test]
fn latency_negative() {
    usage_error(&["--latency=-5"], "--latency");
}

#[test]
fn histfile_in_missing_directory() {
    usage_error(&["--histfile", "/nonexistent/dir/h"], "--histfile");
}

#[test]
fn unknown_tool() {
    let r = run_with_timeout(rtlat().arg("frobnicate"), Duration::from_secs(1));
    assert_eq!(r.code(), Some(2), "{}", r.describe());
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("frobnicate"), "{}", r.describe());
}

fn assert_help(r: &Run) {
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert!(
        r.stdout.contains("Usage:"),
        "help on stdout\n{}",
        r.describe()
    );
    assert!(r.stdout.contains("--interval"), "{}", r.describe());
    assert_eq!(r.stderr, "", "nothing on stderr");
}

#[test]
fn help_exits_zero() {
    assert_help(&run_with_timeout(
        rtlat().args(["cyclictest", "--help"]),
        Duration::from_secs(1),
    ));
}

#[test]
fn help_through_the_symlink() {
    let link = symlinked_cyclictest();
    assert_help(&run_with_timeout(
        link.command().arg("--help"),
        Duration::from_secs(1),
    ));
}

#[test]
fn distance_with_histogram_warns_and_runs() {
    let r = run_with_timeout(
        &mut synthetic(1, ["-h", "10", "-d", "100", "-l", "10", "-q"]),
        Duration::from_secs(1),
    );
    r.expect_code(0);
    assert!(
        r.stderr_lines()
            .contains(&"WARN: distance is ignored and set to 0, if histogram enabled"),
        "{}",
        r.describe()
    );
    assert!(r.stdout.contains("# Histogram"));
}

#[test]
fn threads_with_smp_warns_and_runs() {
    let r = run_with_timeout(
        &mut synthetic(1, ["-S", "-t", "3", "-q", "-l", "10"]),
        Duration::from_secs(1),
    );
    r.expect_code(0);
    assert!(
        r.stderr_lines()
            .contains(&"WARN: -t ignored due to smp mode"),
        "{}",
        r.describe()
    );
    assert_eq!(
        parse_status_lines(&r.stdout).len(),
        allowed_cpus().len(),
        "-S wins: one thread per allowed CPU"
    );
}
