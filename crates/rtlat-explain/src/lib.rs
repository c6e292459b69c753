//! Why was a sample late: the worst latencies explained from kernel trace
//! events (`--explain`).
//!
//! The reader thread hands binary trace pages to an [`Explainer`]; it
//! decodes them ([`events`]), keeps a short window of each CPU's events
//! ([`window`]), attributes the latency of candidate samples to what ran
//! between the timer's expiry and the thread's wake-up ([`attribute`]), and
//! follows every wake-up of the measured threads to record their IRQ and
//! thread latencies ([`latencies`]). Pure analysis: no file, no thread.
//! The binary pages and the format files are read by [`trace`]; kernel
//! function addresses are named from kallsyms' text by [`symbols`].
//!
//! A crate apart from `rtlat-core`: none of it runs in a measuring loop,
//! so it is built for size (the binary that `-m` locks stays small).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod attribute;
pub mod events;
pub mod latencies;
pub mod symbols;
pub mod trace;
pub mod window;

#[cfg(test)]
mod scenario;

pub use attribute::{
    Attribution, Cause, CauseKind, Component, ComponentName, Dominant, ExplainContext, Explanation,
    SUM_TOLERANCE_NS, Sample, TraceWindow, explain, explain_final,
};
pub use events::{
    Comm, DecoderError, EventDecoder, EventKind, IrqNames, KernelEvent, PageItem, Vector,
};
pub use latencies::{ThreadLatencies, WakeupTracker};
pub use symbols::{KernelSymbols, what_it_is};
pub use window::{CpuWindows, KeptWaking, LostCount, WindowTotals};

use crate::trace::{LostEvents, PageError, PageHeaderLayout};
use rtlat_core::DistributionPlan;

/// How long the wake-up tracker waits for a CPU whose events are behind
/// the others' before it takes the events read so far in time order.
pub const TRACKER_HOLDBACK_NS: i64 = 50_000_000;

/// How much of the past before a pending sample's deadline the windows
/// keep for it, beyond their span (the evidence and the CPUs' states).
const PENDING_KEEP_NS: i64 = attribute::EVIDENCE_LEAD_NS + 10_000_000;

/// What an [`Explainer`] keeps and how long it waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExplainConfig {
    /// The N worst samples explained.
    pub keep: usize,
    /// How far back each CPU's window reaches, ns (about 1 s).
    pub window_ns: i64,
    /// How long after its wake-up a sample whose events are not all read
    /// is retried before it is explained with what there is, ns (~200 ms).
    pub give_up_ns: i64,
}

/// What the explaining found over a run.
#[derive(Debug, Clone)]
pub struct ExplainReport {
    /// The worst samples explained, worst first, at most `keep`.
    pub explanations: Vec<Explanation>,
    /// Each thread's IRQ and thread latencies, from every wake-up.
    pub latencies: Vec<ThreadLatencies>,
    /// Events decoded.
    pub events: u64,
    /// Events the kernel reported lost.
    pub lost_events: u64,
    /// Some were lost in an unknown number.
    pub lost_unknown: bool,
    /// Records not decoded (unknown id, too short).
    pub undecodable: u64,
    /// Events read after a newer one of their CPU.
    pub out_of_order: u64,
    /// Samples offered.
    pub candidates: u64,
    /// Samples explained (some later displaced by worse ones).
    pub candidates_explained: u64,
    /// The IRQ names, to show the explanations' evidence.
    pub irq_names: IrqNames,
}

/// The driver the trace reader calls: pages in, explanations and
/// latencies out.
#[derive(Debug)]
pub struct Explainer {
    decoder: EventDecoder,
    layout: PageHeaderLayout,
    windows: CpuWindows,
    tracker: WakeupTracker,
    config: ExplainConfig,
    /// Events read since the last batch ended, for the tracker.
    batch: Vec<KernelEvent>,
    /// Events merged but not yet given to the tracker: a CPU behind the
    /// others may still have older ones.
    held_back: Vec<KernelEvent>,
    pending: Vec<Sample>,
    /// Worst first.
    explanations: Vec<Explanation>,
    candidates: u64,
    candidates_explained: u64,
}

