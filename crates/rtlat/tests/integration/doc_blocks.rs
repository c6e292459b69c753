//! The documentation's commands run: every fenced shell block of the
//! documentation (`doc_links::doc_files`) is either marked runnable, its
//! info string `sh runnable` (`sh runnable exits=0|3` when a command may
//! also end with another status), or preceded by a comment
//! `<!-- not runnable: REASON -->`; a block that is neither fails, so that
//! none is forgotten silently. The runnable ones are run, as root, each in
//! a temporary directory with this test run's `rtlat` and `rtlat-plot`
//! first in `PATH`, every command bounded: a real-time run must say how
//! long (`-D`, `-l`, `-T`), and a short time.

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

/// The tools whose runs measure until told to stop.
const MEASURING: [&str; 10] = [
    "cyclictest",
    "cyclicdeadline",
    "monitor",
    "latency",
    "load",
    "signaltest",
    "svsematest",
    "pmqtest",
    "ptsematest",
    "sigwaittest",
];

/// Why a runnable command could run too long, if it could: a measuring
/// tool without `-D` (at most 5 s), `-l` (at most 20000 loops), a
/// `--load-schedule` of at most 5 s or, for latency, `-T` (at most 5 s);
/// `--help` needs none. A trailing `# comment` is not the command's.
fn unbounded(command: &str) -> Option<String> {
    let command = match command.find(" #") {
        Some(at) => &command[..at],
        None => command,
    };
    let words: Vec<&str> = command
        .split_whitespace()
        .map(|w| w.trim_matches(|c| matches!(c, '(' | ')' | ';' | '\'' | '"')))
        .collect();
    let tool = words
        .windows(2)
        .find(|w| w[0] == "rtlat" && MEASURING.contains(&w[1]))
        .map(|w| w[1])
        .or_else(|| {
            words
                .iter()
                .find(|w| MEASURING.contains(w) && **w != "load")
                .copied()
        })?;
    if words.contains(&"--help") {
        return None;
    }
    let value = |flag: &str| {
        words
            .windows(2)
            .find(|w| w[0] == flag)
            .and_then(|w| seconds(w[1]))
    };
    let schedule = words
        .windows(2)
        .find(|w| w[0] == "--load-schedule")
        .and_then(|w| {
            w[1].split(',')
                .map(|phase| phase.rsplit_once('=').and_then(|(_, d)| seconds(d)))
                .sum::<Option<f64>>()
        });
    let bounded = value("-D").is_some_and(|s| s <= 5.0)
        || value("-l").is_some_and(|n| n <= 20000.0)
        || schedule.is_some_and(|s| s <= 5.0)
        || (tool == "latency" && value("-T").is_some_and(|s| s <= 5.0));
    (!bounded).then(|| {
        format!(
            "`{tool}` needs -D (up to 5 s), -l (up to 20000), --load-schedule \
             (up to 5 s) or, for latency, -T (up to 5 s)"
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
