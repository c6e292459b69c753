//! `rtlat plot` and `rtlat compare` under bad inputs: `/dev/zero`, a file
//! larger than the 256 MiB limit and an endless standard input are refused
//! at once, in one line, with exit status 2 (each run under a 1 GiB
//! address-space limit, so that a regression cannot take the machine's
//! memory); a `-h` block or JSON cut short is refused; a UTF-8 byte-order
//! mark is skipped; `-` reads standard input for either side of compare;
//! an SVG whose texts (host, title, command line, file names) hold control
//! characters and `<&>"'` is well-formed XML showing them.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{Run, rtlat, rtlat_path, run_with_timeout, spawn, synthetic};

/// The readers' limit, as the messages state it.
const LIMIT_BYTES: u64 = 256 << 20;
/// The address-space limit of the runs here, KiB: four times the largest
/// input the readers accept.
const ADDRESS_SPACE_KIB: u64 = 1 << 20;
/// Any of these runs ends well within this, or it hangs.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// The compare fixtures `base.json` and `new.json` (rtlat results with a
/// distribution, which plot reads too).
fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/compare/testdata")
}

/// `rtlat TOOL ARGS...` under the address-space limit, standard input
/// empty.
fn limited<I, S>(tool: &str, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(rtlat_path())
        .arg(tool)
        .args(args)
        .stdin(Stdio::null());
    cmd
}

/// `rtlat TOOL ARGS...`.
fn tool<I, S>(tool: &str, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut cmd = rtlat();
    cmd.arg(tool).args(args);
    cmd
}

/// Expects exit 2 and one stderr line, `rtlat TOOL: ` and then `message`,
/// nothing on stdout.
fn expect_refusal(r: &Run, tool: &str, message: &str) {
    r.expect_code(2);
    assert_eq!(r.stdout, "", "{}", r.describe());
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", r.describe());
    assert_eq!(
        lines[0],
        format!("rtlat {tool}: {message}"),
        "{}",
        r.describe()
    );
}

/// Runs `cmd` with its standard input fed `line` over and over until it
/// closes it.
fn run_with_endless_stdin(cmd: &mut Command, line: &'static [u8]) -> Run {
    cmd.stdin(Stdio::piped());
    let mut running = spawn(cmd);
    let mut stdin = running.take_stdin().unwrap();
    let feeder = std::thread::spawn(move || {
        let block = line.repeat((64 << 10) / line.len());
        let mut fed = 0_u64;
        // Ends when the reader closes the pipe (EPIPE).
        while stdin.write_all(&block).is_ok() {
            fed += block.len() as u64;
        }
        fed
    });
    let r = running.wait(TIME_LIMIT);
    let fed = feeder.join().unwrap();
    assert!(
        fed >= LIMIT_BYTES,
        "only {fed} bytes were read before the end"
    );
    r
}

/// `rtlat cyclictest --synthetic` with `-h 30` on two threads: the C
/// histogram block, whole.
fn histogram_text() -> String {
    let r = run_with_timeout(
        &mut synthetic(1, ["-q", "-l", "1000", "-t", "2", "-h", "30"]),
        TIME_LIMIT,
    );
    r.expect_code(0);
    assert!(
        r.stdout.contains("# Histogram Overflows:"),
        "{}",
        r.describe()
    );
    r.stdout.clone()
}

