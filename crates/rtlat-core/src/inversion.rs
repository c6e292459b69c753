//! pi_stress's inversion groups: per group a low, a medium and a high
//! priority thread on one CPU around one priority-inheritance mutex,
//! stepped through the classic inversion by barriers, as rt-tests'
//! pi_stress does it:
//!
//! 1. all three meet (`start`); the low thread takes the mutex;
//! 2. low and high meet (`locked`): the high thread now blocks on the
//!    mutex, which lends its priority to the low thread;
//! 3. low and medium meet (`elevate`): the boosted low thread runs ahead
//!    of the medium one and unlocks; the high thread gets the mutex and
//!    lets it go at once;
//! 4. all three meet (`finish`) and the high thread counts one inversion.
//!
//! A group whose count stops moving is stuck: an inversion the mutex did
//! not resolve; [`InversionRun::watchdog`] finds it as pi_stress's
//! watchdog does (no progress over five checks).
//!
//! The loop's rules: no allocation, no formatting; each step is a barrier
//! or the mutex (futex calls only when a thread must sleep or wake one).

use std::sync::Arc;
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering::AcqRel, Ordering::Acquire,
    Ordering::Relaxed, Ordering::Release,
};
use std::time::{Duration, Instant};

use rtlat_sys::pi::{FutexBarrier as Barrier, PiMutex};
use rtlat_sys::thread::RawThread;
use rtlat_sys::{Errno, affinity, sched};

use crate::config::SchedPolicy;
use crate::engine::{THREAD_STACK_BYTES, sys_policy};

/// A thread's scheduling in a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoleSched {
    /// SCHED_FIFO or SCHED_RR (SCHED_OTHER for an unprivileged test).
    pub policy: SchedPolicy,
    /// Its priority.
    pub priority: u8,
}

/// SCHED_DEADLINE parameters of the high thread, in ns (as
/// `struct sched_attr` has them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadlineSched {
    /// The budget per period.
    pub runtime: u64,
    /// The relative deadline.
    pub deadline: u64,
    /// The period.
    pub period: u64,
}

/// The three threads of a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Takes the mutex first.
    Low,
    /// Competes for the CPU, never for the mutex.
    Medium,
    /// Blocks on the mutex the low thread holds.
    High,
}

impl Role {
    /// The name pi_stress uses in its messages.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Low => "low_priority",
            Role::Medium => "med_priority",
            Role::High => "high_priority",
        }
    }
}

/// What the groups are to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InversionPlan {
    /// The CPU of each group (its three threads are pinned there); `None`:
    /// not pinned.
    pub group_cpus: Vec<Option<usize>>,
    /// The low, medium and high threads' scheduling.
    pub low: RoleSched,
    /// The medium thread's.
    pub medium: RoleSched,
    /// The high thread's.
    pub high: RoleSched,
    /// The high thread takes SCHED_DEADLINE instead of `high`, after
    /// widening its affinity to `deadline_cpus` (the kernel admits a
    /// deadline task only when it may run on its whole root domain).
    pub high_deadline: Option<DeadlineSched>,
    /// The CPUs a SCHED_DEADLINE high thread may run on.
    pub deadline_cpus: Vec<usize>,
    /// `-i`: inversions per group; `None`: no limit.
    pub inversions: Option<u64>,
    /// `-d`: the threads print a `DEBUG:` line when they start and end.
    pub debug: bool,
    /// A test seam: this group's low thread keeps the mutex until the run
    /// ends, so that the watchdog must find the group stuck.
    pub stuck_group: Option<usize>,
}

/// The steps of one group, shared by its threads and the main thread.
struct Group {
    mutex: AtomicU32,
    loop_barrier: Barrier,
    start: Barrier,
    locked: Barrier,
    elevate: Barrier,
    finish: Barrier,
    /// Set by one thread after the loop barrier once the run is to end:
    /// every thread then leaves after this round.
    stop: AtomicBool,
    /// Inversions done (written by the high thread only).
    total: AtomicU64,
}

impl Group {
    fn new() -> Group {
        Group {
            mutex: AtomicU32::new(0),
            loop_barrier: Barrier::new(3),
            start: Barrier::new(3),
            locked: Barrier::new(2),
            elevate: Barrier::new(2),
            finish: Barrier::new(3),
            stop: AtomicBool::new(false),
            total: AtomicU64::new(0),
        }
    }
}

/// A thread's failure: the step and the error number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoleError {
    /// The group.
    pub group: usize,
    /// The thread.
    pub role: Role,
    /// What failed.
    pub step: RoleStep,
    /// The error number.
    pub errno: i32,
}

