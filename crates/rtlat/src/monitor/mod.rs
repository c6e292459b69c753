//! `rtlat monitor`: a cyclictest run that goes on until stopped and tells
//! what it sees while it runs: Prometheus metrics over HTTP and in a
//! textfile, checkpoints that a restarted monitor resumes from.
//!
//! The measuring threads are cyclictest's, untouched. Everything here
//! runs on the main thread, once a second ([`Monitor::tick_if_due`]),
//! from the shared slots and logs the measuring threads publish anyway,
//! and on the HTTP thread, which only copies the last update's text.
//! One update: the figures so far (`Running::report_so_far`, each
//! distribution copied), plus a resumed checkpoint's totals; the
//! windows and the timeline ([`tracker`]); the metrics encoded once for
//! every scrape until the next ([`metrics`], [`http`]); the textfile;
//! every `--checkpoint-interval`, the checkpoint ([`checkpoint`]).
//! At most every [`PROJECTION_PERIOD`], the worst-case projection of all
//! threads' blocks together ([`crate::cyclictest::blocks`], which the run
//! collects anyway; [`rtlat_stats::projection::project`]), published with
//! the metrics. A resumed monitor's blocks go on from its checkpoint's, so
//! its projection does too.

pub mod checkpoint;
pub mod http;
pub mod metrics;
pub mod settings;
pub mod tracker;

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use rtlat_args::UsageError;
use rtlat_args::stdio::tell;
use rtlat_core::CyclicConfig;
use rtlat_core::DistributionPlan;
use rtlat_core::Nanos;
use rtlat_core::RunReport;
use rtlat_core::Running;
use rtlat_stats::blocks::BlockSeries;
use rtlat_stats::projection::{Projection, Request, project};

use crate::cyclictest::blocks::BlockCollector;
use crate::report::run_clock::Timeline;
use checkpoint::{Gap, Measured, MonitorState, Resumed};
use http::{Bound, Published, Server};
use metrics::{BUCKET_BOUNDS_NS, Figures, Info, ProjectionFigures, ThreadFigures, WindowSeconds};
use settings::MonitorPlan;
use tracker::{Origin, Tracker, WINDOW_QUANTILES};

/// Writes the run's result document for a report and each thread's blocks
/// (the `--json` writer with the run's envelope).
pub type DocumentWriter =
    Box<dyn Fn(&RunReport, Option<&Timeline>, &[BlockSeries], &mut Vec<u8>) -> io::Result<()>>;

/// How often the projection is made at most: a fit over up to a thousand
/// blocks, on the main thread, while blocks come once a second.
pub const PROJECTION_PERIOD: Duration = Duration::from_secs(10);
/// The verdict level (0, 1, 2) of a report.
pub type Judge = Box<dyn Fn(&RunReport) -> u8>;

/// The monitor of one run.
pub struct Monitor {
    plan: MonitorPlan,
    distribution_plan: DistributionPlan,
    bound: Option<Bound>,
    server: Option<Server>,
    published: Arc<Published>,
    tracker: Tracker,
    resumed: Option<Resumed>,
    state: MonitorState,
    info: Info,
    started: Option<Instant>,
    /// The run's clock against the wall clock (the time of the maxima).
    timeline: Option<Timeline>,
    /// The next second to take.
    next_second: u64,
    last_checkpoint: Option<Instant>,
    checkpoint_failures: u64,
    checkpoint_time_s: Option<f64>,
    /// A checkpoint or textfile error already told (told once).
    told: bool,
    write_document: DocumentWriter,
    judge: Judge,
    /// The result document and the checkpoint of the last write, kept for
    /// the next: a long run does not grow and free half a megabyte a
    /// minute (under `-m`, what the heap once held stays locked).
    document_buffer: Vec<u8>,
    /// What the projection projects (`RunMeta.projection`: `--horizon`,
    /// `--deadline`).
    request: Request,
    /// The last projection, and when it was made.
    projection: Option<ProjectionFigures>,
    projected_at: Option<Instant>,
    /// The resumed checkpoint's blocks per thread, until the run takes
    /// them ([`Monitor::take_resumed_blocks`]).
    resumed_blocks: Vec<Option<BlockSeries>>,
}

