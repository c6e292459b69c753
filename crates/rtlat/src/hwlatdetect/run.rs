//! One `rtlat hwlatdetect` run, in the script's order: the tracer set up
//! (tracing off, `current_tracer` hwlat, threshold, window, width, CPU
//! mask), the header, the tracer on for `--duration` while `trace_pipe`
//! is read every 100 ms, the tracer off and every setting put back, then
//! the report, `--report`'s file, the samples, and rtlat's `--json` and
//! gates. Every way it ends (the duration, SIGINT/SIGTERM, an error) puts
//! the settings back; a SIGKILL leaves that to the janitor.

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use rtlat_results::hwlatdetect::{HwlatResult, HwlatSample};

use super::sample::{Sample, exceeding, mtbf_s};
use super::settings::Settings;
use super::tracer::{self, CPUMASK, CURRENT_TRACER, Session, THRESHOLD, TRACING_ON, WIDTH, WINDOW};
use crate::gate::{Metrics, Subject};
use crate::host::Host;
use crate::output::{OutputTarget, Stdout, end_run, write_to};
use crate::run_audit;
use crate::signals::SignalFlags;
use rtlat_args::stdio::note;

/// How often `trace_pipe` is read (the script: `time.sleep(0.1)`).
const POLL_PERIOD: Duration = Duration::from_millis(100);
/// How often a stop signal is looked for while waiting.
const SIGNAL_CHECK: Duration = Duration::from_millis(10);

/// The width the run leaves, from the window and width found: the
/// script's rules (a window below the width halves the width; a width
/// above the window doubles the window).
pub fn final_width(settings: &Settings, window: u64, width: u64) -> u64 {
    let (mut window, mut width) = (window, width);
    if let Some(w) = settings.window_us {
        if w < width {
            width = w / 2;
        }
        window = w;
    }
    if let Some(w) = settings.width_us {
        if w > window {
            window = w.saturating_mul(2);
        }
        let _ = window;
        width = w;
    }
    width
}

/// `--cpu-list`'s mask as tracing_cpumask takes it: hex in comma-separated
/// 32-bit groups (`ffffffff,ffffffff`), which every kernel reads (2.4
/// wrote one long hex number, refused beyond 32 CPUs).
pub fn cpumask(cpus: &[usize]) -> String {
    let top = cpus.iter().copied().max().unwrap_or(0);
    let mut words = vec![0u32; top / 32 + 1];
    for &cpu in cpus {
        words[cpu / 32] |= 1 << (cpu % 32);
    }
    let mut text = format!("{:x}", words[words.len() - 1]);
    for word in words.iter().rev().skip(1) {
        text.push_str(&format!(",{word:08x}"));
    }
    text
}

/// The script's `print` (always) and `info` (unless `--quiet`) and
/// `debug` (with `--debug`).
struct Lines<'a> {
    out: Stdout,
    settings: &'a Settings,
}

impl Lines<'_> {
    fn print(&mut self, line: &str) {
        self.out.emit(|w| {
            writeln!(w, "{line}")?;
            w.flush()
        });
    }
    fn info(&mut self, line: &str) {
        if !self.settings.quiet {
            self.print(line);
        }
    }
    fn debug(&mut self, line: &str) {
        if self.settings.debug && !self.settings.quiet {
            self.print(line);
        }
    }
}

