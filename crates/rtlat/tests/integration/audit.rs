//! `rtlat audit`: the real audit of this machine (every check once, valid
//! JSON, exit statuses with `--fail-on`, colour only on a terminal), the
//! fixture trees of `rtlat-audit` read through `--root`, bad input, and
//! standard output that cannot be written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rtlat_audit::CHECK_IDS;
use serde_json::Value;

use crate::support::{Run, SpawnChecked, dev_full, rtlat, rtlat_tool, run, spawn_with};

/// The five status words, harmless to worst.
const STATUSES: [&str; 5] = ["ok", "info", "unknown", "warn", "bad"];

/// `rtlat audit ARGS...`, colour not asked for.
fn audit(args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>) -> Command {
    let mut cmd = rtlat_tool("audit", args);
    cmd.env_remove("NO_COLOR");
    cmd
}

/// A fixture tree of `rtlat-audit` (`tuned-rt`, `desktop`).
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rtlat-audit/tests/fixtures")
        .join(name)
}

/// The check lines of the text: (status, id) of each line that starts
/// with a status word (a check's continuation lines, wrapped to the
/// width, start with spaces).
fn check_lines(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter(|line| !line.starts_with(' '))
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let status = words.next()?;
            let id = words.next()?;
            STATUSES
                .contains(&status)
                .then(|| (status.to_string(), id.to_string()))
        })
        .collect()
}

/// The (id, status) pairs of a `--json` document.
fn json_checks(doc: &Value) -> Vec<(String, String)> {
    doc["checks"]
        .as_array()
        .expect("checks is an array")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().expect("id").to_string(),
                c["status"].as_str().expect("status").to_string(),
            )
        })
        .collect()
}

/// The keys of a JSON object, sorted.
fn keys(object: &Value) -> Vec<&str> {
    let object = object.as_object().expect("an object");
    object.keys().map(String::as_str).collect()
}

fn parse_json(text: &str, context: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{context}: not JSON: {e}\n{text}"))
}

/// Runs `jq -e .` on `text`: true when jq accepts it; `None` (and a
/// SKIPPED line) when jq is not installed.
fn jq_accepts(text: &str, test: &str) -> Option<bool> {
    let child = Command::new("jq")
        .args(["-e", "."])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn_checked();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            skip_note!("SKIPPED (jq not runnable: {e}): the jq step of {test}");
            return None;
        }
    };
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
    }
    Some(child.wait().unwrap().success())
}

