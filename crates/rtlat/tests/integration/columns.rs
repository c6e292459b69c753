//! 80 columns: every line `rtlat` prints for a person (the audit of the
//! desktop fixture tree and of this machine, the full verdict and the
//! percentiles' footnotes, the comparison, the load's summary) fits 80
//! columns when stdout is not a terminal, `N` with `COLUMNS=N`, and `N`
//! on a terminal of `N` columns (`script` and `stty cols`); a message on
//! standard error wraps on a terminal only. Machine lines (`T:`, the
//! percentile table's rows) are left whole. The explanations' lines are
//! held to 80 columns in `explain.rs` (they need root and tracefs).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{Run, rtlat, rtlat_path, rtlat_tool, run, spawn_with, synthetic};

/// The audit's desktop fixture tree (`rtlat-audit`'s tests).
fn desktop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtlat-audit/tests/fixtures/desktop")
}

/// The lines of `text` wider than `width` columns (µs counts one).
fn wider_than(text: &str, width: usize) -> Vec<&str> {
    text.lines().filter(|l| l.chars().count() > width).collect()
}

/// A cyclictest run's output split into its human lines and its machine
/// lines (the `T:` lines and the percentile table, one row a line).
fn split(stdout: &str) -> (String, Vec<&str>) {
    let mut in_table = false;
    let mut human = String::new();
    let mut machine = Vec::new();
    for line in stdout.lines() {
        in_table = line.starts_with("# Percentiles")
            || (in_table && (line.starts_with("# T:") || line.starts_with("# All")));
        if in_table || line.starts_with("T:") {
            machine.push(line);
        } else {
            human.push_str(line);
            human.push('\n');
        }
    }
    (human, machine)
}

fn with_columns(mut cmd: Command, columns: usize) -> Command {
    cmd.env("COLUMNS", columns.to_string());
    cmd
}

fn desktop_audit(args: &[&str]) -> Command {
    let mut cmd = rtlat_tool("audit", ["--root".as_ref(), desktop().as_os_str()]);
    cmd.args(args).env("NO_COLOR", "1");
    cmd
}

#[test]
fn every_line_of_the_desktop_audit_fits_80_columns() {
    for args in [
        &[][..],
        &["--cpus", "0-1", "-p", "40"][..],
        &["--cpus", "1"][..],
    ] {
        let r = run(&mut desktop_audit(args));
        r.expect_code(0);
        assert!(r.stdout.contains("suggested: "), "{}", r.describe());
        assert_eq!(wider_than(&r.stdout, 80), Vec::<&str>::new(), "{args:?}");
        // Wide enough, the same audit has longer lines: the 80 is the
        // wrapping's doing.
        let wide = run(&mut with_columns(desktop_audit(args), 300));
        assert!(
            !wider_than(&wide.stdout, 80).is_empty(),
            "{args:?}: {}",
            wide.stdout
        );
        // Nothing lost, nothing added but the breaks (and the command's
        // continuations).
        let letters = |t: &str| -> String { t.split_whitespace().filter(|w| *w != "\\").collect() };
        assert_eq!(letters(&r.stdout), letters(&wide.stdout), "{args:?}");
    }
}

#[test]
fn every_line_of_this_machines_audit_fits_80_columns() {
    let r = run(&mut rtlat_tool("audit", [] as [&str; 0]));
    r.expect_code(0);
    assert_eq!(wider_than(&r.stdout, 80), Vec::<&str>::new());
}

#[test]
fn columns_sets_the_width_of_the_audit() {
    for width in [40, 50, 66, 100, 132] {
        let r = run(&mut with_columns(desktop_audit(&[]), width));
        r.expect_code(0);
        assert_eq!(wider_than(&r.stdout, width), Vec::<&str>::new(), "{width}");
        if width > 80 {
            assert!(!wider_than(&r.stdout, 80).is_empty(), "{width}");
        }
    }
    // Narrower than 40 (or not a number): 40, or 80.
    let r = run(&mut with_columns(desktop_audit(&[]), 10));
    assert_eq!(wider_than(&r.stdout, 40), Vec::<&str>::new());
    let mut cmd = desktop_audit(&[]);
    cmd.env("COLUMNS", "wide");
    let r = run(&mut cmd);
    assert_eq!(wider_than(&r.stdout, 80), Vec::<&str>::new());
    assert!(!wider_than(&r.stdout, 66).is_empty());
}

