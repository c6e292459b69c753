//! The measuring loop makes no heap allocation per cycle.
//!
//! `allocation-counter` installs a counting global allocator for this test
//! binary only and counts per thread, so other test threads add no noise.
//! The loop runs inline on the test thread (SCHED_OTHER, no privilege) for
//! thousands of cycles, with every optional buffer enabled (histograms, the
//! full distribution, sample rings, spike log, explain candidates, warm-up, per-interval
//! and per-phase figures), on the
//! synthetic source and on the real clock.

use std::sync::atomic::AtomicBool;

use rtlat_core::hot_loops::cyclic::{LoopExtras, LoopParams, measure};
use rtlat_core::hot_loops::source::{
    FakeSmiCounter, PosixTimerClock, RealClock, SmiSource, SyntheticClock, TimeSource,
    TimerfdClock, TscTime, calibrate_tsc,
};
use rtlat_core::time::Period;
use rtlat_core::{CandidateRing, ExplainTrigger};
use rtlat_core::{DistributionPlan, LatencyHistogram};
use rtlat_core::{Histogram, LoopEnd, SampleRing, SignedHistogram, SpikeLog, ThreadChannel};
use rtlat_core::{IntervalLog, IntervalReader};
use rtlat_core::{Nanos, Resolution};
use rtlat_core::{PhaseLog, PhasePlan};
use rtlat_core::{SAMPLE_RING_LEN, WaitMode};
use rtlat_sys::clock::Clock;
use rtlat_sys::timer::ThreadTimer;
use rtlat_sys::timerfd::PeriodicTimerFd;

fn channel() -> ThreadChannel {
    ThreadChannel {
        slot: Default::default(),
        histogram: Histogram::new(100),
        samples: SampleRing::new(SAMPLE_RING_LEN),
        smi_samples: SampleRing::new(SAMPLE_RING_LEN),
        signed_histogram: SignedHistogram::new(1000, 300),
        intervals: IntervalLog::new(4),
        distribution: LatencyHistogram::new(distribution_plan()).map(std::sync::Arc::new),
        // Three phases of 1000 periods of 100 us (the synthetic loop
        // reaches all three; the real loops stay in the first).
        phases: PhaseLog::new(
            &PhasePlan::from_lengths(&[Nanos(100_000_000); 3]),
            Some(distribution_plan()),
        ),
        candidates: CandidateRing::new(),
    }
}

fn distribution_plan() -> DistributionPlan {
    DistributionPlan::new(1000, Nanos::ZERO).expect("default plan")
}

fn params(wait: WaitMode, loops: u64, interval_ns: i64) -> LoopParams {
    LoopParams {
        thread: 0,
        interval: Period::from_nanos(interval_ns),
        wait,
        resolution: Resolution::Micros,
        loops: Some(loops),
        duration: None,
        start: None,
        break_threshold: None,
        // Every sample above 5 us is a spike: the spike path runs often.
        spike_trigger: Some(5),
        // A warm-up of two periods, then an interval sealed every ten.
        warmup: Some(Period::from_nanos(2 * interval_ns)),
        interval_length: Some(Period::from_nanos(10 * interval_ns)),
        // Every sample above 5 us is offered for explanation: the ring
        // wraps many times.
        explain: Some(ExplainTrigger::Above(5_000)),
    }
}

fn extras<'a, 's>(spikes: &'a SpikeLog, smi: Option<&'s mut dyn SmiSource>) -> LoopExtras<'a, 's> {
    LoopExtras {
        spikes: Some(spikes),
        smi,
        freeze: None,
    }
}

#[test]
fn synthetic_loop_allocates_nothing() {
    let channel = channel();
    let stop = AtomicBool::new(false);
    let mut source = SyntheticClock::new(7, 0, 100_000, None);
    let spikes = SpikeLog::new(1024).unwrap();
    let mut smi = FakeSmiCounter::new(7, 0);
    let p = params(WaitMode::Absolute, 50_000, 100_000);
    let mut end = LoopEnd::Stopped;
    let info = allocation_counter::measure(|| {
        end = measure(
            &mut source,
            &p,
            &channel,
            &stop,
            extras(&spikes, Some(&mut smi as &mut dyn SmiSource)),
        );
    });
    assert_eq!(end, LoopEnd::Loops);
    assert!(spikes.report().total > 1024, "the spike log filled up");
    assert!(channel.slot.smi_count() > 0, "the fake SMI counter counted");
    assert_eq!(channel.slot.cycles(), 50_000);
    let mut intervals = 0;
    IntervalReader::new().drain(channel.intervals.as_ref().unwrap(), |_| intervals += 1);
    assert!(intervals > 0, "intervals were sealed");
    let phases = channel.phases.as_ref().unwrap().reports();
    assert!(
        phases.iter().all(|p| p.reached && p.compat.cycles > 0),
        "{phases:?}"
    );
    assert_eq!(phases.iter().map(|p| p.compat.cycles).sum::<u64>(), 50_000);
    assert_eq!(info.count_total, 0, "allocations in the loop: {info:?}");
}

