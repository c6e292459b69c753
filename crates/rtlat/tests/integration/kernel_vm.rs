//! What the test machine's kernel cannot show, on a kernel users run:
//! Debian 12's PREEMPT_RT kernel (6.1), booted in qemu by `ci/kernel-vm`
//! with this test run's `rtlat` inside, a machine of its own whose
//! settings a test may change. One boot runs every case (about 30 s; qemu
//! emulates the CPUs):
//! - `rtlat hwlatdetect` over the real hwlat tracer (the test machines
//!   have none): a run to its end with `--json` and `--report`, the 2.10
//!   dialect with `--watch` on one CPU, a SIGINT and a SIGKILL (the
//!   janitor); after each, the tracer's settings must be as before. Under
//!   emulation the gaps it records are large and many.
//! - SCHED_DEADLINE refused by the kernel for a cause no test may set up
//!   on a shared machine, a cpuset narrower than the root domain
//!   (cyclicdeadline, pi_stress's deadline thread): one line naming the
//!   cause, exit 1, each.
//!
//! Without the kernel in the cache (`ci/kernel-vm install`) or qemu, it
//! says SKIPPED.

use std::process::Command;
use std::time::Duration;

use crate::doc_links::workspace;
use crate::support::{rtlat_path, run_with_timeout};

/// What runs inside the machine (busybox's shell). Each section starts
/// with a `=== NAME` line; `restored NAME` follows when the settings read
/// after a case are those read before the first.
const SCRIPT: &str = r#"
T=/sys/kernel/tracing
settings() {
  for f in current_tracer tracing_thresh tracing_on tracing_cpumask \
           hwlat_detector/width hwlat_detector/window; do
    echo "$f=$(cat $T/$f)"
  done
}
restored() { settings | diff /tmp/before - >/dev/null && echo "restored $1"; }
# Waits (5 s at most) until the tracer is on or, after a SIGKILL, until
# the janitor has put the settings back.
until_tracing() {
  for i in $(seq 50); do grep -q hwlat $T/current_tracer && return; sleep 0.1; done
}
until_restored() {
  for i in $(seq 50); do settings | diff /tmp/before - >/dev/null && return; sleep 0.1; done
}
settings > /tmp/before
echo "=== tracers"; cat $T/available_tracers
echo "=== end"
rtlat hwlatdetect --duration=3 --threshold=10 --json=/tmp/h.json --report=/tmp/r.txt
echo "status $?"
restored end
echo "=== json"; cat /tmp/h.json
echo "=== report"; cat /tmp/r.txt
echo "=== watch"
rtlat hwlatdetect --rt-tests=2.10 --duration=2 --threshold=10 --width=400000 \
  --window=800000 --cpu-list=1 --watch
echo "status $?"
restored watch
echo "=== sigint"
rtlat hwlatdetect --duration=60 --threshold=10 & P=$!
until_tracing; kill -INT $P; wait $P
echo "status $?"
restored sigint
echo "=== sigkill"
rtlat hwlatdetect --duration=60 --threshold=10 --quiet & P=$!
until_tracing; kill -KILL $P; wait $P
echo "status $?"
until_restored
restored sigkill
# cyclicdeadline's period is 1 s: it first checks, once, that a job fits
# its runtime, and under emulation beside other tests one such check took
# 118 ms. (sched_rt_runtime_us at 0 is not tried: on PREEMPT_RT it also
# starves the kernel's threaded interrupts, and the machine stalled.)
echo "=== deadline cpuset"
mount -t cgroup2 none /sys/fs/cgroup
echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/one
echo 1 > /sys/fs/cgroup/one/cpuset.cpus
echo $$ > /sys/fs/cgroup/one/cgroup.procs
rtlat cyclicdeadline -t 1 -i 1000000 -D 1 -q
echo "status $?"
rtlat pi_stress -q -g 1 -D 1 -s id=high,policy=deadline,runtime=100000,deadline=1000000
echo "status $?"
echo "=== over"
"#;

/// The lines of section `name` of the machine's output.
fn section<'a>(log: &'a str, name: &str) -> Vec<&'a str> {
    let start = format!("=== {name}");
    log.lines()
        .map(str::trim_end)
        .skip_while(|l| *l != start)
        .skip(1)
        .take_while(|l| !l.starts_with("=== "))
        .collect()
}

/// The number after `prefix` on the line that starts with it.
fn figure(lines: &[&str], prefix: &str) -> Option<u64> {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(prefix))
        .and_then(|rest| rest.trim_end_matches("us").trim().parse().ok())
}

