use super::*;

fn plan(kind: LoadKind, workers: usize) -> LoadPlan {
    LoadPlan {
        kinds: vec![KindPlan { kind, workers }],
        cpus: Vec::new(),
        nice: None,
        temp_root: std::env::temp_dir(),
        // The test binary is no fork helper: workers fork themselves.
        fork_helper: None,
    }
}

/// Runs the load for 300 ms: the duration is the point (a report of a
/// load that ran that long, its rate over it).
fn run_briefly(p: &LoadPlan) -> LoadReport {
    let running = LoadSet::start(p).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    running.stop()
}

/// Whether every worker of `running` has counted work, looked at every
/// millisecond for at most 10 s (a safety net, not a measure).
fn every_worker_counts(running: &Running) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if running.workers.iter().all(|w| w.counter.get() > 0) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn every_kind_does_measurable_work() {
    for kind in LoadKind::ALL {
        // (A hackbench round counts when it ends: one must have ended.)
        let running = LoadSet::start(&plan(kind, 1)).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(every_worker_counts(&running), "{kind} did nothing");
        let report = running.stop();
        assert!(report.errors.is_empty(), "{kind}: {:?}", report.errors);
        assert_eq!(report.kinds.len(), 1);
        assert!(report.kinds[0].ops > 0, "{kind} did nothing");
        assert!(report.elapsed >= Duration::from_millis(300));
        let line = &report.lines()[0];
        assert!(line.starts_with(&format!("{kind}: ")), "{line}");
        assert!(line.ends_with(" ops/s (1 worker)"), "{line}");
    }
}

#[test]
fn kinds_run_together_pinned_and_niced() {
    let cpus = rtlat_sys::affinity::allowed_cpus().unwrap();
    let p = LoadPlan {
        kinds: vec![
            KindPlan {
                kind: LoadKind::Cache,
                workers: 2,
            },
            KindPlan {
                kind: LoadKind::Syscalls,
                workers: 1,
            },
        ],
        cpus: vec![cpus[0]],
        nice: Some(10),
        temp_root: std::env::temp_dir(),
        fork_helper: None,
    };
    let report = run_briefly(&p);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.kinds[0].workers, 2);
    assert!(report.kinds.iter().all(|k| k.ops > 0));
    assert_eq!(report.lines()[0].rsplit_once('(').unwrap().1, "2 workers)");
}

/// Open descriptors of this process whose target lies in `dir`.
fn open_files_in(dir: &std::path::Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir))
        .count()
}

#[test]
fn io_writes_to_files_that_have_no_name() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let mut p = plan(LoadKind::Io, 2);
    p.temp_root = root.clone();
    let running = LoadSet::start(&p).unwrap();
    // Its files are in the directory, but nothing there has a name.
    assert_eq!(open_files_in(&root), 2);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    assert!(every_worker_counts(&running), "the io workers did nothing");
    let report = running.stop();
    assert!(report.kinds[0].ops > 0);
    assert_eq!(open_files_in(&root), 0);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}

