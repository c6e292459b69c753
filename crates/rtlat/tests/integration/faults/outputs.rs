//! Output files under faults: every output option of every tool is checked
//! before the first sample (a read-only file system, a full one, a name too
//! long: refused at once, not after the run), a file is written whole or not
//! at all (space running out at the end leaves the old file and no
//! temporary one), a planted symbolic link is replaced, not followed, `-F`
//! that cannot make its FIFO exits 1, `--hgrm=-` goes to stdout,
//! `--stats-interval` takes units, and file names need not be UTF-8. The
//! file-system cases mount a small tmpfs of their own (root; SKIPPED
//! otherwise) and unmount it however the test ends.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::*;

/// A run that would measure for 30 s must be refused well before.
const REFUSED_WITHIN: Duration = Duration::from_secs(10);

/// A tmpfs mounted on a temporary directory for one test, unmounted (and
/// the directory removed) when dropped, also when the test fails.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs with `options` (`size=64k`), or says why it cannot.
    fn mount(options: &str) -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "rtlat-test"])
            .arg(dir.path())
            .stdin(Stdio::null())
            .output_checked()
            .map_err(|e| format!("mount(8): {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Makes the mounted file system read-only.
    fn remount_read_only(&self) {
        let status = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.path())
            .status_checked()
            .expect("mount(8)");
        assert!(status.success(), "remount,ro {}", self.path().display());
    }

    /// Fills the file system, then frees `pages` pages of 4 KiB: a file
    /// system with that much room left and no more.
    fn fill_leaving(&self, pages: u64) {
        let filler = self.path().join("filler");
        let mut file = File::create(&filler).unwrap();
        let chunk = [0u8; 4096];
        loop {
            match file.write_all(&chunk) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(28) => break,
                Err(e) => panic!("filling {}: {e}", filler.display()),
            }
        }
        drop(file);
        let len = std::fs::metadata(&filler).unwrap().len();
        // Whole pages, so that what is freed is exactly `pages`.
        let kept = (len / 4096).saturating_sub(pages) * 4096;
        File::options()
            .write(true)
            .open(&filler)
            .unwrap()
            .set_len(kept)
            .unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg(self.path())
            .status_checked()
            .is_ok_and(|s| s.success());
        if !unmounted {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.path())
                .status_checked();
        }
    }
}

/// Mounts a tmpfs or returns from the test with a SKIPPED line.
macro_rules! tmpfs_or_skip {
    ($options:expr) => {
        match Tmpfs::mount($options) {
            Ok(fs) => fs,
            Err(why) => {
                skip_note!(
                    "SKIPPED (cannot mount a tmpfs: {why}): {}",
                    function_name!()
                );
                return;
            }
        }
    };
}

/// `rtlat TOOL ARGS...` with each argument given as bytes.
fn rtlat_tool(tool: &str, args: &[OsString]) -> Command {
    let mut cmd = rtlat();
    cmd.arg(tool).args(args);
    cmd
}

fn os(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// `--opt=PATH` as one argument, whatever the bytes of PATH.
fn attached(opt: &str, path: &Path) -> OsString {
    let mut arg = OsString::from(opt);
    arg.push("=");
    arg.push(path.as_os_str());
    arg
}

/// One output option of one tool that would measure for 30 s: the tool,
/// the arguments before the path, the option as messages spell it.
struct Case {
    tool: &'static str,
    before: &'static [&'static str],
    option: &'static str,
    file: String,
}