/// What a thread was doing when it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoleStep {
    /// Pinning to its group's CPU.
    Affinity,
    /// Setting its policy and priority.
    Scheduler,
    /// Widening its affinity for SCHED_DEADLINE.
    DeadlineAffinity,
    /// Taking SCHED_DEADLINE (sched_setattr).
    Deadline,
    /// Taking or releasing the mutex.
    Mutex,
}

struct Shared {
    groups: Vec<Group>,
    ready: Barrier,
    shutdown: AtomicBool,
    /// Set when a thread failed to set itself up: nobody enters the loop.
    setup_failed: AtomicBool,
    /// The first error, packed (`pack_error`), 0 if none.
    error: AtomicU64,
    error_code: AtomicI32,
    exited: AtomicUsize,
    release_stuck: AtomicBool,
    /// The CPUs the first high thread refused SCHED_DEADLINE was
    /// allowed on (a cpuset may narrow what it asked for).
    deadline_affinity: std::sync::Mutex<Vec<usize>>,
}

/// The groups' threads, running.
pub struct InversionRun {
    shared: Arc<Shared>,
    threads: Vec<RawThread>,
    plan: InversionPlan,
    /// The last total seen by the watchdog per group, and its hits.
    seen: Vec<(u64, u32)>,
}

impl std::fmt::Debug for InversionRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InversionRun")
            .field("groups", &self.shared.groups.len())
            .field("total", &self.total())
            .finish_non_exhaustive()
    }
}

/// Consecutive checks without progress after which a group is stuck
/// (pi_stress's `WATCHDOG_LIMIT`).
pub const WATCHDOG_LIMIT: u32 = 5;

impl InversionRun {
    /// Starts the threads of every group; they set themselves up and
    /// wait for [`InversionRun::release`].
    pub fn start(plan: InversionPlan) -> std::io::Result<InversionRun> {
        let n = plan.group_cpus.len();
        let shared = Arc::new(Shared {
            groups: (0..n).map(|_| Group::new()).collect(),
            ready: Barrier::new(3 * n as u32 + 1),
            shutdown: AtomicBool::new(false),
            setup_failed: AtomicBool::new(false),
            error: AtomicU64::new(0),
            error_code: AtomicI32::new(0),
            exited: AtomicUsize::new(0),
            release_stuck: AtomicBool::new(false),
            deadline_affinity: std::sync::Mutex::new(Vec::new()),
        });
        let mut threads = Vec::with_capacity(3 * n);
        for g in 0..n {
            if plan.debug {
                eprintln!(
                    "DEBUG: group {g} bound to cpu {}",
                    plan.group_cpus[g].map_or(-1, |c| c as i64)
                );
            }
            for role in [Role::Low, Role::Medium, Role::High] {
                let shared = Arc::clone(&shared);
                let sched = match role {
                    Role::Low => Sched::Role(plan.low),
                    Role::Medium => Sched::Role(plan.medium),
                    Role::High => match plan.high_deadline {
                        Some(dl) => Sched::Deadline(dl, plan.deadline_cpus.clone()),
                        None => Sched::Role(plan.high),
                    },
                };
                let cpu = plan.group_cpus[g];
                let debug = plan.debug;
                let stuck = plan.stuck_group == Some(g) && role == Role::Low;
                let limit = plan.inversions;
                let name = format!("pi-{}-{g}", &role.name()[..3]);
                threads.push(rtlat_sys::thread::spawn(
                    &name,
                    THREAD_STACK_BYTES,
                    move || {
                        role_thread(&shared, g, role, sched, cpu, limit, debug, stuck);
                    },
                )?);
            }
        }
        Ok(InversionRun {
            seen: vec![(0, 0); n],
            shared,
            threads,
            plan,
        })
    }

