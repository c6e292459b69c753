//! `rtlat evaluate`: a qualification in one command. What this process
//! may do ([`means`]), the audit, then each phase ([`plan`]) as a child
//! `rtlat cyclictest` run with the phase's load or the user's workload
//! (the same binary, as the helper `rtlat-phase`, which dies with the
//! evaluation; its exact command line is in the report, to reproduce by
//! hand), watched by the live view ([`live`]); then the plots (by
//! `rtlat plot`), `DIR/report.json` ([`summary`] of each phase), the
//! page ([`html`]) and the answer.

pub mod compare;
mod html;
mod live;
mod means;
pub mod plan;
mod summary;
mod timeline;

use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context;
use rtlat_core::load::{Workload, WorkloadEnd};
use serde_json::{Value, json};

use means::Means;
use plan::{Phase, PhaseKind};

/// What `rtlat evaluate` was asked for, validated.
#[derive(Clone, Debug)]
pub struct Settings {
    pub phases: Vec<Phase>,
    /// The measured CPUs, as a list (`0-3`).
    pub cpus: String,
    /// The same, one by one.
    pub cpu_numbers: Vec<usize>,
    /// `-t N`; `None`: a thread per CPU.
    pub threads: Option<usize>,
    /// Each measuring thread's CPU, in the threads' order.
    pub thread_cpus: Vec<usize>,
    /// `--load-on`: the loads' CPUs (`--load-cpus`); `None`: every CPU.
    pub load_cpus: Option<String>,
    pub priority: u8,
    /// Whether `-p` was given (else, without the privilege for SCHED_FIFO,
    /// the phases measure under SCHED_OTHER and say so).
    pub priority_given: bool,
    pub interval_us: u32,
    pub deadline_us: Option<u32>,
    pub load_command: Option<String>,
    /// `--explain=N`; `None` with `--no-explain`.
    pub explain: Option<u32>,
    /// Whether `--explain` was given (else, where explaining cannot work,
    /// the phases explain nothing and say why).
    pub explain_given: bool,
    pub output: PathBuf,
    pub quiet: bool,
    /// `--fail-on`: what makes the exit status 3.
    pub fail_on: Vec<FailOn>,
    /// The hidden `--synthetic SEED`: each phase a synthetic run (the
    /// benchmarks' seam).
    pub synthetic: Option<u64>,
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

/// How the evaluation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// Every phase ran.
    Complete,
    /// A Ctrl-C ended the phase it came in; no phase after it ran.
    CutShort,
    /// A second Ctrl-C: the phase it came in was ended at once, and is
    /// not in the report.
    AtOnce,
}