#[test]
fn the_real_audit_prints_every_check_once_then_the_summary_and_command() {
    let r = run(&mut audit([] as [&str; 0]));
    r.expect_code(0);
    let lines = check_lines(&r.stdout);
    let ids: Vec<&str> = lines.iter().map(|(_, id)| id.as_str()).collect();
    assert_eq!(
        ids,
        CHECK_IDS,
        "every check once, in order\n{}",
        r.describe()
    );
    // The summary and the command close the text, each wrapped to 80
    // columns: the command's lines continued with ` \`.
    let text: Vec<&str> = r.stdout.lines().collect();
    let at = |prefix: &str| {
        text.iter()
            .position(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line\n{}", r.describe()))
    };
    let (summary_at, suggested_at) = (at("audit: "), at("suggested: "));
    assert!(summary_at < suggested_at, "{}", r.describe());
    let summary = text[summary_at..suggested_at].join(" ");
    for line in &text[suggested_at + 1..] {
        assert!(line.starts_with("    "), "{}", r.describe());
    }
    for line in &text[suggested_at..text.len() - 1] {
        assert!(line.ends_with(" \\"), "{}", r.describe());
    }
    for (status, _) in &lines {
        let count = lines.iter().filter(|(s, _)| s == status).count();
        assert!(
            summary.contains(&format!(" {count} {status}")),
            "the summary counts {status}\n{}",
            r.describe()
        );
    }
    let suggested = text[suggested_at];
    assert!(
        suggested.starts_with("suggested: rtlat cyclictest "),
        "{}",
        r.describe()
    );
    // Not a terminal: no escape codes.
    assert!(!r.stdout.contains('\x1b'), "{}", r.describe());
    assert_eq!(r.stderr, "", "{}", r.describe());
}

#[test]
fn the_real_audit_as_json_has_every_key_and_agrees_with_the_text() {
    // The two audits must see the same machine: the real-time threads of
    // another test (competition.rt_threads) may not come or go between
    // them, and every such test holds a CPU lease.
    let _all = crate::support::cpus::CpuLease::all();
    let r = run(&mut audit(["--json", "-"]));
    r.expect_code(0);
    let doc = parse_json(&r.stdout, "--json -");
    if let Some(accepted) = jq_accepts(&r.stdout, function_name!()) {
        assert!(accepted, "jq -e . refused it\n{}", r.stdout);
    }
    assert_eq!(
        keys(&doc),
        [
            "checks",
            "environment",
            "rtlat_version",
            "suggested_command"
        ],
        "{}",
        r.stdout
    );
    assert_eq!(doc["rtlat_version"], env!("CARGO_PKG_VERSION"));
    assert!(doc["environment"].is_object());
    assert_eq!(
        doc["environment"]["rtlat_version"],
        env!("CARGO_PKG_VERSION")
    );
    assert!(
        doc["suggested_command"]
            .as_str()
            .is_some_and(|c| c.starts_with("rtlat cyclictest ")),
        "{}",
        r.stdout
    );
    for check in doc["checks"].as_array().unwrap() {
        assert_eq!(
            keys(check),
            ["fact", "fix", "id", "status", "why"],
            "{check}"
        );
        let status = check["status"].as_str().unwrap();
        assert!(STATUSES.contains(&status), "{check}");
        assert!(check["fact"].is_string(), "{check}");
        let flagged = status == "warn" || status == "bad";
        assert_eq!(check["why"].is_string(), flagged, "{check}");
        assert_eq!(check["fix"].is_string(), flagged, "{check}");
    }
    let ids: Vec<String> = json_checks(&doc).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, CHECK_IDS);

    // The text of the same machine says the same (the machine may change
    // between the two runs only in what a second changes: nothing here).
    let text = run(&mut audit([] as [&str; 0]));
    let from_text: Vec<(String, String)> = check_lines(&text.stdout)
        .into_iter()
        .map(|(status, id)| (id, status))
        .collect();
    assert_eq!(from_text, json_checks(&doc));
    let suggested = format!("suggested: {}", doc["suggested_command"].as_str().unwrap());
    assert!(
        text.stdout.lines().any(|l| l == suggested),
        "{}",
        text.stdout
    );
}

#[test]
fn json_to_a_file_keeps_the_text_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.json");
    let r = run(&mut audit([Path::new("--json"), &file]));
    r.expect_code(0);
    assert_eq!(
        check_lines(&r.stdout).len(),
        CHECK_IDS.len(),
        "{}",
        r.describe()
    );
    let doc = parse_json(&std::fs::read_to_string(&file).unwrap(), "--json FILE");
    assert_eq!(json_checks(&doc).len(), CHECK_IDS.len());
    // Only the file was made.
    assert_eq!(crate::support::listing(dir.path()), ["audit.json"]);
}

#[test]
fn fail_on_exits_3_exactly_when_a_check_is_at_or_above_the_level() {
    let doc = parse_json(&run(&mut audit(["--json", "-"])).stdout, "--json -");
    let statuses: Vec<String> = json_checks(&doc).into_iter().map(|(_, s)| s).collect();
    let any = |words: &[&str]| statuses.iter().any(|s| words.contains(&s.as_str()));
    for (level, at_or_above) in [("warn", &["warn", "bad"][..]), ("bad", &["bad"])] {
        let r = run(&mut audit(["--fail-on", level]));
        let failing = any(at_or_above);
        r.expect_code(if failing { 3 } else { 0 });
        // The whole text either way; the reason on stderr when failing.
        assert_eq!(check_lines(&r.stdout).len(), CHECK_IDS.len());
        assert_eq!(
            r.stderr_lines().len(),
            usize::from(failing),
            "{}",
            r.describe()
        );
        if failing {
            assert!(
                r.stderr
                    .starts_with(&format!("rtlat audit: --fail-on {level}: ")),
                "{}",
                r.describe()
            );
        }
    }
}

