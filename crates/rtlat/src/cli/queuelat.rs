//! The `rtlat queuelat` command line: queuelat 2.4's options, read the way
//! its getopt_long reads them (`c:f:hm:p:q:t:` and the long names), turned
//! into validated [`Settings`]. Unlike C (atoi/atof, so `-m x` is 0 and
//! the run fails later or never ends), a bad or missing value is a
//! one-line [`UsageError`] (exit 2) and nothing is measured.

use std::ffi::OsString;
use std::sync::LazyLock;

use crate::queuelat::Settings;
use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, name_of, pick,
};
use rtlat_args::values::{OptionName, int_in, invalid};

use super::shared::Measure;

/// What `rtlat queuelat` is for, in one line.
pub const SUMMARY: &str = "a DPDK-like packet queue fed while copies are timed";

/// What the command line asks for: [`help_text`], or to run.
pub type Invocation = rtlat_args::Invocation<Measure<Settings>>;

#[derive(Default)]
struct Raw {
    cycles: Option<String>,
    freq: Option<String>,
    max_len: Option<String>,
    packets: Option<String>,
    queue_len: Option<String>,
    timeout: Option<String>,
}

/// queuelat 2.4's options, in its help's order.
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::c(Some('c'), "cycles", REQ, "N")
            .help(rtlat_args::lines![
                "cycles (of -f's clock) to process one packet, 1 or more; required"
            ])
            .apply(|r: &mut Raw, v| {
                r.cycles = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('f'), "freq", REQ, "F")
            .help(rtlat_args::lines![
                "TSC frequency in MHz (dmesg's \"Detected F MHz processor\"),",
                "more than 0; required",
            ])
            .apply(|r: &mut Raw, v| {
                r.freq = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["show this help and exit"])
            .shows_help(),
        Flag::c(Some('m'), "max-len", REQ, "LEN")
            .help(rtlat_args::lines![
                "maximum latency allowed, in nanoseconds, 1 or more; required"
            ])
            .apply(|r: &mut Raw, v| {
                r.max_len = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('p'), "packets", REQ, "F")
            .help(rtlat_args::lines![
                "million packets per second arriving, more than 0; required"
            ])
            .apply(|r: &mut Raw, v| {
                r.packets = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('q'), "queue-len", REQ, "N")
            .help(rtlat_args::lines![
                "write a trace_marker line for every block leaving more than",
                "N packets queued (0 or more); without -q, no trace lines",
            ])
            .apply(|r: &mut Raw, v| {
                r.queue_len = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('t'), "timeout", REQ, "TIME")
            .help(rtlat_args::lines![
                "stop after TIME seconds (0: no timeout), printing the histogram"
            ])
            .apply(|r: &mut Raw, v| {
                r.timeout = Some(v.text()?);
                Ok(())
            }),
    ]
});

fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// A finite float above 0 (what atof would read, strictly).
fn positive_float(id: Name, text: &str, what: &str) -> Result<f64, UsageError> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e9 => Ok(v),
        _ => Err(invalid(
            id,
            text,
            format_args!("expected {what}, more than 0"),
        )),
    }
}

fn required<'a>(value: &'a Option<String>, long: &str) -> Result<&'a str, UsageError> {
    value.as_deref().ok_or_else(|| {
        UsageError(format!(
            "options -m, -c, -p and -f are required ({} is missing)",
            name(long).spelling()
        ))
    })
}

/// Reads the `rtlat queuelat` command line (`args` without the program
/// name).
pub fn parse(args: &[OsString], _cmdline: String) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    let max_latency_ns = int_in(
        name("max-len"),
        required(&raw.max_len, "max-len")?,
        1..=i64::from(i32::MAX),
        "nanoseconds",
    )? as i32;
    let cycles_per_packet = int_in(
        name("cycles"),
        required(&raw.cycles, "cycles")?,
        1..=1_000_000_000,
        "a number of cycles",
    )? as i32;
    let mpps = positive_float(
        name("packets"),
        required(&raw.packets, "packets")?,
        "million packets per second",
    )? as f32;
    let freq_mhz = positive_float(
        name("freq"),
        required(&raw.freq, "freq")?,
        "a frequency in MHz",
    )?;
    let timeout_secs = match &raw.timeout {
        Some(text) => int_in(name("timeout"), text, 0..=i64::from(i32::MAX), "seconds")? as u32,
        None => 0,
    };
    let trace_above = match &raw.queue_len {
        Some(text) => Some(int_in(
            name("queue-len"),
            text,
            0..=i64::from(i32::MAX),
            "a queue length",
        )?),
        None => None,
    };
    Ok(Invocation::Run(Measure {
        settings: Settings {
            max_latency_ns,
            cycles_per_packet,
            mpps,
            freq_mhz,
            timeout_secs,
            trace_above,
        },
        warnings: Vec::new(),
    }))
}

