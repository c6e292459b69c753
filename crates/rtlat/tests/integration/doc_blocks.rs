//! The documentation's commands run: every fenced shell block of the
//! documentation (`doc_links::doc_files`) is either marked runnable, its
//! info string `sh runnable` (`sh runnable exits=0|3` when a command may
//! also end with another status), or preceded by a comment
//! `<!-- not runnable: REASON -->`; a block that is neither fails, so that
//! none is forgotten silently. The runnable ones are run, as root, each in
//! a temporary directory with this test run's `rtlat` and `rtlat-plot`
//! first in `PATH`, every command bounded: a measuring tool's run must say
//! how long, and a short time, with its own options (`-D`, `-l`, queuelat's
//! `-t`, hwlatdetect's `--duration`, ...: [`MEASURING`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::doc_links::{Line, doc_files, scan, workspace};
use crate::support::cpus::CpuLease;
use crate::support::tracefs::TraceGuard;
use crate::support::{allowed_cpus, rtlat_path, rtlat_plot_path, run_with_timeout};

/// The info strings' first words that make a shell block.
const SHELL: [&str; 4] = ["sh", "bash", "shell", "console"];

/// A command of a runnable block: where it is and what it says.
struct Command {
    at: String,
    text: String,
}

/// A runnable block: its commands and the exit statuses they may have.
struct Runnable {
    commands: Vec<Command>,
    exits: Vec<i32>,
}

/// What the documentation holds.
#[derive(Default)]
struct Blocks {
    runnable: Vec<Runnable>,
    /// How many blocks say why they are not runnable.
    not_runnable: usize,
    /// Blocks that break the rules, one line each.
    faults: Vec<String>,
}

/// The reason of a `<!-- not runnable: REASON -->` line, if it is one.
fn not_runnable_reason(line: &str) -> Option<&str> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    let reason = inner.strip_prefix("not runnable:")?.trim();
    (!reason.is_empty()).then_some(reason)
}

/// The commands of a block's lines: comment lines and blank ones left
/// out, a line ending in `\` joined with the next, a trailing `# comment`
/// kept (the shell reads it as one).
fn commands(file: &Path, first: usize, code: &[&str]) -> Vec<Command> {
    let mut commands = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in code.iter().enumerate() {
        let line = line.trim();
        let (start, mut text) = pending.take().unwrap_or((first + i, String::new()));
        if text.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                text.push_str(head.trim_end());
                text.push(' ');
                pending = Some((start, text));
            }
            None => {
                text.push_str(line);
                commands.push(Command {
                    at: format!("{}:{}", file.display(), start),
                    text,
                });
            }
        }
    }
    commands
}

/// Reads every documentation file's fenced blocks.
fn blocks() -> Blocks {
    let mut found = Blocks::default();
    for file in doc_files() {
        let text = std::fs::read_to_string(workspace().join(&file)).unwrap();
        let lines = scan(&text);
        let mut i = 0;
        while i < lines.len() {
            let Line::Open(info) = lines[i] else {
                i += 1;
                continue;
            };
            let at = format!("{}:{}", file.display(), i + 1);
            let mut code = Vec::new();
            let mut j = i + 1;
            while let Some(Line::Code(line)) = lines.get(j) {
                code.push(*line);
                j += 1;
            }
            let words: Vec<&str> = info.split([' ', ',']).filter(|w| !w.is_empty()).collect();
            let before = lines[..i]
                .iter()
                .rev()
                .find_map(|l| match l {
                    Line::Text(t) if t.trim().is_empty() => None,
                    Line::Text(t) => Some(*t),
                    _ => Some(""),
                })
                .unwrap_or("");
            let shell = words.first().is_some_and(|w| SHELL.contains(w));
            if shell && words.contains(&"runnable") {
                let exits = match words.iter().find_map(|w| w.strip_prefix("exits=")) {
                    Some(list) => list
                        .split('|')
                        .map(|s| s.parse().unwrap_or_else(|_| panic!("{at}: exits={list}")))
                        .collect(),
                    None => vec![0],
                };
                let commands = commands(&file, i + 2, &code);
                if commands.is_empty() {
                    found
                        .faults
                        .push(format!("{at}: a runnable block without a command"));
                }
                found.runnable.push(Runnable { commands, exits });
            } else if shell {
                match not_runnable_reason(before) {
                    Some(_) => found.not_runnable += 1,
                    None => found.faults.push(format!(
                        "{at}: a shell block neither `{} runnable` nor preceded by \
                         `<!-- not runnable: REASON -->`",
                        words[0]
                    )),
                }
            } else if info.is_empty()
                && code
                    .iter()
                    .map(|l| l.trim())
                    .find(|l| !l.is_empty())
                    .is_some_and(|l| {
                        ["rtlat ", "cargo ", "ci/", "bench/", "$ "]
                            .iter()
                            .any(|p| l.starts_with(p))
                    })
            {
                found.faults.push(format!(
                    "{at}: a block of commands without a language: make it ```sh (runnable or not)"
                ));
            }
            i = j + 1;
        }
    }
    found
}

