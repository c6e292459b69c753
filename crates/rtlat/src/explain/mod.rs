//! `--explain`: the worst samples of a run explained from kernel trace
//! events.
//!
//! [`ExplainSession::open`] checks what explaining needs (root, tracefs,
//! the events) and makes the run's own tracefs instance, recording on the
//! measured CPUs only, before the first sample; announced to the janitor
//! before it is made, which removes it if the run is killed. [`ExplainSession::start_reader`] starts the reader
//! ([`reader`]) once the measuring threads exist: a non-real-time thread,
//! off the measured CPUs where one is free, that reads every CPU's
//! `trace_pipe_raw`, keeps a short window of events and explains the
//! samples the measuring threads offer. [`ExplainSession::finish`], after
//! the threads have stopped, reads what is left, explains what is pending
//! (the `-b` break sample too) and removes the instance. The analysis is
//! `rtlat_explain`'s; this module does the I/O around it.

pub mod host_context;
pub mod outcome;
pub mod reader;

pub use outcome::ExplainOutcome;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use rtlat_core::CyclicConfig;
use rtlat_core::DistributionPlan;
use rtlat_core::ExplainTrigger;
use rtlat_core::Nanos;
use rtlat_core::janitor::{self, Kept, NamedKind};
use rtlat_core::{Running, Shared};
use rtlat_explain::trace::{EventFormat, EventFormats, PageHeaderLayout};
use rtlat_explain::{EventDecoder, KernelSymbols};
use rtlat_sys::trace_instance::{InstanceSpec, REQUIRED_EVENTS, TraceInstance};
use rtlat_sys::tracefs;

use crate::output::{OutputTarget, Stdout, write_to};
use crate::report::run_clock::Timeline;
use rtlat_args::stdio::note;

/// Each recorded CPU's buffer in the instance: 4 MiB holds well over a
/// second of events of a CPU at 1 kHz, so a reader held off that long
/// loses none.
pub const BUFFER_SIZE_KB: u32 = 4096;

/// What `--explain` asks for, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplainPlan {
    /// How many explanations a run keeps (the worst).
    pub keep: usize,
    /// Which samples the measuring threads offer.
    pub trigger: ExplainTrigger,
    /// `--explain-trace FILE`: the events behind each explanation, as
    /// text.
    pub trace: Option<PathBuf>,
    /// The measured CPUs: the instance records these only.
    pub cpus: Vec<usize>,
}

/// A measuring thread, as the reader needs to know it.
#[derive(Clone, Copy, Debug)]
pub struct MeasuredThread {
    /// Thread number.
    pub index: usize,
    /// Its period, in ns.
    pub interval_ns: i64,
}

/// The `# Explain` lines after the summary, and the `--explain-trace`
/// file if `plan` asks for one (written whole, or not at all).
pub fn write_outputs(
    outcome: &ExplainOutcome,
    plan: Option<&ExplainPlan>,
    out: &mut Stdout,
) -> anyhow::Result<()> {
    // Every `# Explain` line, whatever it says, fits the terminal.
    let width = rtlat_args::columns::width(rtlat_args::columns::Stream::Stdout);
    out.emit(|w| {
        rtlat_args::columns::write_wrapped(w, width, |b| {
            crate::report::explain::write_text(b, outcome)
        })
    });
    match plan.and_then(|p| p.trace.as_ref()) {
        Some(path) => write_to(
            &OutputTarget::File(path.clone()),
            out,
            "--explain-trace",
            |mut w| crate::report::explain::write_trace(&mut w, outcome),
        ),
        None => Ok(()),
    }
}

/// Starts the session's reader for a running engine; `timeline` is the
/// run's (its start is the explanations' "into the run", as for every
/// other line that places a sample).
pub fn start_explain_reader(
    session: &mut ExplainSession,
    running: &Running,
    config: &CyclicConfig,
    timeline: &Timeline,
) -> anyhow::Result<()> {
    let threads: Vec<MeasuredThread> = config
        .threads
        .iter()
        .map(|t| MeasuredThread {
            index: t.index,
            interval_ns: t.interval.as_nanos(),
        })
        .collect();
    let plan = config
        .run
        .distribution
        .unwrap_or_else(|| DistributionPlan::new(1000, Nanos::ZERO).expect("the default plan"));
    let run_start_ns = timeline.start.unwrap_or(timeline.clock).as_nanos();
    session.start_reader(running.shared_handle(), &threads, plan, run_start_ns)
}

