//! From the raw values to validated [`Settings`], in the order C checks
//! them (so the first error and the warnings are C's): each concern in its
//! own module ([`timing`](super::timing), [`threads`](super::threads),
//! [`scheduling`](super::scheduling), [`breaks`](super::breaks),
//! [`power`](super::power), [`outputs`](super::outputs)), the shared
//! groups through [`SharedArgs`](crate::cli::shared::SharedArgs), then
//! put together.

use std::path::PathBuf;

use rtlat_core::DistributionPlan;
use rtlat_core::load::LoadSchedule;
use rtlat_core::{
    Alignment, BreakPlan, ClockKind, CyclicConfig, HistogramPlan, IntervalPlan, MeasureMode,
    RunConfig, SpikePlan, ThreadPlan, TimeSourceKind, WaitMode,
};
use rtlat_core::{Nanos, Resolution, RtTests};

use super::flags::name;
use super::raw::Raw;
use super::threads::{Pinning, Placement};
use super::{breaks, outputs, power, scheduling, threads, timing};
use crate::cli::explain::{ExplainIds, ExplainObstacles, explain_plan};
use crate::cli::load_options::run_duration;
use crate::cli::output_options::Outputs;
use crate::cli::verdict_options::Asked;
use crate::cyclictest::settings::{
    DmaLatency, HgrmOutput, HistogramOutput, IdleStateLimit, Settings,
};
use crate::explain::ExplainPlan;
use crate::gate::GatePlan;
use crate::report::verdict::injected::Injected;
use rtlat_args::UsageError;
use rtlat_args::values::{SystemView, invalid};

/// What [`build`] validated, before it is put together.
struct Validated {
    wait: WaitMode,
    measure: MeasureMode,
    placement: Placement,
    threads: Vec<ThreadPlan>,
    header_policy: String,
    loops: Option<u64>,
    duration: Option<Nanos>,
    load: Option<LoadSchedule>,
    clock: ClockKind,
    resolution: Resolution,
    source: TimeSourceKind,
    distribution: DistributionPlan,
    buckets: Option<i64>,
    outputs: Outputs,
    breaktrace: Option<BreakPlan>,
    spikes: Option<SpikePlan>,
    alignment: Option<Alignment>,
    intervals: Option<IntervalPlan>,
    stats_file: Option<PathBuf>,
    oscope_reduction: u32,
    dma_latency: DmaLatency,
    deepest_idle_state: Option<IdleStateLimit>,
    main_affinity: Option<Vec<usize>>,
    injected: Option<Injected>,
    fifo: Option<PathBuf>,
    hgrm: Option<HgrmOutput>,
    gates: Option<GatePlan>,
    projection: Asked,
    explain: Option<ExplainPlan>,
    rt_tests: RtTests,
}

/// Validates `raw` into the settings of a run, with the warnings to print
/// before it.
pub(super) fn build(
    raw: Raw,
    cmdline: String,
    system: &SystemView,
) -> Result<(Settings, Vec<String>), UsageError> {
    let mut warnings = Vec::new();
    let (wait, measure) = timing::wait_and_measure(&raw, &mut warnings)?;
    let placement = threads::placement(&raw, system, &mut warnings)?;
    let nthreads = placement.nthreads;
    let (interval, distance_given) = timing::interval_and_distance(&raw)?;
    // The histogram and the other outputs of the shared options.
    let (resolution, unit) = rtlat_args::values::resolution(raw.nsecs, "-N");
    let mut shared_outputs = raw.shared.outputs(name, &unit)?;
    let buckets = shared_outputs.buckets.map(|b| b as i64);
    let distance = timing::distance(
        &raw,
        interval,
        distance_given,
        buckets,
        nthreads,
        &mut warnings,
    )?;
    warnings.append(&mut shared_outputs.warnings);
    let sched = scheduling::scheduling(&raw, nthreads, &mut warnings)?;
    let plans = (sched.policy, sched.priority);
    let thread_plans = threads::thread_plans(&raw, &placement, plans, interval, distance);
    let stop = raw.shared.stop(name)?;
    let load = raw.shared.load(name, system)?;
    // A schedule ends the run when it ends, unless -D comes first.
    let duration = run_duration(stop.duration, load.as_ref());
    let clock = timing::clock(&raw)?;
    let oscope_reduction = outputs::oscope_reduction(&raw)?;
    let breaktrace = breaks::breaktrace(&raw, &unit)?;
    let spikes = breaks::spikes(&raw, &unit)?;
    let alignment = timing::alignment(&raw)?;
    let (dma_latency, deepest_idle_state) = power::power(&raw, &placement.measured_cpus)?;
    let main_affinity = placement.main_affinity(&raw)?;
    let source = raw.shared.source(name)?;
    let injected = injected(&raw)?;
    let fifo = outputs::fifo(&raw)?;
    let (intervals, stats_file) =
        outputs::stats_stream(&raw, source, stop.loops, duration, &thread_plans)?;
    let distribution = outputs::distribution_plan(&raw, buckets, resolution)?;
    let gates = raw.shared.gates(name)?;
    let projection = raw.shared.projection(name)?;
    let rt_tests = raw.shared.rt_tests(name)?;
    let hgrm = raw.shared.outputs.hgrm(name, nthreads)?;
    let explain = explain(&raw, clock, placement.measured_cpus.clone())?;
    warnings.extend(breaks::lone_option_warnings(
        &raw,
        breaktrace.is_some(),
        spikes.is_some(),
    ));
    let valid = Validated {
        wait,
        measure,
        placement,
        threads: thread_plans,
        header_policy: sched.header_policy,
        loops: stop.loops,
        duration,
        load,
        clock,
        resolution,
        source,
        distribution,
        buckets,
        outputs: shared_outputs,
        breaktrace,
        spikes,
        alignment,
        intervals,
        stats_file,
        oscope_reduction,
        dma_latency,
        deepest_idle_state,
        main_affinity,
        injected,
        fifo,
        hgrm,
        gates,
        projection,
        explain,
        rt_tests,
    };
    Ok((settings(raw, valid, cmdline), warnings))
}