#[test]
fn dev_zero_is_refused_at_its_first_byte() {
    skip_if_emulated!(
        "ulimit -v leaves qemu-user no room to reserve its guest address space and code buffer"
    );
    let new = testdata().join("new.json");
    for (name, args) in [
        (
            "plot",
            vec!["/dev/zero".as_ref(), "-o".as_ref(), "z.svg".as_ref()],
        ),
        ("compare", vec!["/dev/zero".as_ref(), new.as_os_str()]),
        ("compare", vec![new.as_os_str(), "/dev/zero".as_ref()]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = limited(name, &args);
        cmd.current_dir(dir.path());
        let r = run_with_timeout(&mut cmd, TIME_LIMIT);
        let expected = if name == "plot" {
            "expected JSON or cyclictest -h output"
        } else {
            "compare takes the JSON files of 'rtlat cyclictest --json'"
        };
        expect_refusal(
            &r,
            name,
            &format!("/dev/zero: not a text file (a NUL byte at offset 0); {expected}"),
        );
        assert!(r.elapsed < Duration::from_secs(10), "{}", r.describe());
        assert!(!dir.path().join("z.svg").exists());
    }
}

#[test]
fn a_file_over_the_limit_is_refused_by_its_size() {
    skip_if_emulated!(
        "ulimit -v leaves qemu-user no room to reserve its guest address space and code buffer"
    );
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.json");
    // Sparse: it takes no disk, and is never read.
    File::create(&huge)
        .unwrap()
        .set_len(LIMIT_BYTES + 1)
        .unwrap();
    let message = format!(
        "{}: too large: 268435457 bytes; a results file has at most 256 MiB",
        huge.display()
    );
    let base = testdata().join("base.json");
    let svg = dir.path().join("out.svg");
    for (name, args) in [
        (
            "plot",
            vec![huge.as_os_str(), "-o".as_ref(), svg.as_os_str()],
        ),
        ("compare", vec![base.as_os_str(), huge.as_os_str()]),
    ] {
        let r = run_with_timeout(&mut limited(name, &args), TIME_LIMIT);
        expect_refusal(&r, name, &message);
        assert!(r.elapsed < Duration::from_secs(10), "{}", r.describe());
    }
    assert!(!svg.exists());
}

#[test]
fn an_endless_standard_input_stops_at_the_limit() {
    skip_if_emulated!(
        "ulimit -v leaves qemu-user no room to reserve its guest address space and code buffer"
    );
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("out.svg");
    let new = testdata().join("new.json");
    let message = "stdin: too large: read 256 MiB without reaching its end; a results file has \
                   at most 256 MiB";
    for (name, args) in [
        ("plot", vec!["-".as_ref(), "-o".as_ref(), svg.as_os_str()]),
        ("compare", vec!["-".as_ref(), new.as_os_str()]),
    ] {
        // Histogram rows, text to the end.
        let r = run_with_endless_stdin(&mut limited(name, &args), b"000000 000001\n");
        expect_refusal(&r, name, message);
    }
    assert!(!svg.exists());
}

#[test]
fn a_histogram_block_cut_short_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let whole = histogram_text();
    let row_end = whole.find("\n000012 ").unwrap();
    let max_line = whole.find("# Max Latencies:").unwrap();
    let cases = [
        // Inside a row: its last count cut.
        (
            &whole[..row_end - 3],
            format!(
                "line {} is cut short: the file ends inside it, with no newline ('{}')",
                whole[..row_end].lines().count(),
                // Quoted escaped, as every message quotes a file's text.
                whole[whole[..row_end].rfind('\n').unwrap() + 1..row_end - 3].replace('\t', "\\t")
            ),
        ),
        // After a whole row: no summary.
        (
            &whole[..row_end + 1],
            "no '# Min Latencies:' line after the histogram rows: the block is cut short"
                .to_string(),
        ),
        // Inside the maximum of the first thread.
        (
            &whole[..max_line + "# Max Latencies: 0".len()],
            format!(
                "line {} is cut short: the file ends inside it, with no newline \
                 ('# Max Latencies: 0')",
                whole[..max_line].lines().count() + 1
            ),
        ),
        // Before the maxima.
        (
            &whole[..max_line],
            "no '# Max Latencies:' line after the histogram rows: the block is cut short"
                .to_string(),
        ),
    ];
    let svg = dir.path().join("out.svg");
    for (text, message) in cases {
        let path = dir.path().join("cut.txt");
        std::fs::write(&path, text).unwrap();
        let mut cmd = tool("plot", [path.as_os_str(), "-o".as_ref(), svg.as_os_str()]);
        let r = run_with_timeout(&mut cmd, TIME_LIMIT);
        expect_refusal(&r, "plot", &format!("{}: {message}", path.display()));
        assert!(!svg.exists());
    }
    // The whole block is drawn.
    let path = dir.path().join("whole.txt");
    std::fs::write(&path, &whole).unwrap();
    let mut cmd = tool("plot", [path.as_os_str(), "-o".as_ref(), svg.as_os_str()]);
    run_with_timeout(&mut cmd, TIME_LIMIT).expect_code(0);
}