/// The instance and, once started, its reader.
pub struct ExplainSession {
    plan: ExplainPlan,
    instance: Option<TraceInstance>,
    kept: Option<Kept>,
    /// Checked against the formats when the instance is made; the reader
    /// takes it.
    decoder: Option<EventDecoder>,
    layout: PageHeaderLayout,
    pipes: Vec<(usize, std::fs::File)>,
    /// The kernel's function names, read by [`preflight`]; the reader
    /// takes them.
    symbols: Option<KernelSymbols>,
    reader: Option<reader::ReaderHandle>,
}

impl std::fmt::Debug for ExplainSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExplainSession")
            .field("plan", &self.plan)
            .finish_non_exhaustive()
    }
}

/// What [`preflight`] found: where tracefs is, and the kernel's function
/// names.
#[derive(Debug)]
pub struct Prepared {
    /// The tracing directory.
    pub tracing: PathBuf,
    /// The kernel's text symbols, read here: before the memory is locked
    /// (so `mlockall` locks the table as it is, never its growing
    /// buffers) and before the first sample.
    pub symbols: KernelSymbols,
}

/// Checks, first thing, what explaining needs: root, tracefs (mounted
/// here if it is not), every required event; returns the tracing
/// directory with the kernel's function names. Each refusal is one line
/// naming `--explain` (exit 1).
pub fn preflight() -> anyhow::Result<Prepared> {
    if rtlat_sys::system::effective_uid() != 0 {
        bail!(
            "--explain: recording kernel events needs root (a tracefs instance of the run's \
             own); run as root, or leave out --explain"
        );
    }
    let tracing = match tracefs::tracing_dir() {
        Some(dir) => dir,
        None => tracefs::mount_tracefs().map_err(|e| {
            anyhow::anyhow!(
                "--explain: tracefs is not mounted and cannot be mounted on \
                 /sys/kernel/tracing: {}",
                crate::rtsetup::io_strerror(&e)
            )
        })?,
    };
    if let Some(event) = missing_event(&tracing) {
        bail!(
            "--explain: this kernel has no trace event '{event}', which explaining needs \
             ({} is missing)",
            tracing.join("events").join(event).display()
        );
    }
    Ok(Prepared {
        tracing,
        symbols: read_kernel_symbols(Path::new(KALLSYMS)),
    })
}

/// Removes the instances (`instances/rtlat-<pid>`) of runs that are gone
/// (no process has the pid, or this one has it): what a run killed
/// together with its janitor left, recording still. One note each. An
/// instance in use cannot be removed (its reader holds its files: the
/// kernel refuses, EBUSY), so a live run in another pid namespace loses
/// nothing but in the milliseconds before its reader opens them.
fn remove_instances_of_gone_runs(tracing: &Path) {
    let own = std::process::id();
    let Ok(entries) = std::fs::read_dir(tracing.join("instances")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("rtlat-"))
            .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let gone = pid == own || !Path::new(&format!("/proc/{pid}")).exists();
        // rmdir alone, nothing turned off first: an instance still in use
        // is refused whole (EBUSY) and left as it was.
        if gone && std::fs::remove_dir(entry.path()).is_ok() {
            note!(
                "note: --explain: removed the trace instance {} of a run that is gone (killed \
                 together with its janitor)",
                entry.path().display()
            );
        }
    }
}

/// The first required event the tracing directory `tracing` lacks.
fn missing_event(tracing: &Path) -> Option<&'static str> {
    REQUIRED_EVENTS
        .into_iter()
        .find(|event| !tracing.join("events").join(event).join("enable").exists())
}

