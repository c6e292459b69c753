//! `rtlat cyclictest --help`, made from the option definitions
//! ([`FLAGS`]) and the page's prose, and the option table the man pages
//! and completions read.

use super::flags::FLAGS;
use super::raw::{Flavour, Raw};
use crate::cli::{explain, gates, load_options, monitor, verdict_options};
use rtlat_args::docs::help::Help;
use rtlat_args::getopt::OptSpec;
use rtlat_args::options::{Flag, Layout, Page, Part, find, like, pick};

/// What `rtlat cyclictest` is for, in one line: `rtlat --help` lists it and
/// the help starts with it (at most 65 characters).
pub const SUMMARY: &str = "measure how late a periodic timer wakes a thread up";

/// The option table of `flavour`, as the man page and the completions see
/// it: rtlat monitor's has every row, rtlat cyclictest's all but the
/// monitor's own.
pub fn table(flavour: Flavour) -> Vec<OptSpec<()>> {
    FLAGS
        .iter()
        .filter(|flag| flavour == Flavour::Monitor || !monitor::is_own(flag.name()))
        .map(Flag::row)
        .collect()
}

/// The text of `rtlat cyclictest --help`.
pub fn help_text() -> String {
    help_page().render()
}

/// `rtlat cyclictest --help` as the man pages and completions read it.
pub fn help_model() -> Help {
    help_page().model()
}

/// `rtlat cyclictest --help`: its prose and the groups of its options.
pub(super) fn help_page() -> Page<'static, Raw> {
    let group = |longs: &[&str]| pick(&FLAGS, longs);
    Page {
        title: rtlat_args::tools::help_title("cyclictest", SUMMARY),
        usage: vec!["rtlat cyclictest [OPTIONS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
Each measuring thread sleeps until its next deadline, reads the clock as soon
as it runs again and records how late it woke up. Figures are in microseconds
(nanoseconds with -N). The options are those of rt-tests cyclictest 2.4:
short options group (-qmu), values may be attached (-p99) or separate
(-p 99), and long options may be shortened while unambiguous (--dur)."
                    .to_owned(),
            ),
            Part::Heading("Threads and timing"),
            group(&[
                "threads",
                "interval",
                "distance",
                "clock",
                "relative",
                "system",
                "posix_timers",
                "wait",
                "measure",
                "aligned",
                "secaligned",
                "nsecs",
            ]),
            Part::Heading("Scheduling, CPUs and memory"),
            group(&[
                "priority",
                "policy",
                "priospread",
                "affinity",
                "smp",
                "mainaffinity",
                "mlockall",
                "smi",
            ]),
            Part::Heading("When to stop (by default the run goes on until Ctrl-C)"),
            group(&["loops", "duration", "breaktrace", "tracemark"]),
            Part::Heading("Output"),
            group(&[
                "quiet",
                "no-progress",
                "verbose",
                "oscope",
                "refresh_on_max",
                "unbuffered",
                "histogram",
                "histofall",
                "histfile",
                "json",
                "rt-tests",
                "stats-interval",
                "stats-file",
            ]),
            Part::Heading("Percentiles (every run keeps every sample's bucket, whatever -h says)"),
            Part::Options(
                [
                    find(&FLAGS, &["percentiles", "bucket-width", "verdict"]),
                    like(&FLAGS, &verdict_options::flags::<Raw>()),
                    find(&FLAGS, &["hgrm", "hgrm-per-thread"]),
                ]
                .concat(),
            ),
            Part::Heading("Background load (see rtlat load --help for the kinds)"),
            Part::Options(like(&FLAGS, &load_options::flags::<Raw>())),
            Part::Heading("Gates for CI (checked after every output is written; exit status 3)"),
            Part::Options(
                [
                    like(&FLAGS, &gates::flags::<Raw>()),
                    find(
                        &FLAGS,
                        &[
                            "spike",
                            "spike-nodes",
                            "fifo",
                            "resolution",
                            "dbg_cyclictest",
                        ],
                    ),
                ]
                .concat(),
            ),
            Part::Heading("Why was it late (kernel trace events; needs root and tracefs)"),
            Part::Options(like(&FLAGS, &explain::flags::<Raw>())),
            Part::Heading("Power management (/dev/cpu_dma_latency)"),
            group(&["latency", "laptop", "default-system", "deepest-idle-state"]),
            group(&["help"]),
            Part::Paragraph(
                "\
Example: one thread per CPU at priority 90, 200 us period, for one minute,
with a 400-bucket histogram at the end:"
                    .to_owned(),
            ),
            Part::Example("rtlat cyclictest -m -S -p 90 -i 200 -D 1m -q -h 400"),
        ],
    }
}
