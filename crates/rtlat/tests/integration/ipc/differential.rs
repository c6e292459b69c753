//! Differential tests (root): the C tools in /usr/bin and rtlat with the
//! same options print the same structure (lines, line shapes) and our JSON
//! has every key of theirs. Both run on one leased CPU, every pair on it
//! (`--affinity`).

use std::process::Command;

use crate::support::cpus::CpuLease;
use crate::support::ipc::{
    FORK_TOOLS, TOOLS, c_ipc_tools_lock, c_tool, c_tool_confined, has_c, last_frame, on_leased_cpu,
    plain_lines, rtlat_ipc, rtlat_ipc_confined,
};
use crate::support::{Run, SEVERAL_PRIORITIES_EMULATED, json_key_paths, read_json, run, shape};

macro_rules! require_c_tool {
    ($tool:expr) => {
        if !has_c($tool) {
            skip_note!("SKIPPED (needs /usr/bin/{}): {}", $tool, function_name!());
            continue;
        }
    };
}

/// The C tool's run and ours with `args`, every pair on the lease's CPU.
fn both(lease: &CpuLease, tool: &str, args: &[&str]) -> (Run, Run) {
    let on_cpu = on_leased_cpu(lease);
    let args: Vec<&str> = args.iter().copied().chain([on_cpu.as_str()]).collect();
    both_of(&mut c_tool(tool, &args), &mut rtlat_ipc(tool, &args))
}

fn both_of(c: &mut Command, ours: &mut Command) -> (Run, Run) {
    let c = run_c_alone(c);
    c.expect_code(0);
    let ours = run(ours);
    ours.expect_code(0);
    (c, ours)
}

/// A run of a C tool, no other C IPC tool running meanwhile
/// ([`c_ipc_tools_lock`]).
fn run_c_alone(c: &mut Command) -> Run {
    let _alone = c_ipc_tools_lock();
    run(c)
}

fn assert_same_shapes(tool: &str, c: &str, ours: &str) {
    let (c_lines, our_lines) = (plain_lines(c), plain_lines(ours));
    assert_eq!(
        c_lines.len(),
        our_lines.len(),
        "{tool}: line counts differ\n--- C ---\n{c}\n--- rtlat ---\n{ours}"
    );
    for (a, b) in c_lines.iter().zip(&our_lines) {
        if c_pair_not_started(a, b) {
            continue;
        }
        assert_eq!(shape(a), shape(b), "{tool}:\n C:     {a:?}\n rtlat: {b:?}");
    }
}

/// Whether C's line `c` says that its pair had no hand-off yet when the run
/// ended (`#3 -> #2 (not yet ready)`) where ours has figures for the same
/// pair. C starts its pairs one after another (in fork mode each side is
/// a new process, SCHED_OTHER until it has parsed its arguments) and ends
/// the run when pair 0 has made its loops: beside `stress-ng --cpu 2`,
/// C sigwaittest's pair 1 had not begun when pair 0's 200 loops of 200 us
/// were done (1 suite run in 10; the fork test now makes 1000). Ours
/// start every side at a barrier before the first hand-off. The pair's
/// numbers must still agree.
fn c_pair_not_started(c: &str, ours: &str) -> bool {
    match c.strip_suffix(" (not yet ready)") {
        Some(pair) => ours.starts_with(&format!("{pair}, Min ")),
        None => false,
    }
}

#[test]
fn a_c_pair_not_started_is_told_by_the_same_pair_only() {
    let ours = "#3 -> #2, Min    2, Cur    3, Avg    6, Max  213";
    assert!(c_pair_not_started("#3 -> #2 (not yet ready)", ours));
    assert!(!c_pair_not_started("#1 -> #0 (not yet ready)", ours));
    assert!(!c_pair_not_started(ours, ours));
    assert!(!c_pair_not_started(
        "#3 -> #2 (not yet ready)",
        "#3 -> #2 (not yet ready)"
    ));
}

