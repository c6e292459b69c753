//! The `--help` pages of the four ipc tools: their prose and the entries
//! of their options, made from the definitions.

use rtlat_args::options::{Flag, Layout, Page, Part, find, like};

use super::flags::flags;
use super::raw::Raw;
use crate::cli::{gates, load_options, verdict_options};
use crate::ipc::PairTool;

/// What `rtlat <tool>` is for, in one line: `rtlat --help` lists it and
/// the help starts with it (at most 65 characters).
pub fn summary(tool: PairTool) -> &'static str {
    match tool {
        PairTool::Svsematest => "hand-off latency between threads through a SysV semaphore",
        PairTool::Pmqtest => "hand-off latency between threads through a POSIX message queue",
        PairTool::Ptsematest => "hand-off latency between threads through a futex semaphore",
        PairTool::Sigwaittest => "hand-off latency between threads through a signal (sigwait)",
    }
}

/// `rtlat <tool> --help`.
pub(super) fn help_page(tool: PairTool) -> Page<'static, Raw> {
    let name = tool.name();
    let flags = flags(tool);
    let own: &[&str] = match tool {
        PairTool::Svsematest => &["smp"],
        PairTool::Pmqtest => &["smp", "timeout", "forcetimeout"],
        PairTool::Ptsematest => &["smp"],
        PairTool::Sigwaittest => &[],
    };
    let fork: Vec<&Flag<Raw>> = match tool {
        PairTool::Svsematest | PairTool::Sigwaittest => find(flags, &["fork"]),
        PairTool::Pmqtest | PairTool::Ptsematest => Vec::new(),
    };
    let options = Part::Options(
        [
            find(
                flags,
                &["threads", "interval", "distance", "priority", "affinity"],
            ),
            find(flags, own),
            fork,
            find(
                flags,
                &[
                    "loops",
                    "duration",
                    "breaktrace",
                    "quiet",
                    "json",
                    "histogram",
                    "histfile",
                    "nsecs",
                    "rt-tests",
                    "verdict",
                ],
            ),
            like(flags, &verdict_options::flags::<Raw>()),
            like(flags, &gates::flags::<Raw>()),
            like(flags, &load_options::flags::<Raw>()),
            find(flags, &["help"]),
        ]
        .concat(),
    );
    Page {
        title: rtlat_args::tools::help_title(name, summary(tool)),
        usage: vec![format!("rtlat {name} [OPTIONS]")],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(format!(
                "\
Each pair has a receiver and a sender. The sender reads the clock and wakes
the receiver, which reads the clock as soon as it runs: the difference is
the latency, in microseconds (CLOCK_MONOTONIC). The receiver then pauses
for its interval and lets the sender start the next hand-off.
{how}
The options are those of rt-tests {name} 2.4.",
                how = how(tool)
            )),
            Part::Heading("Options"),
            options,
            Part::Paragraph("Output, one block per refresh:".to_owned()),
            Part::Example(
                "\
#0: ID<tid>, P<prio>, CPU<cpu>, I<interval>;
    #1: ID<tid>, P<prio>, CPU<cpu>, Cycles <n>
#1 -> #0, Min <us>, Cur <us>, Avg <us>, Max <us>",
            ),
            Part::Paragraph(
                "Example: two pairs at priority 80, 200 us apart, 10000 hand-offs each:".to_owned(),
            ),
            Part::Example(match tool {
                PairTool::Svsematest => "rtlat svsematest -q -p 80 -i 200 -t 2 -l 10000",
                PairTool::Pmqtest => "rtlat pmqtest -q -p 80 -i 200 -t 2 -l 10000",
                PairTool::Ptsematest => "rtlat ptsematest -q -p 80 -i 200 -t 2 -l 10000",
                PairTool::Sigwaittest => "rtlat sigwaittest -q -p 80 -i 200 -t 2 -l 10000",
            }),
        ],
    }
}

/// How `tool`'s sender wakes its receiver.
fn how(tool: PairTool) -> &'static str {
    match tool {
        PairTool::Svsematest => {
            "The sender posts a semaphore the receiver waits on (semop); both sides\n\
             use a private semaphore set, so runs never disturb each other."
        }
        PairTool::Pmqtest => {
            "The sender sends a message the receiver waits for (mq_receive); the\n\
             receiver answers on a second queue."
        }
        PairTool::Ptsematest => {
            "The sender posts a futex-based binary semaphore the receiver sleeps on,\n\
             the wake-up path of the C tool's mutex hand-off."
        }
        PairTool::Sigwaittest => {
            "The sender sends SIGUSR2 (pthread_kill) to the receiver, which takes it\n\
             with sigwaitinfo; SIGUSR1 goes back."
        }
    }
}
