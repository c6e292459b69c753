//! `rtlat queuelat`: rt-tests' queuelat 2.4, a DPDK-like packet queue
//! served by timed copies (the engine is `rtlat_core::queuelat`). Prints
//! what C prints, in C's formats: the rates, the calibration histogram
//! with its packet fill rates, the copy size and drain count, then, when
//! the queue is exceeded or the run is stopped (timeout, a stop signal),
//! the loop's histogram and its min/max/average lines. Exit 0 in both.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use rtlat_core::queuelat::{
    BUCKET_NS, BUCKETS, Calibration, Histogram, QueueConfig, QueueEnd, Rates, calibrate,
    drain_per_block, queue_loop,
};
use rtlat_sys::process::STOP_SIGNALS;
use rtlat_sys::tracefs::{TraceControl, tracing_dir};

/// Everything `rtlat queuelat` needs to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// `-m`: latency allowed, ns.
    pub max_latency_ns: i32,
    /// `-c`: cycles per packet.
    pub cycles_per_packet: i32,
    /// `-p`: million packets per second.
    pub mpps: f32,
    /// `-f`: TSC frequency, MHz.
    pub freq_mhz: f64,
    /// `-t`: seconds, 0 for none.
    pub timeout_secs: u32,
    /// `-q`: trace_marker lines for queues longer than this.
    pub trace_above: Option<i64>,
}

/// Runs the simulation; returns the exit status.
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in STOP_SIGNALS {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .with_context(|| format!("installing the handler of signal {sig}"))?;
    }
    let trace = match settings.trace_above {
        Some(_) => Some(open_marker()?),
        None => None,
    };
    if settings.timeout_secs > 0 {
        let stop = Arc::clone(&stop);
        let secs = u64::from(settings.timeout_secs);
        std::thread::Builder::new()
            .name("queuelat-timeout".into())
            .spawn(move || {
                std::thread::sleep(Duration::from_secs(secs));
                stop.store(true, Ordering::Relaxed);
            })
            .context("starting the timeout thread")?;
    }
    let stated = if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        None
    } else {
        rtlat_sys::counter::stated_hz()
    };
    let (rates, ghz) = Rates::new(settings.freq_mhz, settings.mpps, stated);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(
        out,
        "tsc_freq_ghz = {:.6}, cycles_to_ns = {:.6}",
        ghz, rates.cycles_to_ns
    )?;
    let max_queue_len = rates.max_queue_len(settings.max_latency_ns, settings.cycles_per_packet);
    writeln!(out, "max_queue_len = {max_queue_len}")?;
    out.flush()?;
    let mut hist = Box::<Histogram>::default();
    let n = match calibrate(settings.max_latency_ns, &rates, &mut hist, &stop) {
        Calibration::Found(n) => n,
        Calibration::Stopped => {
            write_exit_info(&mut out, &hist)?;
            out.flush()?;
            return Ok(0);
        }
        Calibration::TooSlow => anyhow::bail!(
            "cannot calibrate: the smallest copies take longer than half of -m ({} ns)",
            settings.max_latency_ns
        ),
    };
    let Some(drain) = drain_per_block(&hist, &rates, settings.cycles_per_packet) else {
        writeln!(out, "error, did not find right bucket with < 10% of total")?;
        out.flush()?;
        return Ok(1);
    };
    write_buckets(&mut out, &hist, Some(&rates))?;
    writeln!(out, "default_n={n} nr_packets_drain_per_block={drain}")?;
    out.flush()?;
    let config = QueueConfig {
        n,
        drain,
        max_queue_len,
        rates,
        min_queue_to_trace: settings.trace_above.unwrap_or(0),
        trace: trace.as_ref(),
    };
    if let QueueEnd::Exceeded(queue) = queue_loop(&config, &mut hist, &stop) {
        writeln!(
            out,
            "queue length exceeded:  queue_size={queue} max_queue_len={max_queue_len}"
        )?;
    }
    write_exit_info(&mut out, &hist)?;
    out.flush()?;
    Ok(0)
}

fn open_marker() -> anyhow::Result<TraceControl> {
    let dir = tracing_dir().context("-q: no tracefs mounted (/sys/kernel/tracing)")?;
    TraceControl::open(&dir, true)
        .with_context(|| format!("-q: cannot open {}/trace_marker", dir.display()))
}

/// C's bucket list: `...` for a run of buckets equal to the next one,
/// the outlier bucket always; with `rates`, each line's packet fill rates.
pub fn write_buckets(
    out: &mut impl Write,
    hist: &Histogram,
    rates: Option<&Rates>,
) -> std::io::Result<()> {
    let mut skipped = false;
    for i in 0..=BUCKETS {
        let from = i as u64 * BUCKET_NS;
        if i < BUCKETS && hist.counts[i] == hist.counts[i + 1] {
            skipped = true;
            continue;
        }
        if skipped {
            writeln!(out, "...")?;
            skipped = false;
        }
        if i == BUCKETS {
            writeln!(out, "[{from} - END] = {}", hist.counts[i])?;
            continue;
        }
        let to = from + BUCKET_NS - 1;
        write!(out, "[{from} - {to}] = {}", hist.counts[i])?;
        match rates {
            Some(r) => writeln!(out, "  packetfillrates=[{} - {}]", r.fill(from), r.fill(to))?,
            None => writeln!(out)?,
        }
    }
    Ok(())
}

/// The histogram, then the min/max/average lines (C's `print_exit_info`).
/// An empty histogram's average is 0 (C divides by zero).
pub fn write_exit_info(out: &mut impl Write, hist: &Histogram) -> std::io::Result<()> {
    write_buckets(out, hist, None)?;
    write!(out, "\n ---------------- \n")?;
    for (label, i) in [("Min", hist.lowest()), ("Max", hist.highest())] {
        let from = i as u64 * BUCKET_NS;
        writeln!(
            out,
            "{label} loop processing time: [{from} - {}] = {}",
            from + BUCKET_NS - 1,
            hist.counts[i]
        )?;
    }
    writeln!(
        out,
        "Avg loop processing time: {}",
        hist.average().unwrap_or(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_block_is_cs() {
        let mut h = Histogram::default();
        for ns in [5, 50, 250, 80_000] {
            h.add(ns);
        }
        let mut v = Vec::new();
        write_exit_info(&mut v, &h).unwrap();
        let text = String::from_utf8(v).unwrap();
        let want = "[0 - 99] = 2\n[100 - 199] = 0\n[200 - 299] = 1\n...\n\
[69900 - 69999] = 0\n[70000 - END] = 1\n\n ---------------- \n\
Min loop processing time: [0 - 99] = 2\nMax loop processing time: [70000 - 70099] = 1\n\
Avg loop processing time: 17649\n";
        assert_eq!(text, want);
    }
}
