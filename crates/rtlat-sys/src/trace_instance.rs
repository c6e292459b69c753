//! A tracefs instance of a run's own (`instances/rtlat-<pid>`): a trace
//! buffer apart from the global one, recording a chosen list of kernel
//! events on chosen CPUs with the `mono` clock, so that event times compare
//! with the samples' CLOCK_MONOTONIC times.
//!
//! [`TraceInstance::create`] makes the directory, configures it and turns
//! its tracing on; it gives the paths a reader needs (each CPU's
//! `trace_pipe_raw`, each enabled event's `format`). Dropping it, or
//! [`TraceInstance::close`] (which reports errors), turns it off and
//! removes it. Nothing here writes outside the instance directory: the
//! global trace and other instances stay as they were. Nothing mounts a
//! file system either: the tracing directory must be mounted already
//! ([`crate::tracefs::tracing_dir`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The events an explanation of a latency needs: each must exist.
pub const REQUIRED_EVENTS: [&str; 10] = [
    "timer/hrtimer_start",
    "timer/hrtimer_expire_entry",
    "timer/hrtimer_expire_exit",
    "irq/irq_handler_entry",
    "irq/irq_handler_exit",
    "irq/softirq_entry",
    "irq/softirq_exit",
    "sched/sched_waking",
    "sched/sched_switch",
    "power/cpu_idle",
];

/// The events enabled where the kernel has them: NMIs, the x86 interrupt
/// vectors that interrupt a task (rescheduling, function calls, irq work;
/// not the local timer's, whose two events per wake-up cost more than they
/// tell: at 1 kHz on one CPU, p50 28.5 us against 24.0 us without
/// --explain, 28.0 against 26.0 without those two events, bench/explain),
/// inter-processor interrupts on the architectures that trace them.
pub const OPTIONAL_EVENTS: [&str; 11] = [
    "nmi/nmi_handler",
    "irq_vectors/reschedule_entry",
    "irq_vectors/reschedule_exit",
    "irq_vectors/call_function_entry",
    "irq_vectors/call_function_exit",
    "irq_vectors/call_function_single_entry",
    "irq_vectors/call_function_single_exit",
    "irq_vectors/irq_work_entry",
    "irq_vectors/irq_work_exit",
    "ipi/ipi_entry",
    "ipi/ipi_exit",
];

/// What an instance is made of.
#[derive(Clone, Debug)]
pub struct InstanceSpec {
    /// The directory name under `instances/`.
    pub name: String,
    /// The CPUs whose events are recorded.
    pub cpus: Vec<usize>,
    /// The size of each CPU's buffer, in KiB (the kernel rounds it up to
    /// whole pages of events: 64 reads back as 67 on x86-64).
    pub buffer_size_kb: u32,
    /// Events (`system/name`) that must exist; the first missing one is an
    /// error.
    pub required_events: Vec<String>,
    /// Events enabled only where they exist.
    pub optional_events: Vec<String>,
}

impl InstanceSpec {
    /// The instance of this process's run: `rtlat-<pid>`, recording
    /// [`REQUIRED_EVENTS`] and whichever of [`OPTIONAL_EVENTS`] exist.
    pub fn for_run(cpus: &[usize], buffer_size_kb: u32) -> InstanceSpec {
        InstanceSpec {
            name: format!("rtlat-{}", std::process::id()),
            cpus: cpus.to_vec(),
            buffer_size_kb,
            required_events: REQUIRED_EVENTS.iter().map(|e| e.to_string()).collect(),
            optional_events: OPTIONAL_EVENTS.iter().map(|e| e.to_string()).collect(),
        }
    }
}

