//! Text from the system or from an input file on its way to a terminal: a
//! thread, an IRQ, a kernel command line or a file named
//! `\e]0;OWNED\a\nok  fake` neither retitles the terminal nor forges a
//! line in the audit (a copied tree, and as root a real thread), in
//! `--explain`'s lines, its trace file and the verdict (as root with
//! tracefs), in compare's text, in plot's picture, or in a message on
//! standard error. The JSON keeps the exact text.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::cpus::CpuLease;
use crate::support::spinner::Spinner;
use crate::support::{Run, SpawnChecked, rtlat_cyclictest, rtlat_tool, run, synthetic};

/// What a hostile name holds: OSC 0 (set the terminal's title), BEL,
/// then a new line that looks like one of the audit's.
const HOSTILE: &str = "\x1b]0;OWNED\x07\nok  fake";
/// The same, as the text shows it.
const ESCAPED: &str = r"\e]0;OWNED\x07\nok  fake";
/// A hostile task name within the 15 bytes the kernel keeps.
const HOSTILE_COMM: &str = "\x1b]0;PWN\x07\nok  x";
/// The same, as the text shows it.
const ESCAPED_COMM: &str = r"\e]0;PWN\x07\nok  x";

/// Panics unless `text` has no control character that a terminal acts on
/// (ESC, BEL, CSI, a bidi override) and no line forged by a hostile name.
fn assert_harmless(text: &str, what: &str) {
    assert!(
        !text.contains(['\x1b', '\x07', '\u{9b}', '\u{202e}']),
        "{what}: a control character came through: {text:?}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("ok  fake") || l.starts_with("ok  x")),
        "{what}: a forged line:\n{text}"
    );
}

/// `stderr` is one harmless line.
fn assert_one_harmless_line(r: &Run, what: &str) {
    assert_eq!(r.stderr_lines().len(), 1, "{what}: {}", r.describe());
    assert_harmless(&r.stderr, what);
}

fn json(text: &str, what: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: {e}: {text}"))
}

/// The fact of check `id` in an audit's JSON.
fn fact<'a>(doc: &'a Value, id: &str) -> &'a str {
    doc["checks"]
        .as_array()
        .expect("a checks array")
        .iter()
        .find(|c| c["id"] == id)
        .and_then(|c| c["fact"].as_str())
        .unwrap_or_else(|| panic!("no fact for {id}: {doc}"))
}

/// The line of check `id` in the audit's text.
fn check_line(text: &str, id: &str) -> String {
    let mut lines = text
        .lines()
        .skip_while(|l| l.split_whitespace().nth(1) != Some(id));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no line for {id}:\n{text}"));
    // The check's continuation lines (wrapped to 80 columns) start with
    // spaces; its advice with `why:`.
    let rest = lines.take_while(|l| {
        l.starts_with(' ') && !["why:", "fix:"].contains(&l.split_whitespace().next().unwrap_or(""))
    });
    words(
        &std::iter::once(first)
            .chain(rest)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// `text` with each run of white space one space (a line may wrap where
/// the text had two).
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Copies the `desktop` fixture tree of rtlat-audit to `to`.
fn copy_desktop_tree(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtlat-audit/tests/fixtures/desktop");
    let status = Command::new("cp")
        .arg("-a")
        .arg(&from)
        .arg(to)
        .output_checked()
        .expect("cp");
    assert!(status.status.success(), "cp -a {from:?} {to:?}: {status:?}");
}

/// Replaces `old` by `new` in the file `path`.
fn edit(path: &Path, old: &str, new: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(old), "{path:?} has no {old:?}");
    std::fs::write(path, text.replace(old, new)).unwrap();
}

#[test]
fn a_copied_tree_with_hostile_names_audits_escaped_and_its_json_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    // The tree's own path shows in a fact (the boost file read).
    let parent = dir.path().join(format!("d{HOSTILE}"));
    std::fs::create_dir(&parent).unwrap();
    let tree = parent.join("tree");
    copy_desktop_tree(&tree);
    // A competing SCHED_FIFO 99 thread, the kernel command line, a device
    // IRQ on a measured CPU (one line of /proc/interrupts: no newline).
    edit(
        &tree.join("proc/1300/task/1305/stat"),
        "(jackd-rt)",
        &format!("({HOSTILE})"),
    );
    edit(
        &tree.join("proc/cmdline"),
        "splash",
        &format!("splash note={HOSTILE}"),
    );
    let irq_name = "acpi\x1b[2J\u{9b}31m\u{202e}live";
    edit(&tree.join("proc/interrupts"), "acpi", irq_name);

    let root = [OsStr::new("--root"), tree.as_os_str()];
    let r = run(&mut rtlat_tool("audit", root));
    r.expect_code(0);
    let text = &r.stdout;
    assert_harmless(text, "audit text");
    // One entry per check, its advice and the two closing lines: nothing
    // else. An entry's continuation lines start with spaces, so that no
    // text of the system's starts a line.
    for line in text.lines().filter(|l| {
        !l.starts_with(' ')
            || l.trim_start().starts_with("why:")
            || l.trim_start().starts_with("fix:")
    }) {
        let first = line.split_whitespace().next().unwrap_or("");
        assert!(
            [
                "ok",
                "info",
                "unknown",
                "warn",
                "bad",
                "why:",
                "fix:",
                "audit:",
                "suggested:"
            ]
            .contains(&first),
            "a line of no kind: {line:?}\n{text}"
        );
    }
    assert!(
        check_line(text, "competition.rt_threads")
            .contains(&words(&format!("{ESCAPED} (pid 1305) FIFO 99"))),
        "{text}"
    );
    assert!(
        check_line(text, "kernel.cmdline").ends_with(&words(&format!("splash note={ESCAPED}"))),
        "{text}"
    );
    assert!(
        check_line(text, "irq.affinity").contains(r"9 acpi\e[2J\u{9b}31m\u{202e}live on CPU 1"),
        "{text}"
    );
    assert!(
        check_line(text, "cpufreq.boost").contains(&words(&format!("/d{ESCAPED}/tree/sys/"))),
        "{text}"
    );

    // The JSON has the exact text.
    let r = run(rtlat_tool("audit", root).args(["--json", "-"]));
    r.expect_code(0);
    let doc = json(&r.stdout, "audit --json -");
    assert!(fact(&doc, "competition.rt_threads").contains(&format!("{HOSTILE} (pid 1305)")));
    assert!(fact(&doc, "irq.affinity").contains(&format!("9 {irq_name} on CPU 1")));
    assert!(fact(&doc, "cpufreq.boost").contains(&format!("/d{HOSTILE}/tree/sys/")));
    assert_eq!(
        doc["environment"]["kernel"]["cmdline"].as_str().unwrap(),
        format!(
            "BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=0b1c ro quiet splash note={HOSTILE}"
        )
    );

    // A message quoting the path: one harmless line.
    let r = run(rtlat_tool("audit", ["--root"]).arg(parent.join("none")));
    r.expect_code(2);
    assert_one_harmless_line(&r, "audit --root MISSING");
    assert!(
        r.stderr.contains(&format!("/d{ESCAPED}/none")),
        "{}",
        r.stderr
    );
}

