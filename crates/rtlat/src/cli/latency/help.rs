//! `rtlat latency --help`: its prose and its options in Xenomai's layout
//! (short options' text at column 12, long options' at 24), made from the
//! definitions in [`flags`](super::flags).

use rtlat_args::docs::help::Help;
use rtlat_args::options::{DefaultAt, Layout, Page, Part, find, find_short, like};

use super::Raw;
use super::flags::FLAGS;
use crate::cli::{explain, gates, load_options, verdict_options};

/// What `rtlat latency` is for, in one line: `rtlat --help` lists it and
/// the help starts with it (at most 65 characters).
pub const SUMMARY: &str = "Xenomai's `latency` test on Linux: timer wake-up latency";

/// Xenomai's layout: `-p US` and its text at column 12, a long option's
/// text at 24 (at least two spaces after it), further lines at 12, a
/// default one space after its text.
const XENOMAI: Layout = Layout {
    column: 24,
    short_only_column: 12,
    continuation: 12,
    long_value: '=',
    default: DefaultAt::AfterText,
};

/// The text of `rtlat latency --help`.
pub fn help_text() -> String {
    help_page().render()
}

/// What the man page and the completions read of the help.
pub fn help_model() -> Help {
    help_page().model()
}

/// `rtlat latency --help`: its prose and its options.
fn help_page() -> Page<'static, Raw> {
    let options = [
        find_short(
            &FLAGS,
            &[
                'p', 'T', 'P', 'c', 'l', 'q', 'h', 's', 'H', 'B', 'g', 'f', 't',
            ],
        ),
        find(&FLAGS, &["json", "verdict"]),
        // Whole groups: an option added to one is listed by itself.
        like(&FLAGS, &verdict_options::flags::<Raw>()),
        like(&FLAGS, &gates::flags::<Raw>()),
        like(&FLAGS, &load_options::flags::<Raw>()),
        like(&FLAGS, &explain::flags::<Raw>()),
        find(&FLAGS, &["help"]),
    ]
    .concat();
    Page {
        title: rtlat_args::tools::help_title("latency", SUMMARY),
        usage: vec!["rtlat latency [OPTIONS]".to_owned()],
        layout: XENOMAI,
        parts: vec![
            Part::Paragraph(
                "\
One SCHED_FIFO thread wakes up every period on a periodic timerfd and
measures how late it woke up. The first second is a warm-up and is
discarded; then one RTD line per second gives that second's minimum,
average and maximum, the overruns so far, the mode switches (always 0 on
Linux) and the best and worst so far. All results in microseconds.
The options are those of Xenomai 3 `latency` (short options only; -h is
the histograms, not the help)."
                    .to_owned(),
            ),
            Part::Heading("Options"),
            Part::Options(options),
            Part::Paragraph(
                "\
Not on Linux: -t 1 and -t 2 (in-kernel task and timer handler), -D
(timerbench device) and -b (break on mode switch) need the Xenomai kernel."
                    .to_owned(),
            ),
            Part::Paragraph(
                "\
Unlike Xenomai, negative latencies keep their sign in the histograms,
samples beyond the last bucket are counted on HSO lines instead of being
added to it, and the HSS average and deviation are computed from the exact
samples, in microseconds whatever the bucket width."
                    .to_owned(),
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_args::options::unlisted;

    #[test]
    fn every_visible_option_is_listed_once() {
        assert_eq!(unlisted(&FLAGS, &help_page()), (vec![], vec![]));
    }
}