/// Runs `rtlat audit ARGS` on a pseudo-terminal (`script`), with
/// `no_color` as NO_COLOR (`None`: unset); `None` when `script` cannot
/// run.
fn on_a_terminal(args: &str, no_color: Option<&str>, test: &str) -> Option<Run> {
    crate::support::on_a_pseudo_terminal(
        &format!("audit {args}"),
        |cmd| {
            match no_color {
                Some(value) => cmd.env("NO_COLOR", value),
                None => cmd.env_remove("NO_COLOR"),
            };
        },
        |r| r.code() == Some(0) || r.stdout.contains("suggested: "),
        test,
    )
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let test = function_name!();
    let Some(coloured) = on_a_terminal("", None, test) else {
        return;
    };
    // Each status word coloured, and nothing else: as many coloured words
    // of each status as the plain text has lines of it.
    let plain = check_lines(&run(&mut audit([] as [&str; 0])).stdout);
    for word in STATUSES {
        let plain_count = plain.iter().filter(|(s, _)| s == word).count();
        assert_eq!(
            coloured.stdout.matches(&format!("m{word}\x1b[0m")).count(),
            plain_count,
            "{word}\n{}",
            coloured.stdout
        );
    }
    assert_eq!(
        coloured.stdout.matches('\x1b').count(),
        2 * CHECK_IDS.len(),
        "{}",
        coloured.stdout
    );
    for no_color in ["1", "yes"] {
        let plain = on_a_terminal("", Some(no_color), test).unwrap();
        assert!(
            !plain.stdout.contains('\x1b'),
            "NO_COLOR={no_color}\n{}",
            plain.stdout
        );
        assert_eq!(check_lines(&plain.stdout).len(), CHECK_IDS.len());
    }
    // An empty NO_COLOR is unset (no-color.org).
    let empty = on_a_terminal("", Some(""), test).unwrap();
    assert!(empty.stdout.contains('\x1b'), "{}", empty.stdout);
    // JSON on the terminal is never coloured.
    let json = on_a_terminal("--json -", None, test).unwrap();
    assert!(!json.stdout.contains('\x1b'), "{}", json.stdout);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--cpus", "99"],
            "rtlat audit: --cpus: invalid value '99': cpu 99 is out of range: this machine has \
             CPUs 0",
        ),
        (&["--cpus", "0-"], "rtlat audit: --cpus: invalid value '0-'"),
        (
            &["--fail-on", "maybe"],
            "rtlat audit: --fail-on: invalid value 'maybe': expected warn",
        ),
        (
            &["--root", "/nonexistent"],
            "rtlat audit: --root: invalid value '/nonexistent': No such file or directory",
        ),
        (
            &["-p", "100"],
            "rtlat audit: -p/--priority: invalid value '100': expected a real-time priority, 0 \
             to 99",
        ),
        (
            &["-i", "0"],
            "rtlat audit: -i/--interval: invalid value '0'",
        ),
        (
            &["--json", "/nonexistent/a.json"],
            "rtlat audit: --json: cannot write '/nonexistent/a.json'",
        ),
        (&["--bogus"], "rtlat audit: unrecognized option '--bogus'"),
        (&["-x"], "rtlat audit: unrecognized option '-x'"),
        (&["stray"], "rtlat audit: unexpected argument 'stray'"),
        (
            &["--fail-on"],
            "rtlat audit: option '--fail-on' requires a value",
        ),
    ];
    for (args, expected) in cases {
        let r = run(&mut audit(*args));
        assert_eq!(r.code(), Some(2), "{args:?}\n{}", r.describe());
        assert_eq!(r.stdout, "", "{args:?}");
        assert_eq!(r.stderr_lines().len(), 1, "{args:?}\n{}", r.describe());
        assert!(
            r.stderr.starts_with(expected),
            "{args:?}\n got {}want {expected}",
            r.stderr
        );
    }
}

