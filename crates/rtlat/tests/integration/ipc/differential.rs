//! Differential tests (root): the C tools in /usr/bin and rtlat with the
//! same options print the same structure (lines, line shapes) and our JSON
//! has every key of theirs.

use crate::support::ipc::{FORK_TOOLS, TOOLS, c_tool, has_c, last_frame, plain_lines, rtlat_ipc};
use crate::support::{Run, SEVERAL_PRIORITIES_EMULATED, json_key_paths, read_json, run, shape};

macro_rules! require_c_tool {
    ($tool:expr) => {
        if !has_c($tool) {
            skip_note!("SKIPPED (needs /usr/bin/{}): {}", $tool, function_name!());
            continue;
        }
    };
}

fn both(tool: &str, args: &[&str]) -> (Run, Run) {
    let c = run(&mut c_tool(tool, args));
    c.expect_code(0);
    let ours = run(&mut rtlat_ipc(tool, args));
    ours.expect_code(0);
    (c, ours)
}

fn assert_same_shapes(tool: &str, c: &str, ours: &str) {
    let (c_lines, our_lines) = (plain_lines(c), plain_lines(ours));
    assert_eq!(
        c_lines.len(),
        our_lines.len(),
        "{tool}: line counts differ\n--- C ---\n{c}\n--- rtlat ---\n{ours}"
    );
    for (a, b) in c_lines.iter().zip(&our_lines) {
        assert_eq!(shape(a), shape(b), "{tool}:\n C:     {a:?}\n rtlat: {b:?}");
    }
}

#[test]
fn quiet_two_pairs_same_structure() {
    skip_if_emulated!(SEVERAL_PRIORITIES_EMULATED);
    require_root!();
    for tool in TOOLS {
        require_c_tool!(tool);
        let (c, ours) = both(
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
    for tool in TOOLS {
        require_c_tool!(tool);
        // A second: the display thread is not real-time, and the
        // real-time threads of tests running beside this one can hold it
        // off both CPUs for a while (for a whole second, once in about ten
        // full runs of the suite). A run whose display never got the CPU
        // says nothing about its drawing: it is run again, at most twice,
        // with a NOTE; the last one must refresh.
        let refreshed = |r: &Run| r.stdout.matches("\x1b[2A").count() >= 2;
        let mut attempt = 1;
        let (c, ours) = loop {
            let (c, ours) = both(tool, &["-p", "80", "-i", "500", "-l", "2000"]);
            if (refreshed(&c) && refreshed(&ours)) || attempt == 3 {
                break (c, ours);
            }
            eprintln!(
                "NOTE {}: {tool}: a display never refreshed (C: {}, rtlat: {}); run again",
                function_name!(),
                refreshed(&c),
                refreshed(&ours)
            );
            attempt += 1;
        };
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
    for tool in FORK_TOOLS {
        require_c_tool!(tool);
        let (c, ours) = both(
            tool,
            &["-f", "-q", "-p", "80", "-i", "200", "-l", "200", "-t", "2"],
        );
        assert_same_shapes(tool, &c.stdout, &ours.stdout);
    }
}

#[test]
fn json_keys_are_a_superset() {
    skip_if_emulated!(SEVERAL_PRIORITIES_EMULATED);
    require_root!();
    for tool in TOOLS {
        require_c_tool!(tool);
        let dir = tempfile::tempdir().unwrap();
        let (cj, oj) = (dir.path().join("c.json"), dir.path().join("ours.json"));
        let args = ["-q", "-p", "80", "-i", "200", "-l", "100", "-t", "2"];
        let mut c_args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        c_args.push(format!("--json={}", cj.display()));
        run(&mut c_tool(tool, &c_args)).expect_code(0);
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
