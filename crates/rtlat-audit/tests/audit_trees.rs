//! The audit against fixture trees (`tests/fixtures/tuned-rt`, a tuned
//! PREEMPT_RT machine, and `tests/fixtures/desktop`, a desktop set up for
//! everything but real-time work), trees built in the test, and the real
//! machine.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rtlat_audit::{Audit, AuditError, CHECK_IDS, Finding, Request, Status, audit};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn request(cpus: Option<Vec<usize>>, priority: u8) -> Request {
    Request {
        cpus,
        priority: Some(priority),
        interval_us: 1000,
    }
}

fn find<'a>(audit: &'a Audit, id: &str) -> &'a Finding {
    audit
        .checks
        .iter()
        .find(|finding| finding.id == id)
        .unwrap_or_else(|| panic!("no finding {id}"))
}

fn ids(audit: &Audit) -> Vec<&'static str> {
    audit.checks.iter().map(|finding| finding.id).collect()
}

/// Each check once, in the order of CHECK_IDS.
fn assert_every_check_once(audit: &Audit) {
    assert_eq!(ids(audit), CHECK_IDS);
    let distinct: BTreeSet<&str> = CHECK_IDS.iter().copied().collect();
    assert_eq!(distinct.len(), CHECK_IDS.len(), "an id is listed twice");
}

/// warn and bad findings say why and what to do; the others do not.
fn assert_advice_where_flagged(audit: &Audit) {
    for finding in &audit.checks {
        let flagged = finding.status >= Status::Warn;
        for (name, text) in [("why", &finding.why), ("fix", &finding.fix)] {
            match text {
                Some(text) => {
                    assert!(
                        flagged,
                        "{} is {:?} but has a {name}",
                        finding.id, finding.status
                    );
                    assert!(!text.trim().is_empty(), "{}: empty {name}", finding.id);
                }
                None => assert!(
                    !flagged,
                    "{} is {:?} without a {name}",
                    finding.id, finding.status
                ),
            }
        }
        assert!(
            !finding.fact.trim().is_empty(),
            "{}: empty fact",
            finding.id
        );
    }
}

/// Checks where nothing can be wrong, so `info` at best.
const INFO_ONLY: &[&str] = &[
    "kernel.cmdline",
    "cpufreq.driver",
    "idle.driver",
    "idle.parameters",
];

#[test]
fn tuned_rt_machine_passes_every_check() {
    let audit = audit(&fixture("tuned-rt"), &request(Some(vec![2, 3]), 95)).expect("audit");
    assert_every_check_once(&audit);
    assert_advice_where_flagged(&audit);
    for finding in &audit.checks {
        let expected = if INFO_ONLY.contains(&finding.id) {
            Status::Info
        } else {
            Status::Ok
        };
        assert_eq!(finding.status, expected, "{}: {}", finding.id, finding.fact);
    }
    assert_eq!(audit.worst(), Status::Info);
    assert_eq!(audit.counts(), vec![(Status::Ok, 35), (Status::Info, 4)]);
    assert_eq!(audit.summary(), "audit: 35 ok, 4 info");
    assert_eq!(audit.measured_cpus, vec![2, 3]);
    assert_eq!(
        audit.suggested_command,
        "rtlat cyclictest -m -a 2-3 -t 2 -p 95 -i 1000 --mainaffinity=0"
    );
}

#[test]
fn tuned_rt_does_not_count_the_invoking_process_as_competition() {
    // proc/self -> 4242, whose thread runs FIFO 99 on every CPU.
    let audit = audit(&fixture("tuned-rt"), &request(Some(vec![2, 3]), 95)).expect("audit");
    let competition = find(&audit, "competition.rt_threads");
    assert_eq!(competition.status, Status::Ok);
    assert!(!competition.fact.contains("4242"), "{}", competition.fact);
    // The user thread at FIFO 40 on CPUs 2-3 is below -p 95, but not at -p 40.
    assert!(
        competition.fact.contains("1 below it"),
        "{}",
        competition.fact
    );
    let audit = audit_at(&fixture("tuned-rt"), Some(vec![2, 3]), 40);
    let competition = find(&audit, "competition.rt_threads");
    assert_eq!(competition.status, Status::Bad);
    assert!(
        competition.fact.contains("robot-io (pid 701) FIFO 40"),
        "{}",
        competition.fact
    );
    assert_eq!(competition.cpus, vec![2, 3]);
    assert!(
        audit.suggested_command.contains(" -p 41 "),
        "{}",
        audit.suggested_command
    );
}