/// Runs the detector; returns the exit status (1 when the largest sample
/// is above the hard limit, 3 when a `--fail-if` limit is broken).
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let fixture = settings.fixture.as_deref();
    let mut lines = Lines {
        out: Stdout::new(false),
        settings,
    };
    lines.debug("debugging prints turned on");
    let dir = tracer::locate(fixture)?;
    let host = Host::Real;
    let start_time = host.timestamp();
    let audit = run_audit::audit_run(
        host,
        settings.json.is_some(),
        settings.gates.as_ref(),
        &run_audit::request(
            settings
                .cpu_list
                .iter()
                .flat_map(|(_, cpus)| cpus.iter().map(|&c| Some(c))),
            None,
            None,
        ),
    );
    crate::rtsetup::start_janitor("the hwlat tracer's settings stay changed");
    let signals = SignalFlags::install()?;
    let mut session = Session::open(&dir, |window, width| final_width(settings, window, width))?;
    let set_up = set_up(&session, settings, &mut lines)?;
    let smi_before = if fixture.is_none() {
        smi_counts()
    } else {
        None
    };
    let header = [
        format!(
            "hwlatdetect:  test duration {} seconds",
            settings.duration_s
        ),
        "   detector: tracer".to_owned(),
        "   parameters:".to_owned(),
        format!(
            "        CPU list:          {}",
            settings
                .cpu_list
                .as_ref()
                .map_or("None", |(t, _)| t.as_str())
        ),
        format!("        Latency threshold: {}us", set_up.threshold),
        // 2.10's misaligns it by one space.
        if settings.rt_tests.hwlatdetect_report_2_10() {
            format!("        Sample window:      {}us", set_up.window)
        } else {
            format!("        Sample window:     {}us", set_up.window)
        },
        format!("        Sample width:      {}us", set_up.width),
        format!(
            "     Non-sampling period:  {}us",
            i128::from(set_up.window) - i128::from(set_up.width)
        ),
        format!(
            "        Output File:       {}",
            settings
                .report
                .as_ref()
                .map_or("None".to_owned(), |p| p.display().to_string())
        ),
        String::new(),
        "Starting test".to_owned(),
    ];
    for line in &header {
        lines.info(line);
    }

    let detected = detect(&session, settings, &signals, fixture.is_none(), &mut lines)?;
    for line in session.restore() {
        note!("{line}");
    }
    lines.info("test finished");

    let samples = detected.samples;
    let max = samples.iter().map(Sample::largest).max().unwrap_or(0);
    if max == 0 {
        lines.info("Max Latency: Below threshold");
    } else {
        lines.info(&format!("Max Latency: {max}us"));
    }
    lines.info(&format!("Samples recorded: {}", samples.len()));
    let above = exceeding(&samples);
    let mtbf = mtbf_s(&samples, above, set_up.window, set_up.width);
    if settings.rt_tests.hwlatdetect_report_2_10() {
        lines.info(&format!("Samples exceeding threshold: {above}"));
        if let Some(mtbf) = mtbf {
            lines.info(&format!("MTBF: {mtbf:.3} seconds"));
        }
    } else {
        lines.info(&format!("Samples exceeding threshold: {}", samples.len()));
    }
    let smis = match (smi_before, smi_counts()) {
        (Some(before), Some(after)) if fixture.is_none() => {
            let mut total = 0;
            for (cpu, (b, a)) in before.iter().zip(&after).enumerate() {
                if a > b {
                    lines.print(&format!("{} SMIs occured on cpu {cpu}", a - b));
                    total += a - b;
                }
            }
            lines.info(&format!("SMIs during run: {total}"));
            Some(total)
        }
        _ => None,
    };
    let mut written = crate::output::FirstFailure::default();
    if let Some(path) = &settings.report {
        let target = OutputTarget::File(path.clone());
        let result = write_to(&target, &mut lines.out, "--report", |w| {
            for s in &samples {
                writeln!(w, "{}", s.line(settings.rt_tests))?;
            }
            Ok(())
        });
        if result.is_ok() {
            lines.print(&format!(
                "report saved to {} ({} samples)",
                path.display(),
                samples.len()
            ));
        }
        written.keep(result);
    }
    if !settings.watch {
        for s in &samples {
            lines.print(&s.line(settings.rt_tests));
        }
    }
    let status = u8::from(max > set_up.hardlimit);

    let result = HwlatResult {
        duration_s: settings.duration_s,
        threshold_us: set_up.threshold,
        hardlimit_us: set_up.hardlimit,
        window_us: set_up.window,
        width_us: set_up.width,
        cpu_list: settings.cpu_list.as_ref().map(|(t, _)| t.clone()),
        interrupted: detected.interrupted,
        max_latency_us: (max > 0).then_some(max),
        samples_recorded: samples.len() as u64,
        samples_exceeding_threshold: samples.len() as u64,
        latencies_above_threshold: above,
        mtbf_s: mtbf,
        smis,
        samples: samples
            .iter()
            .map(|s| HwlatSample {
                ts: s.timestamp.clone(),
                inner_us: s.inner_us,
                outer_us: s.outer_us,
                cpu: s.cpu,
                count: s.count,
            })
            .collect(),
    };
    if let Some(target) = &settings.json {
        let meta = host.run_meta(
            &settings.cmdline,
            settings.rt_tests,
            start_time,
            status,
            audit,
        );
        written.keep(write_to(target, &mut lines.out, "--json", |w| {
            super::output::write_json(w, &meta, &result)
        }));
    }
    let status = end_run(&mut lines.out, written.into_result(), None, status)?;
    match &settings.gates {
        Some(plan) => {
            let broken = crate::gate::finish(
                plan,
                &[subject(&result)],
                "hwlatdetect",
                settings.duration_s as f64,
            )?;
            Ok(if broken && status == 0 {
                crate::gate::BROKEN_LIMIT_STATUS
            } else {
                status
            })
        }
        None => Ok(status),
    }
}