/// Every file-writing option of every measuring tool and of plot, each in a
/// command line that would otherwise measure for 30 s (or, for plot, draw).
fn every_output_option() -> Vec<Case> {
    let case = |tool, before, option, file: &str| Case {
        tool,
        before,
        option,
        file: file.to_owned(),
    };
    vec![
        case(
            "cyclictest",
            &["-q", "-D", "30", "--json"],
            "--json",
            "j.json",
        ),
        case(
            "cyclictest",
            &["-q", "-D", "30", "-h", "10", "--histfile"],
            "--histfile",
            "h.txt",
        ),
        case(
            "cyclictest",
            &["-q", "-D", "30", "--hgrm"],
            "--hgrm",
            "a.hgrm",
        ),
        case(
            "cyclictest",
            &["-q", "-D", "30", "--fail-if", "max>1s", "--junit"],
            "--junit",
            "j.xml",
        ),
        case(
            "cyclictest",
            &["-q", "-D", "30", "--stats-interval", "1", "--stats-file"],
            "--stats-file",
            "s.jsonl",
        ),
        case("latency", &["-q", "-T", "30", "-g"], "-g", "g.dat"),
        case(
            "svsematest",
            &["-q", "-D", "30", "--json"],
            "--json",
            "j.json",
        ),
        case("pmqtest", &["-q", "-D", "30", "--json"], "--json", "j.json"),
        case(
            "ptsematest",
            &["-q", "-D", "30", "--json"],
            "--json",
            "j.json",
        ),
        case(
            "ptsematest",
            &["-q", "-D", "30", "--histogram", "10", "--histfile"],
            "--histfile",
            "h.txt",
        ),
        case(
            "ptsematest",
            &["-q", "-D", "30", "--fail-if", "max>1s", "--junit"],
            "--junit",
            "j.xml",
        ),
        case(
            "sigwaittest",
            &["-q", "-D", "30", "--json"],
            "--json",
            "j.json",
        ),
        case(
            "signaltest",
            &["-q", "-D", "30", "--json"],
            "--json",
            "j.json",
        ),
        case(
            "signaltest",
            &["-q", "-D", "30", "--histogram", "10", "--histfile"],
            "--histfile",
            "h.txt",
        ),
        case("plot", &["in.json", "-o"], "-o/--output", "p.svg"),
    ]
}

/// Runs `case` with its file in `dir`: refused before anything is measured
/// (well within the 30 s it would run), exit 2, one stderr line naming the
/// option and the path and containing `why`, nothing on stdout.
fn expect_refused_up_front(case: &Case, dir: &Path, why: &str) {
    let path = dir.join(&case.file);
    let mut args = os(case.before);
    args.push(path.clone().into_os_string());
    let r = run_with_timeout(&mut rtlat_tool(case.tool, &args), REFUSED_WITHIN);
    let context = format!("{} {:?}\n{}", case.tool, args, r.describe());
    assert_eq!(r.code(), Some(2), "exit status\n{context}");
    assert!(r.elapsed < REFUSED_WITHIN, "{context}");
    assert_eq!(r.stdout, "", "nothing measured, nothing printed\n{context}");
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "one line\n{context}");
    let wanted = format!("{}: cannot write '{}': ", case.option, path.display());
    assert!(lines[0].contains(&wanted), "{wanted:?}\n{context}");
    assert!(lines[0].contains(why), "{why:?}\n{context}");
}

#[test]
fn every_output_on_a_read_only_file_system_is_refused_before_measuring() {
    let fs = tmpfs_or_skip!("size=64k");
    fs.remount_read_only();
    for case in every_output_option() {
        expect_refused_up_front(&case, fs.path(), "Read-only file system");
    }
    assert!(listing(fs.path()).is_empty());
}

#[test]
fn every_output_on_a_full_file_system_is_refused_before_measuring() {
    let fs = tmpfs_or_skip!("size=64k");
    fs.fill_leaving(0);
    for case in every_output_option() {
        expect_refused_up_front(&case, fs.path(), "the file system is full");
    }
    assert_eq!(listing(fs.path()), ["filler"]);
}

#[test]
fn a_name_too_long_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let long = "n".repeat(300);
    for mut case in every_output_option() {
        case.file = format!("{long}.{}", case.file);
        expect_refused_up_front(
            &case,
            dir.path(),
            "bytes long; this file system takes at most",
        );
    }
    // -F's FIFO too: its name is checked with the command line.
    let path = dir.path().join(&long);
    let r = run_with_timeout(
        &mut rtlat_tool(
            "cyclictest",
            &[os(&["-q", "-D", "30", "-F"]), vec![path.into()]].concat(),
        ),
        REFUSED_WITHIN,
    );
    assert_eq!(r.code(), Some(2), "{}", r.describe());
    assert!(
        r.stderr.contains("-F/--fifo: cannot create '"),
        "{}",
        r.describe()
    );
    assert!(listing(dir.path()).is_empty());
}

