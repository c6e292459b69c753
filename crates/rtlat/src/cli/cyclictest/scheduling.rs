//! The threads' scheduling: `-p`, `--policy` and `--priospread`, settled
//! as C settles them (a priority makes the policy fifo; a real-time policy
//! without one runs at threads + 1), with C's warnings.

use rtlat_core::SchedPolicy;

use super::flags::name;
use super::raw::Raw;
use rtlat_args::UsageError;
use rtlat_args::values::{int_in, invalid};

/// The settled policy and priority (of thread 0 with `--priospread`).
pub(super) struct Scheduling {
    pub policy: SchedPolicy,
    pub priority: i64,
    /// The policy as the header shows it: `fifo`, `other/other`.
    pub header_policy: String,
}

/// `-p`, `--policy` and `--priospread` for `nthreads` threads.
pub(super) fn scheduling(
    raw: &Raw,
    nthreads: usize,
    warnings: &mut Vec<String>,
) -> Result<Scheduling, UsageError> {
    let mut priority = match &raw.priority {
        Some(text) => int_in(name("priority"), text, 0..=99, "a real-time priority")?,
        None => 0,
    };
    let mut policy = match &raw.policy {
        Some(text) => policy_from_name(text)?,
        None => SchedPolicy::Other,
    };
    if raw.priority_sets_fifo && !policy.is_realtime() {
        policy = SchedPolicy::Fifo;
    }
    let default_priority = |why: &str| -> Result<i64, UsageError> {
        let p = nthreads as i64 + 1;
        if p > 99 {
            return Err(UsageError(format!(
                "{why} needs a real-time priority, and the default (number of threads + 1 = {p}) \
                 is above 99: give -p/--priority"
            )));
        }
        Ok(p)
    };
    if raw.priospread && priority == 0 {
        priority = default_priority("--priospread")?;
        warnings.push(format!("defaulting realtime priority to {priority}"));
    }
    if priority != 0 && !policy.is_realtime() {
        policy = SchedPolicy::Fifo;
        warnings.push("policy and priority don't match: setting policy to SCHED_FIFO".to_owned());
    }
    if policy.is_realtime() && priority == 0 {
        priority = default_priority(&format!("--policy {}", policy.name()))?;
        warnings.push(format!("defaulting realtime priority to {priority}"));
    }
    if raw.priospread && priority < nthreads as i64 {
        return Err(spread_too_low(priority, nthreads));
    }
    let header_policy = if policy.is_realtime() {
        policy.name().to_owned()
    } else {
        format!("{}/other", policy.name())
    };
    Ok(Scheduling {
        policy,
        priority,
        header_policy,
    })
}

/// `--priospread` would take the last thread's priority below 1.
fn spread_too_low(priority: i64, nthreads: usize) -> UsageError {
    let lowest = nthreads - 1;
    let hint = if nthreads <= 99 {
        format!("give -p {nthreads} or more")
    } else {
        "it works with at most 99 threads".to_owned()
    };
    UsageError(format!(
        "--priospread: with priority {priority} and {nthreads} threads, thread {lowest} \
         would get priority {}; {hint}",
        priority - lowest as i64
    ))
}

fn policy_from_name(text: &str) -> Result<SchedPolicy, UsageError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "other" | "normal" => Ok(SchedPolicy::Other),
        "batch" => Ok(SchedPolicy::Batch),
        "idle" => Ok(SchedPolicy::Idle),
        "fifo" => Ok(SchedPolicy::Fifo),
        "rr" => Ok(SchedPolicy::RoundRobin),
        _ => Err(invalid(
            name("policy"),
            text,
            "expected one of other, normal, batch, idle, fifo, rr",
        )),
    }
}