/// What can go wrong making or removing an instance.
#[derive(Debug, thiserror::Error)]
pub enum TraceInstanceError {
    /// The tracing directory has no `instances` directory.
    #[error("{dir} has no 'instances' directory: this kernel's tracefs has no instances", dir = .tracing_dir.display())]
    NoInstances {
        /// The tracing directory.
        tracing_dir: PathBuf,
    },
    /// An instance is made of at least one CPU.
    #[error("a trace instance needs at least one CPU")]
    NoCpu,
    /// A required event does not exist in this kernel.
    #[error("the kernel has no trace event '{event}' ({path} is missing)", path = .path.display())]
    MissingEvent {
        /// The event, `system/name`.
        event: String,
        /// Its `enable` file, as looked for.
        path: PathBuf,
    },
    /// A directory could not be made or removed, or a file written.
    #[error("cannot {action} {path}: {source}", path = .path.display())]
    File {
        /// `create`, `remove` or `write '<value>' to`.
        action: String,
        /// The directory or file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
}

/// A live tracefs instance, removed when dropped.
#[derive(Debug)]
pub struct TraceInstance {
    dir: PathBuf,
    cpus: Vec<usize>,
    events: Vec<String>,
    removed: bool,
}

impl TraceInstance {
    /// Makes `<tracing_dir>/instances/<spec.name>`, sets its `trace_clock`
    /// to `mono`, its `tracing_cpumask` to `spec.cpus`, each CPU's
    /// `buffer_size_kb`, enables the events and turns its tracing on. On any
    /// error the instance is removed again.
    pub fn create(
        tracing_dir: &Path,
        spec: &InstanceSpec,
    ) -> Result<TraceInstance, TraceInstanceError> {
        if spec.cpus.is_empty() {
            return Err(TraceInstanceError::NoCpu);
        }
        let instances = tracing_dir.join("instances");
        if !instances.is_dir() {
            return Err(TraceInstanceError::NoInstances {
                tracing_dir: tracing_dir.to_path_buf(),
            });
        }
        let dir = instances.join(&spec.name);
        fs::create_dir(&dir).map_err(|source| TraceInstanceError::File {
            action: "create".to_string(),
            path: dir.clone(),
            source,
        })?;
        // From here on, an error drops `instance`, which removes it.
        let mut instance = TraceInstance {
            dir,
            cpus: spec.cpus.clone(),
            events: Vec::new(),
            removed: false,
        };
        instance.write("tracing_on", "0")?;
        instance.write("trace_clock", "mono")?;
        instance.write("tracing_cpumask", &cpumask_text(&spec.cpus))?;
        instance.write("buffer_size_kb", &spec.buffer_size_kb.to_string())?;
        for event in &spec.required_events {
            let enable = instance.event_file(event, "enable");
            if !enable.exists() {
                return Err(TraceInstanceError::MissingEvent {
                    event: event.clone(),
                    path: enable,
                });
            }
            instance.events.push(event.clone());
        }
        for event in &spec.optional_events {
            if instance.event_file(event, "enable").exists() {
                instance.events.push(event.clone());
            }
        }
        for event in instance.events.clone() {
            instance.write(&format!("events/{event}/enable"), "1")?;
        }
        instance.write("tracing_on", "1")?;
        Ok(instance)
    }

    /// The instance's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The events enabled (`system/name`): the required ones, then the
    /// optional ones the kernel has.
    pub fn events(&self) -> &[String] {
        &self.events
    }

    /// The `trace_pipe_raw` file of each recorded CPU, by CPU.
    pub fn trace_pipes_raw(&self) -> Vec<(usize, PathBuf)> {
        self.cpus
            .iter()
            .map(|&cpu| {
                (
                    cpu,
                    self.dir.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw")),
                )
            })
            .collect()
    }

    /// Each recorded CPU's `trace_pipe_raw`, opened for non-blocking reads
    /// (a read with nothing to read fails with `WouldBlock`). The files
    /// must be closed before the instance is removed.
    pub fn open_pipes_raw(&self) -> Result<Vec<(usize, fs::File)>, TraceInstanceError> {
        use std::os::unix::fs::OpenOptionsExt;
        self.trace_pipes_raw()
            .into_iter()
            .map(|(cpu, path)| {
                fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&path)
                    .map(|file| (cpu, file))
                    .map_err(|source| TraceInstanceError::File {
                        action: "open".to_string(),
                        path,
                        source,
                    })
            })
            .collect()
    }

    /// The `format` file of each enabled event, by event.
    pub fn event_formats(&self) -> Vec<(&str, PathBuf)> {
        self.events
            .iter()
            .map(|event| (event.as_str(), self.event_file(event, "format")))
            .collect()
    }