impl std::fmt::Debug for Monitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor").field("plan", &self.plan).finish()
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl Monitor {
    /// Before the first sample: reads `--resume`'s checkpoint (a usage
    /// error when it does not fit this run) and binds `--listen` (an
    /// address in use ends the run here, exit 1).
    pub fn prepare(
        plan: &MonitorPlan,
        engine: &CyclicConfig,
        info: Info,
        write_document: DocumentWriter,
        judge: Judge,
        request: Request,
    ) -> anyhow::Result<Monitor> {
        let Some(distribution_plan) = engine.run.distribution else {
            bail!("the monitor needs the full distribution, which this run does not keep");
        };
        let measured = checkpoint::measured_of(engine);
        let (resumed, resumed_blocks) = match (&plan.checkpoint, plan.resume) {
            (Some(path), true) => {
                let (resumed, blocks) =
                    read_for_resume(path, engine, &measured, distribution_plan)?;
                (Some(resumed), blocks)
            }
            _ => (None, Vec::new()),
        };
        // What a run killed while it wrote left beside the files rewritten
        // at every update (only our own names, only older than this run).
        let began = SystemTime::now();
        for path in plan.checkpoint.iter().chain(&plan.textfile) {
            let dir = rtlat_args::output_file::directory_of(path);
            rtlat_args::output_file::remove_stale_temporaries(dir, began);
        }
        let bound = match plan.listen {
            Some(address) => Some(Bound::bind(address).map_err(|e| {
                anyhow::anyhow!(
                    "--listen {address}: cannot listen there: {}",
                    rtlat_sys::io_strerror(&e)
                )
            })?),
            None => None,
        };
        let now = unix_now();
        let (first_start, mut gaps) = match &resumed {
            Some(r) => (r.state.first_start, r.state.gaps.clone()),
            None => (now, Vec::new()),
        };
        if let Some(r) = &resumed {
            gaps.push(Gap {
                from: r.state.written,
                to: now,
                seconds: (now - r.state.written).max(0.0),
            });
        }
        let origin = Origin {
            unix_s: now,
            elapsed_s: now - first_start,
        };
        let timeline = resumed
            .as_ref()
            .map(|r| r.timeline.clone())
            .unwrap_or_default();
        let tracker = Tracker::new(
            distribution_plan,
            engine.threads.len(),
            &plan.windows,
            origin,
            timeline,
        );
        let state = MonitorState {
            checkpoint_version: checkpoint::VERSION,
            written: now,
            first_start,
            this_start: now,
            plan: checkpoint::plan_state(distribution_plan),
            gaps,
            measured: Some(measured),
            threads: Vec::new(),
        };
        Ok(Monitor {
            plan: plan.clone(),
            distribution_plan,
            bound,
            server: None,
            published: Arc::new(Published::default()),
            tracker,
            resumed,
            state,
            info,
            started: None,
            timeline: None,
            next_second: 0,
            last_checkpoint: None,
            checkpoint_failures: 0,
            checkpoint_time_s: None,
            told: false,
            write_document,
            judge,
            document_buffer: Vec::new(),
            request,
            projection: None,
            projected_at: None,
            resumed_blocks,
        })
    }

    /// The resumed checkpoint's blocks per thread (empty without one), for
    /// the run's [`BlockCollector`] to go on from.
    pub fn take_resumed_blocks(&mut self) -> Vec<Option<BlockSeries>> {
        std::mem::take(&mut self.resumed_blocks)
    }

    /// Once the measuring threads run (and the main thread has its
    /// `--mainaffinity`, which the HTTP thread inherits): serves the
    /// metrics and says where.
    pub fn start(&mut self, started: Instant, timeline: Option<Timeline>) -> anyhow::Result<()> {
        self.started = Some(started);
        self.timeline = timeline;
        self.last_checkpoint = Some(started);
        if let Some(bound) = self.bound.take() {
            let address = bound.address();
            self.server = Some(
                bound
                    .serve(Arc::clone(&self.published))
                    .context("starting the metrics server")?,
            );
            tell!("serving metrics on http://{address}/metrics");
        }
        if let Some(r) = &self.resumed {
            let gap = self.state.gaps.last().map_or(0.0, |g| g.seconds);
            let samples: u64 = r.state.threads.iter().map(|t| t.cycles).sum();
            let since = (self.state.this_start - self.state.first_start).max(0.0) as u64;
            tell!(
                "resumed: {samples} samples counted over {} since the first start, a gap of \
                 {gap:.1} s recorded",
                crate::report::clock_time(since)
            );
        }
        Ok(())
    }

    /// Updates the figures if a second has passed since the last update;
    /// `blocks` are the run's.
    pub fn tick_if_due(&mut self, running: &Running, blocks: Option<&BlockCollector>) {
        let Some(started) = self.started else { return };
        let elapsed = started.elapsed().as_secs();
        if elapsed <= self.next_second {
            return;
        }
        // A main thread held up for several seconds takes them as one.
        let second = elapsed - 1;
        self.next_second = elapsed;
        let report = running.report_so_far();
        let logs = running
            .shared()
            .channels
            .iter()
            .map(|c| c.intervals.as_ref());
        self.tracker.tick(
            second,
            report.threads.iter().map(|t| t.distribution.as_ref()),
            logs,
        );
        let combined = self.combined(report);
        let series: Vec<&BlockSeries> = blocks.map(|b| b.series().collect()).unwrap_or_default();
        if self
            .projected_at
            .is_none_or(|at| at.elapsed() >= PROJECTION_PERIOD)
        {
            self.projected_at = Some(Instant::now());
            self.projection = projection_of(&series, &self.request);
        }
        self.publish(&combined);
        let checkpoint_due = self
            .last_checkpoint
            .is_some_and(|at| at.elapsed() >= self.plan.checkpoint_interval);
        if checkpoint_due {
            self.last_checkpoint = Some(Instant::now());
            let series: Vec<BlockSeries> = series.into_iter().cloned().collect();
            self.write_checkpoint(&combined, &series);
        }
    }

    /// The last projection: `outcome`, the verdict's, made from the run's
    /// final `blocks` with this monitor's request (the run projects them
    /// once, for both).
    pub fn project_final(&mut self, blocks: &[BlockSeries], outcome: Option<Projection>) {
        let series: Vec<&BlockSeries> = blocks.iter().collect();
        self.projection = BlockSeries::together(&series)
            .zip(outcome)
            .map(|(together, outcome)| figures_of(&together, outcome));
    }

    /// `report` (this process's figures) with a resumed checkpoint's
    /// totals added.
    pub fn combined(&self, mut report: RunReport) -> RunReport {
        if let Some(r) = &self.resumed {
            for (t, base) in report.threads.iter_mut().zip(&r.state.threads) {
                checkpoint::add_thread_to(base, t, self.distribution_plan, self.timeline.as_ref());
            }
        }
        report
    }

    /// The measuring threads have stopped: the last, partial minute goes
    /// into the timeline, and no update follows.
    pub fn end(&mut self) {
        if let Some(started) = self.started.take() {
            self.tracker.close_minute(started.elapsed().as_secs(), true);
        }
    }

    /// Writes `document`, the result document of `combined`, with the
    /// monitor's members added (the final `--json` and checkpoint).
    pub fn add_sections(
        &mut self,
        combined: &RunReport,
        document: &[u8],
        w: &mut dyn io::Write,
    ) -> io::Result<()> {
        self.state.written = unix_now();
        let timeline = self.timeline.as_ref();
        self.state.threads = combined
            .threads
            .iter()
            .map(|t| checkpoint::thread_state(t, timeline))
            .collect();
        checkpoint::write_with_sections(w, document, &self.state, self.tracker.timeline())
    }

    /// Writes the result document of `combined` with the monitor's members
    /// to the checkpoint file, streamed (the result document alone is made
    /// in memory, in a buffer kept from one checkpoint to the next).
    fn write_checkpoint(&mut self, combined: &RunReport, blocks: &[BlockSeries]) {
        let Some(path) = self.plan.checkpoint.clone() else {
            return;
        };
        let mut document = std::mem::take(&mut self.document_buffer);
        document.clear();
        let written =
            (self.write_document)(combined, self.timeline.as_ref(), blocks, &mut document)
                .and_then(|()| {
                    checkpoint::store(&path, |w| self.add_sections(combined, &document, w))
                });
        self.document_buffer = document;
        match written {
            Ok(()) => self.checkpoint_time_s = Some(self.state.written),
            Err(e) => {
                self.checkpoint_failures += 1;
                self.tell_once(&format!(
                    "WARN: --checkpoint: cannot write '{}': {} (tried again every {} s)",
                    path.display(),
                    rtlat_sys::io_strerror(&e),
                    self.plan.checkpoint_interval.as_secs()
                ));
            }
        }
    }

    fn tell_once(&mut self, line: &str) {
        if !self.told {
            self.told = true;
            tell!("{line}");
        }
    }

    /// Encodes the figures of `combined` for the scrapes to come and
    /// rewrites the textfile.
    fn publish(&mut self, combined: &RunReport) {
        let figures = self.figures(combined);
        let encoded = metrics::encode(figures);
        if let Some(path) = self.plan.textfile.clone()
            && let Err(e) = rtlat_args::output_file::replace_whole(&path, |w| {
                w.write_all(encoded.prometheus.as_bytes())
            })
        {
            self.tell_once(&format!(
                "WARN: --textfile: cannot write '{}': {} (tried again every second)",
                path.display(),
                rtlat_sys::io_strerror(&e)
            ));
        }
        self.published.set(encoded);
    }

    fn figures(&mut self, combined: &RunReport) -> Figures {
        let tracker = &mut self.tracker;
        let threads = combined
            .threads
            .iter()
            .map(|t| {
                let mut windows: Vec<WindowSeconds> = tracker
                    .window_figures(t.index)
                    .into_iter()
                    .map(|w| WindowSeconds {
                        label: w.label,
                        max: w.max.map(seconds),
                        quantiles: quantile_labels(w.quantiles.into_iter()),
                    })
                    .collect();
                let all = t.distribution.as_ref();
                windows.push(WindowSeconds {
                    label: "all".into(),
                    max: t.precise.max.map(seconds),
                    quantiles: quantile_labels(
                        WINDOW_QUANTILES
                            .iter()
                            .map(|&(_, q)| all.and_then(|d| d.value_at(q))),
                    ),
                });
                let mut buckets = vec![0u64; BUCKET_BOUNDS_NS.len() + 1];
                let samples = all.map_or(0, |d| {
                    for b in d.buckets() {
                        buckets[metrics::bucket_slot(b.lower)] += b.count;
                    }
                    d.count()
                });
                ThreadFigures {
                    cpu: t.cpu.map_or_else(|| "any".to_owned(), |c| c.to_string()),
                    thread: t.index.to_string(),
                    samples,
                    sum_s: t.precise.sum_ns as f64 / 1e9,
                    buckets,
                    missed_periods: t.precise.overruns,
                    smis: t.smi_count,
                    windows,
                }
            })
            .collect();
        Figures {
            info: self.info.clone(),
            start_time_s: self.state.first_start,
            threads,
            verdict_level: (self.judge)(combined),
            gaps: self.state.gaps.len() as u64,
            gap_s: self.state.gaps.iter().fold(0.0, |sum, g| sum + g.seconds),
            intervals_lost: self.tracker.lost_intervals,
            checkpoint_time_s: self.checkpoint_time_s,
            checkpoint_failures: self.checkpoint_failures,
            projection: self.projection.clone(),
        }
    }

    /// The run has ended: the figures of `combined` (the final report with
    /// the resumed totals) published, `document` (the final result
    /// document, from [`Monitor::add_sections`]) stored as the last
    /// checkpoint, the server stopped. Returns the checkpoint's error, if
    /// any. The stop waits on no client ([`Server::stop`]); the checkpoint
    /// comes first all the same, so that nothing a client does stands
    /// between a SIGTERM and the last state on disk.
    pub fn finish(mut self, combined: &RunReport, document: &[u8]) -> anyhow::Result<()> {
        self.publish(combined);
        let stored = match self.plan.checkpoint.clone() {
            Some(path) => checkpoint::store(&path, |w| w.write_all(document))
                .with_context(|| format!("--checkpoint: cannot write '{}'", path.display())),
            None => Ok(()),
        };
        if let Some(server) = self.server.take() {
            server.stop();
        }
        stored
    }
}