impl Explainer {
    /// An explainer of the events of `cpus` for `threads` (index, tid,
    /// interval ns), decoding with `formats` and `layout`.
    pub fn new(
        decoder: EventDecoder,
        layout: PageHeaderLayout,
        cpus: &[usize],
        threads: &[(usize, i32, i64)],
        plan: DistributionPlan,
        config: ExplainConfig,
    ) -> Explainer {
        Explainer {
            decoder,
            layout,
            windows: CpuWindows::new(cpus, config.window_ns),
            tracker: WakeupTracker::new(threads, plan),
            config,
            batch: Vec::new(),
            held_back: Vec::new(),
            pending: Vec::new(),
            explanations: Vec::new(),
            candidates: 0,
            candidates_explained: 0,
        }
    }

    /// Decodes one page of `cpu`'s `trace_pipe_raw` into the window and
    /// the batch; the events before a break in the page are kept.
    pub fn feed_page(&mut self, cpu: usize, page: &[u8]) -> Result<(), PageError> {
        let windows = &mut self.windows;
        let batch = &mut self.batch;
        let cpu_id = u32::try_from(cpu).unwrap_or(u32::MAX);
        self.decoder
            .decode_page(cpu_id, &self.layout, page, |item| match item {
                PageItem::Lost {
                    cpu,
                    page_ts_ns,
                    lost,
                } => windows.record_lost(cpu as usize, page_ts_ns, lost),
                PageItem::Event(event) => {
                    windows.push(event);
                    batch.push(event);
                }
            })
    }

    /// Takes one event decoded elsewhere, as [`Explainer::feed_page`]
    /// takes each event of a page.
    pub fn feed_event(&mut self, event: KernelEvent) {
        self.windows.push(event);
        self.batch.push(event);
    }

    /// Records events lost on `cpu` before a page of time `page_ts_ns`.
    pub fn feed_lost(&mut self, cpu: usize, page_ts_ns: i64, lost: LostEvents) {
        self.windows.record_lost(cpu, page_ts_ns, lost);
    }

    /// After a read pass over every CPU: the batch's events go to the
    /// wake-up tracker in time order, and the windows are trimmed.
    pub fn end_of_batch(&mut self) {
        let latest: Vec<i64> = self
            .windows
            .cpus()
            .filter_map(|cpu| self.windows.latest_ns(cpu))
            .collect();
        let (Some(&oldest_latest), Some(&newest)) = (latest.iter().min(), latest.iter().max())
        else {
            return;
        };
        self.held_back.append(&mut self.batch);
        self.held_back.sort_by_key(|event| event.ts_ns);
        let release_ns = oldest_latest.max(newest.saturating_sub(TRACKER_HOLDBACK_NS));
        let released = self
            .held_back
            .partition_point(|event| event.ts_ns <= release_ns);
        for event in self.held_back.drain(..released) {
            self.tracker.observe(&event);
        }
        let keep_from = self
            .pending
            .iter()
            .map(|sample| sample.deadline_ns.saturating_sub(PENDING_KEEP_NS))
            .min()
            .unwrap_or(i64::MAX);
        let trim_at = newest.min(keep_from.saturating_add(self.windows.span_ns()));
        // A thread woken and still waiting for a CPU when its waking is
        // about to be trimmed: the waking is kept, so that its sample, later
        // than the window's span, still has its stages.
        let cutoff = trim_at.saturating_sub(self.windows.span_ns());
        let waiting: Vec<(i32, i64)> = self
            .tracker
            .awaiting_switch()
            .filter(|&(_, waking_ns)| waking_ns < cutoff)
            .collect();
        for (tid, waking_ns) in waiting {
            if let Some(kept) = attribute::waking_to_keep(&self.windows, tid, waking_ns) {
                self.windows.keep_waking(kept);
            }
        }
        self.windows.trim(trim_at);
    }

