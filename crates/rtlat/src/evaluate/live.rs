//! What `rtlat evaluate` shows while a phase runs: read from the phase's
//! stats stream (`--stats-file`, one JSON line per interval and thread),
//! the phase, its elapsed and remaining time, each measured CPU's
//! maximum so far and its samples' intervals beyond the deadline. On a
//! terminal one line redrawn each second; otherwise one line a minute;
//! nothing with `-q`.

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// The live view of one phase.
pub struct Live<'a> {
    phase: &'static str,
    seconds: u64,
    /// Each measuring thread's CPU.
    thread_cpus: &'a [usize],
    /// The measured CPUs, each once, in the threads' order.
    cpus: Vec<usize>,
    deadline_us: Option<u32>,
    terminal: bool,
    quiet: bool,
    started: Instant,
    last_shown: Option<Instant>,
    reader: Option<BufReader<File>>,
    partial: String,
    /// Per measured CPU: its threads' maximum so far (µs) and their
    /// intervals whose maximum was beyond the deadline.
    threads: Vec<(f64, u64)>,
}

impl<'a> Live<'a> {
    pub fn new(
        phase: &'static str,
        seconds: u64,
        thread_cpus: &'a [usize],
        deadline_us: Option<u32>,
        quiet: bool,
    ) -> Live<'a> {
        let mut cpus: Vec<usize> = Vec::new();
        for &cpu in thread_cpus {
            if !cpus.contains(&cpu) {
                cpus.push(cpu);
            }
        }
        Live {
            phase,
            seconds,
            thread_cpus,
            deadline_us,
            terminal: std::io::stderr().is_terminal(),
            quiet,
            started: Instant::now(),
            last_shown: None,
            reader: None,
            partial: String::new(),
            threads: vec![(0.0, 0); cpus.len()],
            cpus,
        }
    }

    /// Reads what the stream at `path` has gained and shows the line when
    /// it is time to.
    pub fn tick(&mut self, path: &Path) {
        if self.quiet {
            return;
        }
        self.read(path);
        let every = if self.terminal {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(60)
        };
        if self.last_shown.is_some_and(|at| at.elapsed() < every) {
            return;
        }
        if self.last_shown.is_none() && !self.terminal {
            // Without a terminal: the first line after a minute.
            if self.started.elapsed() < every {
                return;
            }
        }
        self.last_shown = Some(Instant::now());
        let line = self.line();
        let mut err = std::io::stderr().lock();
        let _ = if self.terminal {
            write!(err, "\r\x1b[K{line}")
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
    }

    /// Ends the view of the phase (a terminal's line is left as it is).
    pub fn finish(&mut self) {
        if !self.quiet && self.terminal && self.last_shown.is_some() {
            let _ = writeln!(std::io::stderr());
        }
    }

    fn read(&mut self, path: &Path) {
        if self.reader.is_none() {
            self.reader = File::open(path).ok().map(BufReader::new);
        }
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        loop {
            let mut chunk = String::new();
            match reader.read_line(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            self.partial.push_str(&chunk);
            if !self.partial.ends_with('\n') {
                return;
            }
            let line = std::mem::take(&mut self.partial);
            let Ok(record) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            let (Some(thread), Some(max)) = (record["thread"].as_u64(), record["max"].as_f64())
            else {
                continue;
            };
            let slot = self
                .thread_cpus
                .get(thread as usize)
                .and_then(|cpu| self.cpus.iter().position(|c| c == cpu));
            if let Some(slot) = slot.and_then(|at| self.threads.get_mut(at)) {
                slot.0 = slot.0.max(max);
                if self.deadline_us.is_some_and(|d| max > f64::from(d)) {
                    slot.1 += 1;
                }
            }
        }
    }

    /// `phase io 12 s of 60, 48 s left | CPU 1 123 us, 2 over; CPU 3 ...`:
    /// the CPUs in order, or, when they do not fit in 80 columns, the
    /// highest maxima first, as many as fit.
    fn line(&self) -> String {
        let elapsed = self.started.elapsed().as_secs().min(self.seconds);
        let mut line = format!(
            "phase {} {elapsed} s of {}, {} s left |",
            self.phase,
            self.seconds,
            self.seconds - elapsed
        );
        let mut cells: Vec<(usize, f64, u64)> = self
            .cpus
            .iter()
            .zip(&self.threads)
            .map(|(&cpu, &(max, over))| (cpu, max, over))
            .collect();
        let cell = |n: usize, (cpu, max, over): (usize, f64, u64)| {
            let separator = if n == 0 { " " } else { "; " };
            match self.deadline_us {
                Some(_) => format!("{separator}CPU {cpu} {max:.0} us, {over} over"),
                None => format!("{separator}CPU {cpu} {max:.0} us"),
            }
        };
        let all: usize = cells
            .iter()
            .enumerate()
            .map(|(n, &c)| cell(n, c).chars().count())
            .sum();
        if line.chars().count() + all > 80 {
            cells.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        }
        for (n, &c) in cells.iter().enumerate() {
            let text = cell(n, c);
            if line.chars().count() + text.chars().count() > 77 {
                line.push_str("; …");
                break;
            }
            line.push_str(&text);
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_follows_the_stream_each_cpu_its_maximum_and_its_intervals_over() {
        let dir = tempfile::tempdir().unwrap();
        let stream = dir.path().join("io.stats.jsonl");
        let cpus = [1, 3];
        let mut live = Live::new("io", 60, &cpus, Some(200), false);
        live.read(&stream); // Not there yet: nothing read, nothing wrong.
        assert_eq!(
            live.line(),
            "phase io 0 s of 60, 60 s left | CPU 1 0 us, 0 over; CPU 3 0 us, 0 over"
        );
        let mut file = File::create(&stream).unwrap();
        writeln!(file, r#"{{"thread":0,"interval":0,"max":150.2}}"#).unwrap();
        writeln!(file, r#"{{"thread":1,"interval":0,"max":250.7}}"#).unwrap();
        // Half a line: kept until its end comes.
        write!(file, r#"{{"thread":0,"interval":1,"#).unwrap();
        file.flush().unwrap();
        live.read(&stream);
        assert_eq!(live.threads, [(150.2, 0), (250.7, 1)]);
        writeln!(file, r#""max":321.0}}"#).unwrap();
        file.flush().unwrap();
        live.read(&stream);
        assert_eq!(live.threads, [(321.0, 1), (250.7, 1)]);
        assert!(
            live.line()
                .ends_with("| CPU 1 321 us, 1 over; CPU 3 251 us, 1 over"),
            "{}",
            live.line()
        );
    }

    #[test]
    fn many_cpus_end_the_line_within_80_columns_the_worst_first() {
        let cpus: Vec<usize> = (0..64).collect();
        let mut live = Live::new("timers", 600, &cpus, Some(100), false);
        live.threads[40] = (512.0, 3);
        let line = live.line();
        assert!(line.chars().count() <= 80, "{line}");
        assert!(line.ends_with("; …"), "{line}");
        assert!(line.contains("| CPU 40 512 us, 3 over;"), "{line}");
    }

    #[test]
    fn threads_sharing_a_cpu_are_one_cell() {
        let dir = tempfile::tempdir().unwrap();
        let stream = dir.path().join("idle.stats.jsonl");
        let threads = [0, 1, 0, 1];
        let mut live = Live::new("idle", 10, &threads, None, false);
        let mut file = File::create(&stream).unwrap();
        for (thread, max) in [(0, 10.0), (1, 20.0), (2, 30.0), (3, 5.0)] {
            writeln!(file, r#"{{"thread":{thread},"interval":0,"max":{max}}}"#).unwrap();
        }
        live.read(&stream);
        assert!(
            live.line().ends_with("| CPU 0 30 us; CPU 1 20 us"),
            "{}",
            live.line()
        );
    }
}