#[test]
fn json_cut_short_is_refused_by_both() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(testdata().join("base.json")).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &base[..base.len() / 2]).unwrap();
    let new = testdata().join("new.json");
    let svg = dir.path().join("out.svg");
    for (name, args, wanted) in [
        (
            "plot",
            vec![cut.as_os_str(), "-o".as_ref(), svg.as_os_str()],
            "",
        ),
        (
            "compare",
            vec![cut.as_os_str(), new.as_os_str()],
            "; compare takes the JSON files of 'rtlat cyclictest --json'",
        ),
    ] {
        let r = run_with_timeout(&mut tool(name, &args), TIME_LIMIT);
        r.expect_code(2);
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{}", r.describe());
        let start = format!(
            "rtlat {name}: {}: cut short: the JSON ends before it is complete (EOF while parsing",
            cut.display()
        );
        assert!(lines[0].starts_with(&start), "{}", r.describe());
        assert!(
            lines[0].ends_with(&format!("){wanted}")),
            "{}",
            r.describe()
        );
    }
    assert!(!svg.exists());
}

#[test]
fn a_byte_order_mark_is_skipped_by_both() {
    let plain = tempfile::tempdir().unwrap();
    let marked = tempfile::tempdir().unwrap();
    let histogram = histogram_text();
    let mut files = vec![("h.txt", histogram.into_bytes())];
    for name in ["base.json", "new.json"] {
        files.push((name, std::fs::read(testdata().join(name)).unwrap()));
    }
    for (name, bytes) in &files {
        std::fs::write(plain.path().join(name), bytes).unwrap();
        let mut with_mark = "\u{feff}".as_bytes().to_vec();
        with_mark.extend_from_slice(bytes);
        std::fs::write(marked.path().join(name), with_mark).unwrap();
    }
    // The same output from the same names, with and without the mark.
    let output = |dir: &Path, name: &str, args: &[&str]| {
        let mut cmd = tool(name, args);
        cmd.current_dir(dir);
        let r = run_with_timeout(&mut cmd, TIME_LIMIT);
        r.expect_code(0);
        assert_eq!(r.stderr, "", "{}", r.describe());
        r.stdout.clone()
    };
    let compared = output(marked.path(), "compare", &["base.json", "new.json"]);
    assert!(
        compared.contains("\nBASE  base.json: 2 threads"),
        "{compared}"
    );
    assert_eq!(
        compared,
        output(plain.path(), "compare", &["base.json", "new.json"])
    );
    for input in ["h.txt", "base.json"] {
        let args = [input, "-o", "out.svg"];
        output(marked.path(), "plot", &args);
        output(plain.path(), "plot", &args);
        assert_eq!(
            std::fs::read(marked.path().join("out.svg")).unwrap(),
            std::fs::read(plain.path().join("out.svg")).unwrap(),
            "{input}"
        );
    }
}