    /// Lets every thread go (they all wait for this); returns the first
    /// set-up failure, after which no thread enters its loop.
    pub fn release(&self) -> Result<(), RoleError> {
        self.shared.ready.wait();
        match self.error() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The first error of a thread, if any.
    pub fn error(&self) -> Option<RoleError> {
        unpack_error(
            self.shared.error.load(Acquire),
            self.shared.error_code.load(Acquire),
        )
    }

    /// The CPUs a high thread that could not take SCHED_DEADLINE was
    /// allowed on (empty if none failed so).
    pub fn deadline_affinity(&self) -> Vec<usize> {
        self.shared
            .deadline_affinity
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default()
    }

    /// The inversions of every group together.
    pub fn total(&self) -> u64 {
        self.shared
            .groups
            .iter()
            .map(|g| g.total.load(Relaxed))
            .sum()
    }

    /// Whether the run is to end (a group reached `-i`, or [`stop`]).
    ///
    /// [`stop`]: InversionRun::stop
    pub fn shutting_down(&self) -> bool {
        self.shared.shutdown.load(Acquire)
    }

    /// Asks every group to end after its current round.
    pub fn stop(&self) {
        self.shared.shutdown.store(true, Release);
    }

    /// One watchdog check (pi_stress makes one every 0.75 s): the groups
    /// that made no progress over [`WATCHDOG_LIMIT`] checks in a row, and
    /// have not done all their inversions.
    pub fn watchdog(&mut self) -> Vec<usize> {
        let mut stuck = Vec::new();
        for (i, g) in self.shared.groups.iter().enumerate() {
            let total = g.total.load(Relaxed);
            let (last, hits) = &mut self.seen[i];
            if total == *last && Some(total) != self.plan.inversions {
                *hits += 1;
                if *hits >= WATCHDOG_LIMIT {
                    stuck.push(i);
                }
            } else {
                *hits = 0;
            }
            *last = total;
        }
        stuck
    }

    /// Ends the run: asks the groups to stop and waits up to `patience`
    /// for their threads to leave. Returns whether all did (a stuck
    /// group's threads never do: the process's end takes them), and the
    /// inversions of every group together, the last rounds included.
    pub fn finish(self, patience: Duration) -> (bool, u64) {
        self.stop();
        // The test seam's low thread lets its mutex go when asked.
        self.shared.release_stuck.store(true, Release);
        let deadline = Instant::now() + patience;
        let all = self.threads.len();
        while self.shared.exited.load(Acquire) < all {
            if Instant::now() >= deadline {
                return (false, self.total());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let total = self.total();
        for t in self.threads {
            let _ = t.join();
        }
        (true, total)
    }
}

fn pack_error(e: RoleError) -> u64 {
    let role = match e.role {
        Role::Low => 0,
        Role::Medium => 1,
        Role::High => 2,
    };
    let step = match e.step {
        RoleStep::Affinity => 0,
        RoleStep::Scheduler => 1,
        RoleStep::Mutex => 2,
        RoleStep::DeadlineAffinity => 3,
        RoleStep::Deadline => 4,
    };
    1 << 63 | (e.group as u64) << 8 | role << 4 | step
}

fn unpack_error(packed: u64, errno: i32) -> Option<RoleError> {
    if packed == 0 {
        return None;
    }
    let role = match (packed >> 4) & 0xf {
        0 => Role::Low,
        1 => Role::Medium,
        _ => Role::High,
    };
    let step = match packed & 0xf {
        0 => RoleStep::Affinity,
        1 => RoleStep::Scheduler,
        2 => RoleStep::Mutex,
        3 => RoleStep::DeadlineAffinity,
        _ => RoleStep::Deadline,
    };
    Some(RoleError {
        group: ((packed >> 8) & 0xff_ffff) as usize,
        role,
        step,
        errno,
    })
}

impl Shared {
    fn fail(&self, e: RoleError) {
        if self
            .error
            .compare_exchange(0, pack_error(e), AcqRel, Acquire)
            .is_ok()
        {
            self.error_code.store(e.errno, Release);
        }
    }
}

/// What a thread of a group takes.
enum Sched {
    /// A policy and priority.
    Role(RoleSched),
    /// SCHED_DEADLINE, allowed on these CPUs.
    Deadline(DeadlineSched, Vec<usize>),
}

/// One thread of a group, from its set-up to its exit.
#[allow(clippy::too_many_arguments)]
fn role_thread(
    shared: &Shared,
    g: usize,
    role: Role,
    sched: Sched,
    cpu: Option<usize>,
    limit: Option<u64>,
    debug: bool,
    stuck: bool,
) {
    let fail = |step, errno: Errno| {
        shared.fail(RoleError {
            group: g,
            role,
            step,
            errno: errno.raw_os_error(),
        });
        shared.setup_failed.store(true, Release);
    };
    if let Some(cpu) = cpu
        && let Err(e) = affinity::pin_current_thread(&[cpu])
    {
        fail(RoleStep::Affinity, e);
    }
    match sched {
        Sched::Role(s) => {
            if let Err(e) = sched::set_current_thread(sys_policy(s.policy), i32::from(s.priority)) {
                fail(RoleStep::Scheduler, e);
            }
        }
        // As pi_stress: the deadline thread leaves its group's CPU for
        // every CPU, then takes SCHED_DEADLINE.
        Sched::Deadline(dl, cpus) => {
            if let Err(e) = affinity::pin_current_thread(&cpus) {
                fail(RoleStep::DeadlineAffinity, e);
            } else if let Err(e) = rtlat_sys::deadline::set_current_thread(
                &rtlat_sys::deadline::SchedAttr::deadline(dl.runtime, dl.deadline, dl.period, 0),
            ) {
                if let Ok(mut seen) = shared.deadline_affinity.lock()
                    && seen.is_empty()
                {
                    *seen = affinity::allowed_cpus().unwrap_or_default();
                }
                fail(RoleStep::Deadline, e);
            }
        }
    }
    if debug {
        eprintln!("DEBUG: {}[{g}]: entering ready state", role.name());
    }
    shared.ready.wait();
    if !shared.setup_failed.load(Acquire) {
        let group = &shared.groups[g];
        if let Err(e) = inversion_loop(shared, group, role, limit, stuck) {
            shared.fail(RoleError {
                group: g,
                role,
                step: RoleStep::Mutex,
                errno: e.raw_os_error(),
            });
            // The others of the group wait for this one forever: the run
            // ends on the error.
            shared.shutdown.store(true, Release);
        }
    }
    if debug {
        eprintln!("DEBUG: {}[{g}]: exiting", role.name());
    }
    shared.exited.fetch_add(1, AcqRel);
}

/// The rounds of one thread until its group stops.
fn inversion_loop(
    shared: &Shared,
    group: &Group,
    role: Role,
    limit: Option<u64>,
    stuck: bool,
) -> Result<(), Errno> {
    let mutex = PiMutex::private(&group.mutex);
    loop {
        if limit.is_some_and(|n| group.total.load(Relaxed) >= n) {
            shared.shutdown.store(true, Release);
        }
        if group.stop.load(Acquire) {
            return Ok(());
        }
        // Either all three go round once more, or none does.
        if group.loop_barrier.wait() && shared.shutdown.load(Acquire) {
            group.stop.store(true, Release);
        }
        group.start.wait();
        match role {
            Role::Low => {
                mutex.lock()?;
                group.locked.wait();
                if stuck {
                    // The seam: an inversion that is never resolved.
                    while !shared.release_stuck.load(Acquire) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    mutex.unlock()?;
                    return Ok(());
                }
                group.elevate.wait();
                mutex.unlock()?;
                group.finish.wait();
            }
            Role::Medium => {
                group.elevate.wait();
                group.finish.wait();
            }
            Role::High => {
                group.locked.wait();
                mutex.lock()?;
                mutex.unlock()?;
                group.finish.wait();
                group.total.fetch_add(1, Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn other() -> RoleSched {
        RoleSched {
            policy: SchedPolicy::Other,
            priority: 0,
        }
    }

    fn plan(groups: usize, inversions: Option<u64>) -> InversionPlan {
        InversionPlan {
            group_cpus: vec![None; groups],
            low: other(),
            medium: other(),
            high: other(),
            high_deadline: None,
            deadline_cpus: Vec::new(),
            inversions,
            debug: false,
            stuck_group: None,
        }
    }

    #[test]
    fn groups_count_inversions_and_stop_at_the_limit() {
        let run = InversionRun::start(plan(2, Some(50))).unwrap();
        run.release().unwrap();
        let t0 = Instant::now();
        while !run.shutting_down() {
            assert!(t0.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(1));
        }
        let (done, total) = run.finish(Duration::from_secs(10));
        assert!(done);
        assert!(total >= 50, "{total}");
    }

    #[test]
    fn a_limit_ends_the_group_one_round_after_it_is_seen() {
        let run = InversionRun::start(plan(1, Some(100))).unwrap();
        run.release().unwrap();
        while !run.shutting_down() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (done, total) = run.finish(Duration::from_secs(10));
        assert!(done);
        assert!((100..=101).contains(&total), "{total}");
    }

    #[test]
    fn the_watchdog_finds_a_stuck_group() {
        let mut p = plan(2, None);
        p.stuck_group = Some(1);
        let mut run = InversionRun::start(p).unwrap();
        run.release().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let mut stuck = Vec::new();
        for _ in 0..WATCHDOG_LIMIT {
            std::thread::sleep(Duration::from_millis(5));
            stuck = run.watchdog();
        }
        assert_eq!(stuck, [1]);
        assert!(run.total() > 0);
        run.finish(Duration::from_millis(200));
    }

    #[test]
    fn errors_pack_and_unpack() {
        let e = RoleError {
            group: 7,
            role: Role::Medium,
            step: RoleStep::Scheduler,
            errno: 1,
        };
        assert_eq!(unpack_error(pack_error(e), 1), Some(e));
        assert_eq!(unpack_error(0, 0), None);
    }
}