/// A synthetic cyclictest whose `--json`, `--histfile` and `--hgrm` are each
/// over 4 KiB: two threads, 100000 loops, 2000 histogram buckets.
const LARGE_OUTPUTS: &[&str] = &["-q", "-t", "2", "-l", "100000", "-h", "2000"];

#[test]
fn space_running_out_at_the_end_leaves_the_old_file_whole() {
    let fs = tmpfs_or_skip!("size=64k");
    let outputs = [
        ("--json", "j.json"),
        ("--histfile", "h.txt"),
        ("--hgrm", "a.hgrm"),
    ];
    for (_, name) in outputs {
        std::fs::write(fs.path().join(name), "old\n").unwrap();
    }
    // One page free: enough for the check before the run, not for any of
    // the three outputs at the end.
    fs.fill_leaving(1);
    let before = listing(fs.path());
    for (option, name) in outputs {
        for target in [name, "new.out"] {
            let path = fs.path().join(target);
            let mut cmd = synthetic(1, LARGE_OUTPUTS);
            cmd.arg(attached(option, &path));
            let r = run(&mut cmd);
            let context = format!("{option} {}\n{}", path.display(), r.describe());
            assert_eq!(r.code(), Some(1), "{context}");
            let wanted = format!(
                "{option}: cannot write '{}': No space left on device",
                path.display()
            );
            assert!(r.stderr.contains(&wanted), "{wanted:?}\n{context}");
            // The old file as it was (or still none), and no temporary file.
            assert_eq!(listing(fs.path()), before, "{context}");
        }
        assert_eq!(std::fs::read(fs.path().join(name)).unwrap(), b"old\n");
    }
}

/// An output that fails at the end (`--json=/dev/full`: a device, written
/// in place, which takes the check before the run) costs no other output:
/// the histogram file is still written whole, exit 1 with the JSON's line.
/// The IPC tools used to skip `--histfile` once `--json` had failed.
#[test]
fn an_output_failing_at_the_end_costs_no_other_output() {
    let dir = tempfile::tempdir().unwrap();
    let histfile = dir.path().join("h.txt");
    let histogram: [(&str, &[&str]); 3] = [
        ("cyclictest", &["-h", "20"]),
        ("svsematest", &["--histogram=20"]),
        ("signaltest", &["--histogram=20"]),
    ];
    for (tool, histogram) in histogram {
        let _ = std::fs::remove_file(&histfile);
        let mut cmd = rtlat();
        cmd.args([
            tool,
            "--synthetic",
            "1",
            "-q",
            "-l",
            "100",
            "--json=/dev/full",
        ])
        .args(histogram)
        .arg(attached("--histfile", &histfile));
        let r = run(&mut cmd);
        r.expect_code(1);
        assert!(
            r.stderr
                .contains("--json: cannot write '/dev/full': No space left on device"),
            "{tool}: {}",
            r.describe()
        );
        let text = std::fs::read_to_string(&histfile)
            .unwrap_or_else(|e| panic!("{tool}: no histogram file ({e})\n{}", r.describe()));
        assert!(text.contains("# Total:"), "{tool}: {text}");
    }
}

/// A synthetic run that writes every file cyclictest can: `--json`,
/// `--hgrm`, `--stats-file` (the path attached: `--json=PATH`), then
/// `--histfile` and `--junit` (the path as the next word).
fn writing_every_file([json, hist, hgrm, stats, junit]: [&Path; 5]) -> Command {
    let mut cmd = synthetic(1, ["-q", "-l", "1000", "-h", "20", "--fail-if", "max>1s"]);
    cmd.args(["--stats-interval", "0.1"])
        .arg(attached("--json", json))
        .arg(attached("--hgrm", hgrm))
        .arg(attached("--stats-file", stats))
        .arg("--histfile")
        .arg(hist)
        .arg("--junit")
        .arg(junit);
    cmd
}