/// What `--fail-if` judges: the samples' largest, smallest and mean
/// latency in ns. A run without a sample above the threshold had every
/// latency below it: it counts as one sample of 0 (the script's "Below
/// threshold"), so that `max>LIMIT` passes.
fn subject(result: &HwlatResult) -> Subject {
    let us: Vec<i64> = result
        .samples
        .iter()
        .map(|s| s.inner_us.max(s.outer_us) as i64 * 1000)
        .collect();
    let metrics = if us.is_empty() {
        Metrics {
            samples: 1,
            min_ns: Some(0),
            avg_ns: Some(0.0),
            max_ns: Some(0),
            ..Metrics::default()
        }
    } else {
        Metrics {
            samples: us.len() as u64,
            min_ns: us.iter().copied().min(),
            avg_ns: Some(us.iter().sum::<i64>() as f64 / us.len() as f64),
            max_ns: us.iter().copied().max(),
            ..Metrics::default()
        }
    };
    Subject {
        name: "hwlat samples".to_owned(),
        metrics,
    }
}

/// The tracer's settings once set up.
struct SetUp {
    threshold: u64,
    hardlimit: u64,
    window: u64,
    width: u64,
}

/// Sets the tracer up as the script does, in its order.
fn set_up(session: &Session, settings: &Settings, lines: &mut Lines<'_>) -> anyhow::Result<SetUp> {
    let dir = session.dir();
    session.set(TRACING_ON, "0")?;
    session.set(CURRENT_TRACER, "hwlat")?;
    if let Some(t) = settings.threshold_us {
        session.set(THRESHOLD, &t.to_string())?;
        lines.debug(&format!("threshold set to {t}us"));
    }
    let hardlimit = match settings.hardlimit_us {
        Some(h) => h,
        None => tracer::read_number(dir, THRESHOLD)?,
    };
    lines.debug(&format!("hardlimit set to {hardlimit}us"));
    if let Some(w) = settings.window_us {
        if w < tracer::read_number(dir, WIDTH)? {
            lines.debug(&format!(
                "shrinking width to {} for new window of {w}",
                w / 2
            ));
            session.set(WIDTH, &(w / 2).to_string())?;
        }
        lines.debug(&format!("window parameter = {w}"));
        session.set(WINDOW, &w.to_string())?;
        lines.debug(&format!("window for sampling set to {w}us"));
    }
    if let Some(w) = settings.width_us {
        if w > tracer::read_number(dir, WINDOW)? {
            let window = w.saturating_mul(2);
            lines.debug(&format!("widening window to {window} for new width of {w}"));
            session.set(WINDOW, &window.to_string())?;
        }
        lines.debug(&format!("width parameter = {w}"));
        session.set(WIDTH, &w.to_string())?;
        lines.debug(&format!("sample width set to {w}us"));
    }
    lines.debug(&format!("test duration is {}s", settings.duration_s));
    if let Some((_, cpus)) = &settings.cpu_list {
        let mask = cpumask(cpus);
        lines.debug(&format!("set tracing_cpumask to {}", mask.replace(',', "")));
        session.set(CPUMASK, &mask)?;
    }
    Ok(SetUp {
        threshold: tracer::read_number(dir, THRESHOLD)?,
        hardlimit,
        window: tracer::read_number(dir, WINDOW)?,
        width: tracer::read_number(dir, WIDTH)?,
    })
}