/// What bounds a measuring tool's run: the options that do (each with the
/// largest value a documented command may give it: seconds or loops; 0,
/// C's "for ever", never bounds), and whether its run ends soon (in 5 s
/// or less) when none of them is given.
struct Bounds {
    tool: &'static str,
    options: &'static [(&'static str, f64)],
    ends_by_default: bool,
}

/// `-D` up to 5 s or `-l` up to 20000 loops.
const DURATION_OR_LOOPS: &[(&str, f64)] = &[
    ("-D", 5.0),
    ("--duration", 5.0),
    ("-l", 20000.0),
    ("--loops", 20000.0),
];

/// `-D`/`--duration` up to 5 s.
const DURATION: &[(&str, f64)] = &[("-D", 5.0), ("--duration", 5.0)];

/// The tools whose runs measure until told to stop, or for longer than a
/// documentation example may take. The rest (hackbench, ssdd,
/// rt-migrate-test, pip_stress, the reports) end soon by themselves.
const MEASURING: [Bounds; 16] = [
    Bounds::until_stopped("cyclictest", DURATION_OR_LOOPS),
    Bounds::until_stopped("cyclicdeadline", DURATION),
    Bounds::until_stopped("monitor", DURATION_OR_LOOPS),
    Bounds::until_stopped(
        "latency",
        &[
            ("-D", 5.0),
            ("--duration", 5.0),
            ("-l", 20000.0),
            ("--loops", 20000.0),
            ("-T", 5.0),
        ],
    ),
    Bounds::until_stopped("load", DURATION_OR_LOOPS),
    Bounds::until_stopped("signaltest", DURATION_OR_LOOPS),
    Bounds::until_stopped("svsematest", DURATION_OR_LOOPS),
    Bounds::until_stopped("pmqtest", DURATION_OR_LOOPS),
    Bounds::until_stopped("ptsematest", DURATION_OR_LOOPS),
    Bounds::until_stopped("sigwaittest", DURATION_OR_LOOPS),
    // 1 s by default.
    Bounds {
        tool: "oslat",
        options: DURATION,
        ends_by_default: true,
    },
    Bounds::until_stopped("pi_stress", DURATION),
    // C's 10 s by default.
    Bounds::until_stopped("deadline_test", &[("--duration", 5.0)]),
    Bounds::until_stopped("queuelat", &[("-t", 5.0), ("--timeout", 5.0)]),
    // 120 s by default.
    Bounds::until_stopped("hwlatdetect", &[("--duration", 5.0)]),
    // Its -D is split among its phases (2 s each for 6).
    Bounds::until_stopped("evaluate", &[("-D", 12.0), ("--duration", 12.0)]),
];

