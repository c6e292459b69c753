//! `rtlat evaluate` (issue 29): a qualification in one command. The audit,
//! then each phase ([`plan`]) as a child `rtlat cyclictest` run with the
//! phase's load (the same binary; the phase's exact command line is in
//! the report, to reproduce by hand), then `DIR/report.json` and the
//! answer. Not yet: the HTML report, the live view, --compare, --fail-on
//! (design/issue29-evaluate.md).

pub mod compare;
mod html;
mod live;
pub mod plan;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context;
use rtlat_core::load::{Workload, WorkloadEnd};
use serde_json::{Value, json};

use plan::{Phase, PhaseKind};

/// What `rtlat evaluate` was asked for, validated.
#[derive(Clone, Debug)]
pub struct Settings {
    pub phases: Vec<Phase>,
    /// The measured CPUs, as a list (`0-3`).
    pub cpus: String,
    /// The same, one by one (the measuring threads' order).
    pub cpu_numbers: Vec<usize>,
    pub priority: u8,
    pub interval_us: u32,
    pub deadline_us: Option<u32>,
    pub load_command: Option<String>,
    /// `--explain=N`; `None` with `--no-explain`.
    pub explain: Option<u32>,
    pub output: PathBuf,
    pub quiet: bool,
    /// `--fail-on`: what makes the exit status 3.
    pub fail_on: Vec<FailOn>,
    /// `--compare`: the earlier evaluation, read before the first phase.
    pub compare: Option<compare::Base>,
}

/// What `--fail-on` can ask to fail on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    /// The verdict's machine part is not-ready in some phase.
    NotReady,
    /// Some phase's maximum is beyond `--deadline`.
    Deadline,
    /// Some phase is worse than in `--compare`'s base.
    Regression,
}

/// Makes `dir` (and its parents) if needed and checks a file can be
/// written in it, before the first phase.
pub fn check_output_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make the directory: {e}"))?;
    rtlat_args::output_file::probe(dir).map_err(|e| format!("cannot write in it: {e}"))
}

/// The `argv[0]` of a phase's run: `rtlat` started by an evaluation,
/// which dies with it ([`phase_parent`]).
pub const PHASE_ARGV0: &str = "rtlat-phase";

/// The evaluation that started this process, when it is a phase's run:
/// `argv[0]` is [`PHASE_ARGV0`] and the helpers' parent variable holds a
/// pid. Either alone is an ordinary invocation.
pub fn phase_parent(argv0: &OsStr) -> Option<i32> {
    if argv0 != PHASE_ARGV0 {
        return None;
    }
    std::env::var_os(rtlat_core::helper::PARENT_ENV)?
        .to_str()?
        .parse::<i32>()
        .ok()
        .filter(|&pid| pid > 0)
}

/// Prepares a phase's run before it runs as `rtlat`: SIGKILL when the
/// evaluation dies (a SCHED_FIFO run never outlives it), or `false` when
/// the evaluation is gone already; the stop signals, blocked from its
/// start, unblocked (a Ctrl-C ends the phase as it ends a run).
pub fn become_phase(parent: i32) -> bool {
    rtlat_sys::process::die_with_parent(parent).is_ok() && rtlat_sys::signals::unblock_all().is_ok()
}

/// How long the workload gets to end on SIGTERM.
const WORKLOAD_GRACE: Duration = Duration::from_secs(2);

/// What one phase left.
struct PhaseResult {
    phase: Phase,
    command: Vec<String>,
    status: Option<i32>,
    document: Option<Value>,
    workload: Option<String>,
}