    /// Explanations kept or samples pending of a latency at least
    /// `latency_ns`.
    fn worse_or_equal(&self, latency_ns: i64) -> usize {
        self.explanations
            .iter()
            .filter(|explanation| explanation.latency_ns >= latency_ns)
            .count()
            + self
                .pending
                .iter()
                .filter(|sample| sample.latency_ns >= latency_ns)
                .count()
    }

    /// A candidate sample; ignored when `keep` explanations (done or
    /// pending) of a latency at least as large exist.
    pub fn offer(&mut self, sample: Sample) {
        self.candidates += 1;
        if self.worse_or_equal(sample.latency_ns) >= self.config.keep {
            return;
        }
        self.pending.push(sample);
    }

    fn keep_explanation(&mut self, explanation: Explanation) {
        self.candidates_explained += 1;
        let position = self
            .explanations
            .partition_point(|kept| kept.latency_ns >= explanation.latency_ns);
        self.explanations.insert(position, explanation);
        self.explanations.truncate(self.config.keep);
    }

    /// Attributes the pending samples whose events are read; one whose
    /// wake-up is `give_up_ns` old at `now_ns` is explained with what
    /// there is.
    pub fn process(&mut self, now_ns: i64, ctx: &ExplainContext<'_>) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_by_key(|sample| std::cmp::Reverse(sample.latency_ns));
        for sample in pending {
            let worse_kept = self
                .explanations
                .iter()
                .filter(|kept| kept.latency_ns >= sample.latency_ns)
                .count();
            if worse_kept >= self.config.keep {
                continue;
            }
            let names = self.decoder.irq_names();
            match explain(&self.windows, names, &sample, ctx) {
                Attribution::Explained(explanation) => self.keep_explanation(explanation),
                Attribution::NotYet
                    if now_ns.saturating_sub(sample.wake_ns) >= self.config.give_up_ns =>
                {
                    let explanation = explain_final(&self.windows, names, &sample, ctx);
                    self.keep_explanation(explanation);
                }
                Attribution::NotYet => self.pending.push(sample),
            }
        }
    }

    /// Samples offered and not yet explained.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The explanations so far, worst first.
    pub fn explanations(&self) -> &[Explanation] {
        &self.explanations
    }