impl ExplainSession {
    /// Makes the run's instance in the tracing directory [`preflight`]
    /// found and reads what its reader needs; a refusal is one line naming
    /// `--explain` (exit 1, before any sample).
    pub fn open(plan: &ExplainPlan, prepared: Prepared) -> anyhow::Result<ExplainSession> {
        let Prepared { tracing, symbols } = prepared;
        let tracing = tracing.as_path();
        remove_instances_of_gone_runs(tracing);
        let spec = InstanceSpec::for_run(&plan.cpus, BUFFER_SIZE_KB);
        // Announced before it is made: a run killed while the kernel
        // allocates its buffers (milliseconds) leaves nothing behind.
        let dir = tracing.join("instances").join(&spec.name);
        let mut kept = match janitor::announce_named(NamedKind::TraceInstance, &dir) {
            Ok(kept) => Some(kept),
            Err(e) => {
                note!(
                    "WARN: --explain: cannot tell the janitor about {}: {e}; if this run is \
                     killed, the instance will be left behind",
                    dir.display()
                );
                None
            }
        };
        let instance =
            TraceInstance::create(tracing, &spec).map_err(|e| anyhow::anyhow!("--explain: {e}"))?;
        if let Some(Err(e)) = kept.as_mut().map(Kept::confirm) {
            note!(
                "WARN: --explain: cannot tell the janitor about {}: {e}; if this run is \
                 killed, the instance may be left behind",
                dir.display()
            );
        }
        let layout = read_layout(instance.dir())?;
        // Every field the analysis reads must be there, before any sample.
        let decoder = EventDecoder::new(&read_formats(&instance)?)
            .map_err(|e| anyhow::anyhow!("--explain: {e}"))?;
        let pipes = instance
            .open_pipes_raw()
            .map_err(|e| anyhow::anyhow!("--explain: {e}"))?;
        Ok(ExplainSession {
            plan: plan.clone(),
            instance: Some(instance),
            kept,
            decoder: Some(decoder),
            layout,
            pipes,
            symbols: Some(symbols),
            reader: None,
        })
    }

    /// Starts the reader for the threads of `shared` (whose thread ids are
    /// known once the threads are set up).
    pub fn start_reader(
        &mut self,
        shared: Arc<Shared>,
        threads: &[MeasuredThread],
        plan: DistributionPlan,
        run_start_ns: i64,
    ) -> anyhow::Result<()> {
        let decoder = self
            .decoder
            .take()
            .context("--explain: the trace reader runs already")?;
        let pipes = std::mem::take(&mut self.pipes);
        let handle = reader::start(reader::ReaderSetup {
            decoder,
            symbols: self.symbols.take().unwrap_or_default(),
            layout: self.layout,
            pipes,
            shared,
            threads: threads.to_vec(),
            distribution: plan,
            keep: self.plan.keep,
            measured_cpus: self.plan.cpus.clone(),
            run_start_ns,
            pages_per_cpu: (BUFFER_SIZE_KB as usize * 1024)
                .div_ceil(self.layout.page_size_bytes().max(1)),
        })
        .context("--explain: starting the trace reader")?;
        self.reader = Some(handle);
        Ok(())
    }

    /// Reads what is left, explains what is pending and removes the
    /// instance; `None` when the reader never started.
    pub fn finish(mut self) -> Option<ExplainOutcome> {
        let outcome = self.reader.take().map(reader::ReaderHandle::finish);
        self.remove_instance();
        outcome
    }

    fn remove_instance(&mut self) {
        // The reader's files are closed by now (the kernel refuses to
        // remove an instance with an open file).
        self.pipes.clear();
        if let Some(instance) = self.instance.take() {
            let dir = instance.dir().to_path_buf();
            if let Some(kept) = self.kept.as_mut() {
                kept.release();
            }
            if let Err(e) = instance.close() {
                note!(
                    "WARN: --explain: cannot remove the trace instance {}: {e}",
                    dir.display()
                );
            }
        }
    }
}

impl Drop for ExplainSession {
    fn drop(&mut self) {
        if let Some(reader) = self.reader.take() {
            reader.stop();
        }
        self.remove_instance();
    }
}

/// Where the kernel lists its symbols.
const KALLSYMS: &str = "/proc/kallsyms";

