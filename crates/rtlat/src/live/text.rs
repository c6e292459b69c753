//! cyclictest's live text output, byte for byte.
//!
//! Three modes, as in the C tool:
//! - live frames (default): a `policy: ... loadavg: ...` header, an empty
//!   line and one `T:` line per thread, redrawn in place about every 10 ms
//!   by moving the cursor up `threads + 2` lines (`ESC[<n>A`);
//! - verbose (`-v`): every sample as `%8d:%8lu:%8ld` (thread, cycle, value;
//!   with `--smi` the sample's SMI count follows as `%8ld`), in per-thread
//!   batches; with `-o RED` one line per RED samples: the block's largest
//!   value and its cycle number;
//! - quiet (`-q`): nothing while running.

use std::io::{self, Write};

use rtlat_core::Resolution;
use rtlat_core::Shared;
use rtlat_core::ThreadChannel;
use rtlat_core::ThreadPlan;

use crate::report::status::{StatusLine, write_status_line};

/// What the live printer shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveMode {
    /// Frames redrawn in place.
    Frames,
    /// Every sample (or every RED-th block's maximum).
    Verbose,
    /// Nothing.
    Quiet,
}

/// Per thread: where the verbose printer stands.
#[derive(Clone, Copy, Debug)]
struct VerboseCursor {
    /// The next sample number to look at.
    next: u64,
    /// Samples seen in the current `-o` block.
    in_block: u32,
    /// The block's largest value so far and its sample number.
    block_max: Option<(i64, u64)>,
    /// SMIs counted in the block.
    block_smi: i64,
}

/// The live printer's state between frames.
#[derive(Debug)]
pub struct LiveText {
    mode: LiveMode,
    header_policy: String,
    resolution: Resolution,
    oscope_reduction: u32,
    cursors: Vec<VerboseCursor>,
    /// Samples the verbose printer could not show because the ring had
    /// moved past them.
    lost: u64,
}