fn audit_at(root: &Path, cpus: Option<Vec<usize>>, priority: u8) -> Audit {
    audit(root, &request(cpus, priority)).expect("audit")
}

#[test]
fn tuned_rt_environment_has_the_contract_keys_and_values() {
    let audit = audit_at(&fixture("tuned-rt"), Some(vec![2, 3]), 95);
    let env = &audit.environment;
    assert_eq!(env.rtlat_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(env.kernel.release.as_deref(), Some("6.12.9-rt-amd64"));
    assert_eq!(env.kernel.preemption.as_deref(), Some("PREEMPT_RT"));
    assert_eq!(env.kernel.hz, Some(1000));
    assert_eq!(env.kernel.nohz_full, Some(true));
    assert_eq!(env.cpu.count, Some(4));
    assert_eq!(env.cpu.smt, Some(false));
    assert_eq!(env.measured_cpus, vec![2, 3]);
    assert_eq!(env.cpus.len(), 2);
    assert_eq!(env.cpus[0].governor.as_deref(), Some("performance"));
    assert_eq!(env.cpus[0].idle_states.len(), 4);
    assert!(env.cpus[0].idle_states[3].disabled);
    assert_eq!(env.cpus[0].idle_states[3].exit_latency_us, 133);
    assert_eq!(env.clocksource.as_deref(), Some("tsc"));
    assert_eq!(env.isolation.isolated.as_deref(), Some("2-3"));
    assert_eq!(
        env.isolation.isolcpus.as_deref(),
        Some("domain,managed_irq,2-3")
    );
    assert_eq!(env.isolation.irqaffinity.as_deref(), Some("0-1"));
    assert_eq!(env.sched_rt_runtime_us, Some(-1));
    assert_eq!(env.virtualization.hypervisor, Some(false));
    assert_eq!(env.virtualization.steal_time_seen, Some(false));
    assert_eq!(env.limits.rlimit_rtprio.as_deref(), Some("unlimited"));
    assert_eq!(env.limits.cap_sys_nice, Some(true));

    let json = serde_json::to_value(&audit).expect("serialises");
    let keys = |value: &serde_json::Value| -> Vec<String> {
        let mut keys: Vec<String> = value.as_object().expect("object").keys().cloned().collect();
        keys.sort();
        keys
    };
    assert_eq!(keys(&json), ["checks", "environment", "suggested_command"]);
    let env = &json["environment"];
    assert_eq!(
        keys(env),
        [
            "clocksource",
            "cpu",
            "cpus",
            "isolation",
            "kernel",
            "limits",
            "measured_cpus",
            "rtlat_version",
            "sched_rt_runtime_us",
            "virtualization"
        ]
    );
    assert_eq!(
        keys(&env["kernel"]),
        [
            "cmdline",
            "hz",
            "nohz_full",
            "preemption",
            "release",
            "version"
        ]
    );
    assert_eq!(keys(&env["cpu"]), ["count", "model", "smt"]);
    assert_eq!(keys(&env["cpus"][0]), ["cpu", "governor", "idle_states"]);
    assert_eq!(
        keys(&env["cpus"][0]["idle_states"][0]),
        ["disabled", "exit_latency_us", "name"]
    );
    assert_eq!(
        keys(&env["isolation"]),
        [
            "irqaffinity",
            "isolated",
            "isolcpus",
            "nohz_full",
            "rcu_nocbs"
        ]
    );
    assert_eq!(
        keys(&env["virtualization"]),
        ["hypervisor", "steal_time_seen"]
    );
    assert_eq!(
        keys(&env["limits"]),
        [
            "cap_ipc_lock",
            "cap_sys_nice",
            "rlimit_memlock",
            "rlimit_rtprio"
        ]
    );
    assert_eq!(
        keys(&json["checks"][0]),
        ["fact", "fix", "id", "status", "why"]
    );
    assert_eq!(json["checks"][0]["status"], "ok");
    // The record reads back.
    let back: rtlat_audit::Environment = serde_json::from_value(env.clone()).expect("deserialises");
    assert_eq!(&back, &audit.environment);
}

#[test]
fn tuned_rt_without_cpus_measures_every_allowed_cpu_and_suggests_the_isolated_ones() {
    let audit = audit(
        &fixture("tuned-rt"),
        &Request {
            cpus: None,
            priority: None,
            interval_us: 1000,
        },
    )
    .expect("audit");
    assert_eq!(audit.measured_cpus, vec![0, 1, 2, 3]);
    let isolcpus = find(&audit, "isolation.isolcpus");
    assert_eq!(isolcpus.status, Status::Warn);
    assert_eq!(isolcpus.cpus, vec![0, 1]);
    // No -p: every real-time thread outranks SCHED_OTHER measuring threads.
    assert_eq!(
        find(&audit, "competition.kernel_threads").status,
        Status::Warn
    );
    assert_eq!(
        audit.suggested_command,
        "rtlat cyclictest -m -a 2-3 -t 2 -p 95 -i 1000 --mainaffinity=0"
    );
}

#[test]
fn desktop_flags_each_problem_with_its_id() {
    use Status::{Bad, Info, Ok, Warn};
    let audit = audit_at(&fixture("desktop"), Some(vec![0, 1]), 95);
    assert_every_check_once(&audit);
    assert_advice_where_flagged(&audit);
    let expected = [
        ("kernel.preemption", Bad),
        ("kernel.hz", Info),
        ("kernel.nohz_full", Warn),
        ("kernel.cmdline", Info),
        ("isolation.isolcpus", Warn),
        ("isolation.nohz_full", Warn),
        ("isolation.rcu_nocbs", Warn),
        ("isolation.irqaffinity", Warn),
        ("smt.active", Info),
        ("smt.siblings", Warn),
        ("cpufreq.driver", Info),
        ("cpufreq.governor", Warn),
        ("cpufreq.boost", Warn),
        ("cpufreq.energy_preference", Warn),
        ("thermal.throttle", Warn),
        ("idle.driver", Info),
        ("idle.states", Warn),
        ("idle.parameters", Info),
        ("clocksource.current", Bad),
        ("clocksource.tsc", Warn),
        ("sched.rt_throttling", Warn),
        ("sched.timer_migration", Warn),
        ("sched.numa_balancing", Warn),
        ("memory.thp", Warn),
        ("memory.swap", Warn),
        ("memory.ksm", Warn),
        ("watchdog.nmi", Warn),
        ("watchdog.soft_lockup", Warn),
        ("irq.affinity", Warn),
        ("irq.irqbalance", Warn),
        ("competition.rt_threads", Bad),
        ("competition.kernel_threads", Ok),
        ("virt.hypervisor", Ok),
        ("virt.steal", Ok),
        ("smi.counting", Info),
        ("limits.rtprio", Bad),
        ("limits.memlock", Warn),
        ("limits.cap_sys_nice", Warn),
        ("limits.cap_ipc_lock", Warn),
    ];
    let got: Vec<(&str, Status)> = audit.checks.iter().map(|f| (f.id, f.status)).collect();
    assert_eq!(got, expected);
    assert_eq!(audit.worst(), Bad);
    assert_eq!(
        audit.summary(),
        "audit: 3 ok, 7 info, 25 warn, 4 bad: not a PREEMPT_RT kernel, so wake-up latencies \
         of milliseconds are expected under load"
    );
}

#[test]
fn desktop_findings_name_what_they_saw() {
    let audit = audit_at(&fixture("desktop"), Some(vec![0, 1]), 95);
    let fact = |id: &str| find(&audit, id).fact.clone();
    let fix = |id: &str| find(&audit, id).fix.clone().unwrap_or_default();
    assert_eq!(fact("kernel.preemption"), "PREEMPT_DYNAMIC (voluntary)");
    assert_eq!(
        fact("kernel.hz"),
        "HZ=250: the tick comes every 4 ms; timers are high-resolution and do not wait for it"
    );
    assert!(fact("cpufreq.governor").contains("powersave on CPU 0"));
    assert!(fact("cpufreq.governor").contains("ondemand on CPU 1"));
    assert_eq!(
        fix("cpufreq.governor"),
        "cpupower -c 0-1 frequency-set -g performance"
    );
    assert_eq!(find(&audit, "thermal.throttle").cpus, vec![1]);
    assert!(fact("idle.states").contains("C6 (170 µs) on CPU 0"));
    assert!(!fact("idle.states").contains("C1E"));
    assert!(fix("idle.states").contains("cpupower -c 0-1 idle-set -D 100"));
    assert!(fix("idle.states").contains("--deepest-idle-state 2"));
    assert!(fact("clocksource.current").starts_with("hpet"));
    assert_eq!(
        fix("sched.rt_throttling"),
        "sysctl kernel.sched_rt_runtime_us=-1"
    );
    assert!(fact("memory.swap").contains("524288 KiB"));
    // IRQ 128 is on CPU 2, not measured; IRQ 130 has only smp_affinity_list.
    let irqs = fact("irq.affinity");
    assert!(irqs.contains("9 acpi on CPU 1"), "{irqs}");
    assert!(
        irqs.contains("130 snd_hda_intel:card0 on CPU 0-1"),
        "{irqs}"
    );
    assert!(!irqs.contains("128"), "{irqs}");
    assert!(fix("irq.affinity").contains("echo 2-3 > /proc/irq/N/smp_affinity_list"));
    assert!(fact("irq.irqbalance").contains("pid 900"));
    let competition = find(&audit, "competition.rt_threads");
    assert!(
        competition.fact.contains("jackd-rt (pid 1305) FIFO 99"),
        "{}",
        competition.fact
    );
    assert!(
        !competition.fact.contains("data-loop"),
        "RR 20 is below -p 95"
    );
    assert!(
        !competition.fact.contains("5000"),
        "the invoking process counts"
    );
    assert_eq!(competition.cpus, vec![0, 1]);
    assert_eq!(find(&audit, "smt.siblings").cpus, vec![0, 1]);
    assert!(fact("limits.rtprio").contains("RLIMIT_RTPRIO 0"));
    // A FIFO 99 thread on the measured CPUs: the highest priority there is;
    // every other CPU is a sibling of a measured one: no --mainaffinity.
    assert_eq!(
        audit.suggested_command,
        "rtlat cyclictest -m -a 0-1 -t 2 -p 99 -i 1000"
    );
    assert!(fact("isolation.isolcpus").contains("no --mainaffinity"));
}

#[test]
fn desktop_kernel_threads_compete_below_their_priority() {
    let audit = audit_at(&fixture("desktop"), Some(vec![1]), 40);
    let kernel = find(&audit, "competition.kernel_threads");
    assert_eq!(kernel.status, Status::Warn);
    assert!(
        kernel.fact.contains("irq/9-acpi (pid 95) FIFO 50"),
        "{}",
        kernel.fact
    );
    assert!(
        !kernel.fact.contains("migration"),
        "stoppers are not competition"
    );
    assert!(
        !kernel.fact.contains("ksoftirqd/0"),
        "CPU 0 is not measured"
    );
    assert_eq!(
        kernel.fix.as_deref(),
        Some("measure with -p 51 or higher, or move the interrupts off the measured CPUs")
    );
    let user = find(&audit, "competition.rt_threads");
    assert!(
        !user.fact.contains("data-loop"),
        "RR 20 is below -p 40: {}",
        user.fact
    );
    // At its own priority it competes ("at or above").
    let audit = audit_at(&fixture("desktop"), Some(vec![1]), 20);
    let user = find(&audit, "competition.rt_threads");
    assert!(
        user.fact.contains("data-loop.0 (pid 1410) RR 20"),
        "{}",
        user.fact
    );
}

#[test]
fn idle_states_are_judged_against_the_interval() {
    let long = Request {
        cpus: Some(vec![0, 1]),
        priority: Some(95),
        interval_us: 10_000,
    };
    let audit = audit(&fixture("desktop"), &long).expect("audit");
    assert_eq!(find(&audit, "idle.states").status, Status::Ok);
    assert!(audit.suggested_command.contains(" -i 10000"));
}

#[test]
fn a_version_naming_no_preemption_model_is_not_preempt_rt() {
    let root = tempfile::tempdir().expect("temp dir");
    let kernel = root.path().join("proc/sys/kernel");
    std::fs::create_dir_all(&kernel).expect("mkdir");
    std::fs::write(
        kernel.join("version"),
        "#1 SMP Tue Jan 7 10:00:00 UTC 2025\n",
    )
    .expect("write");
    let audit = audit(root.path(), &request(None, 95)).expect("audit");
    let preemption = find(&audit, "kernel.preemption");
    assert_eq!(preemption.status, Status::Bad, "{}", preemption.fact);
    assert!(
        preemption
            .fact
            .starts_with("PREEMPT_NONE or PREEMPT_VOLUNTARY")
    );
    assert_eq!(audit.environment.kernel.preemption, None);
}

#[test]
fn a_missing_root_is_an_error() {
    let err =
        audit(Path::new("/nonexistent/rtlat-audit"), &Request::default()).expect_err("no root");
    assert!(matches!(err, AuditError::Root { .. }), "{err:?}");
    assert_eq!(err.to_string(), "/nonexistent/rtlat-audit: not found");

    let file = tempfile::NamedTempFile::new().expect("temp file");
    let err = audit(file.path(), &Request::default()).expect_err("a file");
    assert_eq!(
        err.to_string(),
        format!("{}: not a directory", file.path().display())
    );
}

#[test]
fn a_cpu_that_is_not_present_is_an_error() {
    let err = audit(&fixture("tuned-rt"), &request(Some(vec![2, 7]), 95)).expect_err("CPU 7");
    assert!(
        matches!(err, AuditError::CpuNotPresent { cpu: 7, .. }),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "CPU 7 is not present (present: 0-3)");
}

#[test]
fn an_empty_tree_gives_unknown_findings_with_paths() {
    let root = tempfile::tempdir().expect("temp dir");
    let audit = audit(root.path(), &request(None, 95)).expect("audit");
    assert_every_check_once(&audit);
    assert_advice_where_flagged(&audit);
    for id in [
        "kernel.preemption",
        "kernel.cmdline",
        "clocksource.current",
        "memory.swap",
        "limits.rtprio",
    ] {
        let finding = find(&audit, id);
        assert_eq!(finding.status, Status::Unknown, "{id}: {}", finding.fact);
        assert!(
            finding.fact.contains(&root.path().display().to_string()),
            "{id}: {}",
            finding.fact
        );
    }
    assert!(
        find(&audit, "kernel.cmdline")
            .fact
            .contains("proc/cmdline unreadable (not found)")
    );
    assert!(audit.measured_cpus.is_empty());
    assert_eq!(audit.environment.kernel.release, None);
    assert_eq!(
        audit.suggested_command,
        "rtlat cyclictest -m -t -p 95 -i 1000"
    );
    assert!(audit.summary().starts_with("audit: "));
}

#[test]
fn a_virtual_machine_with_steal_time_is_flagged() {
    let root = tempfile::tempdir().expect("temp dir");
    let write = |relative: &str, text: &str| {
        let path = root.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("sys/devices/system/cpu/present", "0-1\n");
    write("sys/devices/system/cpu/online", "0-1\n");
    write(
        "proc/cpuinfo",
        "vendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: tsc constant_tsc nonstop_tsc hypervisor\n",
    );
    write(
        "proc/stat",
        "cpu  1 2 3 4 5 6 7 30 0 0\ncpu0 1 2 3 4 5 6 7 0 0 0\ncpu1 1 2 3 4 5 6 7 30 0 0\n",
    );
    let audit = audit(root.path(), &request(Some(vec![0, 1]), 95)).expect("audit");
    assert_eq!(find(&audit, "virt.hypervisor").status, Status::Warn);
    let steal = find(&audit, "virt.steal");
    assert_eq!(steal.status, Status::Warn);
    assert_eq!(steal.cpus, vec![1]);
    assert!(steal.fact.contains("30 ticks on CPU 1"), "{}", steal.fact);
    assert_eq!(audit.environment.virtualization.hypervisor, Some(true));
    assert_eq!(audit.environment.virtualization.steal_time_seen, Some(true));
    assert_eq!(find(&audit, "smi.counting").status, Status::Info);
}

#[test]
fn the_real_machine_audit_completes_with_every_check() {
    let started = std::time::Instant::now();
    let audit = audit(
        Path::new("/"),
        &Request {
            cpus: None,
            priority: Some(95),
            interval_us: 1000,
        },
    )
    .expect("audit of /");
    // A figure for the log, not an assertion: the machine is shared.
    println!(
        "audit of / took {:.2} ms (debug build)",
        started.elapsed().as_secs_f64() * 1e3
    );
    assert_every_check_once(&audit);
    assert_advice_where_flagged(&audit);
    assert!(!audit.measured_cpus.is_empty());
    assert!(audit.suggested_command.starts_with("rtlat cyclictest -m "));
    serde_json::to_string(&audit).expect("serialises");
}

#[test]
fn one_measured_cpu_is_named_in_the_singular() {
    let audit = audit_at(&fixture("desktop"), Some(vec![1]), 95);
    let facts: Vec<&str> = audit.checks.iter().map(|f| f.fact.as_str()).collect();
    assert!(facts.iter().all(|f| !f.contains("CPUs 1")), "{facts:#?}");
    assert!(
        find(&audit, "isolation.isolcpus")
            .fact
            .contains("measured CPU 1 not isolated"),
        "{}",
        find(&audit, "isolation.isolcpus").fact
    );
    for (id, verb) in [
        ("isolation.nohz_full", "measured CPU 1 keeps the tick"),
        (
            "isolation.rcu_nocbs",
            "measured CPU 1 runs its own RCU callbacks",
        ),
    ] {
        let fact = &find(&audit, id).fact;
        assert!(fact.contains(verb), "{fact}");
    }
    let tuned = audit_at(&fixture("tuned-rt"), Some(vec![2, 3]), 95);
    assert!(
        find(&tuned, "idle.states").fact.contains("of CPUs 2-3"),
        "{}",
        find(&tuned, "idle.states").fact
    );
}

#[test]
fn endless_blocking_and_huge_files_in_a_tree_are_refused_not_read() {
    use std::io::Write;
    let root = tempfile::tempdir().expect("temp dir");
    let dir = |relative: &str| {
        let path = root.path().join(relative);
        std::fs::create_dir_all(&path).unwrap();
        path
    };
    // An endless device and a FIFO nobody writes: read, they would never
    // end or never open.
    std::os::unix::fs::symlink("/dev/zero", dir("proc").join("cmdline")).unwrap();
    let fifo = root.path().join("proc/stat");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // A sparse file over the limit.
    let big = std::fs::File::create(dir("proc/sys/kernel").join("version")).unwrap();
    big.set_len(17 << 20).unwrap();
    // A compressed config that inflates beyond the limit.
    let gz = std::fs::File::create(root.path().join("proc/config.gz")).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(gz, flate2::Compression::fast());
    let line = b"# CONFIG_PADDING is not set\n";
    for _ in 0..(17 << 20) / line.len() {
        encoder.write_all(line).unwrap();
    }
    encoder.finish().unwrap();

    let audit = audit(root.path(), &request(None, 95)).expect("audit");
    assert_every_check_once(&audit);
    for (id, said) in [
        ("kernel.cmdline", "cmdline unreadable (not a regular file)"),
        ("virt.steal", "stat unreadable (not a regular file)"),
        (
            "kernel.preemption",
            "version unreadable (larger than 16 MiB)",
        ),
        ("kernel.hz", "config.gz unreadable (larger than 16 MiB)"),
    ] {
        let finding = find(&audit, id);
        assert_eq!(finding.status, Status::Unknown, "{id}: {}", finding.fact);
        assert!(finding.fact.contains(said), "{id}: {}", finding.fact);
    }
}

/// A tree of `cpus` online CPUs (`siblings`: thread_siblings_list of
/// each, none when empty) booted with `cmdline`.
fn machine_of(cpus: usize, siblings: &[&str], cmdline: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    let write = |relative: &str, text: &str| {
        let path = root.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    let all = if cpus == 1 {
        "0".to_owned()
    } else {
        format!("0-{}", cpus - 1)
    };
    for file in ["present", "possible", "online"] {
        write(
            &format!("sys/devices/system/cpu/{file}"),
            &format!("{all}\n"),
        );
    }
    write(
        "proc/self/status",
        &format!("Name:\taudit\nCpus_allowed_list:\t{all}\n"),
    );
    write("proc/cmdline", &format!("{cmdline}\n"));
    for (cpu, list) in siblings.iter().enumerate() {
        write(
            &format!("sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"),
            &format!("{list}\n"),
        );
    }
    root
}

/// The CPUs of a kernel CPU list (`1,3`, `1-3`).
fn cpus_of(list: &str) -> Vec<usize> {
    list.split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<usize>>(),
            None => vec![part.parse().unwrap()],
        })
        .collect()
}

/// The value after `key` in `text` (up to a space or a comma).
fn value_after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let start = text.find(key)? + key.len();
    let rest = &text[start..];
    Some(
        rest.split([' ', '\n'])
            .next()
            .unwrap()
            .trim_end_matches(','),
    )
}

