//! Helpers for the IPC tools' tests: commands, frame parsing, invariants.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::cpus::CpuLease;
use crate::support::{rtlat_path, rtlat_tool};

pub const TOOLS: [&str; 4] = ["svsematest", "pmqtest", "ptsematest", "sigwaittest"];
/// The tools with a fork mode.
pub const FORK_TOOLS: [&str; 2] = ["svsematest", "sigwaittest"];

/// `rtlat TOOL ARGS...` ([`rtlat_tool`]).
pub fn rtlat_ipc<S: AsRef<std::ffi::OsStr>>(tool: &str, args: &[S]) -> Command {
    rtlat_tool(tool, args)
}

/// The C tool, `/usr/bin/TOOL`.
pub fn c_tool<S: AsRef<std::ffi::OsStr>>(tool: &str, args: &[S]) -> Command {
    let mut cmd = Command::new(c_path(tool));
    cmd.args(args).stdin(Stdio::null());
    cmd
}

/// Held while a C IPC tool runs: two of them at once share their IPC
/// objects. C's svsematest keys its semaphore sets with `ftok($_, i)` (the
/// same key in every run this test process starts), pmqtest names its
/// queues `/syncmsg<i>` and `/testmsg<i>`, and the fork modes of
/// svsematest and sigwaittest both create the shared memory `/sigwaittest`
/// (`O_EXCL`). Two concurrent runs then wake each other's receivers: seen
/// as a live run that drew a single frame, its pair held off 38 ms, and,
/// by hand, as a 0.8 s maximum. rtlat's objects are private to each run;
/// the lock is for C's. A machine lock: the i686 suite runs C's tools too.
#[must_use = "the lock is held until it is dropped"]
pub fn c_ipc_tools_lock() -> std::fs::File {
    crate::support::machine_lock::lock_named("rtlat-test-c-ipc-tools.lock")
}

/// `--affinity=CPU`: every pair of the run on the lease's CPU. Spelled
/// with `=`: C's tools and ours read `-a 0` as two words as `-a` alone
/// (pair i on the i-th CPU), so a lease of CPU 0 would not hold them.
pub fn on_leased_cpu(lease: &CpuLease) -> String {
    format!("--affinity={}", lease.cpu())
}

/// `rtlat TOOL ARGS... --affinity=CPU` with the whole process kept on the
/// lease's CPU (`taskset`): its display thread too, which is neither
/// real-time nor pinned by the tool. There the only real-time threads
/// beside it are the run's own, which sleep between hand-offs: another
/// test's real-time threads, kept to that test's lease, cannot hold it
/// off. For the tests that count the frames it draws.
pub fn rtlat_ipc_confined<S: AsRef<std::ffi::OsStr>>(
    lease: &CpuLease,
    tool: &str,
    args: &[S],
) -> Command {
    let mut cmd = lease.pinned(&rtlat_path().to_string_lossy());
    cmd.arg(tool).args(args).arg(on_leased_cpu(lease));
    cmd
}

/// [`rtlat_ipc_confined`] for the C tool, `/usr/bin/TOOL`.
pub fn c_tool_confined<S: AsRef<std::ffi::OsStr>>(
    lease: &CpuLease,
    tool: &str,
    args: &[S],
) -> Command {
    let mut cmd = lease.pinned(&c_path(tool));
    cmd.args(args).arg(on_leased_cpu(lease));
    cmd
}

pub fn c_path(tool: &str) -> String {
    format!("/usr/bin/{tool}")
}

pub fn has_c(tool: &str) -> bool {
    Path::new(&c_path(tool)).is_file()
}

/// Every integer in `line`, in order (`-1` is negative, `->` is not).
pub fn numbers(line: &str) -> Vec<i64> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let neg = b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if b[i].is_ascii_digit() || neg {
            let start = i;
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push(line[start..i].parse().unwrap());
        } else {
            i += 1;
        }
    }
    out
}

/// A pair's header line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub receiver: i64,
    pub receiver_id: i64,
    pub priority: i64,
    pub receiver_cpu: i64,
    pub interval: i64,
    pub sender: i64,
    pub sender_id: i64,
    pub sender_cpu: i64,
    pub timeouts: Option<i64>,
    pub cycles: i64,
}

