//! The `rtlat monitor` command line: cyclictest's (read by
//! [`super::cyclictest`], with the monitor's defaults) plus the monitor's
//! own options, which live here: their table rows, raw values,
//! validation into a [`MonitorPlan`] and help lines.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, OptSpec, REQ};
use rtlat_args::options::{Apply, Flag, Layout, Name, Page, Part, pick};
use rtlat_args::values::{OptionName, decimal_duration, invalid};

use super::output_options::output_path;
use crate::monitor::settings::{
    DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_LISTEN, DEFAULT_WINDOWS, MonitorPlan, Window,
};

/// What `rtlat monitor` is for, in one line: `rtlat --help` lists it and
/// the help starts with it (at most 65 characters).
pub const SUMMARY: &str = "cyclictest until stopped: Prometheus metrics, checkpoints";

/// The monitor's own options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MonitorOpt {
    /// `--listen ADDR:PORT`.
    Listen,
    /// `--textfile FILE`.
    Textfile,
    /// `--window LIST`.
    Window,
    /// `--checkpoint FILE`.
    Checkpoint,
    /// `--checkpoint-interval TIME`.
    CheckpointInterval,
    /// `--resume`.
    Resume,
}

/// Their rows (newer than 2.4: no 2.4 abbreviation changes meaning; none
/// of them starts a 2.4 name: `--li`, `--te`, `--wi`, `--ch`, `--res`).
const ROWS: [OptSpec<MonitorOpt>; 6] = [
    OptSpec::new_long(MonitorOpt::Listen, "listen", REQ),
    OptSpec::new_long(MonitorOpt::Textfile, "textfile", REQ),
    OptSpec::new_long(MonitorOpt::Window, "window", REQ),
    OptSpec::new_long(MonitorOpt::Checkpoint, "checkpoint", REQ),
    OptSpec::new_long(MonitorOpt::CheckpointInterval, "checkpoint-interval", REQ),
    OptSpec::new_long(MonitorOpt::Resume, "resume", NO),
];

/// A tool's raw state that keeps the monitor's raw values.
pub trait HasMonitor {
    /// The monitor's raw values.
    fn monitor(&mut self) -> &mut MonitorArgs;
}

/// Whether `name` is one of the monitor's own options.
pub fn is_own(name: Name) -> bool {
    ROWS.iter()
        .any(|r| r.long == name.long && r.short == name.short)
}

/// How messages spell `which`.
pub fn name(which: MonitorOpt) -> Name {
    let row = ROWS
        .iter()
        .find(|r| r.id == which)
        .expect("every option has a row");
    Flag::<()>::from_row(row, "").name()
}

/// The definitions of the monitor's options, in [`ROWS`]' order.
pub fn flags<R: HasMonitor>() -> Vec<Flag<R>> {
    fn defined<R: HasMonitor>(
        which: MonitorOpt,
        value_name: &'static str,
        apply: Apply<R>,
    ) -> Flag<R> {
        let row = ROWS
            .iter()
            .find(|r| r.id == which)
            .expect("every option has a row");
        Flag::from_row(row, value_name).apply(apply)
    }
    vec![
        defined(MonitorOpt::Listen, "IP:PORT", |r: &mut R, v| {
            r.monitor().set(MonitorOpt::Listen, v.os_opt());
            Ok(())
        })
        .help(rtlat_args::lines![
            "serve them over HTTP at /metrics (port 0: any free",
            "port; the address taken is printed) [127.0.0.1:9489]",
        ]),
        defined(MonitorOpt::Textfile, "FILE", |r: &mut R, v| {
            r.monitor().set(MonitorOpt::Textfile, v.os_opt());
            Ok(())
        })
        .help(rtlat_args::lines![
            "also rewrite FILE whole every second, for",
            "node_exporter's textfile collector (name it *.prom;",
            "a regular file: a FIFO or device is refused);",
            "given alone, nothing is served over HTTP",
        ]),
        defined(MonitorOpt::Window, "LIST", |r: &mut R, v| {
            r.monitor().set(MonitorOpt::Window, v.os_opt());
            Ok(())
        })
        .help(rtlat_args::lines![
            "the rolling windows of the maxima and quantiles,",
            "lengths separated by commas",
        ])
        .default("1m,5m,1h"),
        defined(MonitorOpt::Checkpoint, "FILE", |r: &mut R, v| {
            r.monitor().set(MonitorOpt::Checkpoint, v.os_opt());
            Ok(())
        })
        .help(rtlat_args::lines![
            "write the whole state (distributions, counters,",
            "timeline) to FILE, atomically, every interval and at",
            "the end; FILE is a result, as --json writes it (a",
            "regular file: a FIFO or device is refused)",
        ]),
        defined(MonitorOpt::CheckpointInterval, "TIME", |r: &mut R, v| {
            r.monitor().set(MonitorOpt::CheckpointInterval, v.os_opt());
            Ok(())
        })
        .help(rtlat_args::lines!["", "how often"])
        .default("60s"),
        defined(MonitorOpt::Resume, "", |r: &mut R, v| {
            r.monitor().set(MonitorOpt::Resume, v.os_opt());
            Ok(())
        })
        .help(rtlat_args::lines![
            "carry on the totals of FILE (after a crash, a",
            "reboot, an upgrade); the time between the",
            "checkpoint and this start is recorded as a gap.",
            "FILE must come from this host, with the same",
            "threads, -i, -p, --policy, --wait, -c, --measure,",
            "-N and distribution, and add up; otherwise it is",
            "refused and left as it is",
        ]),
    ]
}