#[test]
fn the_advice_keeps_a_housekeeping_cpu_on_2_cpus_and_more() {
    for (cpus, siblings, kept, measured, main) in [
        (2, &[][..], vec![0], vec![1], Some(0)),
        (4, &[][..], vec![0], vec![1, 2, 3], Some(0)),
        (8, &[][..], vec![0], vec![1, 2, 3, 4, 5, 6, 7], Some(0)),
        // SMT: CPU 0's sibling 2 stays with it.
        (
            4,
            &["0,2", "1,3", "0,2", "1,3"][..],
            vec![0, 2],
            vec![1, 3],
            Some(0),
        ),
        // One core of two threads: only CPU 0 stays, and as the measured
        // CPU's sibling it does not take the main thread.
        (2, &["0-1", "0-1"][..], vec![0], vec![1], None),
    ] {
        let root = machine_of(cpus, siblings, "ro quiet");
        let every: Vec<usize> = (0..cpus).collect();
        for asked in [None, Some(every.clone())] {
            let context = format!("{cpus} CPUs, siblings {siblings:?}, --cpus {asked:?}");
            let audit = audit(root.path(), &request(asked, 95)).expect("audit");
            let command = &audit.suggested_command;
            let a = cpus_of(value_after(command, " -a ").expect(command));
            assert_eq!(a, measured, "{context}: {command}");
            assert!(
                command.contains(&format!(" -t {} ", measured.len())),
                "{context}: {command}"
            );
            let main_cpu = value_after(command, "--mainaffinity=").map(|v| v.parse().unwrap());
            assert_eq!(main_cpu, main, "{context}: {command}");
            for (id, params) in [
                (
                    "isolation.isolcpus",
                    &["isolcpus=", "nohz_full=", "rcu_nocbs="][..],
                ),
                ("isolation.nohz_full", &["nohz_full="][..]),
                ("isolation.rcu_nocbs", &["rcu_nocbs="][..]),
            ] {
                let fix = find(&audit, id).fix.clone().expect("a fix");
                for param in params {
                    let list = cpus_of(value_after(&fix, param).expect(&fix));
                    assert_eq!(list, measured, "{context}: {id}: {fix}");
                }
                assert!(fix.contains("for housekeeping"), "{context}: {fix}");
            }
            let fix = find(&audit, "isolation.irqaffinity").fix.clone().unwrap();
            let target = cpus_of(value_after(&fix, "irqaffinity=").expect(&fix));
            assert_eq!(target, kept, "{context}: {fix}");
        }
    }
}