/// Runs the evaluation; the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let rtlat = std::env::current_exe().context("cannot find rtlat's own path")?;
    let flags = crate::signals::SignalFlags::install()?;
    let started = Instant::now();
    let say = |line: &str| {
        if !settings.quiet {
            eprintln!("{line}");
        }
    };
    let audit_file = settings.output.join("audit.json");
    say("# audit");
    let audit_status = Command::new(&rtlat)
        .arg("audit")
        .arg("--json")
        .arg(&audit_file)
        .stdout(std::process::Stdio::null())
        .status()
        .context("cannot run rtlat audit")?;
    let mut results = Vec::new();
    let mut cut_short = false;
    for phase in &settings.phases {
        if flags.stop_requested() {
            cut_short = true;
            break;
        }
        say(&format!(
            "# phase {}: {} s",
            phase.kind.name(),
            phase.duration.as_nanos() / 1_000_000_000
        ));
        let args = phase_args(settings, phase);
        let mut workload = match (phase.kind, &settings.load_command) {
            (PhaseKind::Command, Some(command)) => Some({
                crate::rtsetup::start_janitor("the processes of --load-command");
                Workload::start(&rtlat, command, Some(&settings.output.join("command.log")))?
            }),
            _ => None,
        };
        // A helper of ours: it dies with us (a SIGKILL of the evaluation
        // leaves no real-time run behind), and this thread, which spawns
        // it, lives as long as it does.
        let mut spawn = rtlat_core::helper::spawn_child(&rtlat, OsStr::new(PHASE_ARGV0));
        for arg in &args {
            spawn.arg(arg);
        }
        let mut child = spawn
            .stdout(rtlat_sys::process::Stdio::Null)
            .spawn()
            .context("cannot run rtlat cyclictest")?;
        let stats = settings
            .output
            .join(format!("{}.stats.jsonl", phase.kind.name()));
        let mut live = live::Live::new(
            phase.kind.name(),
            (phase.duration.as_nanos() / 1_000_000_000) as u64,
            &settings.cpu_numbers,
            settings.deadline_us,
            settings.quiet,
        );
        let status = loop {
            if let Some(status) = child.try_wait()? {
                live.finish();
                break status;
            }
            live.tick(&stats);
            if flags.stop_requested() && !cut_short {
                cut_short = true;
                let _ = child.signal(rtlat_sys::signals::SIGTERM);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let workload = workload
            .take()
            .map(|w| w.end(WORKLOAD_GRACE))
            .transpose()?
            .map(|end| match end {
                WorkloadEnd::Exited(status) => format!("exited by itself: {status}"),
                WorkloadEnd::EndedByRun { killed: false } => "ended at the phase's end".to_owned(),
                WorkloadEnd::EndedByRun { killed: true } => {
                    "killed at the phase's end (it outlived SIGTERM)".to_owned()
                }
            });
        let file = settings.output.join(format!("{}.json", phase.kind.name()));
        let document = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
        results.push(PhaseResult {
            phase: *phase,
            command: std::iter::once("rtlat".to_owned()).chain(args).collect(),
            status: status.code(),
            document,
            workload,
        });
        if cut_short {
            break;
        }
    }
    let mut report = report_json(
        settings,
        &results,
        audit_status.success(),
        cut_short,
        started,
    );
    let compared = settings.compare.as_ref().map(|base| {
        let names: Vec<&str> = results.iter().map(|r| r.phase.kind.name()).collect();
        compare::against(base, &settings.output, &names)
    });
    if let Some(c) = &compared {
        report["compare"] = c.json.clone();
    }
    let report_file = settings.output.join("report.json");
    let text = serde_json::to_string_pretty(&report)?;
    rtlat_args::output_file::write_whole(&report_file, |w| w.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write '{}'", report_file.display()))?;
    draw_plots(&rtlat, settings, &results);
    let mut answer = answer(settings, &results, cut_short, &report_file);
    if let Some(c) = &compared {
        // Before the report's path, the last line.
        answer.insert(answer.len().saturating_sub(1), c.line.clone());
    }
    let audit: Option<Value> = std::fs::read_to_string(&audit_file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let page = html::page(&answer, &report, audit.as_ref(), &settings.output);
    let page_file = settings.output.join("report.html");
    rtlat_args::output_file::write_whole(&page_file, |w| w.write_all(page.as_bytes()))
        .with_context(|| format!("cannot write '{}'", page_file.display()))?;
    for line in answer {
        println!("{line}");
    }
    if results.iter().any(|r| r.status != Some(0)) && !cut_short {
        return Ok(1);
    }
    let failed = settings.fail_on.iter().any(|what| match what {
        FailOn::NotReady => results.iter().any(|r| {
            r.document
                .as_ref()
                .is_some_and(|d| d["verdict"]["machine"] == "not-ready")
        }),
        FailOn::Deadline => results.iter().any(|r| {
            let max = r
                .document
                .as_ref()
                .and_then(|d| d["all_threads"]["max"].as_f64());
            matches!((max, settings.deadline_us), (Some(max), Some(us)) if max > f64::from(us))
        }),
        FailOn::Regression => compared.as_ref().is_some_and(|c| c.any_worse),
    });
    Ok(if failed { 3 } else { 0 })
}

/// Each phase's plots, drawn by `rtlat plot` (the plotting binary) as
/// SVG files beside its result, for the page; a plot that cannot be drawn
/// is left out of the page.
fn draw_plots(rtlat: &Path, settings: &Settings, results: &[PhaseResult]) {
    for r in results {
        let name = r.phase.kind.name();
        let dir = &settings.output;
        for (kind, input) in [
            ("latency", format!("{name}.json")),
            ("percentile", format!("{name}.json")),
            ("timeline", format!("{name}.stats.jsonl")),
        ] {
            let _ = Command::new(rtlat)
                .arg("plot")
                .arg(dir.join(&input))
                .args(["-k", kind, "-s", "900x420", "-T"])
                .arg(format!("phase {name}: {kind}"))
                .arg("-o")
                .arg(dir.join(format!("{name}.{kind}.svg")))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

/// The child's command line of `phase` (without the program).
fn phase_args(settings: &Settings, phase: &Phase) -> Vec<String> {
    let name = phase.kind.name();
    let out = |ext: &str| {
        settings
            .output
            .join(format!("{name}.{ext}"))
            .display()
            .to_string()
    };
    let mut args: Vec<String> = vec![
        "cyclictest".into(),
        "-q".into(),
        // The evaluation's own view replaces the run's progress line.
        "--no-progress".into(),
        "-m".into(),
        "-t".into(),
        "-a".into(),
        settings.cpus.clone(),
        "-p".into(),
        settings.priority.to_string(),
        "-i".into(),
        settings.interval_us.to_string(),
        "-D".into(),
        (phase.duration.as_nanos() / 1_000_000_000).to_string(),
        format!("--json={}", out("json")),
        // cyclictest's own blocks (what compare and the floor judge):
        // 1 s blocks left a phase under 11 s nothing compare could judge.
        "--stats-interval=100ms".into(),
        format!("--stats-file={}", out("stats.jsonl")),
        "--hgrm".into(),
        out("hgrm"),
        "--verdict".into(),
    ];
    if let PhaseKind::Load(kind) = phase.kind {
        args.push("--load".into());
        args.push(kind.name().into());
    }
    if let Some(deadline) = settings.deadline_us {
        args.push("--deadline".into());
        args.push(deadline.to_string());
    }
    if let Some(n) = settings.explain {
        args.push(format!("--explain={n}"));
    }
    args
}

/// `DIR/report.json`: what was run, each phase's result and its files.
fn report_json(
    settings: &Settings,
    results: &[PhaseResult],
    audited: bool,
    cut_short: bool,
    started: Instant,
) -> Value {
    let phases: Vec<Value> = results
        .iter()
        .map(|r| {
            let name = r.phase.kind.name();
            json!({
                "name": name,
                "seconds": r.phase.duration.as_nanos() as f64 / 1e9,
                "command": r.command,
                "exit_status": r.status,
                "result": format!("{name}.json"),
                "hgrm": format!("{name}.hgrm"),
                "workload": r.workload,
                "all_threads": r.document.as_ref().map(|d| d["all_threads"].clone()),
                "verdict": r.document.as_ref().map(|d| d["verdict"].clone()),
            })
        })
        .collect();
    json!({
        "rtlat_version": env!("CARGO_PKG_VERSION"),
        "cut_short": cut_short,
        "elapsed_s": started.elapsed().as_secs_f64(),
        "deadline_us": settings.deadline_us,
        "load_command": settings.load_command,
        "audit": if audited { Some("audit.json") } else { None },
        "phases": phases,
    })
}

/// The answer, at most 10 lines of 80 columns: the machine and the
/// measurement (the worst of the phases), each phase's maximum and
/// p99.99 (two to a line), the deadline, the most frequent cause of the
/// phases' worst samples, the report's path.
fn answer(
    settings: &Settings,
    results: &[PhaseResult],
    cut_short: bool,
    report: &Path,
) -> Vec<String> {
    use rtlat_results::verdict::{Machine, Measurement};
    let verdict_field = |r: &PhaseResult, key: &str| -> Option<String> {
        Some(
            r.document
                .as_ref()?
                .get("verdict")?
                .get(key)?
                .as_str()?
                .to_owned(),
        )
    };
    let worst = |key: &str, names: &[&str]| -> String {
        results
            .iter()
            .filter_map(|r| verdict_field(r, key))
            .max_by_key(|name| names.iter().position(|n| n == name))
            .unwrap_or_else(|| "unknown".to_owned())
    };
    let machine = worst("machine", &Machine::ALL.map(Machine::name));
    let measurement = worst("measurement", &Measurement::ALL.map(Measurement::name));
    let mut lines = vec![format!(
        "Evaluation{}: machine {machine}, measurement {measurement}",
        if cut_short { " (cut short)" } else { "" }
    )];
    let figures = |r: &PhaseResult| -> Option<(f64, f64)> {
        let all = &r.document.as_ref()?["all_threads"];
        Some((all["max"].as_f64()?, all["p99.99"].as_f64()?))
    };
    let cells: Vec<String> = results
        .iter()
        .map(|r| match figures(r) {
            Some((max, p)) => format!(
                "{:<7} max {max:>5.0} us p99.99 {p:>5.0} us",
                r.phase.kind.name()
            ),
            None => format!("{:<7} no result", r.phase.kind.name()),
        })
        .collect();
    for pair in cells.chunks(2) {
        lines.push(format!("  {}", pair.join(" | ")));
    }
    if let Some(deadline) = settings.deadline_us {
        let over: Vec<&str> = results
            .iter()
            .filter(|r| figures(r).is_some_and(|(max, _)| max > f64::from(deadline)))
            .map(|r| r.phase.kind.name())
            .collect();
        lines.push(if over.is_empty() {
            format!("Deadline {deadline} us: met in every phase")
        } else if over.len() == results.len() {
            format!("Deadline {deadline} us: exceeded in every phase")
        } else {
            format!("Deadline {deadline} us: exceeded in {}", over.join(", "))
        });
    }
    let mut causes: Vec<(String, Vec<&str>)> = Vec::new();
    for r in results {
        let Some(sample) = r
            .document
            .as_ref()
            .and_then(|d| d["verdict"].get("worst_sample"))
        else {
            continue;
        };
        let (Some(component), Some(kind)) = (
            sample["component"].as_str(),
            sample["cause"]["kind"].as_str(),
        ) else {
            continue;
        };
        // The cause's first word (`swapper/1`, not its state).
        let name = sample["cause"]["name"].as_str().unwrap_or("");
        let name = name.split([',', ' ']).next().unwrap_or(name);
        let cause = format!("{component}, {kind} {name}");
        match causes.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, phases)) => phases.push(r.phase.kind.name()),
            None => causes.push((cause, vec![r.phase.kind.name()])),
        }
    }
    causes.sort_by_key(|(_, phases)| std::cmp::Reverse(phases.len()));
    if let Some((cause, phases)) = causes.first() {
        lines.push(format!(
            "Worst sample of {} of {} phases: {cause}",
            phases.len(),
            results.len()
        ));
    }
    lines.push(format!(
        "Report: {} (and report.json)",
        report.with_file_name("report.html").display()
    ));
    for line in &mut lines {
        if line.chars().count() > 80 {
            *line = line.chars().take(79).chain(['…']).collect();
        }
    }
    lines.truncate(10);
    lines
}
