//! CPU affinity of the calling thread and of the process.

use rustix::thread::CpuSet;

use crate::Errno;

/// Restricts the calling thread to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> Result<(), Errno> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        if cpu >= CpuSet::MAX_CPU {
            return Err(Errno::INVAL);
        }
        set.set(cpu);
    }
    rustix::thread::sched_setaffinity(None, &set)
}

/// The CPUs the calling thread may run on, in ascending order.
pub fn allowed_cpus() -> Result<Vec<usize>, Errno> {
    let set = rustix::thread::sched_getaffinity(None)?;
    Ok((0..CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .collect())
}

/// The CPU the calling thread is running on now.
pub fn current_cpu() -> usize {
    rustix::thread::sched_getcpu()
}