/// The kernel's text symbols from `path` (`/proc/kallsyms`), read once,
/// before the first sample, within [`rtlat_explain::symbols`]' bounds; an
/// empty table (functions shown by address) if it cannot be read, with a
/// note, or if the kernel hides its addresses.
fn read_kernel_symbols(path: &Path) -> KernelSymbols {
    let read = std::fs::File::open(path)
        .and_then(|file| KernelSymbols::read(std::io::BufReader::with_capacity(64 * 1024, file)));
    match read {
        Ok(symbols) => {
            if symbols.hidden() {
                note!(
                    "note: --explain: the kernel hides its addresses in {} (kptr_restrict): \
                     kernel functions are shown by address",
                    path.display()
                );
            }
            if symbols.dropped() > 0 {
                note!(
                    "note: --explain: {} kernel symbols beyond the first {} were not kept: \
                     their functions are shown by address",
                    symbols.dropped(),
                    symbols.len()
                );
            }
            symbols
        }
        Err(e) => {
            note!(
                "note: --explain: cannot read {}: {}; kernel functions are shown by address",
                path.display(),
                crate::rtsetup::io_strerror(&e)
            );
            KernelSymbols::default()
        }
    }
}

/// The ring buffer's page header layout, from the instance's
/// `events/header_page`.
fn read_layout(instance: &Path) -> anyhow::Result<PageHeaderLayout> {
    let path = instance.join("events/header_page");
    let text =
        read_in_one(&path).with_context(|| format!("--explain: cannot read {}", path.display()))?;
    PageHeaderLayout::parse(&text)
        .map_err(|e| anyhow::anyhow!("--explain: cannot read {}: {e}", path.display()))
}

/// A tracefs file that answers one read only (`header_page` returns
/// nothing to a read at an offset other than 0, so a reader that starts
/// small gets a truncated text).
fn read_in_one(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut buffer = vec![0u8; 64 * 1024];
    let n = std::fs::File::open(path)?.read(&mut buffer)?;
    buffer.truncate(n);
    String::from_utf8(buffer).map_err(std::io::Error::other)
}

/// The format of every event the instance records.
fn read_formats(instance: &TraceInstance) -> anyhow::Result<EventFormats> {
    let mut formats = EventFormats::new();
    for (event, path) in instance.event_formats() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("--explain: cannot read the format of {event}"))?;
        let format = EventFormat::parse(&text)
            .map_err(|e| anyhow::anyhow!("--explain: cannot read {}: {e}", path.display()))?;
        formats.insert(format);
    }
    Ok(formats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_symbols_are_read_from_a_file_and_an_unreadable_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kallsyms");
        std::fs::write(
            &path,
            "ffffffff814332e0 t tick_nohz_handler\nffffffff82a00000 D jiffies\n",
        )
        .unwrap();
        let symbols = read_kernel_symbols(&path);
        assert_eq!(symbols.len(), 1);
        assert_eq!(
            symbols.describe(0xffff_ffff_8143_32e0),
            "tick_nohz_handler (the scheduler tick)"
        );
        let none = read_kernel_symbols(&dir.path().join("missing"));
        assert!(none.is_empty() && !none.hidden());
    }

    #[test]
    fn this_machines_kernel_symbols_fit_the_bounds() {
        let started = std::time::Instant::now();
        let symbols = read_kernel_symbols(Path::new(KALLSYMS));
        let took = started.elapsed();
        // Where the kernel hides them (or /proc has none), the table is
        // empty: said, and nothing more to check.
        if symbols.is_empty() {
            eprintln!(
                "SKIPPED (no kernel symbols readable here, hidden: {}): \
                 this_machines_kernel_symbols_fit_the_bounds",
                symbols.hidden()
            );
            return;
        }
        assert_eq!(symbols.dropped(), 0, "a kernel's symbols fit the bounds");
        assert!(
            symbols.heap_bytes()
                <= rtlat_explain::symbols::MAX_SYMBOLS * 16
                    + rtlat_explain::symbols::MAX_NAME_BYTES
        );
        eprintln!(
            "{} kernel text symbols, {} bytes, read in {took:?}",
            symbols.len(),
            symbols.heap_bytes()
        );
    }

    #[test]
    fn the_first_missing_required_event_is_named() {
        let dir = tempfile::tempdir().unwrap();
        for event in REQUIRED_EVENTS {
            let d = dir.path().join("events").join(event);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("enable"), "0").unwrap();
        }
        assert_eq!(missing_event(dir.path()), None);
        std::fs::remove_file(dir.path().join("events/power/cpu_idle/enable")).unwrap();
        std::fs::remove_file(dir.path().join("events/sched/sched_waking/enable")).unwrap();
        assert_eq!(missing_event(dir.path()), Some("sched/sched_waking"));
    }
}
