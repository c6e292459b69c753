//! Differential tests (root) of the newer options against `/usr/bin/cyclictest`: the same options give the same exit status and the same line shapes (numbers hidden) on stdout, and on stderr where it is meant to match.

use crate::cyclictest_extras::{parse_break, parse_samples, parse_spike_block};
use crate::differential::{assert_same_shapes, both};
use crate::real_extras::TraceGuard;
use crate::util::{Run, parse_status_lines, shape};

fn assert_same_stderr_shapes(c: &Run, ours: &Run) {
    let c_err: Vec<String> = c.stderr.lines().map(shape).collect();
    let our_err: Vec<String> = ours.stderr.lines().map(shape).collect();
    assert_eq!(
        c_err, our_err,
        "stderr shapes\n--- C ---\n{}\n--- rtlat ---\n{}",
        c.stderr, ours.stderr
    );
}

#[test]
fn spike_block() {
    require_root!();
    require_c_cyclictest!();
    // Trigger 1 µs: reliably exceeded, so both print the block.
    let (c, ours) = both(&[
        "-q",
        "-p",
        "80",
        "-i",
        "500",
        "-l",
        "3000",
        "--spike",
        "1",
        "--spike-nodes",
        "3",
        "-t",
        "2",
    ]);
    assert_same_shapes(&c, &ours);
    for r in [&c, &ours] {
        let block = parse_spike_block(&r.stdout).expect("spike block");
        assert_eq!(block.spikes.len(), 3, "{}", r.stdout);
        assert!(block.count >= 3);
        assert!(block.spikes.iter().all(|s| s.value > 1));
    }
}

#[test]
fn breaktrace_lines() {
    require_root!();
    require_c_cyclictest!();
    let _guard = TraceGuard::acquire();
    let (c, ours) = both(&["-q", "-p", "80", "-i", "500", "-l", "5000", "-b", "1"]);
    assert_same_shapes(&c, &ours);
    for r in [&c, &ours] {
        let b = parse_break(&r.stdout);
        assert!(b.value > 1, "{b:?}");
        assert_eq!(b.thread_ids.len(), 1);
        assert_eq!(b.thread, b.thread_ids[0]);
    }
}

#[test]
fn breaktrace_lines_two_threads() {
    require_root!();
    require_c_cyclictest!();
    let _guard = TraceGuard::acquire();
    let (c, ours) = both(&[
        "-q", "-p", "80", "-i", "500", "-l", "5000", "-b", "1", "-t", "2",
    ]);
    assert_same_shapes(&c, &ours);
}

#[test]
fn refresh_on_max_tail() {
    require_root!();
    require_c_cyclictest!();
    let (c, ours) = both(&["-M", "-p", "80", "-l", "300"]);
    // C can miss a new maximum signalled while its main thread sleeps (its
    // condition-variable wait races with the signal) and then shows a
    // single frame; rtlat polls the maxima and always redraws at least once.
    let ours_frames = ours.stdout.split("\x1b[3A").count();
    assert!(ours_frames >= 3, "at least one redraw:\n{:?}", ours.stdout);
    assert!(
        ours.stdout.ends_with("\x1b[3A\x1b[3B"),
        "rtlat always moves up after its last frame, then down:\n{:?}",
        ours.stdout
    );
    assert_eq!(
        c.stdout.lines().next(),
        ours.stdout.lines().next(),
        "first line"
    );
    // Under load C can miss every signal and end without moving the
    // cursor at all: then there is no C frame to compare with.
    if c.stdout.split("\x1b[3A").count() < 2 {
        eprintln!(
            "NOTE {}: C cyclictest -M drew no frame with a cursor move (its race); \
             rtlat's frames checked alone",
            function_name!()
        );
        assert!(ours.stdout.ends_with("\x1b[3A\x1b[3B"), "{:?}", ours.stdout);
        return;
    }
    let tail = |r: &Run| -> Vec<String> {
        let frames: Vec<&str> = r.stdout.split("\x1b[3A").collect();
        assert!(
            frames.len() >= 2,
            "a frame, then the cursor moves:\n{:?}",
            r.stdout
        );
        // The cursor goes back down after the last frame. C checks for the
        // end between drawing a frame and moving the cursor up, so its
        // last frame may or may not be followed by the move up.
        let last = frames[frames.len() - 1];
        assert!(last.ends_with("\x1b[3B"), "{:?}", r.stdout);
        let frame = match last.strip_suffix("\x1b[3B") {
            Some("") => frames[frames.len() - 2],
            Some(drawn) => drawn,
            None => unreachable!(),
        };
        // The first frame also carries the cpu_dma_latency line printed
        // before it; compare the frame itself.
        frame
            .lines()
            .filter(|l| !l.starts_with("# /dev/cpu_dma_latency"))
            .map(shape)
            .collect()
    };
    assert_eq!(tail(&c), tail(&ours), "the last frame and the tail");
}

#[test]
fn oscope_verbose_lines() {
    require_root!();
    require_c_cyclictest!();
    let (c, ours) = both(&["-v", "-o", "10", "-l", "100", "-p", "80"]);
    assert_same_shapes(&c, &ours);
    for r in [&c, &ours] {
        let s = parse_samples(&r.stdout);
        assert_eq!(s.len(), 10, "{}", r.stdout);
        for (k, x) in s.iter().enumerate() {
            assert!(
                (10 * k as i64..10 * k as i64 + 10).contains(&x.cycle),
                "{x:?}"
            );
        }
    }
}

#[test]
fn quiet_posix_timers() {
    require_root!();
    require_c_cyclictest!();
    let (c, ours) = both(&["-q", "-x", "-p", "80", "-l", "100"]);
    assert_same_shapes(&c, &ours);
    assert_same_stderr_shapes(&c, &ours);
}

#[test]
fn quiet_nanosleep() {
    require_root!();
    require_c_cyclictest!();
    let (c, ours) = both(&["-q", "-s", "-p", "80", "-l", "100"]);
    assert_same_shapes(&c, &ours);
    assert_same_stderr_shapes(&c, &ours);
}

#[test]
fn nanosleep_with_posix_timers() {
    require_root!();
    require_c_cyclictest!();
    let (c, ours) = both(&["-q", "-s", "-x", "-p", "80", "-l", "50"]);
    assert_same_shapes(&c, &ours);
    assert_eq!(c.stderr, ours.stderr, "the three WARN lines");
}

#[test]
fn quiet_aligned_two_threads() {
    require_root!();
    require_c_cyclictest!();
    let (c, ours) = both(&["-q", "-A", "100", "-p", "80", "-l", "100", "-t", "2"]);
    assert_same_shapes(&c, &ours);
    let (a, b) = (
        parse_status_lines(&c.stdout),
        parse_status_lines(&ours.stdout),
    );
    assert_eq!(
        a.iter().map(|l| (l.interval, l.prio)).collect::<Vec<_>>(),
        b.iter().map(|l| (l.interval, l.prio)).collect::<Vec<_>>()
    );
}

#[test]
fn resolution_warnings() {
    require_root!();
    require_c_cyclictest!();
    let (c, ours) = both(&["-R", "-v", "-q", "-l", "10", "-p", "80"]);
    assert_same_stderr_shapes(&c, &ours);
    assert_eq!(ours.stderr_lines().len(), 2);
}