impl Bounds {
    const fn until_stopped(tool: &'static str, options: &'static [(&'static str, f64)]) -> Self {
        Bounds {
            tool,
            options,
            ends_by_default: false,
        }
    }
}

/// Why a runnable command could run too long, if it could: a measuring
/// tool ([`MEASURING`]) without one of its bounds, or with a bound too
/// large, or without a `--load-schedule` of at most 5 s; `--help` needs
/// none. A trailing `# comment` is not the command's.
fn unbounded(command: &str) -> Option<String> {
    let command = match command.find(" #") {
        Some(at) => &command[..at],
        None => command,
    };
    let words: Vec<&str> = command
        .split_whitespace()
        .map(|w| w.trim_matches(|c| matches!(c, '(' | ')' | ';' | '\'' | '"')))
        .collect();
    let known = |name: &str| MEASURING.iter().find(|b| b.tool == name);
    let bounds = words
        .windows(2)
        .find(|w| w[0] == "rtlat" && known(w[1]).is_some())
        .and_then(|w| known(w[1]))
        .or_else(|| {
            words
                .iter()
                .filter(|w| **w != "load")
                .find_map(|w| known(w))
        })?;
    if words.contains(&"--help") {
        return None;
    }
    // An option's text: `-D 2`, `--duration 2` or `--duration=2`.
    let text = |flag: &str| {
        words
            .iter()
            .enumerate()
            .find_map(|(i, w)| match w.strip_prefix(flag)? {
                "" => words.get(i + 1).copied(),
                rest if flag.starts_with("--") => rest.strip_prefix('='),
                _ => None,
            })
    };
    let schedule = text("--load-schedule")
        .and_then(|list| {
            list.split(',')
                .map(|phase| phase.rsplit_once('=').and_then(|(_, d)| seconds(d)))
                .sum::<Option<f64>>()
        })
        .is_some_and(|s| s <= 5.0);
    let given: Vec<Option<f64>> = bounds
        .options
        .iter()
        .filter_map(|(flag, max)| text(flag).map(|t| seconds(t).filter(|v| *v > 0.0 && v <= max)))
        .collect();
    let bounded = given.iter().any(Option::is_some)
        || (given.is_empty() && bounds.ends_by_default)
        || schedule;
    (!bounded).then(|| {
        let options: Vec<String> = bounds
            .options
            .iter()
            .map(|(flag, max)| format!("{flag} (up to {max})"))
            .collect();
        format!(
            "`{}` needs one of {} or a --load-schedule (up to 5 s)",
            bounds.tool,
            options.join(", ")
        )
    })
}

/// A number, or a number of seconds (`2`, `2s`).
fn seconds(text: &str) -> Option<f64> {
    text.strip_suffix('s').unwrap_or(text).parse().ok()
}

#[test]
fn every_shell_block_is_runnable_or_says_why_not() {
    let found = blocks();
    let mut faults = found.faults;
    for block in &found.runnable {
        for command in &block.commands {
            if let Some(why) = unbounded(&command.text) {
                faults.push(format!("{}: {}: {why}", command.at, command.text));
            }
        }
    }
    assert!(
        faults.is_empty(),
        "{} documentation blocks break the rules:\n{}",
        faults.len(),
        faults.join("\n")
    );
    // What the documentation holds now; a count that drops says a block
    // was lost (or turned not runnable) without a word.
    let commands: usize = found.runnable.iter().map(|b| b.commands.len()).sum();
    assert!(
        found.runnable.len() >= 5 && commands >= 20,
        "only {} runnable blocks, {commands} commands",
        found.runnable.len()
    );
    assert!(
        found.not_runnable >= 10,
        "only {} blocks marked not runnable",
        found.not_runnable
    );
}

#[test]
fn the_rules_are_enforced() {
    assert_eq!(
        not_runnable_reason("<!-- not runnable: needs a reboot -->"),
        Some("needs a reboot")
    );
    assert_eq!(not_runnable_reason("<!-- not runnable: -->"), None);
    assert_eq!(not_runnable_reason("text"), None);
    // Each command, and whether it is bounded.
    let cases = [
        ("rtlat cyclictest -p 80 -q", false),
        ("rtlat cyclictest -p 80 -D 60", false),
        ("rtlat cyclictest -p 80 -D 2 -q", true),
        ("rtlat monitor -a 1 -l 2000", true),
        ("rtlat latency -T 60", false),
        ("rtlat latency -T 3", true),
        ("rtlat cyclictest --help", true),
        ("rtlat audit --cpus 1", true),
        ("PATH=x:$PATH cyclictest -m -q", false),
        ("rtlat plot a.json -o a.png   # latency plot", true),
        ("rtlat cyclictest --load-schedule 'idle=1s,cpu=2s' -q", true),
        (
            "rtlat cyclictest --load-schedule 'idle=30s,cpu=60s' -q",
            false,
        ),
        ("(ulimit -v 1; rtlat cyclictest -t 9 -l 3 -q)", true),
        ("rtlat cyclictest -p 80 -D 0 -q", false),
        ("rtlat cyclictest -p 80 --duration=2 -q", true),
        ("rtlat oslat -c 1 -q", true),
        ("rtlat oslat -c 1 -D 60", false),
        ("oslat -c 1 -D 1", true),
        ("rtlat pi_stress -g 1", false),
        ("rtlat pi_stress -g 1 -D 2", true),
        ("rtlat queuelat -m 20 -c 3 -f 2 -p 1", false),
        ("rtlat queuelat -m 20 -c 3 -f 2 -p 1 -t 0", false),
        ("rtlat queuelat -m 20 -c 3 -f 2 -p 1 -t 1", true),
        ("rtlat hwlatdetect --duration=1", true),
        ("rtlat hwlatdetect --threshold=10", false),
        ("rtlat deadline_test -t 1", false),
        ("rtlat deadline_test -t 1 --duration 2", true),
        ("rtlat hackbench -g 2", true),
    ];
    for (command, bounded) in cases {
        assert_eq!(unbounded(command).is_none(), bounded, "{command}");
    }
    let joined = commands(Path::new("f.md"), 3, &["# c", "a \\", "  b", "", "c # d"]);
    let texts: Vec<&str> = joined.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["a b", "c # d"]);
    assert_eq!(joined[0].at, "f.md:4");
}

/// The time one block may take before the test fails (a safety net: the
/// blocks' runs are bounded themselves, a few seconds each).
const BLOCK_LIMIT: Duration = Duration::from_secs(60);

#[test]
fn runnable_blocks_run() {
    require_root!();
    // The documentation's examples measure CPU 1 (`-a 1`, `--cpus 1`).
    if !allowed_cpus().contains(&1) {
        skip_note!(
            "SKIPPED (the examples measure CPU 1, which this process may not use): {}",
            function_name!()
        );
        return;
    }
    let found = blocks();
    assert!(!found.runnable.is_empty(), "no runnable block found");
    let bin: PathBuf = rtlat_path().parent().unwrap().to_path_buf();
    // `rtlat plot` runs rtlat-plot beside rtlat: have it built.
    rtlat_plot_path();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The blocks run real-time threads on any CPU, and `-b` would stop
    // the global trace: the trace first, then every CPU, as the other
    // tests take them.
    let _trace = TraceGuard::acquire();
    let _cpus = CpuLease::all();
    let mut failures = Vec::new();
    for block in &found.runnable {
        let dir = tempfile::tempdir().unwrap();
        let start = Instant::now();
        for command in &block.commands {
            let mut shell = std::process::Command::new("bash");
            shell
                .args(["-o", "pipefail", "-c", &command.text])
                .current_dir(dir.path())
                .env("PATH", &path)
                .env("HOME", dir.path())
                .env("NO_COLOR", "1");
            let left = BLOCK_LIMIT.saturating_sub(start.elapsed());
            let run = run_with_timeout(&mut shell, left.max(Duration::from_secs(1)));
            let status = run.code();
            if !status.is_some_and(|s| block.exits.contains(&s)) {
                failures.push(format!(
                    "{}: `{}` ended with {:?} (expected {:?})\n{}",
                    command.at,
                    command.text,
                    status,
                    block.exits,
                    run.describe()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} documented commands failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