/// `LINE` run by `script` on a pseudo-terminal of `columns` columns
/// (`stty cols`); `None`, saying so, when `script` gives no terminal.
fn on_a_terminal_of(columns: usize, line: &str, test: &str) -> Option<Run> {
    let shell = format!("stty cols {columns} rows 50 && {line}");
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &shell, "/dev/null"])
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS");
    let r = spawn_with(&mut cmd, Stdio::piped(), Stdio::piped()).wait(Duration::from_secs(20));
    if !r.stdout.contains("rtlat") && !r.stdout.contains("suggested") {
        skip_note!(
            "SKIPPED (script(1) gave no terminal: {}): {test}",
            r.describe()
        );
        return None;
    }
    Some(r)
}

#[test]
fn on_a_terminal_of_n_columns_lines_fit_n() {
    let test = function_name!();
    let binary = rtlat_path();
    for width in [50, 72, 100] {
        let line = format!("{} audit --root {}", binary.display(), desktop().display());
        let Some(r) = on_a_terminal_of(width, &line, test) else {
            return;
        };
        let text = r.stdout.replace('\r', "");
        assert!(text.contains("suggested: "), "{text}");
        assert_eq!(wider_than(&text, width), Vec::<&str>::new(), "{width}");
        if width > 80 {
            assert!(!wider_than(&text, 80).is_empty(), "{width}: {text}");
        }
    }
    // A message on a terminal wraps, its continuation indented; to a pipe
    // it stays one line.
    let line = format!("{} cyclictest -p 100", binary.display());
    let Some(r) = on_a_terminal_of(50, &line, test) else {
        return;
    };
    let text = r.stdout.replace('\r', "");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 1, "{text}");
    assert!(lines[0].starts_with("rtlat cyclictest: -p"), "{text}");
    assert!(lines[1..].iter().all(|l| l.starts_with("  ")), "{text}");
    assert_eq!(wider_than(&text, 50), Vec::<&str>::new());
    let piped = run(rtlat().args(["cyclictest", "-p", "100"]));
    piped.expect_code(2);
    assert_eq!(piped.stderr_lines().len(), 1, "{}", piped.stderr);
    assert!(piped.stderr.len() > 50);
}

#[test]
fn the_full_verdict_and_the_footnotes_fit_80_columns_or_columns() {
    let args = [
        "-q",
        "-l",
        "20000",
        "-t",
        "2",
        "--verdict=full",
        "--deadline",
        "100",
        "--percentiles",
    ];
    let r = run(&mut synthetic(7, args));
    r.expect_code(0);
    let (human, machine) = split(&r.stdout);
    assert!(human.contains("# Verdict"), "{}", r.stdout);
    assert!(human.contains("# * T: 0"), "{}", r.stdout);
    assert!(
        machine.iter().any(|l| l.starts_with("T: 1")),
        "{}",
        r.stdout
    );
    assert_eq!(wider_than(&human, 80), Vec::<&str>::new());
    // Every human line a comment: scripts that skip `#` lines still do.
    assert!(human.lines().all(|l| l.starts_with('#')), "{human}");
    let mut narrow = synthetic(7, args);
    narrow.env("COLUMNS", "50");
    let narrow = run(&mut narrow);
    let (narrow_human, narrow_machine) = split(&narrow.stdout);
    assert_eq!(wider_than(&narrow_human, 50), Vec::<&str>::new());
    assert!(narrow_human.lines().all(|l| l.starts_with('#')));
    assert!(narrow_human.lines().count() > human.lines().count());
    // The machine lines are the same bytes at any width.
    assert_eq!(narrow_machine, machine);
}

#[test]
fn the_comparison_fits_80_columns_or_columns() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/compare/testdata");
    for width in [None, Some(60)] {
        let mut cmd = rtlat_tool("compare", ["base.json", "new.json"]);
        cmd.current_dir(&testdata);
        if let Some(w) = width {
            cmd.env("COLUMNS", w.to_string());
        }
        let r = run(&mut cmd);
        r.expect_code(0);
        assert!(r.stdout.contains("verdict"), "{}", r.stdout);
        assert_eq!(
            wider_than(&r.stdout, width.unwrap_or(80)),
            Vec::<&str>::new()
        );
    }
}

#[test]
fn the_load_summary_fits_80_columns_or_columns() {
    let args = ["-q", "-l", "2000", "--load", "cpu,timers"];
    let r = run(&mut synthetic(3, args));
    r.expect_code(0);
    let (human, _) = split(&r.stdout);
    assert!(human.contains("# load machine"), "{}", r.stdout);
    assert_eq!(wider_than(&human, 80), Vec::<&str>::new());
    let mut narrow = synthetic(3, args);
    narrow.env("COLUMNS", "40");
    let r = run(&mut narrow);
    let (human, _) = split(&r.stdout);
    assert!(human.contains("# load machine"), "{}", r.stdout);
    assert_eq!(wider_than(&human, 40), Vec::<&str>::new());
    assert!(human.lines().all(|l| l.starts_with('#')), "{human}");
}