/// Runs the evaluation; the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let rtlat = std::env::current_exe().context("cannot find rtlat's own path")?;
    let flags = crate::signals::SignalFlags::install()?;
    let started = Instant::now();
    let say = |line: &str| {
        if !settings.quiet {
            rtlat_args::stdio::note!("{line}");
        }
    };
    let mut means = means::find(settings)?;
    let audit_file = settings.output.join("audit.json");
    say("# audit");
    let audit_status = Command::new(&rtlat)
        .arg("audit")
        .args([
            "--cpus",
            &settings.cpus,
            "-i",
            &settings.interval_us.to_string(),
        ])
        .args(if means.realtime {
            vec!["-p".to_owned(), settings.priority.to_string()]
        } else {
            Vec::new()
        })
        .arg("--json")
        .arg(&audit_file)
        .stdout(std::process::Stdio::null())
        .status()
        .context("cannot run rtlat audit")?;
    let audit: Option<Value> = audit_status
        .success()
        .then(|| std::fs::read_to_string(&audit_file).ok())
        .flatten()
        .and_then(|t| serde_json::from_str(&t).ok());
    if audit.as_ref().is_some_and(on_a_hypervisor) {
        means.limits.push(
            "on a virtual machine: the host can stop its CPUs at any time, and its delays \
             are in these figures"
                .to_owned(),
        );
    }
    for limit in &means.limits {
        say(&format!("# note: {limit}"));
    }
    let mut results = Vec::new();
    let mut ending = if flags.take_stop_request() {
        Ending::CutShort
    } else {
        Ending::Complete
    };
    for phase in &settings.phases {
        if ending == Ending::Complete && flags.take_stop_request() {
            ending = Ending::CutShort;
        }
        if ending != Ending::Complete {
            break;
        }
        say(&format!(
            "# phase {}: {} s",
            phase.kind.name(),
            phase.duration.as_nanos() / 1_000_000_000
        ));
        let args = phase_args(settings, &means, phase);
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
            &settings.thread_cpus,
            settings.deadline_us,
            settings.quiet,
        );
        let status = loop {
            if let Some(status) = child.try_wait()? {
                live.finish();
                // A Ctrl-C reaches the phase too, which may end before
                // this loop sees it: it is a Ctrl-C all the same.
                if ending == Ending::Complete && flags.take_stop_request() {
                    ending = Ending::CutShort;
                }
                break status;
            }
            live.tick(&stats);
            if flags.take_stop_request() {
                // The first Ctrl-C ends the phase as it ends a run (a
                // terminal sent it to the phase too); the second ends it
                // now.
                if ending == Ending::Complete {
                    ending = Ending::CutShort;
                    let _ = child.signal(rtlat_sys::signals::SIGTERM);
                } else {
                    ending = Ending::AtOnce;
                    let _ = child.signal(rtlat_sys::signals::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let grace = if ending == Ending::AtOnce {
            Duration::ZERO
        } else {
            WORKLOAD_GRACE
        };
        let workload = workload
            .take()
            .map(|w| {
                w.end_unless(grace, || {
                    // A second Ctrl-C while the workload takes its time.
                    let again = ending != Ending::Complete && flags.take_stop_request();
                    if again {
                        ending = Ending::AtOnce;
                    }
                    again
                })
            })
            .transpose()?
            .map(|end| match end {
                WorkloadEnd::Exited(status) => {
                    let line = format!(
                        "the workload (--load-command) exited by itself before its phase's \
                         end ({status}): the phase measured without it from then on"
                    );
                    say(&format!("# note: {line}"));
                    means.limits.push(line);
                    format!("exited by itself: {status}")
                }
                WorkloadEnd::EndedByRun { killed: false } => "ended at the phase's end".to_owned(),
                WorkloadEnd::EndedByRun { killed: true } => {
                    "killed at the phase's end (it outlived SIGTERM)".to_owned()
                }
            });
        let written = status.success();
        if ending == Ending::AtOnce && !written {
            // The phase was ended before it wrote its result.
            break;
        }
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
        if ending == Ending::AtOnce {
            break;
        }
    }
    let merged = if ending != Ending::AtOnce {
        draw_plots(&rtlat, settings, &results)
    } else {
        Vec::new()
    };
    let mut report = report_json(settings, &means, audit.as_ref(), &results, ending, started);
    for (name, merged) in merged {
        if let Some(phase) = report["phases"]
            .as_array_mut()
            .and_then(|p| p.iter_mut().find(|p| p["name"] == name))
        {
            phase["timeline_interval_s"] = json!(0.1 * merged as f64);
        }
    }
    let compared = settings.compare.as_ref().map(|base| {
        let names: Vec<&str> = results.iter().map(|r| r.phase.kind.name()).collect();
        compare::against(base, &settings.output, &names)
    });
    if let Some(c) = &compared {
        report["compare"] = c.json.clone();
    }
    let report_file = settings.output.join("report.json");
    let mut answer = answer(&report, &report_file);
    if let Some(c) = &compared {
        // Before the report's path, the last line.
        answer.insert(answer.len().saturating_sub(1), c.line.clone());
    }
    report["answer"] = json!(answer);
    let text = serde_json::to_string_pretty(&report)?;
    rtlat_args::output_file::write_whole(&report_file, |w| w.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write '{}'", report_file.display()))?;
    let page = html::page(&report, &settings.output);
    let page_file = settings.output.join("report.html");
    rtlat_args::output_file::write_whole(&page_file, |w| w.write_all(page.as_bytes()))
        .with_context(|| format!("cannot write '{}'", page_file.display()))?;
    // The report is written: a standard output that fails (a full disk)
    // loses nothing, and is said (exit 1) once the rest is done.
    rtlat_args::stdio::print(&(answer.join("\n") + "\n"))?;
    if results.iter().any(|r| r.status != Some(0)) && ending == Ending::Complete {
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

/// Whether the audit found a hypervisor under this machine.
fn on_a_hypervisor(audit: &Value) -> bool {
    audit["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["id"] == "virt.hypervisor" && c["status"] != "ok")
}

/// The plots of each phase, and what each shows.
pub const PLOTS: [(&str, &str); 3] = [
    ("latency", "samples by latency"),
    ("percentile", "latency by percentile"),
    ("timeline", "each 100 ms interval's maximum and p99"),
];

/// The most measuring threads a latency or timeline plot draws: above,
/// the plots draw those with the highest maxima, and the page says so.
pub const MOST_PLOTTED: usize = 8;

/// Each phase's plots, drawn by `rtlat plot` (the plotting binary) as
/// SVG files beside its result, for the page, as many at a time as there
/// are CPUs; a plot that cannot be drawn is left out of the page. Of a
/// phase with more than [`MOST_PLOTTED`] threads, the latency and
/// timeline plots draw those with the highest maxima (their part of the
/// result, given on standard input).
fn draw_plots(
    rtlat: &Path,
    settings: &Settings,
    results: &[PhaseResult],
) -> Vec<(&'static str, u64)> {
    let dir = &settings.output;
    let mut merged = Vec::new();
    let mut jobs: Vec<(Command, Option<Vec<u8>>)> = Vec::new();
    for r in results {
        let name = r.phase.kind.name();
        let chosen = r.document.as_ref().and_then(most_plotted);
        for (kind, _) in PLOTS {
            let input = dir.join(match kind {
                "timeline" => format!("{name}.stats.jsonl"),
                _ => format!("{name}.json"),
            });
            let part = match (&chosen, kind) {
                (_, "timeline") => std::fs::read_to_string(&input).ok().map(|text| {
                    let part = timeline::plot_input(&text, chosen.as_deref());
                    merged.push((name, part.merged));
                    part.lines
                }),
                (None, _) | (_, "percentile") => None,
                (Some(threads), _) => r.document.as_ref().map(|d| {
                    let mut d = d.clone();
                    if let Some(all) = d["thread"].as_object_mut() {
                        all.retain(|k, _| k.parse().is_ok_and(|t: u64| threads.contains(&t)));
                    }
                    d["num_threads"] = json!(threads.len());
                    d.to_string().into_bytes()
                }),
            };
            let mut command = Command::new(rtlat);
            command.arg("plot");
            match part {
                Some(_) => command.arg("-"),
                None => command.arg(&input),
            };
            command
                .args(["-k", kind, "-s", "900x420", "-T"])
                .arg(format!("phase {name}: {kind}"))
                .arg("-o")
                .arg(dir.join(format!("{name}.{kind}.svg")))
                .stdin(if part.is_some() {
                    std::process::Stdio::piped()
                } else {
                    std::process::Stdio::null()
                })
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            jobs.push((command, part));
        }
    }
    let at_a_time = std::thread::available_parallelism().map_or(2, |n| n.get());
    for batch in jobs.chunks_mut(at_a_time) {
        let children: Vec<_> = batch
            .iter_mut()
            .filter_map(|(command, part)| {
                let mut child = command.spawn().ok()?;
                if let (Some(bytes), Some(mut stdin)) = (part.take(), child.stdin.take()) {
                    let _ = stdin.write_all(&bytes);
                }
                Some(child)
            })
            .collect();
        for mut child in children {
            let _ = child.wait();
        }
    }
    merged
}

/// The threads a phase's latency and timeline plots draw when it has more
/// than [`MOST_PLOTTED`]: those with the highest maxima; `None` when it
/// has no more (every thread is drawn).
pub fn most_plotted(document: &Value) -> Option<Vec<u64>> {
    let threads = document["thread"].as_object()?;
    if threads.len() <= MOST_PLOTTED {
        return None;
    }
    let mut by_max: Vec<(u64, f64)> = threads
        .iter()
        .filter_map(|(k, t)| Some((k.parse().ok()?, t["max_ns"].as_f64().unwrap_or(0.0))))
        .collect();
    by_max.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    by_max.truncate(MOST_PLOTTED);
    Some(by_max.into_iter().map(|(t, _)| t).collect())
}

/// The child's command line of `phase` (without the program).
fn phase_args(settings: &Settings, means: &Means, phase: &Phase) -> Vec<String> {
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
    ];
    if means.lock {
        args.push("-m".into());
    }
    match settings.threads {
        Some(n) => args.extend(["-t".into(), n.to_string()]),
        None => args.push("-t".into()),
    }
    args.extend(["-a".into(), settings.cpus.clone()]);
    if means.realtime {
        args.extend(["-p".into(), settings.priority.to_string()]);
    }
    args.extend([
        "-i".into(),
        settings.interval_us.to_string(),
        // Every thread at -i (cyclictest adds 500 µs a thread otherwise).
        "-d".into(),
        "0".into(),
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
    ]);
    if let PhaseKind::Load(kind) = phase.kind {
        args.push("--load".into());
        args.push(kind.name().into());
        if let Some(cpus) = &settings.load_cpus {
            args.push("--load-cpus".into());
            args.push(cpus.clone());
        }
    }
    if let Some(deadline) = settings.deadline_us {
        args.push("--deadline".into());
        args.push(deadline.to_string());
    }
    if let Some(n) = means.explain {
        args.push(format!("--explain={n}"));
    }
    if let Some(seed) = settings.synthetic {
        args.push("--synthetic".into());
        args.push(seed.to_string());
    }
    args
}

/// `DIR/report.json`: everything the answer and the page show. How it
/// was asked and measured, the machine (its audit and environment), each
/// phase (its command, files and summary: [`summary::phase`]), the causes
/// of the worst samples across phases; the answer is added to it.
fn report_json(
    settings: &Settings,
    means: &Means,
    audit: Option<&Value>,
    results: &[PhaseResult],
    ending: Ending,
    started: Instant,
) -> Value {
    let phases: Vec<Value> = results
        .iter()
        .map(|r| {
            let name = r.phase.kind.name();
            let plots: Vec<String> = PLOTS
                .iter()
                .map(|(kind, _)| format!("{name}.{kind}.svg"))
                .filter(|file| settings.output.join(file).exists())
                .collect();
            let mut phase = json!({
                "name": name,
                "seconds": r.phase.duration.as_nanos() as f64 / 1e9,
                "command": r.command,
                "exit_status": r.status,
                "result": format!("{name}.json"),
                "hgrm": format!("{name}.hgrm"),
                "stats": format!("{name}.stats.jsonl"),
                "plots": plots,
                "plotted_threads": r.document.as_ref().and_then(most_plotted),
                "workload": r.workload,
            });
            if let Some(document) = &r.document {
                phase["load"] = document["load"].clone();
                for (key, value) in summary::phase(document, settings.deadline_us)
                    .as_object()
                    .into_iter()
                    .flatten()
                {
                    phase[key] = value.clone();
                }
            }
            phase
        })
        .collect();
    let causes: Vec<Value> =
        summary::causes(phases.iter().map(|p| (p["name"].as_str().unwrap_or(""), p)))
            .iter()
            .map(summary::Cause::to_json)
            .collect();
    let environment = results
        .iter()
        .find_map(|r| r.document.as_ref().map(|d| d["environment"].clone()));
    json!({
        "rtlat_version": env!("CARGO_PKG_VERSION"),
        "command": std::env::args().collect::<Vec<_>>(),
        "cut_short": ending != Ending::Complete,
        "ended_at_once": ending == Ending::AtOnce,
        "elapsed_s": started.elapsed().as_secs_f64(),
        "settings": {
            "cpus": settings.cpu_numbers,
            "threads": settings.thread_cpus.len(),
            "priority": settings.priority,
            "interval_us": settings.interval_us,
            "deadline_us": settings.deadline_us,
            "load_cpus": settings.load_cpus,
            "load_command": settings.load_command,
            "explain": settings.explain,
        },
        "deadline_us": settings.deadline_us,
        "load_command": settings.load_command,
        "means": {
            "realtime": means.realtime,
            "locked_memory": means.lock,
            "explain": means.explain,
            "limits": means.limits,
        },
        "audit": audit.map(|a| json!({
            "file": "audit.json",
            "checks": a["checks"],
            "suggested_command": a["suggested_command"],
        })),
        "environment": environment,
        "phases": phases,
        "causes": causes,
    })
}

/// The answer, at most 10 lines of 80 columns, from the report: the
/// machine and the measurement (the worst of the phases) with what the
/// phases went without; each phase's maximum and projection (two to a
/// line); the deadline; the causes of the worst samples, grouped across
/// phases; the report's path.
fn answer(report: &Value, report_file: &Path) -> Vec<String> {
    use rtlat_results::verdict::{Machine, Measurement};
    let phases: Vec<&Value> = report["phases"].as_array().into_iter().flatten().collect();
    let worst = |key: &str, names: &[&str]| -> String {
        phases
            .iter()
            .filter_map(|p| p["verdict"][key].as_str())
            .max_by_key(|name| names.iter().position(|n| n == name))
            .unwrap_or("unknown")
            .to_owned()
    };
    let machine = worst("machine", &Machine::ALL.map(Machine::name));
    let measurement = worst("measurement", &Measurement::ALL.map(Measurement::name));
    let mut tags: Vec<&str> = Vec::new();
    let means = &report["means"];
    if means["realtime"] == false {
        tags.push("SCHED_OTHER");
    }
    if means["locked_memory"] == false {
        tags.push("not locked");
    }
    if report["means"]["limits"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|l| {
            l.as_str()
                .is_some_and(|l| l.starts_with("on a virtual machine"))
        })
    {
        tags.push("on a VM");
    }
    let mut lines = vec![format!(
        "Evaluation{}: machine {machine}, measurement {measurement}{}",
        match (report["cut_short"] == true, report["ended_at_once"] == true) {
            (_, true) => " (ended at once)",
            (true, false) => " (cut short)",
            _ => "",
        },
        if tags.is_empty() {
            String::new()
        } else {
            format!(" ({})", tags.join(", "))
        }
    )];
    if !phases.is_empty() {
        lines
            .push("Per phase: max us, then projected max us [95% interval] or why none".to_owned());
    }
    let cells: Vec<String> = phases
        .iter()
        .map(|p| {
            let name = p["name"].as_str().unwrap_or("");
            match p["all_threads"]["max"].as_f64() {
                Some(max) => format!(
                    "{name:<7} {max:>6.0}  {:<22}",
                    summary::projection_cell(&p["verdict"]["projection"])
                ),
                None => format!("{name:<7} {:<30}", "no result"),
            }
        })
        .collect();
    for pair in cells.chunks(2) {
        lines.push(pair.join(" | ").trim_end().to_owned());
    }
    if let Some(deadline) = report["deadline_us"].as_u64() {
        let beyond = |p: &Value| p["beyond_deadline"].as_u64().unwrap_or(0);
        let over: Vec<&&Value> = phases
            .iter()
            .filter(|p| {
                p["all_threads"]["max"]
                    .as_f64()
                    .is_some_and(|m| m > deadline as f64)
            })
            .collect();
        let mut line = if over.is_empty() {
            format!("Deadline {deadline} us: met in every phase")
        } else {
            format!(
                "Deadline {deadline} us: missed in {} of {} phases ({} samples)",
                over.len(),
                phases.len(),
                over.iter().map(|p| beyond(p)).sum::<u64>()
            )
        };
        // What the projections say of it: how often an hour, at most.
        let rate = |p: &Value| p["verdict"]["projection"]["deadline"]["per_hour"]["value"].as_f64();
        if let Some((p, rate)) = phases
            .iter()
            .filter_map(|p| Some((p, rate(p)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
        {
            line.push_str(&format!(
                "; projected {rate:.1}/h in {}",
                p["name"].as_str().unwrap_or("")
            ));
        }
        lines.push(line);
    }
    let causes: Vec<String> = report["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .take(2)
        .map(|c| {
            // The name's first clause (`interrupts off`, not how it
            // could not be told apart: the page says that).
            let name = c["name"].as_str().unwrap_or("");
            format!(
                "{} {} ({}x: {})",
                c["kind"].as_str().unwrap_or(""),
                name.split(',').next().unwrap_or(name),
                c["samples"],
                c["phases"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(",")
            )
        })
        .collect();
    // The first cause always (cut short if it must be); the next only
    // whole, where it fits.
    if let Some((first, more)) = causes.split_first() {
        let mut line = format!("Causes of worst samples: {first}");
        for cause in more {
            if line.chars().count() + 2 + cause.chars().count() <= 80 {
                line.push_str("; ");
                line.push_str(cause);
            }
        }
        lines.push(line);
    }
    lines.push(format!(
        "Report: {} (and report.json)",
        report_file.with_file_name("report.html").display()
    ));
    for line in &mut lines {
        if line.chars().count() > 80 {
            *line = line.chars().take(79).chain(['…']).collect();
        }
    }
    lines.truncate(10);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of `n` phases: the first projected (with the deadline's
    /// rate), the others refused; every phase beyond the deadline.
    fn report(n: usize) -> Value {
        let names = [
            "idle", "cpu", "memory", "cache", "io", "fork", "timers", "command",
        ];
        let phases: Vec<Value> = names[..n]
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let projection = if i == 0 {
                    json!({"outcome": "projected", "levels": [{"horizon_s": 3600.0,
                        "max_ns": {"value": 612_000.0, "lower": 540_000.0, "upper": 800_000.0}}],
                        "deadline": {"per_hour": {"value": 2.25, "lower": 1.0, "upper": 4.0}}})
                } else {
                    json!({"outcome": "refused", "id": "too_few_blocks"})
                };
                json!({"name": name, "all_threads": {"max": 1234.5 + i as f64},
                       "beyond_deadline": 12 + i,
                       "verdict": {"machine": if i == 1 { "not-ready" } else { "caveats" },
                                   "measurement": "trustworthy", "projection": projection}})
            })
            .collect();
        json!({
            "cut_short": false, "ended_at_once": false, "deadline_us": 100,
            "means": {"realtime": false, "locked_memory": true, "limits": [
                "on a virtual machine: the host can stop its CPUs at any time"]},
            "phases": phases,
            "causes": [
                {"kind": "unattributed", "name": "interrupts off, hardware or not traced",
                 "samples": 9, "phases": ["idle", "cpu", "memory"]},
                {"kind": "task", "name": "load-cpu", "samples": 2, "phases": ["cpu"]}],
        })
    }

    #[test]
    fn the_answer_leads_with_the_worst_and_fits_ten_lines_of_80_columns() {
        let lines = answer(&report(8), Path::new("out/report.json"));
        for line in &lines {
            assert!(line.chars().count() <= 80, "{line}");
        }
        assert_eq!(lines.len(), 9, "{lines:#?}");
        assert_eq!(
            lines[0],
            "Evaluation: machine not-ready, measurement trustworthy (SCHED_OTHER, on a VM)"
        );
        assert_eq!(
            lines[2],
            "idle      1234  1h 612 [540-800]       | cpu       1236  none: run longer"
        );
        assert_eq!(
            lines[6],
            "Deadline 100 us: missed in 8 of 8 phases (124 samples); projected 2.2/h in idle"
        );
        assert_eq!(
            lines[7],
            "Causes of worst samples: unattributed interrupts off (9x: idle,cpu,memory)"
        );
        assert_eq!(lines[8], "Report: out/report.html (and report.json)");
    }

    #[test]
    fn the_deadline_line_gives_the_projected_rate() {
        let lines = answer(&report(2), Path::new("r/report.json"));
        assert_eq!(
            lines[3],
            "Deadline 100 us: missed in 2 of 2 phases (25 samples); projected 2.2/h in idle"
        );
    }

    /// report.json's own keys are pinned (`report::schema`); it has no
    /// version of its own, so a change of them fails until it is given
    /// one. The parts it copies whole from a phase's result (its
    /// verdict, explained samples, load, percentiles) and from the audit
    /// (its checks, the environment) are pinned with those documents, so
    /// they are left out here. One report holds every optional part but
    /// the comparison, whose document is compare's own.
    #[test]
    fn the_keys_of_report_json_are_pinned() {
        use rtlat_core::Nanos;
        let document: Value =
            serde_json::from_str(include_str!("../compare/testdata/base.json")).unwrap();
        let phase = |kind, seconds| Phase {
            kind,
            duration: Nanos::from_secs(seconds),
        };
        let settings = Settings {
            phases: vec![phase(PhaseKind::Idle, 2), phase(PhaseKind::Command, 2)],
            cpus: "1".into(),
            cpu_numbers: vec![1],
            threads: None,
            thread_cpus: vec![1],
            load_cpus: Some("0".into()),
            priority: 80,
            priority_given: false,
            interval_us: 1000,
            deadline_us: Some(100),
            load_command: Some("make -j8".into()),
            explain: Some(3),
            explain_given: false,
            output: PathBuf::from("/nonexistent"),
            quiet: true,
            fail_on: Vec::new(),
            synthetic: None,
            compare: None,
        };
        let means = Means {
            realtime: true,
            lock: true,
            explain: Some(3),
            limits: vec!["on a virtual machine".into()],
        };
        let audit = json!({"checks": [], "suggested_command": "rtlat cyclictest -m"});
        let results = vec![
            PhaseResult {
                phase: settings.phases[0],
                command: vec!["rtlat".into(), "cyclictest".into()],
                status: Some(0),
                document: Some(document),
                workload: None,
            },
            PhaseResult {
                phase: settings.phases[1],
                command: vec!["rtlat".into(), "cyclictest".into()],
                status: Some(0),
                document: None,
                workload: Some("ended at the phase's end".into()),
            },
        ];
        let mut report = report_json(
            &settings,
            &means,
            Some(&audit),
            &results,
            Ending::CutShort,
            Instant::now(),
        );
        report["answer"] = json!(answer(&report, Path::new("r/report.json")));
        report["phases"][0]["timeline_interval_s"] = json!(0.1);
        report["phases"][0]["plotted_threads"] = json!([0]);
        report["causes"] = json!([summary::Cause {
            stage: "irq_latency".into(),
            kind: "unattributed".into(),
            name: "interrupts off".into(),
            samples: 1,
            phases: vec!["idle".into()],
            max_ns: 1000.0,
        }
        .to_json()]);
        for key in ["verdict", "explain", "load", "all_threads"] {
            report["phases"][0][key] = Value::Null;
        }
        report["environment"] = Value::Null;
        crate::report::schema::check_unversioned("evaluate", &[&report.to_string()]);
    }
}