/// The raw values (the last one wins).
#[derive(Clone, Debug, Default)]
pub struct MonitorArgs {
    listen: Option<String>,
    textfile: Option<OsString>,
    window: Option<String>,
    checkpoint: Option<OsString>,
    checkpoint_interval: Option<String>,
    resume: bool,
    /// The first of them given, for `rtlat cyclictest`'s refusal.
    first: Option<MonitorOpt>,
}

/// The most windows.
const MAX_WINDOWS: usize = 8;
/// The longest window: a week.
const MAX_WINDOW: Duration = Duration::from_secs(7 * 86_400);
/// What a length accepts, for the messages.
const LENGTH: &str = "seconds, decimals allowed (0.5), or a number with a unit ms, s, m, h or d \
     (100ms, 2s, 1.5m)";

impl MonitorArgs {
    /// Keeps `value` for `which`.
    pub fn set(&mut self, which: MonitorOpt, value: Option<OsString>) {
        self.first.get_or_insert(which);
        let text = || value.as_ref().map(|v| v.to_string_lossy().into_owned());
        match which {
            MonitorOpt::Listen => self.listen = text(),
            MonitorOpt::Textfile => self.textfile = value,
            MonitorOpt::Window => self.window = text(),
            MonitorOpt::Checkpoint => self.checkpoint = value,
            MonitorOpt::CheckpointInterval => self.checkpoint_interval = text(),
            MonitorOpt::Resume => self.resume = true,
        }
    }

    /// The first monitor option given, if any.
    pub fn first_given(&self) -> Option<MonitorOpt> {
        self.first
    }

    /// The validated plan; `wrap` spells the options.
    pub fn validate<O: OptionName + Copy>(
        &self,
        wrap: impl Fn(MonitorOpt) -> O,
    ) -> Result<MonitorPlan, UsageError> {
        let name = |o: MonitorOpt| wrap(o).spelling();
        let textfile = match &self.textfile {
            Some(path) => Some(replaced_path(wrap(MonitorOpt::Textfile), path)?),
            None => None,
        };
        let listen = match (&self.listen, &textfile) {
            (Some(text), _) => Some(listen_address(text).ok_or_else(|| {
                invalid(
                    wrap(MonitorOpt::Listen),
                    text,
                    "expected IP:PORT, such as 127.0.0.1:9489, 0.0.0.0:9489 or [::1]:9489 \
                     (port 0: any free port)",
                )
            })?),
            // --textfile alone: the file only.
            (None, Some(_)) => None,
            (None, None) => DEFAULT_LISTEN.parse().ok(),
        };
        let windows = windows(self.window.as_deref().unwrap_or(DEFAULT_WINDOWS), || {
            wrap(MonitorOpt::Window)
        })?;
        let checkpoint: Option<PathBuf> = match &self.checkpoint {
            Some(path) => Some(replaced_path(wrap(MonitorOpt::Checkpoint), path)?),
            None => None,
        };
        let checkpoint_interval = match &self.checkpoint_interval {
            Some(text) => {
                let length = decimal_duration(text)
                    .and_then(|n| n.to_duration())
                    .filter(|d| *d >= Duration::from_secs(1) && *d <= MAX_WINDOW)
                    .ok_or_else(|| {
                        invalid(
                            wrap(MonitorOpt::CheckpointInterval),
                            text,
                            format_args!("expected 1 s to 7 days: {LENGTH}"),
                        )
                    })?;
                if checkpoint.is_none() {
                    return Err(UsageError(format!(
                        "{} needs {} FILE: the file to write",
                        name(MonitorOpt::CheckpointInterval),
                        name(MonitorOpt::Checkpoint)
                    )));
                }
                length
            }
            None => DEFAULT_CHECKPOINT_INTERVAL,
        };
        if self.resume {
            let Some(path) = &checkpoint else {
                return Err(UsageError(format!(
                    "{} needs {} FILE: the checkpoint to resume from",
                    name(MonitorOpt::Resume),
                    name(MonitorOpt::Checkpoint)
                )));
            };
            if !path.is_file() {
                return Err(UsageError(format!(
                    "{}: there is no checkpoint at '{}' to resume from (leave out {} to start \
                     one)",
                    name(MonitorOpt::Resume),
                    path.display(),
                    name(MonitorOpt::Resume)
                )));
            }
        }
        Ok(MonitorPlan {
            listen,
            textfile,
            windows,
            checkpoint,
            checkpoint_interval,
            resume: self.resume,
        })
    }
}