/// What the tracer gave.
struct Detected {
    samples: Vec<Sample>,
    interrupted: bool,
}

/// Turns the tracer on for the duration (C-states kept shallow through
/// `/dev/cpu_dma_latency`, as the script does, on a real machine), reads
/// `trace_pipe` every 100 ms, then turns it off and reads what is left.
fn detect(
    session: &Session,
    settings: &Settings,
    signals: &SignalFlags,
    real: bool,
    lines: &mut Lines<'_>,
) -> anyhow::Result<Detected> {
    let dir = session.dir();
    let threshold = tracer::read_number(dir, THRESHOLD)?;
    let dma = if real {
        rtlat_sys::power::request_dma_latency(0).ok()
    } else {
        None
    };
    if dma.is_some() {
        lines.debug("c-states disabled");
    }
    lines.debug(&format!(
        "enabling detector module (threshold: {threshold})"
    ));
    let pipe_path = dir.join("trace_pipe");
    let mut pipe = rtlat_sys::nonblocking::open_for_reading(&pipe_path)
        .map_err(|e| anyhow!("cannot open {}: {e}", pipe_path.display()))?;
    session.set(TRACING_ON, "1")?;
    lines.debug(&format!("detector module enabled (threshold: {threshold})"));
    let mut reader = LineReader::default();
    let mut samples = Vec::new();
    let end = Instant::now() + Duration::from_secs(settings.duration_s);
    let mut interrupted = false;
    let take = |reader: &mut LineReader, lines: &mut Lines<'_>, samples: &mut Vec<Sample>| {
        for line in reader.lines() {
            match Sample::parse(&line) {
                Some(s) => {
                    if settings.watch {
                        lines.print(&s.line(settings.rt_tests));
                    }
                    samples.push(s);
                }
                None if line.trim().is_empty() => {}
                None => note!("ignored a line of trace_pipe that is not a sample: {line}"),
            }
        }
    };
    'run: while Instant::now() < end {
        reader.fill(&mut pipe);
        take(&mut reader, lines, &mut samples);
        let pause = Instant::now() + POLL_PERIOD;
        while Instant::now() < pause {
            if signals.stop_requested() {
                interrupted = true;
                lines.print("interrupted");
                break 'run;
            }
            std::thread::sleep(SIGNAL_CHECK);
        }
    }
    lines.debug("disabling detector module");
    let stopped = session.set(TRACING_ON, "0");
    reader.fill(&mut pipe);
    take(&mut reader, lines, &mut samples);
    if dma.is_some() {
        drop(dma);
        lines.debug("c-states enabled");
    }
    stopped?;
    lines.debug("detector module disabled");
    Ok(Detected {
        samples,
        interrupted,
    })
}

/// Whole lines from a non-blocking `trace_pipe`.
#[derive(Default)]
struct LineReader {
    pending: Vec<u8>,
}

impl LineReader {
    /// Reads whatever the pipe has now.
    fn fill(&mut self, pipe: &mut std::fs::File) {
        let mut buf = [0u8; 4096];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// The complete lines read so far.
    fn lines(&mut self) -> Vec<String> {
        let Some(last) = self.pending.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        let complete: Vec<u8> = self.pending.drain(..=last).collect();
        String::from_utf8_lossy(&complete)
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// The SMI count of every CPU, where the counter can be read.
fn smi_counts() -> Option<Vec<u64>> {
    rtlat_sys::msr::smi_support().ok()?;
    (0..rtlat_sys::system::configured_cpus())
        .map(|cpu| rtlat_sys::msr::SmiCounter::open(cpu).ok()?.read().ok())
        .collect()
}
