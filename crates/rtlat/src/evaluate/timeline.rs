//! The input of a phase's timeline plot on the page: its stats stream
//! (a line per thread and 100 ms interval), of the plotted threads only,
//! with neighbouring intervals merged when a thread has more than
//! [`MOST_POINTS`] of them. A plot 900 pixels wide shows no more, and an
//! hour of 100 ms intervals for 8 threads is megabytes of SVG. Merged,
//! an interval keeps what is exact: its maximum, minimum, samples, mean
//! and overruns; its p99 is left out (the p99 of merged intervals is not
//! any of theirs), and the caption says how long the merged intervals are.

use rtlat_results::timeline::StatsLine;

/// The most intervals a thread's line has on the page's timeline.
pub const MOST_POINTS: u64 = 450;

/// The plot's input and how many of the stream's intervals each of its
/// intervals merges (1: none merged).
pub struct PlotInput {
    pub lines: Vec<u8>,
    pub merged: u64,
}

/// The timeline input of a stats stream's `text`, keeping the threads of
/// `threads` (every thread when `None`). Lines that do not read are left
/// out, as the plot would leave them.
pub fn plot_input(text: &str, threads: Option<&[u64]>) -> PlotInput {
    let lines: Vec<StatsLine> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<StatsLine>(line).ok())
        .filter(|l| threads.is_none_or(|t| t.contains(&(l.thread as u64))))
        .collect();
    let longest = lines.iter().map(|l| l.interval + 1).max().unwrap_or(0);
    let merged = longest.div_ceil(MOST_POINTS).max(1);
    let mut out: Vec<StatsLine> = Vec::new();
    for line in lines {
        let interval = line.interval / merged;
        match out
            .iter_mut()
            .rev()
            .find(|o| o.thread == line.thread)
            .filter(|o| o.interval == interval && merged > 1)
        {
            Some(into) => merge(into, &line),
            None => out.push(StatsLine {
                interval,
                p99: if merged > 1 { None } else { line.p99 },
                ..line
            }),
        }
    }
    let mut bytes = Vec::new();
    for line in &out {
        if let Ok(text) = serde_json::to_string(line) {
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(b'\n');
        }
    }
    PlotInput {
        lines: bytes,
        merged,
    }
}

/// Adds `next` (the same thread's next interval) to `into`.
fn merge(into: &mut StatsLine, next: &StatsLine) {
    let either = |a: Option<f64>, b: Option<f64>, pick: fn(f64, f64) -> f64| match (a, b) {
        (Some(a), Some(b)) => Some(pick(a, b)),
        (a, b) => a.or(b),
    };
    into.avg = match (into.avg, next.avg) {
        (Some(a), Some(b)) if into.cycles + next.cycles > 0 => Some(
            (a * into.cycles as f64 + b * next.cycles as f64) / (into.cycles + next.cycles) as f64,
        ),
        (a, b) => a.or(b),
    };
    into.min = either(into.min, next.min, f64::min);
    into.max = either(into.max, next.max, f64::max);
    into.cycles += next.cycles;
    into.overruns += next.overruns;
    into.time = next.time;
    into.elapsed = next.elapsed;
    into.partial = next.partial;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(threads: usize, intervals: u64) -> String {
        let mut text = String::new();
        for i in 0..intervals {
            for t in 0..threads {
                text.push_str(&format!(
                    "{{\"time\":{},\"elapsed\":{},\"thread\":{t},\"interval\":{i},\
                     \"cycles\":100,\"min\":1.0,\"avg\":{},\"max\":{},\"p99\":3.0,\
                     \"overruns\":0}}\n",
                    1000.0 + (i + 1) as f64 * 0.1,
                    (i + 1) as f64 * 0.1,
                    2.0 + t as f64,
                    10.0 + (i % 7) as f64 + t as f64
                ));
            }
        }
        text
    }

    fn read(input: &PlotInput) -> Vec<StatsLine> {
        String::from_utf8(input.lines.clone())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_short_stream_is_kept_whole_but_for_the_threads_left_out() {
        let input = plot_input(&stream(3, 10), Some(&[0, 2]));
        assert_eq!(input.merged, 1);
        let lines = read(&input);
        assert_eq!(lines.len(), 20);
        assert!(lines.iter().all(|l| l.thread != 1 && l.p99 == Some(3.0)));
    }

    #[test]
    fn a_long_stream_is_merged_keeping_the_exact_figures() {
        let input = plot_input(&stream(2, 2000), None);
        assert_eq!(input.merged, 5);
        let lines = read(&input);
        assert_eq!(lines.len(), 2 * 400);
        let first = &lines[0];
        assert_eq!((first.thread, first.interval, first.cycles), (0, 0, 500));
        // The intervals 0 to 4 of thread 0: maxima 10 to 14.
        assert_eq!(first.max, Some(14.0));
        assert_eq!(first.min, Some(1.0));
        assert_eq!(first.avg, Some(2.0));
        assert_eq!(first.p99, None);
        assert!((first.elapsed - 0.5).abs() < 1e-9, "{first:?}");
        let last = lines.last().unwrap();
        assert_eq!((last.thread, last.interval), (1, 399));
        assert!((last.elapsed - 200.0).abs() < 1e-9);
        assert!(lines.iter().all(|l| l.max <= Some(17.0)));
    }
}
