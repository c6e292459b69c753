//! Which threads run and where: the CPUs the process may use, `-a`, `-S`,
//! `-t`, `--smi`'s need of pinned threads, `--mainaffinity`, and the plan
//! of each thread.

use rtlat_core::Nanos;
use rtlat_core::parse_cpu_list;
use rtlat_core::{SchedPolicy, ThreadPlan};

use super::flags::name;
use super::raw::{MAX_THREADS, Raw};
use rtlat_args::UsageError;
use rtlat_args::options::Name;
use rtlat_args::values::{OptionName, SystemView, int, invalid};

/// How the measuring threads are placed on CPUs.
pub(super) enum Pinning {
    None,
    /// Thread i on the i-th allowed CPU, round robin.
    UseAll,
    /// Thread i on the i-th CPU of the set, round robin.
    Set(Vec<usize>),
}

/// The threads' CPUs and how many threads there are.
pub(super) struct Placement {
    /// The CPUs the process may use, sorted, each once.
    pub allowed: Vec<usize>,
    /// The CPUs the system has (for `!LIST`).
    configured: usize,
    pub pinning: Pinning,
    /// The CPUs whose idle states `--deepest-idle-state` limits and whose
    /// kernel events `--explain` records.
    pub measured_cpus: Vec<usize>,
    pub nthreads: usize,
}

impl Placement {
    /// A CPU list of option `id`, within the allowed CPUs.
    pub fn cpus(&self, id: Name, text: &str) -> Result<Vec<usize>, UsageError> {
        parse_cpu_list(text, &self.allowed, self.configured).map_err(|e| invalid(id, text, e))
    }

    /// `--mainaffinity CPUS`: where the main thread moves once the
    /// measuring threads run.
    pub fn main_affinity(&self, raw: &Raw) -> Result<Option<Vec<usize>>, UsageError> {
        match &raw.main_affinity {
            Some(text) => Ok(Some(self.cpus(name("mainaffinity"), text)?)),
            None => Ok(None),
        }
    }

    /// The CPU of thread `i`, if pinned.
    fn cpu_of(&self, i: usize) -> Option<usize> {
        match &self.pinning {
            Pinning::None => None,
            Pinning::UseAll => Some(self.allowed[i % self.allowed.len()]),
            Pinning::Set(set) => Some(set[i % set.len()]),
        }
    }
}

/// `-a`, `-S` and `-t` (with C's warnings when `-S` overrides them), and
/// `--smi`, which needs pinned threads.
pub(super) fn placement(
    raw: &Raw,
    system: &SystemView,
    warnings: &mut Vec<String>,
) -> Result<Placement, UsageError> {
    let mut allowed = system.allowed_cpus.clone();
    allowed.sort_unstable();
    allowed.dedup();
    let mut placement = Placement {
        allowed,
        configured: system.configured_cpus,
        pinning: Pinning::None,
        measured_cpus: Vec::new(),
        nthreads: 0,
    };
    placement.pinning = if raw.smp {
        Pinning::UseAll
    } else {
        match &raw.affinity {
            None => Pinning::None,
            Some(None) => Pinning::UseAll,
            Some(Some(text)) => Pinning::Set(placement.cpus(name("affinity"), text)?),
        }
    };
    placement.measured_cpus = match &placement.pinning {
        Pinning::Set(set) => set.clone(),
        _ => placement.allowed.clone(),
    };
    placement.nthreads = thread_count(raw, &placement, warnings)?;
    // The SMI counter is read per CPU: each thread must stay on one.
    if raw.smi && matches!(placement.pinning, Pinning::None) {
        return Err(UsageError(format!(
            "{}: needs threads pinned to CPUs: add -a or -S",
            name("smi").spelling()
        )));
    }
    Ok(placement)
}

/// `-t`: one thread, N, or one per CPU (of `-a`'s set, else allowed).
fn thread_count(
    raw: &Raw,
    placement: &Placement,
    warnings: &mut Vec<String>,
) -> Result<usize, UsageError> {
    let per_cpu = placement.measured_cpus.len();
    let nthreads = if raw.smp {
        if raw.threads.is_some() {
            warnings.push("WARN: -t ignored due to smp mode".to_owned());
        }
        if raw.affinity.is_some() {
            warnings.push("WARN: -a ignored due to smp mode".to_owned());
        }
        placement.allowed.len()
    } else {
        match &raw.threads {
            None => 1,
            Some(None) => per_cpu,
            Some(Some(text)) => match int::<u64>(text) {
                Some(0) => per_cpu,
                Some(n) if n <= MAX_THREADS => n as usize,
                _ => {
                    return Err(invalid(
                        name("threads"),
                        text,
                        format_args!(
                            "expected a number of threads, 1 to {MAX_THREADS}, or 0 for one per CPU"
                        ),
                    ));
                }
            },
        }
    };
    if nthreads == 0 {
        return Err(UsageError(
            "no CPU is available to this process, so there is no thread to start".to_owned(),
        ));
    }
    Ok(nthreads)
}

/// Each thread's plan: its interval (`-i` + i × `-d`), policy, priority
/// (`--priospread`: N - i) and CPU.
pub(super) fn thread_plans(
    raw: &Raw,
    placement: &Placement,
    (policy, priority): (SchedPolicy, i64),
    interval: i64,
    distance: i64,
) -> Vec<ThreadPlan> {
    (0..placement.nthreads)
        .map(|i| {
            let prio = if raw.priospread {
                priority - i as i64
            } else {
                priority
            };
            ThreadPlan {
                index: i,
                interval: Nanos::from_micros(interval + i as i64 * distance),
                policy,
                priority: u8::try_from(prio).unwrap_or(0),
                cpu: placement.cpu_of(i),
            }
        })
        .collect()
}