#[test]
fn every_cpu_isolated_already_still_leaves_one_out_of_the_suggestion() {
    let root = machine_of(4, &[], "ro isolcpus=0-3");
    std::fs::write(root.path().join("sys/devices/system/cpu/isolated"), "0-3\n").unwrap();
    let audit = audit(root.path(), &request(None, 95)).expect("audit");
    assert_eq!(
        audit.suggested_command,
        "rtlat cyclictest -m -a 1-3 -t 3 -p 95 -i 1000 --mainaffinity=0"
    );
}

#[test]
fn one_cpu_is_too_small_to_isolate_and_the_advice_says_so() {
    let root = machine_of(1, &[], "ro quiet");
    for asked in [None, Some(vec![0])] {
        let audit = audit(root.path(), &request(asked, 95)).expect("audit");
        assert_eq!(
            audit.suggested_command,
            "rtlat cyclictest -m -a 0 -t 1 -p 95 -i 1000"
        );
        let isolcpus = find(&audit, "isolation.isolcpus");
        assert!(
            isolcpus
                .fact
                .contains("one CPU only: nothing can be isolated"),
            "{}",
            isolcpus.fact
        );
        for id in [
            "isolation.isolcpus",
            "isolation.nohz_full",
            "isolation.rcu_nocbs",
            "isolation.irqaffinity",
        ] {
            let fix = find(&audit, id).fix.clone().expect("a fix");
            assert!(fix.starts_with("none: one CPU only"), "{id}: {fix}");
            assert!(!fix.contains('='), "{id} suggests a parameter: {fix}");
        }
    }
}
