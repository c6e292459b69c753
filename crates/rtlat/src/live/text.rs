//! cyclictest's live text output, byte for byte.
//!
//! Three modes, as in the C tool:
//! - live frames (default): a `policy: ... loadavg: ...` header, an empty
//!   line and one `T:` line per thread, redrawn in place about every 10 ms
//!   by moving the cursor up `threads + 2` lines (`ESC[<n>A`);
//! - verbose (`-v`): every sample as `%8d:%8lu:%8ld` (thread, cycle, value),
//!   in per-thread batches;
//! - quiet (`-q`): nothing while running.

use std::io::{self, Write};

use rtlat_core::config::ThreadPlan;
use rtlat_core::engine::Shared;
use rtlat_core::units::Resolution;

use crate::report::status::{StatusLine, write_status_line};

/// What the live printer shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveMode {
    /// Frames redrawn in place.
    Frames,
    /// Every sample.
    Verbose,
    /// Nothing.
    Quiet,
}

/// The live printer's state between frames.
#[derive(Debug)]
pub struct LiveText {
    mode: LiveMode,
    header_policy: String,
    resolution: Resolution,
    /// Per thread: the next sample number the verbose printer will show.
    printed: Vec<u64>,
    /// Samples the verbose printer could not show because the ring had
    /// moved past them.
    lost: u64,
}

impl LiveText {
    /// A printer for `threads` threads.
    pub fn new(
        mode: LiveMode,
        header_policy: String,
        resolution: Resolution,
        threads: usize,
    ) -> Self {
        LiveText {
            mode,
            header_policy,
            resolution,
            printed: vec![0; threads],
            lost: 0,
        }
    }

    /// What this printer shows.
    pub fn mode(&self) -> LiveMode {
        self.mode
    }

    /// Samples the verbose printer had to skip.
    pub fn lost_samples(&self) -> u64 {
        self.lost
    }

    /// Writes one frame (or, in verbose mode, the samples taken since the
    /// last call). `loadavg` is the text of `/proc/loadavg`.
    pub fn write_frame(
        &mut self,
        w: &mut impl Write,
        shared: &Shared,
        plans: &[ThreadPlan],
        loadavg: &str,
    ) -> io::Result<()> {
        match self.mode {
            LiveMode::Quiet => Ok(()),
            LiveMode::Verbose => self.write_new_samples(w, shared),
            LiveMode::Frames => {
                write!(
                    w,
                    "policy: {}: loadavg: {}          \n\n",
                    self.header_policy, loadavg
                )?;
                write_status_lines(w, shared, plans, self.resolution)
            }
        }
    }

    /// Moves the cursor back to the top of the frame, so the next frame
    /// overwrites it. Only live frames do this.
    pub fn write_rewind(&self, w: &mut impl Write, threads: usize) -> io::Result<()> {
        if self.mode == LiveMode::Frames {
            write!(w, "\x1b[{}A", threads + 2)?;
        }
        Ok(())
    }

    fn write_new_samples(&mut self, w: &mut impl Write, shared: &Shared) -> io::Result<()> {
        for (index, channel) in shared.channels.iter().enumerate() {
            let Some(ring) = &channel.samples else {
                continue;
            };
            let published = channel.slot.cycles();
            let mut cycle = self.printed[index];
            while cycle < published {
                match ring.get(cycle, published) {
                    Some(value) => writeln!(w, "{index:8}:{cycle:8}:{value:8}")?,
                    None => self.lost += 1,
                }
                cycle += 1;
            }
            self.printed[index] = cycle;
        }
        Ok(())
    }
}

/// One `T:` line per thread from the live slots.
pub fn write_status_lines(
    w: &mut impl Write,
    shared: &Shared,
    plans: &[ThreadPlan],
    resolution: Resolution,
) -> io::Result<()> {
    for (plan, channel) in plans.iter().zip(shared.channels.iter()) {
        let line = StatusLine {
            index: plan.index,
            tid: channel.slot.tid(),
            priority: plan.priority,
            interval_us: plan.interval.as_micros_truncated(),
            stats: channel.slot.compat(),
        };
        write_status_line(w, &line, resolution)?;
    }
    Ok(())
}

/// The status block of SIGUSR1, framed by `#---` lines.
pub fn write_status_block(
    w: &mut impl Write,
    shared: &Shared,
    plans: &[ThreadPlan],
    resolution: Resolution,
) -> io::Result<()> {
    writeln!(w, "#---------------------------")?;
    writeln!(w, "# cyclictest current status:")?;
    write_status_lines(w, shared, plans, resolution)?;
    writeln!(w, "#---------------------------")
}