/// A file rewritten whole at every update (`--textfile`, `--checkpoint`):
/// checked as every output is ([`output_path`]), and refused unless a
/// regular file or a new name, so that neither a FIFO that blocks nor a
/// file under /proc is found out only when the first update is due.
fn replaced_path(id: impl OptionName, raw: &std::ffi::OsStr) -> Result<PathBuf, UsageError> {
    let path = output_path(id, raw)?;
    rtlat_args::output_file::check_replaceable(&path).map_err(|why| {
        UsageError(format!(
            "{}: cannot write '{}': {why}",
            id.spelling(),
            raw.to_string_lossy()
        ))
    })?;
    Ok(path)
}

/// `IP:PORT` (`[IPv6]:PORT`).
fn listen_address(text: &str) -> Option<SocketAddr> {
    text.trim().parse().ok()
}

/// `--window LIST`: comma-separated lengths, each 1 s to 7 days, distinct,
/// at most [`MAX_WINDOWS`]; returned shortest first.
fn windows<O: OptionName + Copy>(
    list: &str,
    id: impl Fn() -> O,
) -> Result<Vec<Window>, UsageError> {
    let bad = |why: String| invalid(id(), list, why);
    let mut windows = Vec::new();
    for label in list.split(',').map(str::trim) {
        let length = decimal_duration(label)
            .and_then(|n| n.to_duration())
            .filter(|d| *d >= Duration::from_secs(1) && *d <= MAX_WINDOW);
        let Some(length) = length else {
            return Err(bad(format!(
                "'{label}' is not a window: expected lengths of 1 s to 7 days separated by \
                 commas (1m,5m,1h): {LENGTH}"
            )));
        };
        if windows.iter().any(|w: &Window| w.length == length) {
            return Err(bad(format!("'{label}' is given twice")));
        }
        windows.push(Window {
            label: label.to_owned(),
            length,
        });
    }
    if windows.len() > MAX_WINDOWS {
        return Err(bad(format!("at most {MAX_WINDOWS} windows")));
    }
    windows.sort_by_key(|w| w.length);
    Ok(windows)
}

impl HasMonitor for MonitorArgs {
    fn monitor(&mut self) -> &mut MonitorArgs {
        self
    }
}

/// The monitor's own definitions, for its help page.
static OWN: LazyLock<Vec<Flag<MonitorArgs>>> = LazyLock::new(flags);

/// `rtlat monitor --help`.
pub fn help_text() -> String {
    help_page().render()
}

