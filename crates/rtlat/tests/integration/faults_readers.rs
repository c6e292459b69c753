//! `rtlat plot` under inputs it must show safely: an SVG whose texts
//! (host, title, command line, file names) hold control characters and
//! `<&>"'` is well-formed XML showing them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::util::{rtlat, run_with_timeout};

/// Any of these runs ends well within this, or it hangs.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// The compare fixtures `base.json` and `new.json` (rtlat results with a
/// distribution, which plot reads too).
fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/compare/testdata")
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
