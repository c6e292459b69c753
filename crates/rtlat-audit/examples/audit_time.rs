//! Audits a root (default `/`) and prints every finding, the summary, the
//! suggested command and how long the audit took: the figure for the
//! start-up delay the environment adds to every run. The machine may be
//! shared, so it also gives the mean of 100 audits in wall time and in
//! CPU time (`/proc/thread-self/schedstat`), which other load does not
//! inflate.
//!
//! `cargo run --release -p rtlat-audit --example audit_time [ROOT [CPUS]]`

use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(args.next().unwrap_or_else(|| "/".to_owned()));
    let cpus = args.next().map(|list| {
        list.split(',')
            .map(|cpu| {
                cpu.parse()
                    .expect("CPUS is a comma-separated list of numbers")
            })
            .collect()
    });
    let request = rtlat_audit::Request {
        cpus,
        priority: Some(95),
        interval_us: 1000,
    };
    let started = Instant::now();
    let audit = match rtlat_audit::audit(&root, &request) {
        Ok(audit) => audit,
        Err(err) => {
            eprintln!("audit_time: {err}");
            std::process::exit(1);
        }
    };
    let first = started.elapsed();
    const ROUNDS: u32 = 100;
    let cpu_before = cpu_time_ns();
    let started = Instant::now();
    for _ in 0..ROUNDS {
        let _ = rtlat_audit::audit(&root, &request);
    }
    let wall_mean = started.elapsed() / ROUNDS;
    let cpu_mean_ns = cpu_time_ns().saturating_sub(cpu_before) / u64::from(ROUNDS);
    for finding in &audit.checks {
        println!(
            "{:7} {:28} {}",
            finding.status.name(),
            finding.id,
            finding.fact
        );
        if let (Some(why), Some(fix)) = (&finding.why, &finding.fix) {
            println!("{:36} why: {why}", "");
            println!("{:36} fix: {fix}", "");
        }
    }
    println!("{}", audit.summary());
    println!("suggested: {}", audit.suggested_command);
    println!(
        "audit took {:.2} ms; mean of {ROUNDS} more: {:.2} ms wall, {:.2} ms on the CPU",
        first.as_secs_f64() * 1e3,
        wall_mean.as_secs_f64() * 1e3,
        cpu_mean_ns as f64 / 1e6
    );
}

/// This thread's time on a CPU so far, in ns (0 where schedstat is absent).
fn cpu_time_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