    /// Turns the instance off and removes it, saying why if it cannot (the
    /// kernel refuses while a file of the instance is open: EBUSY).
    pub fn close(mut self) -> Result<(), TraceInstanceError> {
        self.remove()
    }

    fn remove(&mut self) -> Result<(), TraceInstanceError> {
        if self.removed {
            return Ok(());
        }
        remove_instance_dir(&self.dir).map_err(|source| TraceInstanceError::File {
            action: "remove".to_string(),
            path: self.dir.clone(),
            source,
        })?;
        self.removed = true;
        Ok(())
    }

    fn event_file(&self, event: &str, file: &str) -> PathBuf {
        self.dir.join("events").join(event).join(file)
    }

    fn write(&self, file: &str, value: &str) -> Result<(), TraceInstanceError> {
        let path = self.dir.join(file);
        fs::write(&path, value).map_err(|source| TraceInstanceError::File {
            action: format!("write '{value}' to"),
            path,
            source,
        })
    }
}

impl Drop for TraceInstance {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// Removes the tracefs instance at `dir`: turns its tracing off, disables
/// its events, then removes the directory (which the kernel refuses while
/// one of its files is open). Also for a process that cleans up after a
/// killed run.
pub fn remove_instance_dir(dir: &Path) -> io::Result<()> {
    // Best effort: the removal itself is what must succeed.
    let _ = fs::write(dir.join("tracing_on"), "0");
    let _ = fs::write(dir.join("events/enable"), "0");
    fs::remove_dir(dir)
}

/// The kernel's text for a CPU set (`tracing_cpumask`): hexadecimal, in
/// comma-separated groups of 32 CPUs, the highest first; every group but
/// the first has 8 digits. `{0}` is `1`, `{0, 33}` is `2,00000001`.
pub fn cpumask_text(cpus: &[usize]) -> String {
    let groups = cpus.iter().max().map_or(1, |&highest| highest / 32 + 1);
    let mut words = vec![0u32; groups];
    for &cpu in cpus {
        words[cpu / 32] |= 1 << (cpu % 32);
    }
    let mut text = String::new();
    for (i, word) in words.iter().rev().enumerate() {
        if i == 0 {
            text.push_str(&format!("{word:x}"));
        } else {
            text.push_str(&format!(",{word:08x}"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn cpu_sets_are_written_as_the_kernel_reads_them() {
        assert_eq!(cpumask_text(&[0]), "1");
        assert_eq!(cpumask_text(&[0, 1, 3]), "b");
        assert_eq!(cpumask_text(&[31]), "80000000");
        assert_eq!(cpumask_text(&[0, 33]), "2,00000001");
        assert_eq!(cpumask_text(&[64]), "1,00000000,00000000");
        assert_eq!(cpumask_text(&[]), "0");
    }

    /// The tracing directory, when this process may make instances in it;
    /// else `None` after a SKIPPED line saying why.
    fn tracing_dir_for_test(test: &str) -> Option<PathBuf> {
        if !rustix::process::geteuid().is_root() {
            println!("SKIPPED {test}: not root");
            return None;
        }
        match crate::tracefs::tracing_dir() {
            Some(dir) if dir.join("instances").is_dir() => Some(dir),
            _ => {
                println!("SKIPPED {test}: no tracefs with instances is mounted");
                None
            }
        }
    }

    /// A spec for CPU 0 under a name no other test uses.
    fn test_spec() -> InstanceSpec {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let mut spec = InstanceSpec::for_run(&[0], 64);
        spec.name = format!(
            "rtlat-{}-test{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        spec
    }

    fn read(path: &Path) -> String {
        fs::read_to_string(path).unwrap()
    }

    /// What of the global trace an instance must leave alone.
    fn global_state(dir: &Path) -> Vec<String> {
        ["tracing_on", "current_tracer", "set_event", "trace_clock"]
            .iter()
            .map(|file| read(&dir.join(file)))
            .collect()
    }

    #[test]
    fn an_instance_is_configured_as_asked_and_removed_on_drop() {
        let Some(tracing) = tracing_dir_for_test("an_instance_is_configured_as_asked") else {
            return;
        };
        // tracefs's marker test turns global tracing on and off meanwhile.
        let _global = crate::tracefs::GLOBAL_TRACE_STATE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let global_before = global_state(&tracing);
        let spec = test_spec();
        let instance = TraceInstance::create(&tracing, &spec).unwrap();
        let dir = instance.dir().to_path_buf();
        assert_eq!(dir, tracing.join("instances").join(&spec.name));
        assert!(read(&dir.join("trace_clock")).contains("[mono]"));
        assert_eq!(read(&dir.join("tracing_cpumask")).trim(), "1");
        // The kernel rounds the size up to whole pages of events.
        let buffer_kb: u32 = read(&dir.join("buffer_size_kb")).trim().parse().unwrap();
        assert!((64..=72).contains(&buffer_kb), "{buffer_kb} KiB");
        assert_eq!(read(&dir.join("tracing_on")).trim(), "1");
        assert_eq!(&instance.events()[..REQUIRED_EVENTS.len()], REQUIRED_EVENTS);
        for (event, format) in instance.event_formats() {
            let enable = dir.join("events").join(event).join("enable");
            assert_eq!(read(&enable).trim(), "1", "{event}");
            assert!(read(&format).contains("format:"), "{event}");
        }
        let pipes = instance.trace_pipes_raw();
        assert_eq!(pipes, [(0, dir.join("per_cpu/cpu0/trace_pipe_raw"))]);
        assert!(pipes[0].1.exists());
        assert_eq!(global_state(&tracing), global_before);
        drop(instance);
        assert!(!dir.exists(), "removed on drop");
        assert_eq!(global_state(&tracing), global_before);
    }

    #[test]
    fn close_removes_the_instance() {
        let Some(tracing) = tracing_dir_for_test("close_removes_the_instance") else {
            return;
        };
        let instance = TraceInstance::create(&tracing, &test_spec()).unwrap();
        let dir = instance.dir().to_path_buf();
        instance.close().unwrap();
        assert!(!dir.exists());
    }

    #[test]
    fn close_says_why_the_instance_cannot_be_removed() {
        let Some(tracing) = tracing_dir_for_test("close_says_why") else {
            return;
        };
        let instance = TraceInstance::create(&tracing, &test_spec()).unwrap();
        let dir = instance.dir().to_path_buf();
        let reader = fs::File::open(&instance.trace_pipes_raw()[0].1).unwrap();
        let error = instance.close().unwrap_err();
        assert!(
            matches!(&error, TraceInstanceError::File { source, .. }
                if source.raw_os_error() == Some(libc::EBUSY)),
            "{error:?}"
        );
        assert!(
            error.to_string().contains(&*dir.to_string_lossy()),
            "{error}"
        );
        drop(reader);
        remove_instance_dir(&dir).unwrap();
        assert!(!dir.exists());
    }

    #[test]
    fn a_missing_required_event_is_named_and_leaves_no_instance() {
        let Some(tracing) = tracing_dir_for_test("a_missing_required_event_is_named") else {
            return;
        };
        let mut spec = test_spec();
        spec.required_events
            .insert(2, "timer/no_such_event".to_string());
        spec.required_events
            .push("sched/neither_this_one".to_string());
        let error = TraceInstance::create(&tracing, &spec).unwrap_err();
        assert!(
            matches!(&error, TraceInstanceError::MissingEvent { event, .. } if event == "timer/no_such_event"),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("'timer/no_such_event'"),
            "{error}"
        );
        assert!(!tracing.join("instances").join(&spec.name).exists());
    }

    #[test]
    fn a_missing_optional_event_is_left_out() {
        let Some(tracing) = tracing_dir_for_test("a_missing_optional_event_is_left_out") else {
            return;
        };
        let mut spec = test_spec();
        spec.optional_events = vec!["irq/no_such_event".to_string()];
        let instance = TraceInstance::create(&tracing, &spec).unwrap();
        assert_eq!(instance.events(), REQUIRED_EVENTS);
    }

    #[test]
    fn an_instance_needs_a_cpu() {
        let mut spec = test_spec();
        spec.cpus.clear();
        assert!(matches!(
            TraceInstance::create(Path::new("/nonexistent"), &spec),
            Err(TraceInstanceError::NoCpu)
        ));
    }
}