#[test]
fn a_hostile_real_time_thread_is_shown_escaped_by_the_audit() {
    require_root!();
    // The hostile thread runs SCHED_FIFO: on a CPU of its own.
    let lease = CpuLease::one();
    let cpu = lease.cpu().to_string();
    // A few microseconds every 100 ms: it competes, it barely runs.
    let spinner = Spinner::start(
        &lease,
        HOSTILE_COMM,
        60,
        Duration::from_micros(5),
        Duration::from_millis(100),
    );
    let comm = std::fs::read(format!("/proc/self/task/{}/comm", spinner.tid)).unwrap();
    assert_eq!(
        comm,
        format!("{HOSTILE_COMM}\n").as_bytes(),
        "the name given"
    );

    let r = run(&mut rtlat_tool("audit", ["--cpus", &cpu, "-p", "50"]));
    r.expect_code(0);
    assert_harmless(&r.stdout, "audit text");
    let line = check_line(&r.stdout, "competition.rt_threads");
    assert!(
        line.starts_with("bad ")
            && line.contains(&words(&format!(
                "{ESCAPED_COMM} (pid {}) FIFO 60",
                spinner.tid
            ))),
        "{}",
        r.stdout
    );

    let r = run(&mut rtlat_tool(
        "audit",
        ["--cpus", &cpu, "-p", "50", "--json", "-"],
    ));
    r.expect_code(0);
    let doc = json(&r.stdout, "audit --json -");
    assert!(
        fact(&doc, "competition.rt_threads")
            .contains(&format!("{HOSTILE_COMM} (pid {}) FIFO 60", spinner.tid)),
        "{doc}"
    );
}