#[test]
fn compare_reads_either_side_from_standard_input() {
    let data = testdata();
    let compare_in = |args: &[&str], stdin: Option<&str>| {
        let mut cmd = tool("compare", args);
        cmd.current_dir(&data);
        if let Some(name) = stdin {
            cmd.stdin(File::open(data.join(name)).unwrap());
        }
        run_with_timeout(&mut cmd, TIME_LIMIT)
    };
    let files = compare_in(&["base.json", "new.json"], None);
    files.expect_code(0);
    for (args, stdin, replaced) in [
        (["-", "new.json"], "base.json", "BASE  base.json"),
        (["base.json", "-"], "new.json", "NEW   new.json"),
    ] {
        let r = compare_in(&args, Some(stdin));
        r.expect_code(0);
        assert_eq!(r.stderr, "", "{}", r.describe());
        let expected = files
            .stdout
            .replacen(replaced, &replaced.replace(stdin, "stdin"), 1);
        assert_ne!(expected, files.stdout);
        assert_eq!(r.stdout, expected, "{args:?}");
    }
    let r = compare_in(&["-", "-"], Some("base.json"));
    expect_refusal(
        &r,
        "compare",
        "standard input ('-') given for both BASE and NEW; at most one of them can be read from \
         it",
    );
}

/// Strings with every kind of character an SVG must not hold raw, and
/// those it must escape.
const HOSTILE: &str = "a\u{1}b\u{1b}[2Ac\u{7f}d\u{85}e\u{fffe}<&>\"'\ttab";

#[test]
fn svg_texts_from_inputs_and_options_are_well_formed() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(testdata().join("base.json")).unwrap()).unwrap();
    doc["sysinfo"] = serde_json::json!({
        "nodename": format!("host {HOSTILE}"),
        "release": format!("6.1\u{0}{HOSTILE}"),
    });
    doc["start_time"] = serde_json::Value::from(format!("today\u{8}{HOSTILE}"));
    doc["cmdline:"] = serde_json::Value::from(format!("rtlat\u{0} {HOSTILE}"));
    // Control characters and markup in the file names too (legend labels,
    // subtitle).
    let first = dir.path().join("r\u{2}un<&>\"'.json");
    let second = dir.path().join("s\u{3}econd.json");
    std::fs::write(&first, doc.to_string()).unwrap();
    std::fs::write(&second, doc.to_string()).unwrap();
    let title = format!("title {HOSTILE}");
    let svg = dir.path().join("out.svg");
    let png = dir.path().join("out.png");
    for kind in ["latency", "percentile"] {
        for (inputs, title) in [
            (vec![&first], None),
            (vec![&first], Some(&title)),
            (vec![&first, &second], None),
        ] {
            let mut cmd = tool("plot", &inputs);
            cmd.args(["-k", kind]);
            if let Some(title) = title {
                cmd.args(["-T", title]);
            }
            let r = run_with_timeout(cmd.arg("-o").arg(&svg), TIME_LIMIT);
            r.expect_code(0);
            let text = std::fs::read_to_string(&svg).unwrap();
            let parsed = roxmltree::Document::parse(&text)
                .unwrap_or_else(|e| panic!("{kind} {inputs:?}: not well-formed XML: {e}\n{text}"));
            let texts: Vec<&str> = parsed
                .descendants()
                .filter(|n| n.has_tag_name("text"))
                .filter_map(|n| n.text())
                .collect();
            let all = texts.join("\n");
            // The markup shows as text, the control characters as U+FFFD.
            assert!(all.contains("<&>\"'"), "{all}");
            assert!(
                all.contains("a\u{fffd}b\u{fffd}[2Ac\u{fffd}d\u{fffd}e\u{fffd}<"),
                "{all}"
            );
            for t in &texts {
                assert!(!t.trim().chars().any(char::is_control), "{t:?}");
            }
            if title.is_some() {
                assert!(all.contains("title a\u{fffd}b\u{fffd}[2A"), "{all}");
            }
            // The bitmap draws the same texts.
            let r = run_with_timeout(
                tool("plot", &inputs).args(["-k", kind]).arg("-o").arg(&png),
                TIME_LIMIT,
            );
            r.expect_code(0);
            let bytes = std::fs::read(&png).unwrap();
            assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
        }
    }
}
