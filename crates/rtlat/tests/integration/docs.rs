//! What `rtlat --generate` writes for packages, used the way a system uses
//! it: the man pages rendered by groff and man without a warning, the
//! completions loaded into bash (and exercised), zsh and fish; and the
//! `--version` line of both programs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{SpawnChecked, rtlat, rtlat_path, rtlat_plot_path, run};

/// Whether `program` runs (`program --version`).
fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output_checked()
        .is_ok_and(|o| o.status.success())
}

/// Returns from the calling test, saying so, when `program` is missing.
macro_rules! require_program {
    ($program:expr) => {
        if !has($program) {
            skip_note!("SKIPPED (needs {}): {}", $program, function_name!());
            return;
        }
    };
}

/// `rtlat --generate all` into a new directory (the prefix).
fn generated() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    run(rtlat().arg("--generate").arg("all").arg(dir.path())).expect_code(0);
    dir
}

/// Runs `cmd`, which must succeed and say nothing on stderr (`what`
/// names it in the failure); its stdout.
fn quietly(cmd: &mut Command, what: impl std::fmt::Display) -> String {
    let out = cmd.output_checked().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "{what}: {:?}: {stderr}",
        out.status
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn man_pages(prefix: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(prefix.join("share/man/man1"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    pages
}

/// Every tool as `rtlat --help` lists it (`  NAME  SUMMARY` under its
/// group's heading), with whether it is a measuring tool (whose C tool's
/// name completes as the tool when it runs rtlat).
fn listed_tools() -> Vec<(String, bool)> {
    let help = quietly(rtlat().arg("--help"), "rtlat --help");
    let mut measuring = false;
    let mut tools = Vec::new();
    for line in help.lines().take_while(|l| !l.starts_with("Run ")) {
        if line.starts_with(|c: char| c.is_ascii_uppercase()) {
            // A group's heading (or the usage line).
            measuring = line.starts_with("Measuring");
        } else if let Some(entry) = line.strip_prefix("  ") {
            let name = entry.split_whitespace().next().unwrap_or_default();
            // Tool names: lower case, `_` and `-` (pi_stress, rt-migrate-test).
            if name.starts_with(|c: char| c.is_ascii_lowercase())
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c == '-')
            {
                tools.push((name.to_string(), measuring));
            }
        }
    }
    tools
}

/// Every tool, the measuring ones first.
fn tools() -> Vec<String> {
    listed_tools().into_iter().map(|(name, _)| name).collect()
}

/// The measuring tools' names, which are the C tools'.
pub fn c_names() -> Vec<String> {
    let names: Vec<String> = listed_tools()
        .into_iter()
        .filter_map(|(name, measuring)| measuring.then_some(name))
        .collect();
    assert!(names.len() >= 7, "{names:?}");
    names
}

#[test]
fn the_tree_a_package_installs() {
    let dir = generated();
    let p = dir.path();
    let mut want: Vec<String> = tools().iter().map(|t| format!("rtlat-{t}.1")).collect();
    want.push("rtlat.1".into());
    want.sort();
    let pages: Vec<String> = man_pages(p)
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(pages, want);

    let bash = p.join("share/bash-completion/completions");
    assert!(bash.join("rtlat").is_file());
    for name in c_names().iter().map(String::as_str).chain(["rtlat-plot"]) {
        assert_eq!(
            std::fs::read_link(bash.join(name)).unwrap(),
            Path::new("rtlat"),
            "{name}: bash-completion loads the file named after the command"
        );
    }
    assert!(p.join("share/zsh/vendor-completions/_rtlat").is_file());
    let fish = p.join("share/fish/vendor_completions.d");
    for name in c_names()
        .iter()
        .map(String::as_str)
        .chain(["rtlat", "rtlat-plot"])
    {
        assert!(fish.join(format!("{name}.fish")).is_file(), "{name}.fish");
    }
    // Readable by all, as installed files are.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(p.join("share/man/man1/rtlat.1"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o444, 0o444, "{mode:o}");

    // Generating again replaces the files, links included.
    run(rtlat().arg("--generate").arg("all").arg(p)).expect_code(0);
}

#[test]
fn generate_usage_errors_and_stdout() {
    for args in [
        vec!["--generate"],
        vec!["--generate", "man"],
        vec!["--generate", "pdf", "/tmp"],
    ] {
        let r = run(rtlat().args(&args));
        r.expect_code(2);
        assert!(
            r.stderr.starts_with("rtlat: --generate KIND [DIR]"),
            "{}",
            r.describe()
        );
    }
    let r = run(rtlat().args(["--generate", "bash"]));
    r.expect_code(0);
    assert!(
        r.stdout
            .contains("\ncomplete -o default -F _rtlat rtlat rtlat-plot cyclictest ")
    );
    // Not in the help: it is for packagers.
    let help = run(rtlat().arg("--help"));
    assert!(!help.stdout.contains("generate"), "{}", help.stdout);
}

#[test]
fn man_pages_render_without_warnings() {
    require_program!("groff");
    let dir = generated();
    for page in man_pages(dir.path()) {
        let text = quietly(
            Command::new("groff")
                .args(["-ww", "-man", "-Tutf8"])
                .arg(&page),
            page.display(),
        );
        assert!(text.len() > 1000, "{}", page.display());
    }
}

/// `man --warnings -l PAGE` (groff's warnings on stderr), 80 columns,
/// no pager.
fn man(page: &Path) -> Command {
    let mut cmd = Command::new("man");
    cmd.args(["--warnings", "-l"])
        .arg(page)
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat");
    cmd
}

#[test]
fn man_shows_the_pages() {
    require_program!("man");
    let dir = generated();
    for page in man_pages(dir.path()) {
        let text = quietly(&mut man(&page), page.display());
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS"] {
            assert!(
                text.lines().any(|l| l == section),
                "{}: {section}",
                page.display()
            );
        }
    }
    // What a reader sees of one option, and the C tool's name in the
    // synopsis.
    let page = dir.path().join("share/man/man1/rtlat-cyclictest.1");
    let text = quietly(&mut man(&page), page.display());
    assert!(text.contains("\n       -h, --histogram=US\n"), "{text}");
    assert!(text.contains("\n       cyclictest [OPTIONS]\n"), "{text}");
}

/// rtlat plot's page is made in rtlat from the definitions `rtlat-plot`
/// parses and prints its help from (the `rtlat_plot` library): every
/// option the binary's `--help` lists is an entry of the page.
#[test]
fn the_plot_page_has_every_option_of_rtlat_plot() {
    let dir = generated();
    let roff = std::fs::read_to_string(dir.path().join("share/man/man1/rtlat-plot.1")).unwrap();
    let help = run(Command::new(rtlat_plot_path()).arg("--help"));
    let help = rtlat_args::docs::help::parse(&help.stdout);
    let names = help.option_names();
    assert!(names.contains(&"--output".to_string()) && names.contains(&"-V".to_string()));
    for name in names {
        let tag = format!("\\fB{}\\fR", name.replace('-', "\\-"));
        assert!(
            roff.lines().any(|l| l.contains(&tag)),
            "{name} not in rtlat-plot.1"
        );
    }
}

/// A bash that has sourced the generated script, then runs `script`.
fn bash(prefix: &Path, path: &str, script: &str) -> String {
    let file = prefix.join("share/bash-completion/completions/rtlat");
    quietly(
        Command::new("bash")
            .args(["--norc", "--noprofile", "-c"])
            .arg(format!("source '{}' || exit 9\n{script}", file.display()))
            .env("PATH", path),
        script,
    )
}

/// What `_rtlat` offers for the command line `words` (the last one being
/// completed), sorted.
fn bash_offers(prefix: &Path, path: &str, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let out = bash(
        prefix,
        path,
        &format!(
            "COMP_WORDS=({})\nCOMP_CWORD={}\n_rtlat\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
            quoted.join(" "),
            words.len() - 1
        ),
    );
    let mut offers: Vec<String> = out
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    offers.sort();
    offers
}

#[test]
fn bash_completes_tools_and_options() {
    require_program!("bash");
    let dir = generated();
    let p = dir.path();
    let path = std::env::var("PATH").unwrap_or_default();
    assert_eq!(
        bash(p, &path, "complete -p rtlat rtlat-plot cyclictest"),
        "complete -o default -F _rtlat rtlat\ncomplete -o default -F _rtlat rtlat-plot\n\
         complete -o default -F _rtlat cyclictest\n"
    );
    // cyclictest has three long options that start so (-H/--histofall is
    // rt-tests' as well); the IPC tools two.
    assert_eq!(
        bash_offers(p, &path, &["rtlat", "cyclictest", "--hi"]),
        ["--histfile", "--histofall", "--histogram"]
    );
    assert_eq!(
        bash_offers(p, &path, &["rtlat", "svsematest", "--hi"]),
        ["--histfile", "--histogram"]
    );
    assert_eq!(
        bash_offers(p, &path, &["rtlat", "cy"]),
        ["cyclicdeadline", "cyclictest"]
    );
    assert_eq!(bash_offers(p, &path, &["rtlat", "--v"]), ["--version"]);
    assert_eq!(
        bash_offers(p, &path, &["rtlat", "monitor", "--resu"]),
        ["--resume"]
    );
    assert_eq!(bash_offers(p, &path, &["rtlat-plot", "--ou"]), ["--output"]);
    assert_eq!(
        bash_offers(p, &path, &["rtlat", "plot", "--l"]),
        ["--log-x"]
    );
    // Hidden rows are never offered.
    assert!(bash_offers(p, &path, &["rtlat", "cyclictest", "--sy"]) == ["--system"]);
    // A value is no option: bash's file names (`complete -o default`).
    assert!(bash_offers(p, &path, &["rtlat", "cyclictest", "--json", "--h"]).is_empty());
    assert!(bash_offers(p, &path, &["rtlat", "cyclictest", "-q", "x"]).is_empty());
}

#[test]
fn bash_completes_a_c_tool_s_name_only_when_it_runs_rtlat() {
    require_program!("bash");
    let dir = generated();
    let p = dir.path();
    let paths = CNamePaths::new();
    assert_eq!(
        bash_offers(p, &paths.to_rtlat, &["cyclictest", "--hi"]),
        ["--histfile", "--histofall", "--histogram"]
    );
    // Not in PATH as rtlat: nothing of ours.
    assert!(bash_offers(p, &paths.to_rtlat, &["pmqtest", "--forc"]).is_empty());
    assert!(bash_offers(p, &paths.to_other, &["cyclictest", "--hi"]).is_empty());
}

/// `PATH`s in which `cyclictest` is a link to rtlat, or another program
/// (Debian's C cyclictest, say).
struct CNamePaths {
    _dirs: [tempfile::TempDir; 2],
    to_rtlat: String,
    to_other: String,
}

impl CNamePaths {
    fn new() -> CNamePaths {
        let rtlat = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(rtlat_path(), rtlat.path().join("cyclictest")).unwrap();
        let other = tempfile::tempdir().unwrap();
        let fake = other.path().join("cyclictest");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::var("PATH").unwrap_or_default();
        CNamePaths {
            to_rtlat: format!("{}:{path}", rtlat.path().display()),
            to_other: format!("{}:{path}", other.path().display()),
            _dirs: [rtlat, other],
        }
    }
}

#[test]
fn zsh_reads_the_script_and_offers_each_tool_s_options() {
    require_program!("zsh");
    let dir = generated();
    let file = dir.path().join("share/zsh/vendor-completions/_rtlat");
    quietly(Command::new("zsh").arg("-n").arg(&file), "zsh -n");
    // The function with the completion system's helpers replaced by
    // printing what they are given (the system itself needs a terminal).
    let paths = CNamePaths::new();
    let offers_in = |path: &str, words: &str, current: usize| -> Vec<String> {
        let script = format!(
            "_describe() {{ print -l -- ${{(P)${{@[-1]}}}} }}\n\
             _files() {{ print FILES }}\n_default() {{ print DEFAULT }}\n\
             source '{}'\nwords=({words})\nCURRENT={current}\nPREFIX=${{words[CURRENT]}}\n_rtlat",
            file.display()
        );
        quietly(
            Command::new("zsh")
                .args(["-f", "-c"])
                .arg(script)
                .env("PATH", path),
            words,
        )
        .lines()
        .map(str::to_string)
        .collect()
    };
    let offers = |words: &str, current: usize| offers_in(&paths.to_other, words, current);
    let hi = |offered: Vec<String>| -> Vec<String> {
        offered
            .into_iter()
            .filter(|o| o.starts_with("--hi"))
            .map(|o| o.split(':').next().unwrap().to_string())
            .collect()
    };
    // (Sourcing runs _rtlat once with no words: _default, printed first.)
    let three = ["--histogram", "--histofall", "--histfile"];
    assert_eq!(hi(offers("rtlat cyclictest --hi", 3)), three);
    // A C tool's name: the tool when it runs rtlat, the default otherwise.
    assert_eq!(hi(offers_in(&paths.to_rtlat, "cyclictest --hi", 2)), three);
    assert_eq!(
        offers_in(&paths.to_other, "cyclictest --hi", 2),
        ["DEFAULT", "DEFAULT"]
    );
    let tools = offers("rtlat ''", 2);
    assert!(
        tools
            .iter()
            .any(|t| t.starts_with("cyclictest:measure how late")),
        "{tools:?}"
    );
    assert!(offers("rtlat cyclictest --json ''", 4).ends_with(&["FILES".to_string()]));
    assert!(
        offers("rtlat-plot --o", 2)
            .iter()
            .any(|o| o.starts_with("--output:"))
    );
}

#[test]
fn fish_reads_the_scripts_and_completes() {
    require_program!("fish");
    let dir = generated();
    let d = dir.path().join("share/fish/vendor_completions.d");
    for entry in std::fs::read_dir(&d).unwrap() {
        let file = entry.unwrap().path();
        quietly(
            Command::new("fish").arg("--no-execute").arg(&file),
            file.display(),
        );
    }
    let paths = CNamePaths::new();
    let complete_in = |path: &str, file: &str, line: &str| -> Vec<String> {
        let script = format!("source '{}'; complete -C '{line}'", d.join(file).display());
        let mut words: Vec<String> = quietly(
            Command::new("fish")
                .arg("--no-config")
                .arg("-c")
                .arg(script)
                .env("PATH", path),
            line,
        )
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
        words.sort();
        words
    };
    let complete = |file: &str, line: &str| complete_in(&paths.to_other, file, line);
    assert_eq!(
        complete("rtlat.fish", "rtlat cyclictest --hi"),
        ["--histfile", "--histofall", "--histogram"]
    );
    let mut tools = complete("rtlat.fish", "rtlat cy");
    tools.sort();
    assert_eq!(tools, ["cyclicdeadline", "cyclictest"]);
    assert_eq!(complete("rtlat-plot.fish", "rtlat-plot --ou"), ["--output"]);
    // A C tool's name: the tool when it runs rtlat, nothing of ours
    // otherwise.
    assert_eq!(
        complete_in(&paths.to_rtlat, "cyclictest.fish", "cyclictest --hi"),
        ["--histfile", "--histofall", "--histogram"]
    );
    assert!(complete_in(&paths.to_other, "cyclictest.fish", "cyclictest --hi").is_empty());
}

#[test]
fn version_names_the_commit_and_the_target() {
    let expected_commit = git_commit();
    for (program, args) in [
        (rtlat_path(), vec!["--version"]),
        (rtlat_path(), vec!["-V"]),
        (rtlat_plot_path(), vec!["--version"]),
        (rtlat_path(), vec!["plot", "-V"]),
    ] {
        let r = run(Command::new(&program).args(&args));
        r.expect_code(0);
        let name = if program.ends_with("rtlat-plot") || args[0] == "plot" {
            "rtlat-plot"
        } else {
            "rtlat"
        };
        assert_eq!(
            r.stdout,
            format!(
                "{name} {} (commit {expected_commit}, {})\n",
                env!("CARGO_PKG_VERSION"),
                rtlat_args::version::TARGET
            ),
            "{program:?} {args:?}"
        );
    }
    // The target is the one these tests were built for.
    let arch = match std::env::consts::ARCH {
        "x86" => "i686",
        "arm" => "armv7",
        other => other,
    };
    assert!(
        rtlat_args::version::TARGET.starts_with(arch)
            && rtlat_args::version::TARGET.contains("-linux-"),
        "{}",
        rtlat_args::version::TARGET
    );
}

/// The commit of this checkout as the build script says it (`-dirty` when
/// a tracked file differs), or `unknown` outside one.
fn git_commit() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Without git's optional locks, as the build script asks: `git status`
    // would otherwise rewrite the index of a fresh clone (its files as new
    // as the index itself), and the build script, which watches the index,
    // would run again, and every target's rtlat be built again (CI lost a
    // minute to it, building i686 and aarch64 twice).
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("--no-optional-locks")
            .arg("-C")
            .arg(&root)
            .args(args)
            .output_checked()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let top = git(&["rev-parse", "--show-toplevel"]);
    let is_top =
        top.is_some_and(|t| std::fs::canonicalize(t).ok() == std::fs::canonicalize(&root).ok());
    match (is_top, git(&["rev-parse", "--short=7", "HEAD"])) {
        (true, Some(hash)) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_none_or(|s| !s.is_empty());
            if dirty { format!("{hash}-dirty") } else { hash }
        }
        _ => "unknown".to_string(),
    }
}