#[test]
fn explain_names_a_hostile_spinner_escaped_in_its_lines_trace_and_verdict() {
    require_root!();
    if !Path::new("/sys/kernel/tracing/instances").is_dir() {
        skip_note!(
            "SKIPPED (needs tracefs with instances): {}",
            function_name!()
        );
        return;
    }
    // As integration/explain.rs provokes a culprit: a higher-priority
    // SCHED_FIFO thread spinning in bursts on the measured (leased) CPU.
    let lease = CpuLease::one();
    let cpu = lease.cpu().to_string();
    let spinner = Spinner::start(
        &lease,
        HOSTILE_COMM,
        80,
        Duration::from_micros(300),
        Duration::from_millis(50),
    );
    let dir = tempfile::tempdir().unwrap();
    let (json_path, trace_path) = (dir.path().join("run.json"), dir.path().join("trace.txt"));
    let mut cmd = rtlat_cyclictest([
        "-q",
        "-m",
        "-a",
        &cpu,
        "-p",
        "50",
        "-i",
        "200",
        "-D",
        "2",
        "--explain=100",
        "--explain-threshold",
        "150",
        "--verdict",
    ]);
    cmd.arg("--json").arg(&json_path);
    cmd.arg("--explain-trace").arg(&trace_path);
    let r = run(&mut cmd);
    r.expect_code(0);
    drop(spinner);

    let doc: Value = json(&std::fs::read_to_string(&json_path).unwrap(), "--json");
    let named_in_json = doc["explain"]
        .as_array()
        .expect("an explain array")
        .iter()
        .flat_map(|e| e["components"].as_array().unwrap())
        .flat_map(|c| c["causes"].as_array().unwrap())
        .any(|c| {
            c["kind"] == "task"
                && c["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with(HOSTILE_COMM))
        });
    assert!(named_in_json, "the JSON names the spinner exactly: {doc}");

    assert_harmless(&r.stdout, "explain text");
    assert!(
        r.stdout.contains(&format!("task {ESCAPED_COMM} fifo 80 ")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .lines()
            .all(|l| l.starts_with('#') || l.starts_with("T:")),
        "{}",
        r.stdout
    );
    let trace = std::fs::read_to_string(&trace_path).unwrap();
    assert_harmless(&trace, "--explain-trace");
    assert!(trace.contains(ESCAPED_COMM), "{trace}");
}

/// A synthetic run's JSON, with `environment` set.
fn result_with_environment(dir: &Path, name: &str, seed: u64, environment: Value) -> PathBuf {
    let plain = dir.join(format!("plain{seed}.json"));
    let mut cmd = synthetic(seed, ["-q", "-l", "2000", "--json"]);
    cmd.arg(&plain);
    run(&mut cmd).expect_code(0);
    let mut doc = json(&std::fs::read_to_string(&plain).unwrap(), "synthetic run");
    doc["environment"] = environment;
    let path = dir.join(name);
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

#[test]
fn compare_shows_hostile_file_names_and_facts_escaped_and_its_json_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let environment =
        |cmdline: &str| serde_json::json!({"kernel": {"release": "6.1.0-rt", "cmdline": cmdline}});
    let base = result_with_environment(
        dir.path(),
        &format!("base{HOSTILE}.json"),
        1,
        environment("quiet"),
    );
    let new = result_with_environment(
        dir.path(),
        "new.json",
        2,
        environment(&format!("quiet {HOSTILE}\u{202e}")),
    );

    let r = run(&mut rtlat_tool("compare", [&base, &new]));
    r.expect_code(0);
    assert_harmless(&r.stdout, "compare text");
    assert!(
        r.stdout.contains(&format!("base{ESCAPED}.json: 1 thread")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains(&format!("quiet -> quiet {ESCAPED}\\u{{202e}}\n")),
        "{}",
        r.stdout
    );

    let r = run(rtlat_tool("compare", [&base, &new]).args(["--json", "-"]));
    r.expect_code(0);
    assert!(
        r.stdout
            .contains(&serde_json::to_string(&base.display().to_string()).unwrap()),
        "the file's exact name: {}",
        r.stdout
    );

    // Refusals quoting a file's name or its content: one harmless line.
    let bad = dir.path().join(format!("bad{HOSTILE}.json"));
    std::fs::write(
        &bad,
        format!(r#"{{"file_version": {}}}"#, json_string(HOSTILE)),
    )
    .unwrap();
    let r = run(&mut rtlat_tool("compare", [&bad, &new]));
    r.expect_code(2);
    assert_one_harmless_line(&r, "compare of a bad file");
    assert!(
        r.stderr.contains(&format!("bad{ESCAPED}.json")),
        "{}",
        r.stderr
    );
    let missing = dir.path().join(format!("gone{HOSTILE}.json"));
    let r = run(&mut rtlat_tool("compare", [&missing, &new]));
    r.expect_code(2);
    assert_one_harmless_line(&r, "compare of a missing file");
}

/// `text` as a JSON string, quotes included.
fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

#[test]
fn plot_keeps_hostile_names_out_of_its_picture_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let environment = serde_json::json!({"kernel": {"release": format!("6.1{HOSTILE}\u{202e}")}});
    let input = result_with_environment(
        dir.path(),
        &format!("run{HOSTILE}\u{202e}.json"),
        3,
        environment,
    );
    let svg = dir.path().join("out.svg");
    let r = run(rtlat_tool("plot", [&input]).arg("-o").arg(&svg));
    r.expect_code(0);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        !picture.contains(['\x1b', '\x07', '\u{202e}']),
        "a control character in the picture"
    );
    roxmltree::Document::parse(&picture).expect("the SVG is well-formed");

    // A file that is not a result, with a hostile name: one harmless line.
    let bad = dir.path().join(format!("bad{HOSTILE}.json"));
    std::fs::write(
        &bad,
        format!(r#"{{"file_version": {}}}"#, json_string(HOSTILE)),
    )
    .unwrap();
    let r = run(rtlat_tool("plot", [&bad]).arg("-o").arg(&svg));
    r.expect_code(2);
    assert_one_harmless_line(&r, "plot of a bad file");
    assert!(
        r.stderr.contains(&format!("bad{ESCAPED}.json")),
        "{}",
        r.stderr
    );
}