#[test]
fn real_clock_loop_allocates_nothing_in_every_sleep_mode() {
    for wait in [WaitMode::Absolute, WaitMode::Relative, WaitMode::Nanosleep] {
        let channel = channel();
        let stop = AtomicBool::new(false);
        let mut source = RealClock(Clock::Monotonic);
        // 2000 cycles of 20 us: about 50-100 ms on this machine.
        let p = params(wait, 2_000, 20_000);
        let mut end = LoopEnd::Stopped;
        let spikes = SpikeLog::new(16).unwrap();
        let info = allocation_counter::measure(|| {
            end = measure(&mut source, &p, &channel, &stop, extras(&spikes, None));
        });
        assert_eq!(end, LoopEnd::Loops, "{wait:?}");
        assert_eq!(channel.slot.cycles(), 2_000);
        assert_eq!(
            info.count_total, 0,
            "{wait:?}: allocations in the loop: {info:?}"
        );
    }
}

/// Runs 300 cycles of 50 us on `source` with `wait` and checks that the
/// loop allocated nothing.
fn assert_no_allocation<S: TimeSource>(source: &mut S, wait: WaitMode, what: &str) {
    let channel = channel();
    let stop = AtomicBool::new(false);
    let p = params(wait, 300, 50_000);
    let mut end = LoopEnd::Stopped;
    let spikes = SpikeLog::new(16).unwrap();
    let info = allocation_counter::measure(|| {
        end = measure(source, &p, &channel, &stop, extras(&spikes, None));
    });
    assert_eq!(end, LoopEnd::Loops, "{what}");
    assert_eq!(channel.slot.cycles(), 300, "{what}");
    assert_eq!(
        info.count_total, 0,
        "{what}: allocations in the loop: {info:?}"
    );
}

#[test]
fn every_wait_method_allocates_nothing() {
    for wait in [
        WaitMode::Absolute,
        WaitMode::Relative,
        WaitMode::Nanosleep,
        WaitMode::StdSleep,
        WaitMode::Busy,
    ] {
        assert_no_allocation(&mut RealClock(Clock::Monotonic), wait, wait.name());
    }
    for by_timer in [false, true] {
        let timer = PeriodicTimerFd::new(Clock::Monotonic).unwrap();
        let mut source = TimerfdClock::new(Clock::Monotonic, timer, by_timer);
        assert_no_allocation(&mut source, WaitMode::Timerfd, "timerfd");
    }
    // The POSIX timer signals the thread that made it, which must block
    // the signal: a thread of its own.
    std::thread::spawn(|| {
        rtlat_sys::signals::block_all_except(rtlat_sys::signals::wake_signal()).unwrap();
        let timer = ThreadTimer::for_current_thread(Clock::Monotonic).unwrap();
        let mut source = PosixTimerClock::new(Clock::Monotonic, timer, false);
        let wait = WaitMode::PosixTimer {
            armed_relative: false,
        };
        assert_no_allocation(&mut source, wait, "posix-timer");
    })
    .join()
    .unwrap();
}

#[test]
fn tsc_measurement_allocates_nothing() {
    if rtlat_sys::tsc::support().is_err() {
        eprintln!("SKIPPED: no usable TSC on this machine (rtlat_sys::tsc::support)");
        return;
    }
    let ratio = calibrate_tsc(Clock::Monotonic, 5);
    for wait in [WaitMode::Absolute, WaitMode::Relative, WaitMode::Busy] {
        let mut source = TscTime::new(RealClock(Clock::Monotonic), ratio);
        assert_no_allocation(&mut source, wait, wait.name());
    }
}

#[test]
fn a_counting_allocator_does_see_allocations() {
    // Guards the two tests above against a counter that never counts.
    let info = allocation_counter::measure(|| {
        std::hint::black_box(vec![1u8; 64]);
    });
    assert!(info.count_total >= 1);
}

/// Linux before 6.4 (5.15 and 6.1 PREEMPT_RT kernels among them) has no
/// `prctl(PR_GET_AUXV)`. rustix finds the vDSO through the auxiliary
/// vector; read with its own code, it would fall back to reading
/// `/proc/self/auxv` into a heap buffer at the first clock read, inside
/// the loop. Whatever the running kernel, this test makes every `prctl`
/// fail with EINVAL (strace's fault injection), as `PR_GET_AUXV` does on
/// those kernels, and runs the real-clock test again in a child process
/// whose first clock read is in the measured loop.
#[test]
fn first_clock_read_allocates_nothing_on_kernels_without_pr_get_auxv() {
    // Under qemu-user, strace would trace the emulator, not this program;
    // qemu-user refuses PR_GET_AUXV itself (EINVAL, as before Linux 6.4),
    // so the other tests of this file check the same thing there.
    if let Some(emulator) = rtlat_testkit::emulation::emulated() {
        eprintln!(
            "SKIPPED (emulated: {emulator}; strace would see the emulator's calls, and the emulator refuses PR_GET_AUXV for every test here)"
        );
        return;
    }
    let Ok(status) = std::process::Command::new("strace").arg("-V").output() else {
        eprintln!("SKIPPED: strace is not installed (apt-get install strace)");
        return;
    };
    assert!(status.status.success());
    let test = "real_clock_loop_allocates_nothing_in_every_sleep_mode";
    let run = std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=prctl,openat", "-e"])
        .arg("inject=prctl:error=EINVAL")
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", test, "--test-threads=1", "--nocapture"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let trace = String::from_utf8_lossy(&run.stderr);
    assert!(
        stdout.contains("1 passed"),
        "the child run failed:\n{stdout}\n{trace}"
    );
    // The injection works (the test harness names its thread with prctl),
    // and the auxiliary vector is not read from /proc.
    assert!(trace.contains("(INJECTED)"), "nothing injected:\n{trace}");
    assert!(!trace.contains("/proc/self/auxv"), "{trace}");
}