impl LiveText {
    /// A printer for `threads` threads; `oscope_reduction` is `-o` (1: every
    /// sample).
    pub fn new(
        mode: LiveMode,
        header_policy: String,
        resolution: Resolution,
        threads: usize,
        oscope_reduction: u32,
    ) -> Self {
        let cursor = VerboseCursor {
            next: 0,
            in_block: 0,
            block_max: None,
            block_smi: 0,
        };
        LiveText {
            mode,
            header_policy,
            resolution,
            oscope_reduction: oscope_reduction.max(1),
            cursors: vec![cursor; threads],
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

    /// Moves the cursor below the last frame (`-M` leaves it at the top).
    pub fn write_leave(&self, w: &mut impl Write, threads: usize) -> io::Result<()> {
        if self.mode == LiveMode::Frames {
            write!(w, "\x1b[{}B", threads + 2)?;
        }
        Ok(())
    }

    fn write_new_samples(&mut self, w: &mut impl Write, shared: &Shared) -> io::Result<()> {
        for (index, channel) in shared.channels.iter().enumerate() {
            self.write_samples_of(w, index, channel)?;
        }
        Ok(())
    }

    /// The verbose lines of one thread's samples taken since the last call.
    fn write_samples_of(
        &mut self,
        w: &mut impl Write,
        index: usize,
        channel: &ThreadChannel,
    ) -> io::Result<()> {
        let reduction = self.oscope_reduction;
        {
            let Some(ring) = &channel.samples else {
                return Ok(());
            };
            let smi_ring = channel.smi_samples.as_ref();
            let published = channel.slot.cycles();
            let cursor = &mut self.cursors[index];
            while cursor.next < published {
                let cycle = cursor.next;
                cursor.next += 1;
                let Some(value) = ring.get(cycle, published) else {
                    self.lost += 1;
                    continue;
                };
                let smi = smi_ring.and_then(|r| r.get(cycle, published));
                if cursor.block_max.is_none_or(|(max, _)| value > max) {
                    cursor.block_max = Some((value, cycle));
                }
                cursor.block_smi += smi.unwrap_or(0);
                cursor.in_block += 1;
                if cursor.in_block < reduction {
                    continue;
                }
                let (max, max_cycle) = cursor.block_max.take().unwrap_or((value, cycle));
                write!(w, "{index:8}:{max_cycle:8}:{max:8}")?;
                if smi_ring.is_some() {
                    write!(w, "{:8}", cursor.block_smi)?;
                }
                writeln!(w)?;
                cursor.in_block = 0;
                cursor.block_smi = 0;
            }
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
            smi: shared.counts_smi().then(|| channel.slot.smi_count()),
        };
        write_status_line(w, &line, resolution)?;
    }
    Ok(())
}

/// The status block of SIGUSR1 and SIGUSR2, framed by `#---` lines.
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

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_core::Engine;
    use rtlat_core::Nanos;
    use rtlat_core::Tally;
    use rtlat_core::{CyclicConfig, RunConfig, SchedPolicy, TimeSourceKind};

    /// Two threads' slots with known figures, as a live reader sees them.
    fn shared_with(samples: &[&[i64]], smi: bool) -> (std::sync::Arc<Shared>, Vec<ThreadPlan>) {
        let plans: Vec<ThreadPlan> = (0..samples.len())
            .map(|index| ThreadPlan {
                index,
                interval: Nanos::from_micros(1000 + 500 * index as i64),
                policy: SchedPolicy::Fifo,
                priority: 80,
                cpu: None,
            })
            .collect();
        let config = CyclicConfig {
            run: RunConfig {
                source: TimeSourceKind::Synthetic { seed: 0 },
                ..RunConfig::default()
            },
            smi,
            ..CyclicConfig::new(plans.clone())
        };
        let shared = Engine::new(config).unwrap().shared().clone();
        for (channel, values) in shared.channels.iter().zip(samples) {
            let mut tally = Tally::default();
            for &v in *values {
                tally.record(v, v * 1000, 0);
            }
            tally.smi = 3;
            channel.slot.set_tid(6104 + tally.cycles as i32);
            channel.slot.publish(&tally);
        }
        (shared, plans)
    }

    fn block(shared: &Shared, plans: &[ThreadPlan]) -> String {
        let mut out = Vec::new();
        write_status_block(&mut out, shared, plans, Resolution::Micros).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn status_block_is_framed_like_cyclictest() {
        let (shared, plans) = shared_with(&[&[17, 22, 137, 30], &[11, 60, 22]], false);
        insta::assert_snapshot!(block(&shared, &plans), @r"
        #---------------------------
        # cyclictest current status:
        T: 0 ( 6108) P:80 I:1000 C:      4 Min:     17 Act:   30 Avg:   51 Max:     137
        T: 1 ( 6107) P:80 I:1500 C:      3 Min:     11 Act:   22 Avg:   31 Max:      60
        #---------------------------
        ");
    }

    #[test]
    fn status_block_shows_smi_counts_when_counting() {
        let (shared, plans) = shared_with(&[&[5, 9]], true);
        assert!(
            block(&shared, &plans).contains("Max:       9 SMI:       3\n"),
            "{}",
            block(&shared, &plans)
        );
    }

    #[test]
    fn oscope_prints_each_blocks_maximum_and_its_cycle() {
        let values = [4, 9, 2, 7, -3, -1, 5, 6];
        let ring = rtlat_core::SampleRing::new(16).unwrap();
        let mut tally = Tally::default();
        for (cycle, &v) in values.iter().enumerate() {
            ring.record(cycle as u64, v);
            tally.record(v, v * 1000, 0);
        }
        let channel = ThreadChannel {
            slot: Default::default(),
            histogram: None,
            samples: Some(ring),
            ..ThreadChannel::default()
        };
        channel.slot.publish(&tally);
        // -o 2: one line per two samples, with the block's maximum (also
        // when every sample of the block is negative) and its cycle.
        let mut live = LiveText::new(LiveMode::Verbose, String::new(), Resolution::Micros, 1, 2);
        let mut out = Vec::new();
        live.write_samples_of(&mut out, 0, &channel).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "       0:       1:       9\n       0:       3:       7\n       0:       5:      -1\n       0:       7:       6\n"
        );
    }
}