#[test]
fn io_in_an_unwritable_directory_fails_before_starting() {
    let mut p = plan(LoadKind::Io, 1);
    p.temp_root = PathBuf::from("/proc");
    let e = LoadSet::start(&p).unwrap_err();
    assert!(matches!(e, LoadError::TempDir { .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with("io load: cannot create a file in '/proc': ")
    );
}

/// Ready workers wait at the gate: nothing is counted before it opens, so
/// one kind's long setup neither competes with another's loop nor inflates
/// its rate.
#[test]
fn no_worker_runs_before_every_worker_is_ready() {
    let mut p = plan(LoadKind::Cpu, 2);
    p.kinds.push(KindPlan {
        kind: LoadKind::Timers,
        workers: 1,
    });
    let mut running = LoadSet::ready(&p).unwrap();
    // The duration is the point: a worker that did not wait at the gate
    // would have counted something by then.
    std::thread::sleep(Duration::from_millis(200));
    let counted = |r: &Running| {
        r.workers
            .iter()
            .map(|w| w.counter.get())
            .collect::<Vec<_>>()
    };
    assert_eq!(counted(&running), [0, 0, 0]);
    assert!(!running.any_worker_ended());
    running.started = Instant::now();
    running.gate.open();
    assert!(every_worker_counts(&running), "{:?}", counted(&running));
    let report = running.stop();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
}

/// A start that is given up releases the waiting workers without a loop.
#[test]
fn a_cancelled_start_ends_its_ready_workers_unrun() {
    let mut running = LoadSet::ready(&plan(LoadKind::Cpu, 2)).unwrap();
    let errors = running.finish();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(running.workers.iter().all(|w| w.counter.get() == 0));
    assert!(running.any_worker_ended());
}

#[test]
fn the_start_gate_opens_or_cancels_once() {
    let gate = Arc::new(StartGate::new());
    let waiter = {
        let gate = Arc::clone(&gate);
        std::thread::spawn(move || gate.wait())
    };
    // The duration is the point: a gate that let the waiter through would
    // have done so by then.
    std::thread::sleep(Duration::from_millis(50));
    assert!(!waiter.is_finished());
    gate.open();
    gate.cancel();
    assert!(waiter.join().unwrap());
    assert!(gate.wait());
    let cancelled = StartGate::new();
    cancelled.cancel();
    cancelled.open();
    assert!(!cancelled.wait());
}

#[test]
fn a_worker_that_cannot_start_stops_the_others() {
    let mut p = plan(LoadKind::Cpu, 1);
    p.kinds.push(KindPlan {
        kind: LoadKind::Timers,
        workers: 1,
    });
    // CPU numbers this large do not exist: pinning fails.
    p.cpus = vec![0, 100_000];
    let e = LoadSet::start(&p).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("timers load, worker 0: cannot pin to CPU 100000"),
        "{e}"
    );
}

#[test]
fn specs_parse() {
    let r = |kind, workers| KindRequest { kind, workers };
    for (text, want) in [
        ("cpu", vec![r(LoadKind::Cpu, None)]),
        ("cpu:2", vec![r(LoadKind::Cpu, Some(2))]),
        (
            "cpu:1,memory,io:3",
            vec![
                r(LoadKind::Cpu, Some(1)),
                r(LoadKind::Memory, None),
                r(LoadKind::Io, Some(3)),
            ],
        ),
        (
            " fork : 4 , messaging ",
            vec![r(LoadKind::Fork, Some(4)), r(LoadKind::Messaging, None)],
        ),
        (
            "cache,syscalls,timers",
            vec![
                r(LoadKind::Cache, None),
                r(LoadKind::Syscalls, None),
                r(LoadKind::Timers, None),
            ],
        ),
    ] {
        assert_eq!(parse_spec(text).unwrap(), want, "{text:?}");
    }
    let bad = |kind: &str, count: &str| SpecError::BadWorkers {
        kind: kind.into(),
        count: count.into(),
    };
    for (text, want) in [
        ("", SpecError::Empty),
        (" ", SpecError::Empty),
        ("cpu,", SpecError::Empty),
        ("cpu,,io", SpecError::Empty),
        ("bogus", SpecError::UnknownKind("bogus".into())),
        ("CPU", SpecError::UnknownKind("CPU".into())),
        (":2", SpecError::UnknownKind("".into())),
        ("cpu:0", bad("cpu", "0")),
        ("cpu:x", bad("cpu", "x")),
        ("cpu:", bad("cpu", "")),
        ("cpu:-1", bad("cpu", "-1")),
        ("cpu:+1", bad("cpu", "+1")),
        ("cpu:4097", bad("cpu", "4097")),
        ("cpu:1:2", bad("cpu", "1:2")),
        ("cpu,io,cpu:2", SpecError::Duplicate(LoadKind::Cpu)),
    ] {
        assert_eq!(parse_spec(text).unwrap_err(), want, "{text:?}");
    }
    assert_eq!(
        SpecError::UnknownKind("bogus".into()).to_string(),
        "unknown load kind 'bogus' (kinds: cpu, memory, cache, io, messaging, hackbench, syscalls, timers, fork)"
    );
}

#[test]
fn default_workers_fill_unspecified_counts() {
    let req = parse_spec("cpu,io:2").unwrap();
    let p = LoadPlan::from_requests(&req, 3, vec![], None, PathBuf::from("/tmp"));
    assert_eq!(
        p.kinds.iter().map(|k| k.workers).collect::<Vec<_>>(),
        vec![3, 2]
    );
}

#[test]
fn rates_are_formatted_with_a_few_digits() {
    for (rate, text) in [
        (0.0, "0"),
        (0.5123, "0.512"),
        (3.25159, "3.25"),
        (42.42, "42.4"),
        (100.4, "100"),
        (1_234_567.8, "1234568"),
    ] {
        assert_eq!(format_rate(rate), text);
    }
}
