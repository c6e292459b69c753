//! The `--spike` list, printed after the run and before the histogram, in
//! cyclictest's layout: an empty line, one `T:%2d Spike:%8ld: TS: %12ld`
//! line per recorded spike (thread, value, wake-up time in µs) in recording
//! order, `spikes = N` counting every spike (also those beyond
//! `--spike-nodes`), and an empty line. Nothing at all without a spike.

use std::io::{self, Write};

use rtlat_core::SpikeReport;

/// Writes the spike list.
pub fn write_spikes(w: &mut impl Write, spikes: &SpikeReport) -> io::Result<()> {
    if spikes.recorded.is_empty() {
        return Ok(());
    }
    writeln!(w)?;
    for s in &spikes.recorded {
        writeln!(
            w,
            "T:{:2} Spike:{:8}: TS: {:12}",
            s.thread, s.value, s.timestamp_us
        )?;
    }
    writeln!(w, "spikes = {}", spikes.total)?;
    writeln!(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::render;
    use rtlat_core::SpikeRecord;

    #[test]
    fn matches_cyclictest_layout() {
        let spikes = SpikeReport {
            recorded: vec![
                SpikeRecord {
                    thread: 0,
                    value: 21,
                    timestamp_us: 1_435_055_119,
                },
                SpikeRecord {
                    thread: 1,
                    value: 35,
                    timestamp_us: 1_435_089_133,
                },
            ],
            total: 13,
        };
        assert_eq!(
            render(|w| write_spikes(w, &spikes)),
            "\nT: 0 Spike:      21: TS:   1435055119\n\
             T: 1 Spike:      35: TS:   1435089133\nspikes = 13\n\n"
        );
    }

    #[test]
    fn nothing_without_spikes() {
        assert_eq!(render(|w| write_spikes(w, &SpikeReport::default())), "");
    }
}