#[test]
fn quiet_two_pairs_same_structure() {
    skip_if_emulated!(SEVERAL_PRIORITIES_EMULATED);
    require_root!();
    let lease = CpuLease::one();
    for tool in TOOLS {
        require_c_tool!(tool);
        let (c, ours) = both(
            &lease,
            tool,
            &["-q", "-p", "80", "-i", "200", "-l", "200", "-t", "2"],
        );
        assert_same_shapes(tool, &c.stdout, &ours.stdout);
        let (fc, fo) = (last_frame(&c.stdout, 2), last_frame(&ours.stdout, 2));
        for (a, b) in fc.headers.iter().zip(&fo.headers) {
            assert_eq!(
                (a.receiver, a.sender, a.priority, a.interval),
                (b.receiver, b.sender, b.priority, b.interval),
                "{tool}"
            );
        }
        // C pmqtest's quiet frame can be printed before pair 0's sender has
        // counted its last hand-off; the others agree exactly.
        if tool != "pmqtest" {
            assert_eq!(fc.headers[0].cycles, fo.headers[0].cycles, "{tool}");
        }
        assert_eq!(fo.headers[0].cycles, 200, "{tool}");
    }
}

#[test]
fn live_mode_same_cursor_moves() {
    require_root!();
    let lease = CpuLease::one();
    for tool in TOOLS {
        require_c_tool!(tool);
        // A second of frames, drawn by the display thread, which is
        // neither real-time nor pinned: both runs are confined to the
        // leased CPU, where no real-time thread but their own pair (asleep
        // between hand-offs) can hold it off.
        let args = ["-p", "80", "-i", "500", "-l", "2000"];
        let (c, ours) = both_of(
            &mut c_tool_confined(&lease, tool, &args),
            &mut rtlat_ipc_confined(&lease, tool, &args),
        );
        for (side, r) in [("C", &c), ("rtlat", &ours)] {
            assert!(
                r.stdout.ends_with("\x1b[2A\x1b[4B"),
                "{tool} ({side}): {:?}",
                r.stdout
            );
            assert!(
                r.stdout.matches("\x1b[2A").count() >= 2,
                "{tool} ({side}) never refreshed: {:?}",
                r.stdout
            );
        }
        let c_last: Vec<String> = plain_lines(&c.stdout).into_iter().rev().take(2).collect();
        let our_last: Vec<String> = plain_lines(&ours.stdout)
            .into_iter()
            .rev()
            .take(2)
            .collect();
        for (a, b) in c_last.iter().zip(&our_last) {
            assert_eq!(shape(a), shape(b), "{tool}");
        }
    }
}

#[test]
fn fork_mode_same_structure() {
    require_root!();
    let lease = CpuLease::one();
    for tool in FORK_TOOLS {
        require_c_tool!(tool);
        let (c, ours) = both(
            &lease,
            tool,
            &["-f", "-q", "-p", "80", "-i", "200", "-l", "1000", "-t", "2"],
        );
        assert_same_shapes(tool, &c.stdout, &ours.stdout);
    }
}

#[test]
fn json_keys_are_a_superset() {
    skip_if_emulated!(SEVERAL_PRIORITIES_EMULATED);
    require_root!();
    let lease = CpuLease::one();
    let on_cpu = on_leased_cpu(&lease);
    for tool in TOOLS {
        require_c_tool!(tool);
        let dir = tempfile::tempdir().unwrap();
        let (cj, oj) = (dir.path().join("c.json"), dir.path().join("ours.json"));
        let args = [
            "-q", "-p", "80", "-i", "200", "-l", "100", "-t", "2", &on_cpu,
        ];
        let mut c_args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        c_args.push(format!("--json={}", cj.display()));
        run_c_alone(&mut c_tool(tool, &c_args)).expect_code(0);
        let mut our_args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        our_args.push(format!("--json={}", oj.display()));
        run(&mut rtlat_ipc(tool, &our_args)).expect_code(0);
        let (c, ours) = (read_json(&cj), read_json(&oj));
        let (ck, ok) = (json_key_paths(&c), json_key_paths(&ours));
        let missing: Vec<_> = ck.difference(&ok).collect();
        assert!(
            missing.is_empty(),
            "{tool}: keys C has and we lack: {missing:?}"
        );
        assert_eq!(c["num_threads"], ours["num_threads"]);
        assert_eq!(c["rt_test_version:"], ours["rt_test_version:"]);
        for i in ["0", "1"] {
            for side in ["sender", "receiver"] {
                assert_eq!(
                    c["thread"][i][side]["priority"],
                    ours["thread"][i][side]["priority"]
                );
            }
            assert_eq!(
                c["thread"][i]["sender"]["interval"],
                ours["thread"][i]["sender"]["interval"]
            );
        }
    }
}
