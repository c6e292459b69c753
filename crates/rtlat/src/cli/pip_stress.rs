//! The `rtlat pip_stress` command line: pip_stress 2.4 has `-h/--help`
//! only; 2.9 added `-u/--usleep=TIME` (how long the low process keeps
//! the mutex; 500 µs), which rtlat takes in every dialect. The hidden
//! `--hold-us` (the test seam it was before) is the same value.

use std::ffi::OsString;
use std::sync::LazyLock;

use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, name_of, pick,
};
use rtlat_args::values::{SystemView, int_in};

use super::shared::Measure;
use crate::pip_stress::Settings;

/// What `rtlat pip_stress` is for, in one line.
pub const SUMMARY: &str = "priority inheritance between processes on a shared PI mutex";

/// What the command line asks for: [`help_text`], or to run.
pub type Invocation = rtlat_args::Invocation<Measure<Settings>>;

#[derive(Default)]
pub(super) struct Raw {
    hold_us: Option<String>,
}

static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        Flag::c(Some('u'), "usleep", REQ, "TIME")
            .help(rtlat_args::lines![
                "the low priority process sleeps TIME us holding the",
                "mutex (rt-tests 2.9's option)",
            ])
            .default("500")
            .apply(|r: &mut Raw, v| {
                r.hold_us = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("hold-us", REQ, "US")
            .hidden()
            .apply(|r: &mut Raw, v| {
                r.hold_us = Some(v.text()?);
                Ok(())
            }),
    ]
});

fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// Reads the `rtlat pip_stress` command line.
pub fn parse(args: &[OsString], system: &SystemView) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    let hold_us = match &raw.hold_us {
        Some(text) => int_in(name("usleep"), text, 1..=10_000_000, "microseconds")? as u64,
        None => 500,
    };
    let cpu = system.allowed_cpus.iter().copied().min().unwrap_or(0);
    Ok(Invocation::Run(Measure {
        settings: Settings { cpu, hold_us },
        warnings: Vec::new(),
    }))
}

/// The options and the help of `rtlat pip_stress`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    Page {
        title: rtlat_args::tools::help_title("pip_stress", SUMMARY),
        usage: vec!["rtlat pip_stress".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
Three processes on one CPU share a priority-inheritance mutex: the low
priority one (SCHED_FIFO 1) takes it and sleeps 500 us, the high one (3)
blocks on it, the medium one (2) spins. Priority inheritance lets the low
one run ahead of the medium one and release the mutex; the high one then
ends the medium one. Prints whether the inversion happened and was
resolved (exit 0) or not (exit 1), as rt-tests pip_stress 2.4. The
processes die with rtlat, whatever ends it."
                    .to_owned(),
            ),
            pick(&FLAGS, &["usleep", "help"]),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_testkit::parsing::{os_words, two_cpus};

    #[test]
    fn help_and_bad_input() {
        assert!(matches!(
            parse(&os_words(&["-h"]), &two_cpus()),
            Ok(Invocation::Help)
        ));
        let Ok(Invocation::Run(m)) = parse(&os_words(&[]), &two_cpus()) else {
            panic!()
        };
        assert_eq!((m.settings.cpu, m.settings.hold_us), (0, 500));
        for words in [
            &["-u", "800"][..],
            &["-u800"],
            &["--usl=800"],
            &["--hold-us=800"],
        ] {
            let Ok(Invocation::Run(m)) = parse(&os_words(words), &two_cpus()) else {
                panic!("{words:?}")
            };
            assert_eq!(m.settings.hold_us, 800, "{words:?}");
        }
        for (words, want) in [
            (&["-s", "1"][..], "unrecognized option '-s'"),
            (&["-u", "0"], "-u/--usleep: invalid value '0'"),
            (&["--usleep=x"], "-u/--usleep: invalid value 'x'"),
            (&["x"], "unexpected argument 'x'"),
        ] {
            let e = parse(&os_words(words), &two_cpus()).unwrap_err().0;
            assert!(e.starts_with(want), "{words:?}: {e}");
        }
    }

    #[test]
    fn the_help_lists_every_visible_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rtlat_args::options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }
}
