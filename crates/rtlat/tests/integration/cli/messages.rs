//! What a newcomer reads when a command line goes wrong: every line starts
//! with the program's name (`rtlat cyclictest:`, or `cyclictest:` through
//! the symlink), an unknown option names the nearest one and `--help`, and
//! a bare `-h` (the histogram in cyclictest) says where help is.

use std::time::Duration;

use crate::support::{Run, rtlat, run_with_timeout, symlinked_cyclictest};

fn refused(r: &Run) -> &str {
    r.expect_code(2);
    assert!(r.stdout.is_empty(), "{}", r.describe());
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.describe());
    &r.stderr
}

#[test]
fn a_bare_h_says_that_help_is_long() {
    let r = run_with_timeout(rtlat().args(["cyclictest", "-h"]), Duration::from_secs(2));
    assert_eq!(
        refused(&r),
        "rtlat cyclictest: option '-h' requires a value (help is --help)\n"
    );
}

#[test]
fn an_unknown_option_names_the_nearest_in_every_tool() {
    for (tool, typo, nearest) in [
        ("cyclictest", "--histogrm", "--histogram"),
        ("cyclictest", "--priorty", "--priority"),
        ("signaltest", "--lopos", "--loops"),
        ("svsematest", "--treads", "--threads"),
        ("latency", "--jsn", "--json"),
        ("load", "--duraton", "--duration"),
        ("audit", "--jsn", "--json"),
    ] {
        let r = run_with_timeout(rtlat().args([tool, typo, "1"]), Duration::from_secs(2));
        assert_eq!(
            refused(&r),
            format!(
                "rtlat {tool}: unrecognized option '{typo}' (did you mean '{nearest}'? \
                 --help lists every option)\n"
            ),
            "{}",
            r.describe()
        );
    }
}

#[test]
fn nothing_near_points_to_help_only() {
    let r = run_with_timeout(
        rtlat().args(["cyclictest", "--zzzzzz"]),
        Duration::from_secs(2),
    );
    assert_eq!(
        refused(&r),
        "rtlat cyclictest: unrecognized option '--zzzzzz' (--help lists every option)\n"
    );
}

#[test]
fn the_symlink_names_itself() {
    let link = symlinked_cyclictest();
    let r = run_with_timeout(link.command().arg("--histogrm"), Duration::from_secs(2));
    assert!(
        refused(&r).starts_with("cyclictest: unrecognized option '--histogrm' (did you mean"),
        "{}",
        r.describe()
    );
}