/// A section's lines as one line, runs of white space made one space
/// (messages are wrapped at 80 columns).
fn flat(lines: &[&str]) -> String {
    lines
        .iter()
        .flat_map(|l| l.split_whitespace())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The exit status a section's `status N` line gives.
fn status(lines: &[&str]) -> i32 {
    figure(lines, "status ").expect("a status line") as i32
}

/// A sample line (`ts: S.N, inner:N, outer:N` and, from 2.10, `, cpu:N,
/// count:N`): its fields by name.
fn sample(line: &str) -> Vec<(&str, &str)> {
    line.split(", ")
        .map(|field| {
            let (key, value) = field.split_once(':').unwrap_or_else(|| panic!("{line}"));
            (key, value.trim())
        })
        .collect()
}

#[test]
fn hwlat_tracer_and_deadline_refusals_on_debian_rt_kernel() {
    require_root!();
    if !cfg!(target_arch = "x86_64") {
        skip_note!(
            "SKIPPED (the machine is x86-64; this build is not): {}",
            function_name!()
        );
        return;
    }
    let vm = workspace().join("ci/kernel-vm");
    let ready = Command::new(&vm)
        .arg("dir")
        .output()
        .is_ok_and(|o| o.status.success());
    let qemu = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| d.join("qemu-system-x86_64").is_file())
    });
    if !ready || !qemu {
        skip_note!(
            "SKIPPED (needs qemu-system-x86 and the kernel: ci/kernel-vm install): {}",
            function_name!()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("test.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let boot = run_with_timeout(
        Command::new(&vm)
            .args(["boot", &script.to_string_lossy()])
            .arg(rtlat_path())
            .env("RTLAT_VM_TIMEOUT", "280"),
        Duration::from_secs(300),
    );
    let log = boot.stdout.replace('\r', "");
    assert!(
        log.contains("=== over\n") && log.contains("=== test.sh exit 0"),
        "the machine did not run the script to its end\n{}",
        boot.describe()
    );
    let context = || format!("the machine's output:\n{log}");
    assert!(
        section(&log, "tracers").concat().contains("hwlat"),
        "{}",
        context()
    );

    // To the end: C's report; status 1 exactly when the largest sample is
    // above the hardlimit (the threshold, 10 µs); the JSON, the --report
    // file and the text agree.
    let end = section(&log, "end");
    assert!(end.contains(&"restored end"), "{}", context());
    for line in [
        "hwlatdetect:  test duration 3 seconds",
        "        Latency threshold: 10us",
        "        Sample window:     1000000us",
        "        Sample width:      500000us",
        "Starting test",
        "test finished",
    ] {
        assert!(end.contains(&line), "{line:?}: {}", context());
    }
    let recorded = figure(&end, "Samples recorded: ").expect("Samples recorded");
    let max = figure(&end, "Max Latency: ");
    assert_eq!(status(&end), i32::from(max.is_some_and(|m| m > 10)));
    let json: serde_json::Value =
        serde_json::from_str(&section(&log, "json").join("\n")).expect("--json's document");
    let h = &json["hwlatdetect"];
    assert_eq!(h["samples_recorded"], recorded);
    let samples = h["samples"].as_array().unwrap();
    assert_eq!(samples.len() as u64, recorded);
    let largest = samples
        .iter()
        .map(|s| {
            s["inner_us"]
                .as_u64()
                .unwrap()
                .max(s["outer_us"].as_u64().unwrap())
        })
        .max();
    assert_eq!(largest, max, "{}", context());
    assert_eq!(h["max_latency_us"].as_u64(), max);
    let report = section(&log, "report");
    assert_eq!(report.len() as u64, recorded, "{}", context());
    assert!(report.iter().all(|l| l.starts_with("ts: ")), "{report:?}");
    assert_eq!(json["return_code"], status(&end));

    // 2.10 with --watch on CPU 1: each sample as it comes, from CPU 1
    // only (the cpumask was set), the window line one space further.
    let watch = section(&log, "watch");
    assert!(watch.contains(&"restored watch"), "{}", context());
    assert!(
        watch.contains(&"        Sample window:      800000us")
            && watch.contains(&"        Sample width:      400000us"),
        "{}",
        context()
    );
    let lines: Vec<&str> = watch
        .iter()
        .copied()
        .filter(|l| l.starts_with("ts: "))
        .collect();
    assert_eq!(
        Some(lines.len() as u64),
        figure(&watch, "Samples recorded: ")
    );
    for line in &lines {
        let fields = sample(line);
        let keys: Vec<&str> = fields.iter().map(|f| f.0).collect();
        assert_eq!(keys, ["ts", "inner", "outer", "cpu", "count"], "{line}");
        assert_eq!(fields[3].1, "1", "a sample from another CPU: {line}");
    }
    if !lines.is_empty() {
        assert!(
            watch.iter().any(|l| l.starts_with("MTBF: ")),
            "{}",
            context()
        );
    }

    // Stopped: the report of what was sampled, the settings back; killed:
    // the janitor puts them back.
    let sigint = section(&log, "sigint");
    assert!(
        sigint.contains(&"interrupted") && sigint.contains(&"test finished"),
        "{}",
        context()
    );
    assert!(sigint.contains(&"restored sigint"), "{}", context());
    let sigkill = section(&log, "sigkill");
    assert_eq!(status(&sigkill), 137, "{}", context());
    assert!(sigkill.contains(&"restored sigkill"), "{}", context());

    // SCHED_DEADLINE from a narrow cpuset: each tool says why in one
    // message, exit 1.
    let cpuset = flat(&section(&log, "deadline cpuset"));
    let cause = "cannot take SCHED_DEADLINE: Operation not permitted: this process may run \
                 on CPUs 1 only (taskset, or the cpuset '/one'), but a SCHED_DEADLINE task \
                 must be allowed on every CPU of its root domain (0-1)";
    assert_eq!(cpuset.matches(cause).count(), 2, "{}", context());
    assert_eq!(cpuset.matches("status 1").count(), 2, "{}", context());
}
