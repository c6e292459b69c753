//! Carries out one `rtlat deadline_test` run, in C's order: the memory
//! lock, the calibration of the prime search (on the last CPU at
//! SCHED_FIFO 99, in a thread of its own), the `Setup:` line, a test job
//! per thread (tried again while it misses; then the overhead raised by
//! its least miss and every thread tested again), the threads (and `-r`'s spinner), the run (10 s or
//! `--duration`, or until SIGINT/SIGTERM, which end it normally with its
//! report), and each thread's report.

use std::fmt::Write as _;
use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::bail;
use rtlat_core::Nanos;
use rtlat_core::deadline::DeadlinePlan;
use rtlat_core::deadline_work::{self, Work, WorkResult, now_us};
use rtlat_sys::{affinity, sched};

use super::settings::Settings;
use crate::output::Stdout;
use crate::signals::SignalFlags;
use rtlat_args::stdio::note;

/// Loops of the first calibration (C's `test_loops`).
const TEST_LOOPS: u64 = 100_000;

/// How many times a timing of the preparation is taken at most, the
/// least one kept (C takes each once): a real-time thread may still be
/// stalled once, by the host of a virtual machine or by the kernel's
/// fair server (6.12 on), which lends SCHED_OTHER load up to 50 ms of
/// each second, and a stall is no overhead. A steady one stays.
const OVERHEAD_TRIES: usize = 3;

/// The least of up to [`OVERHEAD_TRIES`] timings by `time`, µs: tried
/// again only while above `enough`.
fn least_time(mut time: impl FnMut() -> u64, enough: u64) -> u64 {
    let mut least = u64::MAX;
    for _ in 0..OVERHEAD_TRIES {
        least = least.min(time());
        if least <= enough {
            break;
        }
    }
    least
}

/// Runs `settings`; returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let mut out = Stdout::new(false);
    if let Err(e) = rtlat_sys::memory::lock_all() {
        note!(
            "WARN: mlockall failed: {}; the run goes on without locked memory",
            rtlat_sys::strerror(e.raw_os_error())
        );
    }
    let s = settings.clone();
    let prepared = std::thread::Builder::new()
        .name("rtlat-dlcal".into())
        .spawn(move || prepare(&s))?
        .join()
        .map_err(|_| anyhow::anyhow!("the calibration thread failed"))??;
    out.emit(|w| w.write_all(prepared.text.as_bytes()));
    out.flush();
    let plans: Vec<DeadlinePlan> = prepared
        .works
        .iter()
        .enumerate()
        .map(|(index, w)| DeadlinePlan {
            index,
            runtime: Nanos::from_micros(w.runtime_us as i64),
            deadline: Nanos::from_micros(w.deadline_us as i64),
            period: Nanos::from_micros(w.deadline_us as i64),
        })
        .collect();
    crate::cyclicdeadline::run::hrtick_check(&plans);

    let signals = SignalFlags::install()?;
    let running = deadline_work::start(&prepared.works, settings.rt_prio)?;
    if let Some(e) = running.setup_error() {
        let _ = running.finish();
        match e.index {
            Some(i) => bail!(crate::cyclicdeadline::run::describe_setattr_error(
                i, e.errno, &plans[i]
            )),
            None => bail!(
                "-r: cannot set SCHED_FIFO priority {} for the spinning thread: {}",
                settings.rt_prio.unwrap_or(0),
                rtlat_sys::strerror(e.errno)
            ),
        }
    }
    let tids = running.tids();
    out.emit(|w| {
        for tid in &tids {
            writeln!(w, "deadline thread {tid}")?;
        }
        for (tid, work) in tids.iter().zip(&prepared.works) {
            writeln!(
                w,
                "thread[{tid}] runtime={}us deadline={}us loops={}",
                work.runtime_us, work.deadline_us, work.loops_per_period
            )?;
        }
        Ok(())
    });
    out.flush();
    let end = Instant::now() + Duration::from_nanos(settings.duration.as_nanos() as u64);
    while Instant::now() < end && !signals.stop_requested() && !out.is_closed() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let results = running.finish();
    out.emit(|w| {
        for (i, result) in results.iter().enumerate() {
            match result {
                Some(r) => w.write_all(report(r).as_bytes())?,
                None => writeln!(w, "Thread {i} failed: it did not stop in time")?,
            }
        }
        Ok(())
    });
    let status = u8::from(results.iter().any(Option::is_none));
    crate::output::end_run(&mut out, Ok(()), None, status)
}

/// A thread's report, as C prints it.
fn report(r: &WorkResult) -> String {
    let w = &r.work;
    let mut s = String::new();
    let _ = write!(
        s,
        "\n[{}]\nmissed deadlines  = {}\nmissed periods    = {}\nTotal adjustments = {} us\n",
        r.tid, w.missed_deadlines, w.missed_periods, w.total_adjust
    );
    if w.nr_adjust > 0 {
        let _ = writeln!(
            s,
            "# adjustments = {} avg: {} us",
            w.nr_adjust,
            w.total_adjust / w.nr_adjust
        );
    }
    let _ = write!(
        s,
        "deadline   : {} us\nruntime    : {} us\nnr_periods : {}\n\
         max_time: {}us\tmin_time: {}us\tavg_time: {}us\n\
         ctx switches vol:{} nonvol:{} migration:{}\nhighest prime: {}\n\n",
        w.deadline_us,
        w.runtime_us,
        w.nr_periods,
        w.max_time,
        w.min_time,
        w.total_time.checked_div(w.nr_periods).unwrap_or(0),
        r.voluntary,
        r.involuntary,
        r.migrations,
        w.prime
    );
    s
}