/// `--inject-disturbances LIST`: only with `--synthetic`.
fn injected(raw: &Raw) -> Result<Option<Injected>, UsageError> {
    match (&raw.inject_disturbances, &raw.shared.synthetic) {
        (None, _) => Ok(None),
        (Some(_), None) => Err(UsageError(
            "--inject-disturbances: only with --synthetic (a real run counts its own)".to_owned(),
        )),
        (Some(list), Some(_)) => {
            Ok(Some(Injected::parse(list).map_err(|why| {
                invalid(name("inject-disturbances"), list, why)
            })?))
        }
    }
}

/// The explain group, on the measured CPUs.
fn explain(
    raw: &Raw,
    clock: ClockKind,
    cpus: Vec<usize>,
) -> Result<Option<ExplainPlan>, UsageError> {
    explain_plan(
        ExplainIds::named(name),
        &raw.explain,
        ExplainObstacles {
            synthetic: raw.shared.synthetic.is_some(),
            other_clock: (clock != ClockKind::Monotonic).then_some("--clock 1 (CLOCK_REALTIME)"),
        },
        cpus,
    )
}

/// The engine's part of the settings.
fn engine(raw: &Raw, v: &mut Validated) -> CyclicConfig {
    CyclicConfig {
        threads: std::mem::take(&mut v.threads),
        run: RunConfig {
            loops: v.loops,
            duration: v.duration,
            resolution: v.resolution,
            source: v.source,
            distribution: Some(v.distribution),
            phases: v.load.as_ref().and_then(LoadSchedule::phase_plan),
        },
        clock: v.clock,
        wait: v.wait,
        measure: v.measure,
        histogram: v.buckets.map(|b| HistogramPlan {
            buckets: b as usize,
        }),
        sample_ring: raw.verbose,
        breaktrace: v.breaktrace,
        spikes: v.spikes,
        alignment: v.alignment,
        smi: raw.smi,
        intervals: v.intervals,
        explain: v.explain.as_ref().map(|plan| plan.trigger),
        ..CyclicConfig::new(Vec::new())
    }
}

/// The settings of the run, put together.
fn settings(raw: Raw, mut v: Validated, cmdline: String) -> Settings {
    Settings {
        engine: engine(&raw, &mut v),
        quiet: raw.quiet,
        progress: raw.quiet && !raw.verbose && !raw.no_progress,
        verbose: raw.verbose,
        unbuffered: raw.unbuffered,
        histogram: v.outputs.histogram.map(|target| HistogramOutput {
            summary_column: v.outputs.histofall,
            target,
        }),
        json: v.outputs.json,
        mlockall: raw.mlockall,
        dma_latency: v.dma_latency,
        deepest_idle_state: v.deepest_idle_state,
        injected: v.injected,
        main_cpus_before_start: match v.placement.pinning {
            Pinning::Set(set) => Some(set),
            _ => None,
        },
        main_affinity: v.main_affinity,
        header_policy: v.header_policy,
        cmdline,
        tracemark: raw.tracemark,
        fifo: v.fifo,
        refresh_on_max: raw.refresh_on_max,
        oscope_reduction: v.oscope_reduction,
        check_resolution: raw.check_resolution,
        debug_resolution: raw.dbg_cyclictest,
        show_methods: (raw.wait.is_some() || raw.measure.is_some())
            && (v.wait != WaitMode::Absolute || v.measure != MeasureMode::Clock),
        stats_file: v.stats_file,
        percentiles: raw.percentiles,
        verdict: raw.verdict,
        projection: v.projection,
        rt_tests: v.rt_tests,
        hgrm: v.hgrm,
        gates: v.gates,
        load: v.load,
        explain: v.explain,
        monitor: None,
    }
}
