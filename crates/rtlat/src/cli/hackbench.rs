//! The `rtlat hackbench` command line: hackbench 2.4's options, read the
//! way its getopt reads them (`ps:l:g:f:TPFhi` and the long names, among
//! them `--processes`, which its help misspells `--process`), turned into
//! validated [`Settings`].
//!
//! Unlike C (`atoi`, then `> 0`: `-l 5x` is 5, `-l x` an error with the
//! usage text and exit 1), every value is checked whole and a bad one is
//! a one-line [`UsageError`] naming the option, the value and what is
//! accepted, exit 2.

use std::ffi::OsString;
use std::sync::LazyLock;

use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, name_of, pick,
};
use rtlat_args::values::{OptionName, int_in};
use rtlat_core::hackbench::{HackbenchConfig, Mode, Transport};

use crate::hackbench::Settings;

/// What `rtlat hackbench` is for, in one line: `rtlat --help` lists it and
/// the help starts with it (at most 65 characters).
pub const SUMMARY: &str = "scheduler and IPC throughput: groups passing messages";

/// What the command line asks for: [`help_text`], or to run.
pub type Invocation = rtlat_args::Invocation<Settings>;

/// The most groups (`-g`): 10,000 groups of 20 are 400,000 tasks.
const MAX_GROUPS: i64 = 10_000;
/// The most receivers (and senders) per group (`-f`).
const MAX_FDS: i64 = 10_000;
/// The largest message (`-s`), 16 MiB.
const MAX_DATASIZE: i64 = 16 << 20;

#[derive(Default)]
struct Raw {
    pipe: bool,
    inet: bool,
    threads: bool,
    fifo: bool,
    datasize: Option<String>,
    loops: Option<String>,
    groups: Option<String>,
    fds: Option<String>,
}

/// hackbench 2.4's options, in its getopt table's order.
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::c(Some('p'), "pipe", NO, "")
            .help(rtlat_args::lines!["send the messages through pipes"])
            .apply(|r: &mut Raw, _| {
                r.pipe = true;
                Ok(())
            }),
        Flag::c(Some('s'), "datasize", REQ, "BYTES")
            .help(rtlat_args::lines!["size of a message"])
            .default("100")
            .apply(|r: &mut Raw, v| {
                r.datasize = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('l'), "loops", REQ, "N")
            .help(rtlat_args::lines![
                "messages each sender sends to each receiver"
            ])
            .default("100")
            .apply(|r: &mut Raw, v| {
                r.loops = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('g'), "groups", REQ, "N")
            .help(rtlat_args::lines!["number of groups"])
            .default("10")
            .apply(|r: &mut Raw, v| {
                r.groups = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('f'), "fds", REQ, "N")
            .help(rtlat_args::lines![
                "receivers per group, and as many senders (the",
                "first line counts 2N file descriptors)",
            ])
            .default("20")
            .apply(|r: &mut Raw, v| {
                r.fds = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('T'), "threads", NO, "")
            .help(rtlat_args::lines!["tasks are threads of this process"])
            .apply(|r: &mut Raw, _| {
                r.threads = true;
                Ok(())
            }),
        Flag::c(Some('P'), "processes", NO, "")
            .help(rtlat_args::lines![
                "tasks are forked processes (the default; the last",
                "of -T and -P counts)",
            ])
            .apply(|r: &mut Raw, _| {
                r.threads = false;
                Ok(())
            }),
        Flag::c(Some('F'), "fifo", NO, "")
            .help(rtlat_args::lines![
                "make the main thread SCHED_FIFO 1 once the tasks",
                "exist",
            ])
            .apply(|r: &mut Raw, _| {
                r.fifo = true;
                Ok(())
            }),
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        Flag::c(Some('i'), "inet", NO, "")
            .help(rtlat_args::lines![
                "send the messages through TCP connections over",
                "127.0.0.1",
            ])
            .apply(|r: &mut Raw, _| {
                r.inet = true;
                Ok(())
            }),
    ]
});

fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// Reads the `rtlat hackbench` command line (`args` without the program
/// name).
pub fn parse(args: &[OsString]) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    build(&raw).map(Invocation::Run)
}

fn count(
    long: &str,
    text: Option<&str>,
    default: u32,
    max: i64,
    what: &str,
) -> Result<u32, UsageError> {
    match text {
        None => Ok(default),
        Some(text) => {
            let v = int_in(name(long), text, 1..=max, what)?;
            Ok(u32::try_from(v).expect("within the range checked"))
        }
    }
}