#[test]
fn a_full_stdout_or_json_file_exits_1_with_one_line() {
    for args in [&[][..], &["--json", "-"]] {
        let r =
            spawn_with(&mut audit(args), dev_full(), Stdio::piped()).wait(Duration::from_secs(10));
        assert_eq!(r.code(), Some(1), "{args:?}\n{}", r.describe());
        assert_eq!(r.stderr_lines().len(), 1, "{args:?}\n{}", r.describe());
        assert!(
            r.stderr
                .starts_with("rtlat audit: writing to standard output: No space left on device"),
            "{args:?}\n{}",
            r.describe()
        );
    }
    let r = run(&mut audit(["--json", "/dev/full"]));
    assert_eq!(r.code(), Some(1), "{}", r.describe());
    assert_eq!(check_lines(&r.stdout).len(), CHECK_IDS.len());
    assert_eq!(
        r.stderr,
        "rtlat audit: --json: cannot write '/dev/full': No space left on device\n"
    );
    // A reader that has gone: a quiet end.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let r = spawn_with(&mut audit([] as [&str; 0]), writer.into(), Stdio::piped())
        .wait(Duration::from_secs(10));
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    assert_eq!(r.stderr, "");
}

#[test]
fn help_lists_every_option_and_the_top_help_lists_audit() {
    let r = run(&mut audit(["--help"]));
    r.expect_code(0);
    for option in [
        "--cpus LIST",
        "-p, --priority PRIO",
        "-i, --interval US",
        "--json FILE",
        "--fail-on LEVEL",
        "--root DIR",
    ] {
        assert!(r.stdout.contains(option), "{option}\n{}", r.stdout);
    }
    let top = run(rtlat().arg("--help"));
    assert!(
        top.stdout.lines().any(|l| l.starts_with("  audit ")),
        "{}",
        top.stdout
    );
}

/// The statuses by id of `rtlat audit --root TREE ARGS --json -`.
fn fixture_statuses(tree: &str, args: &[&str]) -> BTreeMap<String, String> {
    let mut cmd = audit(["--root".as_ref(), fixture(tree).as_os_str()]);
    cmd.args(args).args(["--json", "-"]);
    let r = run(&mut cmd);
    r.expect_code(0);
    json_checks(&parse_json(&r.stdout, tree))
        .into_iter()
        .collect()
}

#[test]
fn the_tuned_rt_tree_passes_fail_on_warn() {
    let tree = fixture("tuned-rt");
    let r = run(&mut audit([
        "--root".as_ref(),
        tree.as_os_str(),
        "--cpus".as_ref(),
        "2-3".as_ref(),
        "-p".as_ref(),
        "95".as_ref(),
        "--fail-on".as_ref(),
        "warn".as_ref(),
    ]));
    r.expect_code(0);
    let lines = check_lines(&r.stdout);
    assert_eq!(lines.len(), CHECK_IDS.len(), "{}", r.describe());
    assert!(
        lines
            .iter()
            .all(|(status, _)| status == "ok" || status == "info"),
        "{}",
        r.describe()
    );
    assert!(!r.stdout.contains("why:"), "{}", r.describe());
    assert_eq!(r.stderr, "");
    let statuses = fixture_statuses("tuned-rt", &["--cpus", "2-3", "-p", "95"]);
    assert_eq!(statuses["kernel.preemption"], "ok");
    assert_eq!(statuses["isolation.isolcpus"], "ok");
}