#[test]
fn a_planted_symbolic_link_is_replaced_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, "keep").unwrap();
    let link = |name: &str| {
        let path = dir.path().join(name);
        std::os::unix::fs::symlink(&target, &path).unwrap();
        path
    };
    let (json, hist, hgrm, stats, junit) = (
        link("j.json"),
        link("h.txt"),
        link("a.hgrm"),
        link("s.jsonl"),
        link("j.xml"),
    );
    run(&mut writing_every_file([
        &json, &hist, &hgrm, &stats, &junit,
    ]))
    .expect_code(0);
    for path in [&json, &hist, &hgrm, &stats, &junit] {
        let meta = std::fs::symlink_metadata(path).unwrap();
        assert!(meta.is_file(), "{} is a file now: {meta:?}", path.display());
    }
    read_json(&json);
    assert!(parse_histogram(&std::fs::read_to_string(&hist).unwrap()).is_some());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

#[test]
fn a_fifo_that_cannot_be_made_exits_1_before_measuring() {
    // A regular file in the way, for anyone.
    let dir = tempfile::tempdir().unwrap();
    let taken = dir.path().join("taken");
    std::fs::write(&taken, "keep").unwrap();
    let mut places = vec![(taken.clone(), "a file that is not a FIFO is in the way")];
    // A read-only file system, where the mount is allowed.
    let fs = Tmpfs::mount("size=64k,ro");
    match &fs {
        Ok(fs) => places.push((fs.path().join("fifo"), "Read-only file system")),
        Err(why) => skip_note!(
            "SKIPPED (cannot mount a tmpfs: {why}): {} (read-only case)",
            function_name!()
        ),
    }
    for (path, why) in places {
        let mut args = os(&["-q", "-D", "30", "-F"]);
        args.push(path.clone().into());
        let r = run_with_timeout(&mut rtlat_tool("cyclictest", &args), REFUSED_WITHIN);
        let context = format!("-F {}\n{}", path.display(), r.describe());
        assert_eq!(r.code(), Some(1), "{context}");
        assert!(r.elapsed < REFUSED_WITHIN, "{context}");
        let line = format!("-F/--fifo: cannot create '{}': {why}", path.display());
        assert!(
            r.stderr.lines().any(|l| l.contains(&line)),
            "{line:?}\n{context}"
        );
        assert!(parse_status_lines(&r.stdout).is_empty(), "{context}");
    }
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "keep");
}

#[test]
fn hgrm_dash_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(synthetic(1, ["-q", "-l", "1000", "--hgrm=-"]).current_dir(dir.path()));
    r.expect_code(0);
    assert!(
        r.stdout
            .contains("Value     Percentile TotalCount 1/(1-Percentile)"),
        "{}",
        r.describe()
    );
    assert!(r.stdout.contains("#[Mean    = "), "{}", r.describe());
    // The summary comes first, as with the other outputs on stdout.
    assert!(r.stdout.find("T: 0").unwrap() < r.stdout.find("Value ").unwrap());
    assert!(listing(dir.path()).is_empty(), "no file named '-'");
    // Per-thread files are named after FILE: not with stdout.
    let r = run(
        synthetic(1, ["-q", "-l", "10", "--hgrm", "-", "--hgrm-per-thread"])
            .current_dir(dir.path()),
    );
    r.expect_code(2);
    assert_eq!(
        r.stderr.trim_end(),
        "rtlat cyclictest: --hgrm-per-thread needs --hgrm FILE, not - (standard output): \
         the per-thread files are named after it"
    );
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn stats_interval_takes_the_units_of_duration() {
    let dir = tempfile::tempdir().unwrap();
    let elapsed = |interval: &str| -> Vec<f64> {
        let file = dir.path().join(format!("{interval}.jsonl"));
        let mut cmd = synthetic(1, ["-q", "-l", "1000", "--stats-interval", interval]);
        cmd.arg(attached("--stats-file", &file));
        run(&mut cmd).expect_code(0);
        std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["elapsed"].as_f64().unwrap()
            })
            .collect()
    };
    let tenths = elapsed("100ms");
    assert_eq!(tenths[..3], [0.1, 0.2, 0.3], "{tenths:?}");
    assert_eq!(elapsed("0.1"), tenths);
    assert_eq!(elapsed("0.5s")[0], 0.5);
    // What is not accepted says what is.
    let r = run(synthetic(
        1,
        ["-l", "10", "--stats-interval", "100us", "--stats-file", "s"],
    )
    .current_dir(dir.path()));
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("--stats-interval: invalid value '100us': ")
            && r.stderr.contains("ms, s, m, h or d"),
        "{}",
        r.describe()
    );
}