fn build(raw: &Raw) -> Result<Settings, UsageError> {
    let datasize = count(
        "datasize",
        raw.datasize.as_deref(),
        100,
        MAX_DATASIZE,
        "a message size in bytes",
    )?;
    let loops = count(
        "loops",
        raw.loops.as_deref(),
        100,
        i64::from(i32::MAX),
        "a number of messages",
    )?;
    let groups = count(
        "groups",
        raw.groups.as_deref(),
        10,
        MAX_GROUPS,
        "a number of groups",
    )?;
    let fds = count(
        "fds",
        raw.fds.as_deref(),
        20,
        MAX_FDS,
        "a number of receivers per group",
    )?;
    if raw.pipe && raw.inet {
        return Err(UsageError(format!(
            "{} and {} cannot be used together",
            name("pipe").spelling(),
            name("inet").spelling()
        )));
    }
    let transport = if raw.pipe {
        Transport::Pipe
    } else if raw.inet {
        Transport::Inet
    } else {
        Transport::Socket
    };
    Ok(Settings {
        config: HackbenchConfig {
            mode: if raw.threads {
                Mode::Threads
            } else {
                Mode::Process
            },
            transport,
            groups,
            fds,
            loops,
            datasize,
            fifo: raw.fifo,
        },
    })
}

/// The options and the help of `rtlat hackbench`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    let group = |longs: &[&str]| pick(&FLAGS, longs);
    Page {
        title: rtlat_args::tools::help_title("hackbench", SUMMARY),
        usage: vec!["rtlat hackbench [OPTIONS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
A group is N receivers, each on a connection of its own, and N senders,
each sending every receiver of its group the same number of messages.
Once every task is ready they all start; the time from the start to the
last task's end is printed in seconds. The options are those of rt-tests
hackbench 2.4: short options group (-Tp), values may be attached (-g4)
or separate (-g 4), and long options may be shortened while unambiguous
(--proc)."
                    .to_owned(),
            ),
            Part::Heading("Tasks and messages"),
            group(&["groups", "fds", "loops", "datasize", "processes", "threads"]),
            Part::Heading("Transport (UNIX socket pairs by default)"),
            group(&["pipe", "inet"]),
            Part::Heading("Scheduling"),
            group(&["fifo"]),
            group(&["help"]),
            Part::Paragraph("Example: rteval's load, once:".to_owned()),
            Part::Example("rtlat hackbench -P -g 4 -l 1000 -s 1000"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_testkit::parsing::os_words;

    fn settings(words: &[&str]) -> Settings {
        match parse(&os_words(words)) {
            Ok(Invocation::Run(s)) => s,
            Ok(Invocation::Help) => panic!("{words:?}: help"),
            Err(e) => panic!("{words:?}: {e}"),
        }
    }

    fn error(words: &[&str]) -> String {
        match parse(&os_words(words)) {
            Err(e) => e.0,
            Ok(_) => panic!("{words:?} accepted"),
        }
    }

    #[test]
    fn the_defaults_are_cs() {
        let s = settings(&[]).config;
        assert_eq!(
            s,
            HackbenchConfig {
                mode: Mode::Process,
                transport: Transport::Socket,
                groups: 10,
                fds: 20,
                loops: 100,
                datasize: 100,
                fifo: false,
            }
        );
        assert_eq!(s.tasks(), 400);
    }

    #[test]
    fn every_spelling_reads_as_in_c() {
        let s = settings(&["-Tpg4", "-l", "7", "--datasize=9", "--fds", "3", "-F"]).config;
        assert_eq!(
            (
                s.mode,
                s.transport,
                s.groups,
                s.loops,
                s.datasize,
                s.fds,
                s.fifo
            ),
            (Mode::Threads, Transport::Pipe, 4, 7, 9, 3, true)
        );
        assert_eq!(settings(&["-T", "--processes"]).config.mode, Mode::Process);
        assert_eq!(settings(&["-T", "--proc"]).config.mode, Mode::Process);
        assert_eq!(settings(&["--thr", "--gr=2"]).config.groups, 2);
        assert_eq!(settings(&["-i"]).config.transport, Transport::Inet);
        assert!(matches!(parse(&os_words(&["-h"])), Ok(Invocation::Help)));
        assert!(matches!(
            parse(&os_words(&["--help"])),
            Ok(Invocation::Help)
        ));
    }

    #[test]
    fn bad_values_are_one_line_naming_the_option() {
        for (words, wants) in [
            (&["-g", "0"][..], "-g/--groups: invalid value '0'"),
            (&["-l", "5x"][..], "-l/--loops: invalid value '5x'"),
            (&["-s", "-1"][..], "-s/--datasize: invalid value '-1'"),
            (&["-f", "abc"][..], "-f/--fds: invalid value 'abc'"),
            (&["-g", "10001"][..], "1 to 10000"),
            (
                &["-p", "-i"][..],
                "-p/--pipe and -i/--inet cannot be used together",
            ),
        ] {
            let e = error(words);
            assert!(e.contains(wants), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
