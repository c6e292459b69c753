//! Facts about the machine: kernel identity, CPU counts, load, NUMA nodes,
//! thread ids, thread names.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::fs;

/// `uname` fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelIdentity {
    /// Operating system name (`Linux`).
    pub sysname: String,
    /// Host name.
    pub nodename: String,
    /// Kernel release.
    pub release: String,
    /// Kernel build version.
    pub version: String,
    /// Hardware name (`x86_64`).
    pub machine: String,
}

/// The `uname` of this machine.
pub fn kernel_identity() -> KernelIdentity {
    let u = rustix::system::uname();
    let text = |c: &std::ffi::CStr| c.to_string_lossy().into_owned();
    KernelIdentity {
        sysname: text(u.sysname()),
        nodename: text(u.nodename()),
        release: text(u.release()),
        version: text(u.version()),
        machine: text(u.machine()),
    }
}

/// Whether this is a PREEMPT_RT kernel (`/sys/kernel/realtime` reads `1`).
pub fn is_realtime_kernel() -> bool {
    fs::read("/sys/kernel/realtime").is_ok_and(|b| b.first() == Some(&b'1'))
}

/// The text of `/proc/loadavg` without its trailing newline.
pub fn load_average_text() -> String {
    let mut text = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    while text.ends_with('\n') {
        text.pop();
    }
    text
}

/// Number of CPUs configured in the system (`_SC_NPROCESSORS_CONF`).
pub fn configured_cpus() -> usize {
    sysconf_count(libc::_SC_NPROCESSORS_CONF)
}

/// Number of CPUs online (`_SC_NPROCESSORS_ONLN`).
pub fn online_cpus() -> usize {
    sysconf_count(libc::_SC_NPROCESSORS_ONLN)
}

fn sysconf_count(name: libc::c_int) -> usize {
    // SAFETY: sysconf takes any integer name and has no memory effects.
    let n = unsafe { libc::sysconf(name) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// The NUMA node `cpu` belongs to, read from sysfs (`None` when the kernel
/// has no NUMA information).
pub fn numa_node_of_cpu(cpu: usize) -> Option<u32> {
    let dir = fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}")).ok()?;
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        .next()
}

/// The kernel thread id of the calling thread.
pub fn current_tid() -> i32 {
    rustix::thread::gettid().as_raw_nonzero().get()
}

/// The effective user id (0 for root).
pub fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The process id.
pub fn current_pid() -> i32 {
    rustix::process::getpid().as_raw_nonzero().get()
}

/// Names the calling thread (the kernel keeps the first 15 bytes); named
/// on the main thread, that is the process's name (`ps`,
/// `/proc/PID/comm`).
pub fn set_thread_name(name: &str) {
    let kept: Vec<u8> = name.bytes().take(15).collect();
    if let Ok(c) = CString::new(kept) {
        let _ = rustix::thread::set_name(&c);
    }
}