/// `dir/<prefix>\xff<suffix>`: a name that is not UTF-8.
fn not_utf8(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let mut name = prefix.as_bytes().to_vec();
    name.push(0xff);
    name.extend_from_slice(suffix.as_bytes());
    dir.join(OsStr::from_bytes(&name))
}

#[test]
fn file_names_need_not_be_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (json, hist, hgrm, stats, junit) = (
        not_utf8(d, "run", ".json"),
        not_utf8(d, "hist", ".txt"),
        not_utf8(d, "all", ".hgrm"),
        not_utf8(d, "s", ".jsonl"),
        not_utf8(d, "j", ".xml"),
    );
    run(&mut writing_every_file([
        &json, &hist, &hgrm, &stats, &junit,
    ]))
    .expect_code(0);
    read_json(&json);
    for path in [&hist, &hgrm, &stats, &junit] {
        assert!(
            std::fs::metadata(path).unwrap().len() > 0,
            "{}",
            path.display()
        );
    }
    // The results tools take such names as their inputs and outputs.
    let other = not_utf8(d, "other", ".json");
    std::fs::copy(&json, &other).unwrap();
    let r = run(rtlat().arg("compare").arg(&json).arg(&other));
    r.expect_code(0);
    assert!(
        r.stdout
            .contains("run\u{fffd}.json: 1 thread, 1000 samples"),
        "{}",
        r.describe()
    );
    let svg = not_utf8(d, "plot", ".svg");
    let r = run_with_timeout(
        crate::support::rtlat_tool("plot", [&json])
            .arg("-o")
            .arg(&svg),
        Duration::from_secs(30),
    );
    r.expect_code(0);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    // A value that must be text still has to be UTF-8: one line naming it.
    let r = run(&mut rtlat_tool(
        "cyclictest",
        &[OsString::from("-p"), OsString::from_vec(vec![b'9', 0xff])],
    ));
    r.expect_code(2);
    assert_eq!(
        r.stderr.trim_end(),
        "rtlat cyclictest: -p/--priority: invalid value '9\u{fffd}': not valid UTF-8 (only \
         file names may be any bytes)"
    );
}

#[test]
fn json_to_dev_stdout_goes_where_standard_output_goes() {
    // Standard output redirected to a regular file: the JSON is written
    // through it, in its place among the other lines, none overwritten.
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.txt");
    let out = File::create(&out_path).unwrap();
    let status = synthetic(1, ["-q", "-l", "100", "--json=/dev/stdout"])
        .stdout(Stdio::from(out))
        .stderr(Stdio::null())
        .status_checked()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        text.starts_with("# /dev/cpu_dma_latency set to 0us\n{\n"),
        "{text}"
    );
    let (start, end) = (text.find('{').unwrap(), text.rfind('}').unwrap());
    let json: serde_json::Value = serde_json::from_str(&text[start..=end]).expect(&text);
    assert_eq!(json["thread"]["0"]["cycles"], 100);
    let after: Vec<&str> = text[end + 1..].lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(parse_status_lines(&after.join("\n")).len(), 1, "{text}");
    assert_eq!(listing(dir.path()), ["out.txt"]);
}