#[test]
fn the_desktop_tree_is_flagged_check_by_check_and_fails() {
    let statuses = fixture_statuses("desktop", &[]);
    for (id, status) in [
        ("kernel.preemption", "bad"),
        ("cpufreq.governor", "warn"),
        ("idle.states", "warn"),
        ("memory.thp", "warn"),
        ("clocksource.current", "bad"),
        ("irq.irqbalance", "warn"),
        ("competition.rt_threads", "bad"),
    ] {
        assert_eq!(statuses[id], status, "{id}: {statuses:?}");
    }
    let flagged = |words: &[&str]| -> Vec<&str> {
        CHECK_IDS
            .iter()
            .copied()
            .filter(|id| words.contains(&statuses[*id].as_str()))
            .collect()
    };
    let tree = fixture("desktop");
    for (level, words) in [("warn", &["warn", "bad"][..]), ("bad", &["bad"])] {
        let r = run(&mut audit([
            "--root".as_ref(),
            tree.as_os_str(),
            "--fail-on".as_ref(),
            level.as_ref(),
        ]));
        r.expect_code(3);
        let ids = flagged(words);
        assert_eq!(
            r.stderr,
            format!(
                "rtlat audit: --fail-on {level}: {} checks at {level} or worse: {}\n",
                ids.len(),
                ids.join(", ")
            ),
            "{}",
            r.describe()
        );
        // The whole text came first.
        assert_eq!(check_lines(&r.stdout).len(), CHECK_IDS.len());
        // And so does the JSON, to stdout instead of the text.
        let r = run(&mut audit([
            "--root".as_ref(),
            tree.as_os_str(),
            "--fail-on".as_ref(),
            level.as_ref(),
            "--json".as_ref(),
            "-".as_ref(),
        ]));
        r.expect_code(3);
        let doc = parse_json(&r.stdout, "desktop --json -");
        assert_eq!(json_checks(&doc).len(), CHECK_IDS.len());
    }
}

#[test]
fn cpus_are_read_against_the_tree_given() {
    // The trees have 4 CPUs, whatever this machine has.
    let tree = fixture("desktop");
    let root = ["--root".as_ref(), tree.as_os_str()];
    for (list, measured) in [("3", vec![3]), ("!0", vec![1, 2, 3]), ("+1-2", vec![1, 2])] {
        let mut cmd = audit(root);
        cmd.args(["--cpus", list, "--json", "-"]);
        let r = run(&mut cmd);
        r.expect_code(0);
        let doc = parse_json(&r.stdout, list);
        assert_eq!(
            doc["environment"]["measured_cpus"],
            serde_json::json!(measured),
            "{list}"
        );
    }
    let mut cmd = audit(root);
    cmd.args(["--cpus", "7"]);
    let r = run(&mut cmd);
    assert_eq!(r.code(), Some(2), "{}", r.describe());
    assert_eq!(
        r.stderr,
        "rtlat audit: --cpus: invalid value '7': cpu 7 is out of range: this machine has CPUs \
         0-3\n"
    );
}

#[test]
fn a_bare_tree_audits_and_a_cpu_it_lacks_is_refused_by_name() {
    let tree = tempfile::tempdir().unwrap();
    let cpu_dir = tree.path().join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu_dir).unwrap();
    std::fs::write(cpu_dir.join("present"), "0-1,3\n").unwrap();
    let root = ["--root".as_ref(), tree.path().as_os_str()];

    // Nothing else to read: every check still has its line.
    let mut cmd = audit(root);
    cmd.args(["--cpus", "3"]);
    let r = run(&mut cmd);
    r.expect_code(0);
    let ids: Vec<String> = check_lines(&r.stdout)
        .into_iter()
        .map(|(_, id)| id)
        .collect();
    assert_eq!(ids, CHECK_IDS, "{}", r.describe());

    // CPU 2 is within the tree's range but not present.
    let mut cmd = audit(root);
    cmd.args(["--cpus", "2"]);
    let r = run(&mut cmd);
    assert_eq!(r.code(), Some(2), "{}", r.describe());
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "rtlat audit: --cpus: CPU 2 is not present (present: 0-1,3)\n"
    );
}
