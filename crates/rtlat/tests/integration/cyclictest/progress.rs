//! The progress line of `-q` runs: drawn on stderr only when it is a
//! terminal (a pseudo-terminal from `script`), rewritten in place and
//! erased before the summary; never with `--no-progress`, never without
//! `-q` (the live display is there), never when stderr is a pipe.

use std::time::Duration;

use crate::support::{Run, on_a_pseudo_terminal, rtlat_cyclictest, run_with_timeout};

/// What rewrites the line: carriage return, erase to the end of the line.
const REWIND: &str = "\r\x1b[K";

/// `rtlat cyclictest ARGS` on a pseudo-terminal (`None`: SKIPPED).
fn on_a_terminal(args: &str, test: &str) -> Option<Run> {
    let ran = |r: &Run| r.code() == Some(0) && r.stdout.contains("T: 0");
    on_a_pseudo_terminal(&format!("cyclictest {args}"), |_| {}, ran, test)
}

#[test]
fn a_quiet_run_on_a_terminal_shows_its_progress_then_erases_it() {
    let Some(r) = on_a_terminal("-q -i 1000 -D 2", function_name!()) else {
        return;
    };
    let draws: Vec<&str> = r.stdout.split(REWIND).skip(1).collect();
    // Drawn at the start and about once a second, then erased: at least
    // two lines and the erasure.
    assert!(draws.len() >= 3, "{}", r.describe());
    let (last, lines) = draws.split_last().unwrap();
    for line in lines {
        assert!(
            line.starts_with("rtlat cyclictest: 00:00:0") && line.contains(" of 00:00:02, "),
            "{line:?}\n{}",
            r.describe()
        );
        assert!(
            line.contains(" samples, ") && line.ends_with(" left"),
            "{line:?}"
        );
    }
    // After the erasure, the summary as without the line.
    assert!(last.starts_with("T: 0 "), "{last:?}");
    assert!(!last.contains(" left"), "{last:?}");
}

#[test]
fn no_progress_line_with_no_progress_or_without_quiet() {
    for (args, why) in [
        ("-q --no-progress -i 1000 -D 1", "--no-progress"),
        ("-i 1000 -l 500", "the live display"),
    ] {
        let Some(r) = on_a_terminal(args, function_name!()) else {
            return;
        };
        assert!(
            !r.stdout.contains(" left") && !r.stdout.contains(" samples, "),
            "{why}: {}",
            r.describe()
        );
    }
}

#[test]
fn no_progress_line_when_stderr_is_not_a_terminal() {
    let r = run_with_timeout(
        &mut rtlat_cyclictest(["-q", "-i", "1000", "-D", "1"]),
        Duration::from_secs(10),
    );
    r.expect_code(0);
    assert!(!r.stderr.contains(REWIND), "{}", r.describe());
    assert!(!r.stderr.contains(" left"), "{}", r.describe());
}