/// The projection of all threads' `series` together; `None` without a
/// thread, or when their blocks do not line up (they are all of one base
/// length, so they do).
fn projection_of(series: &[&BlockSeries], request: &Request) -> Option<ProjectionFigures> {
    let together = BlockSeries::together(series)?;
    let outcome = project(&together, request);
    Some(figures_of(&together, outcome))
}

/// The metrics of `outcome`, projected from `together`.
fn figures_of(together: &BlockSeries, outcome: Projection) -> ProjectionFigures {
    ProjectionFigures {
        blocks: together.blocks().len() as u64,
        block_s: together.block_ns() as f64 / 1e9,
        outcome,
    }
}

fn seconds(n: Nanos) -> f64 {
    n.0 as f64 / 1e9
}

fn quantile_labels(
    values: impl Iterator<Item = Option<Nanos>>,
) -> Vec<(&'static str, Option<f64>)> {
    WINDOW_QUANTILES
        .iter()
        .zip(values)
        .map(|(&(label, _), v)| (label, v.map(seconds)))
        .collect()
}

/// Reads `path` for `--resume` and checks that it fits this run: the same
/// threads on the same CPUs, the same distribution shape, the same host
/// and options (`measured`), whole counters and buckets
/// ([`checkpoint::check_resumable`]), blocks that go on in this run's
/// intervals ([`Resumed::series`]). A refusal leaves the file as it is:
/// nothing is measured, nothing written. Returns it with each thread's
/// blocks.
fn read_for_resume(
    path: &Path,
    engine: &CyclicConfig,
    measured: &Measured,
    plan: DistributionPlan,
) -> anyhow::Result<(Resumed, Vec<Option<BlockSeries>>)> {
    let refuse = |why: String| UsageError(format!("--resume: '{}': {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| {
        refuse(format!(
            "cannot read it: {} (without a checkpoint there is nothing to resume: leave out \
             --resume to start one)",
            rtlat_sys::io_strerror(&e)
        ))
    })?;
    let resumed = checkpoint::read(&text).map_err(&refuse)?;
    let cpus = |cpus: &mut dyn Iterator<Item = i64>| {
        cpus.map(|c| if c < 0 { "any".into() } else { c.to_string() })
            .collect::<Vec<_>>()
            .join(",")
    };
    let theirs = cpus(&mut resumed.state.threads.iter().map(|t| t.cpu));
    let ours = cpus(
        &mut engine
            .threads
            .iter()
            .map(|t| t.cpu.map_or(-1, |c| c as i64)),
    );
    if theirs != ours {
        return Err(refuse(format!(
            "its run had {} threads on CPUs {theirs}; this one has {} on CPUs {ours}: give the \
             same -a, -t or -S, or leave out --resume to start a new checkpoint",
            resumed.state.threads.len(),
            engine.threads.len()
        ))
        .into());
    }
    if resumed.state.plan != checkpoint::plan_state(plan) {
        return Err(refuse(format!(
            "its distributions have buckets of {} ns up to {} buckets; this run's of {} ns up to \
             {}: give the same --bucket-width and -h",
            resumed.state.plan.width_ns,
            resumed.state.plan.exact_buckets,
            plan.width_ns,
            plan.exact_buckets
        ))
        .into());
    }
    checkpoint::check_resumable(&resumed, measured, plan).map_err(|why| {
        refuse(format!(
            "{why}; the file is left as it is (without --resume, a new checkpoint replaces it)"
        ))
    })?;
    let base_ns = engine
        .intervals
        .map_or(1_000_000_000, |p| p.length.as_nanos());
    let blocks = resumed.series(base_ns).map_err(|why| {
        refuse(format!(
            "{why}; the file is left as it is (without --resume, a new checkpoint replaces it)"
        ))
    })?;
    if resumed.state.measured.is_none() {
        tell!(
            "WARN: --resume: '{}' was written by an older rtlat, which did not record the host \
             and options of its samples: resumed without checking them",
            path.display()
        );
    }
    Ok((resumed, blocks))
}