/// A pair's result line (`None`: not yet ready).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figures {
    pub min: i64,
    pub cur: i64,
    pub avg: i64,
    pub max: i64,
}

/// One frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub headers: Vec<Header>,
    pub figures: Vec<Option<Figures>>,
}

pub fn parse_header(line: &str) -> Option<Header> {
    if !line.starts_with('#') || !line.contains(": ID") {
        return None;
    }
    let n = numbers(line);
    let (timeouts, cycles) = match n.len() {
        10 => (None, n[9]),
        11 => (Some(n[9]), n[10]),
        _ => return None,
    };
    assert_eq!(n[2], n[7], "both sides of a pair share a priority: {line}");
    Some(Header {
        receiver: n[0],
        receiver_id: n[1],
        priority: n[2],
        receiver_cpu: n[3],
        interval: n[4],
        sender: n[5],
        sender_id: n[6],
        sender_cpu: n[8],
        timeouts,
        cycles,
    })
}

pub fn parse_figures(line: &str) -> Option<Option<Figures>> {
    if !line.contains(" -> #") {
        return None;
    }
    if line.ends_with(" (not yet ready)") {
        return Some(None);
    }
    let n = numbers(line);
    (n.len() == 6).then(|| {
        Some(Figures {
            min: n[2],
            cur: n[3],
            avg: n[4],
            max: n[5],
        })
    })
}

/// The lines of the output with the cursor moves taken out.
pub fn plain_lines(stdout: &str) -> Vec<String> {
    let mut text = String::new();
    let mut chars = stdout.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // ESC [ digits A|B
            for d in chars.by_ref() {
                if d == 'A' || d == 'B' {
                    break;
                }
            }
            continue;
        }
        text.push(c);
    }
    text.lines().map(str::to_owned).collect()
}

/// Every frame of the output, in order.
pub fn frames(stdout: &str, pairs: usize) -> Vec<Frame> {
    let lines = plain_lines(stdout);
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 * pairs <= lines.len() {
        let headers: Option<Vec<Header>> = lines[i..i + pairs]
            .iter()
            .map(|l| parse_header(l))
            .collect();
        let figures: Option<Vec<Option<Figures>>> = lines[i + pairs..i + 2 * pairs]
            .iter()
            .map(|l| parse_figures(l))
            .collect();
        match (headers, figures) {
            (Some(headers), Some(figures)) => {
                out.push(Frame { headers, figures });
                i += 2 * pairs;
            }
            _ => i += 1,
        }
    }
    out
}

/// The last frame; panics with the output if there is none.
pub fn last_frame(stdout: &str, pairs: usize) -> Frame {
    frames(stdout, pairs)
        .pop()
        .unwrap_or_else(|| panic!("no frame of {pairs} pairs in:\n{stdout}"))
}

/// What holds for every frame: pair numbering, distinct IDs, ordered
/// figures, at most `loops` cycles, C's interval and priority rules.
pub fn check_frame(f: &Frame, pairs: usize, loops: Option<i64>) {
    assert_eq!(f.headers.len(), pairs);
    let mut ids = std::collections::BTreeSet::new();
    for (i, (h, fig)) in f.headers.iter().zip(&f.figures).enumerate() {
        assert_eq!((h.receiver, h.sender), (2 * i as i64, 2 * i as i64 + 1));
        assert!(h.receiver_id > 0 && h.sender_id > 0, "{h:?}");
        assert!(
            ids.insert(h.receiver_id) && ids.insert(h.sender_id),
            "IDs differ: {f:?}"
        );
        assert!(h.cycles >= 0);
        if let Some(l) = loops {
            assert!(h.cycles <= l, "{h:?}");
        }
        if let Some(x) = fig {
            assert!(x.min <= x.avg && x.avg <= x.max, "{x:?}");
            assert!(x.min <= x.cur && x.cur <= x.max, "{x:?}");
            assert!(x.min >= 0, "{x:?}");
            assert!(h.cycles >= 1, "a result needs a hand-off: {h:?}");
        }
    }
}