/// The calibration and the test jobs: their text and each thread's work.
struct Prepared {
    text: String,
    works: Vec<Work>,
}

/// C runs its calibration at SCHED_FIFO 99 bound to the last CPU; so does
/// this thread (best effort: without the privilege it runs as it is, and
/// the deadline threads are refused later with their own message).
fn prepare(s: &Settings) -> anyhow::Result<Prepared> {
    if let Ok(cpus) = affinity::allowed_cpus()
        && let Some(&last) = cpus.iter().max()
    {
        let _ = affinity::pin_current_thread(&[last]);
    }
    let _ = sched::set_current_thread(sched::Policy::Fifo, 99);
    let mut text = String::new();
    let (loops, mut overhead) = calibrate(&mut text);
    let _ = write!(text, "Setup:\n percent per task:{}", s.percent);
    if s.run_percent < 100 {
        let _ = write!(text, " run-percent:{}", s.run_percent);
    }
    let _ = writeln!(
        text,
        " nr_cpus:{} loops:{loops} overhead:{overhead}us",
        s.nr_cpus
    );
    // C starts again after a miss with the intervals it had reached (a
    // bug: the threads' intervals shift); here every thread is tested
    // again from the first interval. Bounded: each miss raises the
    // overhead, and a runtime below it ends the run.
    'again: loop {
        let mut works = Vec::with_capacity(s.threads);
        for i in 0..s.threads {
            let interval = s.interval_us + s.step_us * i as u64;
            let runtime = interval * s.percent / 100;
            if runtime < overhead {
                bail!(
                    "thread {i}'s runtime ({runtime} µs) is shorter than reading the clock and \
                     context takes ({overhead} µs): use a longer -i or a larger -p"
                );
            }
            let loop_time = (runtime - overhead) * s.run_percent / 100;
            let mut work = Work::new(runtime, interval, loop_time * loops / 1000);
            let took = least_time(
                || {
                    let start = now_us();
                    work.job(start);
                    now_us() - start
                },
                runtime,
            );
            if took > runtime {
                let missed = took - runtime;
                let _ = writeln!(
                    text,
                    "Failed to perform task within runtime: Missed by {missed} us"
                );
                overhead += missed;
                let _ = writeln!(text, "New overhead={overhead}us");
                continue 'again;
            }
            let _ = writeln!(text, "  Tested at {took}us of {runtime}us");
            // The test job is no job of the run (C counts it).
            works.push(Work {
                prime: work.prime,
                ..Work::new(runtime, interval, work.loops_per_period)
            });
        }
        let _ = sched::set_current_thread(sched::Policy::Other, 0);
        return Ok(Prepared { text, works });
    }
}

/// C's calculate_loops_per_ms: how many loops of the prime search take
/// 1 ms, and the overhead of a job around them; its lines go to `text`.
fn calibrate(text: &mut String) -> (u64, u64) {
    let pause = || std::thread::sleep(Duration::from_micros(1000));
    let mut sd = Work::new(0, 0, 0);
    pause();
    let first = sd.run_loops(TEST_LOOPS).max(1);
    sd = Work {
        prime: sd.prime,
        ..Work::new(first, first * 2, TEST_LOOPS)
    };
    pause();
    let start = now_us();
    sd.job(start + sd.deadline_us);
    let diff = now_us() - start;
    let loops = 1000 * TEST_LOOPS / sd.last_time.max(1);
    let _ = writeln!(
        text,
        "{TEST_LOOPS} test loops took {diff}us total ({} internal)\n\
         calculated loops for 1000us={loops}",
        sd.last_time
    );
    let test_loops = loops;
    // A job of 1 ms: its time outside the loops is the overhead. Of
    // OVERHEAD_TRIES jobs the quickest counts (a stall is no overhead).
    let (mut odiff, mut internal) = (u64::MAX, 1);
    for _ in 0..OVERHEAD_TRIES {
        sd = Work {
            prime: sd.prime,
            ..Work::new(1000, 2000, test_loops)
        };
        pause();
        let start = now_us();
        sd.job(start + sd.deadline_us);
        let took = now_us() - start;
        if took < odiff {
            (odiff, internal) = (took, sd.last_time.max(1));
        }
    }
    let loops = 1000 * test_loops / internal;
    let overhead = odiff.saturating_sub(internal);
    let _ = writeln!(
        text,
        "{test_loops} test loops took {odiff}us total ({} internal)\n\
         New calculated loops for 1000us={loops}\n\
         Diff from last calculation: {} loops",
        internal,
        loops as i64 - test_loops as i64
    );
    (loops, overhead)
}

#[cfg(test)]
mod tests {
    use super::{OVERHEAD_TRIES, least_time};

    #[test]
    fn a_timing_is_taken_again_only_while_too_long_and_the_least_kept() {
        let timed = |times: &[u64], enough: u64| {
            let mut left = times.iter();
            let mut taken = 0;
            let least = least_time(
                || {
                    taken += 1;
                    *left.next().unwrap()
                },
                enough,
            );
            (least, taken)
        };
        // In time at once: once.
        assert_eq!(timed(&[90, 1, 1], 100), (90, 1));
        // One stall: taken again, the stall forgotten.
        assert_eq!(timed(&[34_000, 95, 1], 100), (95, 2));
        // Always too long: the least of every try.
        assert_eq!(timed(&[150, 120, 130, 1], 100), (120, OVERHEAD_TRIES));
    }
}