    /// Explains what is pending with what there is, and reports.
    pub fn finish(mut self, ctx: &ExplainContext<'_>) -> ExplainReport {
        self.held_back.append(&mut self.batch);
        self.held_back.sort_by_key(|event| event.ts_ns);
        for event in self.held_back.drain(..) {
            self.tracker.observe(&event);
        }
        self.process(i64::MAX, ctx);
        let totals = self.windows.totals();
        ExplainReport {
            explanations: self.explanations,
            latencies: self.tracker.latencies(),
            events: totals.events,
            lost_events: totals.lost.known,
            lost_unknown: totals.lost.unknown,
            undecodable: self.decoder.undecodable(),
            out_of_order: totals.out_of_order,
            candidates: self.candidates,
            candidates_explained: self.candidates_explained,
            irq_names: self.decoder.irq_names().clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::scenario::{MS, SPIN, SWAPPER, Scenario, THREAD, US};
    use super::*;
    use crate::trace::{EventFormat, EventFormats};
    use rtlat_core::Nanos;

    const TIMER: u64 = 0xffff_c900_0001_0000;
    const FORMATS: [&str; 10] = [
        include_str!("../tests/fixtures/trace/hrtimer_start.format"),
        include_str!("../tests/fixtures/trace/hrtimer_expire_entry.format"),
        include_str!("../tests/fixtures/trace/hrtimer_expire_exit.format"),
        include_str!("../tests/fixtures/trace/irq_handler_entry.format"),
        include_str!("../tests/fixtures/trace/irq_handler_exit.format"),
        include_str!("../tests/fixtures/trace/softirq_entry.format"),
        include_str!("../tests/fixtures/trace/softirq_exit.format"),
        include_str!("../tests/fixtures/trace/sched_waking.format"),
        include_str!("../tests/fixtures/trace/sched_switch.format"),
        include_str!("../tests/fixtures/trace/cpu_idle.format"),
    ];

    fn explainer(config: ExplainConfig) -> Explainer {
        let mut formats = EventFormats::new();
        for text in FORMATS {
            formats.insert(EventFormat::parse(text).expect("format"));
        }
        let layout = PageHeaderLayout::parse(include_str!("../tests/fixtures/trace/header_page"))
            .expect("layout");
        let plan = DistributionPlan::new(1_000, Nanos::from_micros(2_000)).expect("plan");
        Explainer::new(
            EventDecoder::new(&formats).expect("decoder"),
            layout,
            &[0, 1],
            &[(0, THREAD.pid, MS)],
            plan,
            config,
        )
    }

    fn config(keep: usize) -> ExplainConfig {
        ExplainConfig {
            keep,
            window_ns: 1_000 * MS,
            give_up_ns: 200 * MS,
        }
    }

    /// One cycle of the thread on CPU 0 at `deadline`, its timer armed:
    /// the timer 4 µs late, the waking 1 µs into the handler, then `busy`
    /// before the switch in (a spinning FIFO task when `spinning`, else the
    /// idle CPU), the clock read 3 µs after the switch, and the timer armed
    /// for the next millisecond. Returns the sample.
    fn cycle(scenario: &mut Scenario, deadline: i64, busy: i64, spinning: bool) -> Sample {
        let handler = deadline + 4 * US;
        let waking = handler + US;
        let switch_in = waking + busy;
        if spinning {
            scenario.switch(deadline - 100 * US, 0, SWAPPER, 0, SPIN);
        }
        scenario.timer_fires(0, TIMER, handler, handler + 2 * US, Some(THREAD));
        let from = if spinning { SPIN } else { SWAPPER };
        scenario
            .switch(switch_in, 0, from, 1, THREAD)
            .timer_start(switch_in + 5 * US, 0, TIMER, deadline + MS)
            .switch(switch_in + 6 * US, 0, THREAD, 1, SWAPPER);
        // CPU 1 is busy with its own things.
        scenario.idle(deadline + 500 * US, 1, 1);
        Sample {
            thread: 0,
            tid: THREAD.pid,
            deadline_ns: deadline,
            wake_ns: switch_in + 3 * US,
            latency_ns: switch_in + 3 * US - deadline,
        }
    }

    fn feed(explainer: &mut Explainer, scenario: &Scenario) {
        for event in scenario.sorted() {
            explainer.feed_event(event);
        }
        explainer.end_of_batch();
    }

    /// The thread arms its first timer, for 1 ms.
    fn start(scenario: &mut Scenario) {
        scenario
            .switch(MS / 2, 0, SWAPPER, 0, THREAD)
            .timer_start(MS / 2 + US, 0, TIMER, MS)
            .switch(MS / 2 + 2 * US, 0, THREAD, 1, SWAPPER);
    }

    #[test]
    fn a_spinning_fifo_task_named_under_thread_latency() {
        let mut scenario = Scenario::new();
        start(&mut scenario);
        let mut samples = Vec::new();
        for n in 1..=5 {
            let spinning = n == 3;
            let busy = if spinning { 300 * US } else { 10 * US };
            samples.push(cycle(&mut scenario, n * MS, busy, spinning));
        }
        let mut explainer = explainer(config(3));
        feed(&mut explainer, &scenario);
        for sample in &samples {
            explainer.offer(*sample);
        }
        let ctx = ExplainContext::events_only();
        explainer.process(10 * MS, &ctx);
        assert_eq!(explainer.pending(), 0);
        let report = explainer.finish(&ctx);
        assert_eq!((report.candidates, report.candidates_explained), (5, 3));
        assert_eq!(report.explanations.len(), 3);
        let worst = &report.explanations[0];
        assert_eq!(worst.deadline_ns, 3 * MS);
        assert_eq!(worst.latency_ns, 308 * US);
        assert!(worst.is_consistent(), "{worst:#?}");
        assert_eq!(worst.unexplained_ns, 0);
        let thread_latency = &worst.components[2];
        assert_eq!(thread_latency.name, ComponentName::ThreadLatency);
        assert_eq!(thread_latency.ns, 300 * US);
        let spin = &thread_latency.causes[0];
        assert_eq!(
            (
                spin.kind,
                spin.name.as_str(),
                spin.pid,
                spin.policy.as_deref(),
                spin.priority
            ),
            (
                CauseKind::Task,
                "spin",
                Some(4242),
                Some("fifo/rr"),
                Some(90)
            )
        );
        assert!(spin.ns >= 250 * US, "{spin:?}");
        // The IRQ and thread latencies of every wake-up.
        let latencies = &report.latencies[0];
        assert_eq!(latencies.wakeups, 5);
        assert_eq!(latencies.irq_latency.count(), 5);
        assert_eq!(latencies.irq_latency.max(), Some(Nanos(4 * US)));
        assert_eq!(latencies.thread_latency.max(), Some(Nanos(300 * US)));
        assert_eq!(latencies.thread_latency.min(), Some(Nanos(10 * US)));
        assert_eq!(report.events, scenario.events.len() as u64);
        assert_eq!((report.lost_events, report.lost_unknown), (0, false));
    }

    #[test]
    fn only_the_worst_samples_are_kept() {
        let mut scenario = Scenario::new();
        start(&mut scenario);
        let samples: Vec<Sample> = (1..=4)
            .map(|n| cycle(&mut scenario, n * MS, (10 + n) * US, false))
            .collect();
        let mut explainer = explainer(config(2));
        feed(&mut explainer, &scenario);
        // Offered best last: the two worst pass, the others are ignored.
        for sample in samples.iter().rev() {
            explainer.offer(*sample);
        }
        assert_eq!(explainer.pending(), 2);
        let report = explainer.finish(&ExplainContext::events_only());
        let deadlines: Vec<i64> = report.explanations.iter().map(|e| e.deadline_ns).collect();
        assert_eq!(deadlines, [4 * MS, 3 * MS]);
        assert_eq!((report.candidates, report.candidates_explained), (4, 2));
    }

    #[test]
    fn a_switch_not_read_yet_is_waited_for_then_given_up() {
        let mut scenario = Scenario::new();
        start(&mut scenario);
        let sample = cycle(&mut scenario, MS, 20 * US, false);
        let (read, unread): (Vec<KernelEvent>, Vec<KernelEvent>) = scenario
            .sorted()
            .into_iter()
            .partition(|event| event.ts_ns <= sample.deadline_ns + 7 * US);
        let ctx = ExplainContext::events_only();

        // Read later: explained in full.
        let mut patient = explainer(config(3));
        for event in &read {
            patient.feed_event(*event);
        }
        patient.end_of_batch();
        patient.offer(sample);
        patient.process(sample.wake_ns + MS, &ctx);
        assert_eq!(patient.pending(), 1);
        for event in &unread {
            patient.feed_event(*event);
        }
        patient.end_of_batch();
        patient.process(sample.wake_ns + 2 * MS, &ctx);
        assert_eq!(patient.pending(), 0);
        assert!(patient.explanations()[0].is_consistent());

        // Never read: explained with what there is after the give-up time.
        let mut given_up = explainer(config(3));
        for event in &read {
            given_up.feed_event(*event);
        }
        given_up.end_of_batch();
        given_up.offer(sample);
        given_up.process(sample.wake_ns + 199 * MS, &ctx);
        assert_eq!(given_up.pending(), 1);
        given_up.process(sample.wake_ns + 200 * MS, &ctx);
        assert_eq!(given_up.pending(), 0);
        let explanation = &given_up.explanations()[0];
        assert_eq!(explanation.components.len(), 2);
        assert!(
            explanation
                .notes
                .iter()
                .any(|note| note.contains("no switch into thread 100")),
            "{:?}",
            explanation.notes
        );
    }

    const TICK: u64 = 0xffff_ffff_8143_32e0;
    const S: i64 = 1_000 * MS;

    /// The thread, woken on time by its timer at 1 ms, starved on CPU 0
    /// for `held` by `SPIN` (FIFO 90) that runs from before the deadline,
    /// the scheduler tick firing every millisecond meanwhile; CPU 1 idle
    /// every millisecond. Returns the sample.
    fn starved(scenario: &mut Scenario, held: i64) -> Sample {
        start(scenario);
        let deadline = MS;
        scenario.switch(deadline - 100 * US, 0, SWAPPER, 0, SPIN);
        scenario.timer_fires(0, TIMER, deadline + 4 * US, deadline + 6 * US, Some(THREAD));
        let mut tick = deadline + 500 * US;
        while tick < deadline + held {
            scenario.push(
                tick,
                0,
                EventKind::HrtimerExpireEntry {
                    timer: 0xffff_9000_0000_0001,
                    now_ns: tick,
                    function: TICK,
                },
            );
            scenario.push(
                tick + 2 * US,
                0,
                EventKind::HrtimerExpireExit {
                    timer: 0xffff_9000_0000_0001,
                },
            );
            scenario.idle(tick + 100 * US, 1, 1);
            tick += MS;
        }
        let switch_in = deadline + held;
        scenario
            .switch(switch_in, 0, SPIN, 0, THREAD)
            .timer_start(switch_in + 5 * US, 0, TIMER, switch_in + MS)
            .switch(switch_in + 6 * US, 0, THREAD, 1, SWAPPER);
        for n in 1..=20 {
            scenario.idle(switch_in + n * MS, 1, 1);
        }
        let wake_ns = switch_in + 3 * US;
        Sample {
            thread: 0,
            tid: THREAD.pid,
            deadline_ns: deadline,
            wake_ns,
            latency_ns: wake_ns - deadline,
        }
    }

    /// Feeds the events as the reader does: a batch every 10 ms of them.
    fn feed_in_batches(explainer: &mut Explainer, scenario: &Scenario) {
        let mut batch_end = 10 * MS;
        for event in scenario.sorted() {
            while event.ts_ns > batch_end {
                explainer.end_of_batch();
                batch_end += 10 * MS;
            }
            explainer.feed_event(event);
        }
        explainer.end_of_batch();
    }

    /// The sample of [`starved`] explained, its events fed in batches as
    /// the reader does or all at once after the fact.
    fn explain_starved(held: i64, batches: bool) -> Explanation {
        let mut scenario = Scenario::new();
        let sample = starved(&mut scenario, held);
        let mut explainer = explainer(config(3));
        if batches {
            feed_in_batches(&mut explainer, &scenario);
        } else {
            feed(&mut explainer, &scenario);
        }
        explainer.offer(sample);
        let mut report = explainer.finish(&ExplainContext::events_only());
        report.explanations.remove(0)
    }

    #[test]
    fn a_thread_starved_longer_than_the_window_has_its_stages_and_the_windows_tasks() {
        let e = &explain_starved(3 * S, true);
        // Woken on time: the stages are there, the wait for the CPU is the
        // thread latency, and they add up.
        let stages: Vec<(ComponentName, i64)> =
            e.components.iter().map(|c| (c.name, c.ns)).collect();
        assert_eq!(
            stages,
            [
                (ComponentName::IrqLatency, 4 * US),
                (ComponentName::HandlerToWakeup, US),
                (ComponentName::ThreadLatency, 3 * S - 5 * US),
                (ComponentName::ReturnToUser, 3 * US),
            ]
        );
        assert!(e.is_consistent(), "{:?}", e.notes);
        assert!(e.window_short);
        // What the window showed: the spinning FIFO 90 task, nearly all of
        // it, the tick's callbacks apart; what came before, no cause.
        let window = e.window.as_ref().expect("the trace window");
        assert_eq!(window.cpu, 0);
        assert!((950 * MS..=S).contains(&window.span_ns()), "{window:?}");
        let spin = &window.causes[0];
        assert_eq!(
            (
                spin.kind,
                spin.name.as_str(),
                spin.policy.as_deref(),
                spin.priority
            ),
            (CauseKind::Task, "spin", Some("fifo/rr"), Some(90))
        );
        assert!(spin.ns >= window.span_ns() * 99 / 100, "{spin:?}");
        assert!(window.causes.iter().all(|c| c.kind != CauseKind::Untraced));
        let thread_latency = &e.components[2].causes;
        assert_eq!(thread_latency[0].name, "spin");
        let untraced = thread_latency.last().unwrap();
        assert_eq!(
            (untraced.kind, untraced.name.as_str()),
            (CauseKind::Untraced, "before the trace window")
        );
        assert!(untraced.ns >= 2 * S - 10 * MS, "{untraced:?}");
        // The window is said to be shorter than the latency.
        assert!(
            e.notes
                .iter()
                .any(|n| n.starts_with("the latency (3.000 s) is longer than the trace window")),
            "{:?}",
            e.notes
        );
        // The dominant cause is the wait and what held the CPU, not a
        // component of a few microseconds.
        let dominant = e.dominant_cause().expect("a dominant cause");
        assert_eq!(dominant.stage, "thread_latency");
        assert_eq!(dominant.cause.map(|c| c.name.as_str()), Some("spin"));
        assert_eq!(dominant.window_ns, Some(window.span_ns()));
    }

    #[test]
    fn a_starved_thread_whose_waking_was_not_kept_is_blamed_on_the_window() {
        // All events read at once after the fact: the waking is trimmed
        // before anything keeps it (the run: only the switch and the
        // return to user were found).
        let e = &explain_starved(3 * S, false);
        assert_eq!(e.components.len(), 1, "{:?}", e.components);
        assert_eq!(e.components[0].name, ComponentName::ReturnToUser);
        let dominant = e.dominant_cause().expect("a dominant cause");
        assert_eq!(dominant.stage, "trace_window");
        assert!(dominant.ns >= 950 * MS, "{dominant:?}");
        assert_eq!(dominant.cause.map(|c| c.name.as_str()), Some("spin"));
    }

    #[test]
    fn a_short_starvation_inside_the_window_has_no_window_part() {
        let e = &explain_starved(300 * MS, true);
        assert!(e.window.is_none() && !e.window_short);
        assert!(e.is_consistent());
        let dominant = e.dominant_cause().unwrap();
        assert_eq!(
            (dominant.stage, dominant.cause.map(|c| c.name.as_str())),
            ("thread_latency", Some("spin"))
        );
        assert_eq!(dominant.window_ns, None);
    }

    #[test]
    fn lost_events_and_a_short_window_are_said() {
        let mut scenario = Scenario::new();
        start(&mut scenario);
        let first = cycle(&mut scenario, MS, 20 * US, false);
        let later: Vec<Sample> = (2..=30)
            .map(|n| cycle(&mut scenario, n * MS, 20 * US, false))
            .collect();
        let mut explainer = explainer(ExplainConfig {
            keep: 3,
            window_ns: 12 * MS,
            give_up_ns: 200 * MS,
        });
        let events = scenario.sorted();
        for event in &events {
            if event.cpu == 0 && event.ts_ns == 20 * MS + 4 * US {
                explainer.feed_lost(0, event.ts_ns, LostEvents::Unknown);
            }
            explainer.feed_event(*event);
        }
        explainer.end_of_batch();
        // The first sample is 29 ms old, beyond the 12 ms window.
        explainer.offer(first);
        explainer.offer(later[18]); // deadline 20 ms: the loss before its handler
        let report = explainer.finish(&ExplainContext::events_only());
        assert!(report.lost_unknown);
        let by_deadline = |deadline: i64| {
            report
                .explanations
                .iter()
                .find(|e| e.deadline_ns == deadline)
                .expect("explained")
        };
        let old = by_deadline(MS);
        assert!(old.window_short);
        assert!(old.components.is_empty(), "{:?}", old.components);
        let lossy = by_deadline(20 * MS);
        assert!(lossy.lost_unknown);
        assert!(lossy.window_short);
        assert!(
            lossy
                .notes
                .iter()
                .any(|note| note.contains("an unknown number of events were lost on CPU 0"))
        );
    }
}