/// `rtlat monitor --help`: cyclictest's options are in its own page.
pub fn help_page() -> Page<'static, MonitorArgs> {
    Page {
        title: rtlat_args::tools::help_title("monitor", SUMMARY),
        usage: vec!["rtlat monitor [CYCLICTEST OPTIONS] [MONITOR OPTIONS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
Measures as rtlat cyclictest does, until stopped (SIGINT, SIGTERM; or -D, -l),
and publishes what it sees every second: each thread's latency histogram,
the maxima and 99th, 99.9th and 99.99th percentiles of rolling windows and
since the start, samples, missed periods, the verdict. At the end it prints
cyclictest's -q summary (with --percentiles and --verdict if asked) and
writes --json and the last checkpoint."
                    .to_owned(),
            ),
            Part::Paragraph(
                "\
Defaults that differ from cyclictest's: one thread per CPU the process may
use, each pinned to its CPU (as -a -t; -S, -a LIST, -t N choose otherwise),
all at one interval (-d 0), -p 95 (SCHED_FIFO), -m; -i stays 1000. Every
other cyclictest option works as in rtlat cyclictest (rtlat cyclictest
--help), but for -v, -M, -o and -h (no display, no -h block: the histogram
is a metric) and --synthetic."
                    .to_owned(),
            ),
            Part::Heading("Metrics (Prometheus text format, or OpenMetrics when the scraper asks)"),
            pick(&OWN, &["listen", "textfile", "window"]),
            Part::Heading("Checkpoints"),
            pick(&OWN, &["checkpoint", "checkpoint-interval", "resume"]),
            Part::Paragraph(
                "\
Exit status: 0 when stopped or ended, 1 when the machine refused something
(an address in use included), 2 for a bad command line."
                    .to_owned(),
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_args::values::spelling;

    impl OptionName for MonitorOpt {
        fn spelling(self) -> String {
            spelling(self, ROWS.iter())
        }
    }

    fn plan(args: &[(MonitorOpt, &str)]) -> Result<MonitorPlan, String> {
        let mut raw = MonitorArgs::default();
        for &(opt, value) in args {
            raw.set(opt, Some(OsString::from(value)));
        }
        raw.validate(|o| o).map_err(|e| e.0)
    }

    #[test]
    fn defaults() {
        let p = plan(&[]).unwrap();
        assert_eq!(p.listen, Some("127.0.0.1:9489".parse().unwrap()));
        assert_eq!(
            p.windows
                .iter()
                .map(|w| w.length.as_secs())
                .collect::<Vec<_>>(),
            [60, 300, 3600]
        );
        assert_eq!((p.checkpoint, p.resume), (None, false));
        assert_eq!(p.checkpoint_interval, Duration::from_secs(60));
        let textfile_only = plan(&[(MonitorOpt::Textfile, "/tmp/x.prom")]).unwrap();
        assert_eq!(textfile_only.listen, None);
    }

    #[test]
    fn windows_are_sorted_and_checked() {
        let p = plan(&[(MonitorOpt::Window, "1h, 30s,2m")]).unwrap();
        assert_eq!(
            p.windows
                .iter()
                .map(|w| w.label.as_str())
                .collect::<Vec<_>>(),
            ["30s", "2m", "1h"]
        );
        for (list, want) in [
            ("0s", "'0s' is not a window"),
            ("1m,60s", "'60s' is given twice"),
            ("1m,,5m", "'' is not a window"),
            ("8d", "'8d' is not a window"),
            ("1s,2s,3s,4s,5s,6s,7s,8s,9s", "at most 8 windows"),
        ] {
            let e = plan(&[(MonitorOpt::Window, list)]).unwrap_err();
            assert!(
                e.starts_with("--window: invalid value") && e.contains(want),
                "{e}"
            );
        }
    }

    #[test]
    fn bad_values_are_one_line() {
        for (args, want) in [
            (
                vec![(MonitorOpt::Listen, "nothere")],
                "--listen: invalid value 'nothere': expected IP:PORT",
            ),
            (
                vec![
                    (MonitorOpt::Checkpoint, "/tmp/c.json"),
                    (MonitorOpt::CheckpointInterval, "0"),
                ],
                "--checkpoint-interval: invalid value '0': expected 1 s to 7 days",
            ),
            (
                vec![(MonitorOpt::CheckpointInterval, "10s")],
                "--checkpoint-interval needs --checkpoint FILE",
            ),
            (
                vec![(MonitorOpt::Resume, "")],
                "--resume needs --checkpoint FILE",
            ),
            (
                vec![
                    (MonitorOpt::Checkpoint, "/nonexistent-dir-rtlat/c.json"),
                    (MonitorOpt::Resume, ""),
                ],
                "--checkpoint: ",
            ),
        ] {
            let e = plan(&args).unwrap_err();
            assert!(e.starts_with(want), "{e}\nwanted: {want}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn help_lines_fit() {
        let help = help_text();
        assert!(help.lines().all(|l| l.chars().count() <= 80), "{help}");
        assert_eq!(
            rtlat_args::options::unlisted(&OWN, &help_page()),
            (vec![], vec![])
        );
    }
}