/// The options and the help of `rtlat queuelat`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    Page {
        title: rtlat_args::tools::help_title("queuelat", SUMMARY),
        usage: vec!["rtlat queuelat -m LEN -c N -p F -f F [-t TIME] [-q N]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
Simulates a packet queue served by a busy loop. First the size of a copy
(memmove) is calibrated so that its most frequent time is about half of
-m; then each loop copies that block: packets arrive during the copy (-p
million a second) and a fixed number drain per block (what the time past
the calibration's peak allows at -c cycles a packet). When the queue holds
more than -m's worth of packets, \"queue length exceeded\" and the
histogram are printed; at the timeout or on Ctrl-C, the histogram and the
min/max/average loop times. Exit status 0 in both cases. Run it pinned
(taskset -c CPU) on an isolated CPU; determine_maximum_mpps drives it."
                    .to_owned(),
            ),
            pick(
                &FLAGS,
                &[
                    "cycles",
                    "freq",
                    "help",
                    "max-len",
                    "packets",
                    "queue-len",
                    "timeout",
                ],
            ),
            Part::Paragraph("Example: 20 us allowed, 300 cycles a packet, 3 Mpps, 2 s:".to_owned()),
            Part::Example("taskset -c 1 rtlat queuelat -m 20000 -c 300 -f 2100 -p 3 -t 2"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_testkit::parsing::{expect_run, expect_usage_error, os_words};

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        parse(&os_words(words), "queuelat".into())
    }

    const BASE: [&str; 8] = ["-m", "20000", "-c", "300", "-p", "3", "-f", "2100"];

    #[test]
    fn the_help_lists_every_visible_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }

    #[test]
    fn spellings_and_defaults() {
        let s = |extra: &[&str]| {
            let words: Vec<&str> = BASE.iter().chain(extra).copied().collect();
            expect_run(parse_words(&words), &words).settings
        };
        let d = s(&[]);
        assert_eq!(
            (
                d.max_latency_ns,
                d.cycles_per_packet,
                d.mpps,
                d.freq_mhz,
                d.timeout_secs,
                d.trace_above
            ),
            (20000, 300, 3.0, 2100.0, 0, None)
        );
        assert_eq!(s(&["-t2"]).timeout_secs, 2);
        assert_eq!(s(&["--timeout=3"]).timeout_secs, 3);
        assert_eq!(s(&["--time", "4"]).timeout_secs, 4);
        assert_eq!(s(&["-q", "5"]).trace_above, Some(5));
        assert_eq!(s(&["--packets=8.5"]).mpps, 8.5);
        assert_eq!(s(&["--max-len", "2000"]).max_latency_ns, 2000);
    }

    #[test]
    fn bad_values_name_the_option() {
        for (bad, prefix) in [
            (&["-m", "x"][..], "-m/--max-len: invalid value 'x'"),
            (&["-m", "0"], "-m/--max-len: invalid value '0'"),
            (&["-c", "0"], "-c/--cycles: invalid value '0'"),
            (&["-p", "-1"], "-p/--packets: invalid value '-1'"),
            (&["-p", "nan"], "-p/--packets: invalid value 'nan'"),
            (&["-f", "0"], "-f/--freq: invalid value '0'"),
            (&["-t", "x"], "-t/--timeout: invalid value 'x'"),
            (&["-q", "-1"], "-q/--queue-len: invalid value '-1'"),
            (&["-x"], "unrecognized option '-x'"),
            (&["extra"], "unexpected argument 'extra'"),
        ] {
            let words: Vec<&str> = BASE.iter().chain(bad).copied().collect();
            let e = expect_usage_error(parse_words(&words), &words);
            assert!(e.starts_with(prefix), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{words:?}: {e}");
        }
        let e = expect_usage_error(parse_words(&["-m", "2000"]), ["-m"]);
        assert!(
            e.starts_with("options -m, -c, -p and -f are required"),
            "{e}"
        );
    }
}
