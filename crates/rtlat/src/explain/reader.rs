//! The trace reader of `--explain`: a non-real-time thread that, every
//! [`POLL_PERIOD`], reads each recorded CPU's `trace_pipe_raw` until it is
//! empty (or one buffer's worth of pages has been read: see [`drain_cpu`]),
//! hands the pages to the [`Explainer`], takes the samples the
//! measuring threads offered and has them explained. It runs off the
//! measured CPUs where one is free. Asked to finish, it makes one more full
//! pass (the measuring threads have stopped by then, so every event of
//! their last samples is in the buffers) and explains what is pending.

use std::fs::File;
use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtlat_core::CandidateCursor;
use rtlat_core::DistributionPlan;
use rtlat_core::{Shared, time};
use rtlat_explain::trace::PageHeaderLayout;
use rtlat_explain::{EventDecoder, ExplainConfig, Explainer, KernelSymbols, Sample};
use rtlat_sys::clock::{self, Clock};

use super::host_context::HostContext;
use super::{ExplainOutcome, MeasuredThread};

/// How often the reader empties the buffers: at 1 kHz a CPU writes a few
/// pages per period, far below the instance's buffer.
pub const POLL_PERIOD: Duration = Duration::from_millis(10);
/// How much of the past each CPU's window keeps.
const WINDOW: Duration = Duration::from_secs(1);
/// How long after a sample's wake-up its explanation waits for events
/// still to be read before it is made with what there is.
const GIVE_UP: Duration = Duration::from_millis(200);

/// What the reader is started with.
pub struct ReaderSetup {
    /// The decoder of the recorded events.
    pub decoder: EventDecoder,
    /// The kernel's function names, read before the first sample.
    pub symbols: KernelSymbols,
    /// The ring buffer's page header.
    pub layout: PageHeaderLayout,
    /// Each recorded CPU's `trace_pipe_raw`, non-blocking.
    pub pipes: Vec<(usize, File)>,
    /// The measuring threads' channels (their candidate rings).
    pub shared: Arc<Shared>,
    /// The measuring threads.
    pub threads: Vec<MeasuredThread>,
    /// The shape of the IRQ and thread latency distributions.
    pub distribution: DistributionPlan,
    /// Explanations kept.
    pub keep: usize,
    /// The measured CPUs (the reader keeps off them where it can).
    pub measured_cpus: Vec<usize>,
    /// CLOCK_MONOTONIC ns at the start of the run.
    pub run_start_ns: i64,
    /// The pages of each CPU's buffer in the instance: at most what one
    /// pass reads of a CPU.
    pub pages_per_cpu: usize,
}

/// The running reader.
pub struct ReaderHandle {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<ExplainOutcome>,
}

/// Starts the reader thread.
pub fn start(setup: ReaderSetup) -> io::Result<ReaderHandle> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("rtlat-explain".to_owned())
        .spawn(move || run(setup, &flag))?;
    Ok(ReaderHandle { stop, thread })
}

impl ReaderHandle {
    /// Asks for the last pass and waits for the outcome.
    pub fn finish(self) -> ExplainOutcome {
        self.stop.store(true, Ordering::Release);
        match self.thread.join() {
            Ok(outcome) => outcome,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Stops the reader, dropping its outcome (an early error).
    pub fn stop(self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.thread.join();
    }
}

fn run(setup: ReaderSetup, stop: &AtomicBool) -> ExplainOutcome {
    let started = Instant::now();
    keep_off(&setup.measured_cpus);
    let shared = &setup.shared;
    let threads: Vec<(usize, i32, i64)> = setup
        .threads
        .iter()
        .map(|t| {
            let tid = shared.channels[t.index].slot.tid();
            (t.index, tid, t.interval_ns)
        })
        .collect();
    let cpus: Vec<usize> = setup.pipes.iter().map(|(cpu, _)| *cpu).collect();
    let config = ExplainConfig {
        keep: setup.keep,
        window_ns: WINDOW.as_nanos() as i64,
        give_up_ns: GIVE_UP.as_nanos() as i64,
    };
    let context = HostContext::read(&cpus, setup.symbols);
    let mut explainer = Explainer::new(
        setup.decoder,
        setup.layout,
        &cpus,
        &threads,
        setup.distribution,
        config,
    );
    let mut cursors = vec![CandidateCursor::default(); threads.len()];
    let mut pipes = setup.pipes;
    let mut page = vec![0u8; setup.layout.page_size_bytes().max(4096)];
    let mut read_error = None;
    loop {
        let last_pass = stop.load(Ordering::Acquire);
        for (cpu, file) in pipes.iter_mut() {
            if let Err(e) = drain_cpu(*cpu, file, &mut page, setup.pages_per_cpu, &mut explainer) {
                read_error.get_or_insert(e);
            }
        }
        explainer.end_of_batch();
        for ((index, tid, _), cursor) in threads.iter().zip(cursors.iter_mut()) {
            if let Some(ring) = &shared.channels[*index].candidates {
                cursor.drain(ring, |c| {
                    explainer.offer(Sample {
                        thread: *index,
                        tid: *tid,
                        deadline_ns: c.deadline_ns,
                        wake_ns: c.wake_ns,
                        latency_ns: c.latency_ns,
                    })
                });
            }
        }
        let ctx = context.as_context();
        explainer.process(monotonic_ns(), &ctx);
        if last_pass {
            break;
        }
        std::thread::sleep(POLL_PERIOD);
    }
    // The files are closed here, before the instance is removed.
    drop(pipes);
    let report = explainer.finish(&context.as_context());
    ExplainOutcome {
        report,
        candidates_missed: cursors.iter().map(CandidateCursor::missed).sum(),
        reader_cpu: rtlat_sys::usage::current_thread_cpu_time(),
        reader_wall: started.elapsed(),
        read_error,
        cpus,
        run_start_ns: setup.run_start_ns,
    }
}

/// Reads one CPU's pages until none is left, or `at_most` pages: the
/// buffer's size, so all it held when the pass began. Without the bound a
/// pass could last for ever where events come as fast as they are read:
/// the reader's own reads record events when it shares a measured CPU
/// (a CPU set or a cpuset leaves it no other; a tracer that stops every
/// system call, as strace does, makes that a flood), and the last pass
/// would never end, nor the run. Pages left over wait for the next pass.
fn drain_cpu(
    cpu: usize,
    file: &mut File,
    page: &mut [u8],
    at_most: usize,
    explainer: &mut Explainer,
) -> Result<(), String> {
    for _ in 0..at_most {
        match file.read(page) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                if let Err(e) = explainer.feed_page(cpu, &page[..n]) {
                    return Err(format!("CPU {cpu}: a page of trace_pipe_raw: {e}"));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("CPU {cpu}: reading trace_pipe_raw: {e}")),
        }
    }
    Ok(())
}

/// Moves the reader off the measured CPUs when another CPU is there;
/// otherwise (or if the kernel refuses: none of them in this process's
/// cpuset) it stays where it was started. The kernel keeps of the mask the
/// CPUs the cpuset allows.
fn keep_off(measured: &[usize]) {
    let free: Vec<usize> = (0..rtlat_sys::system::configured_cpus())
        .filter(|cpu| !measured.contains(cpu))
        .collect();
    if !free.is_empty() {
        let _ = rtlat_sys::affinity::pin_current_thread(&free);
    }
}

/// CLOCK_MONOTONIC now, in ns (the trace's `mono` clock).
pub fn monotonic_ns() -> i64 {
    time::to_nanos(&clock::now(Clock::Monotonic))
}
