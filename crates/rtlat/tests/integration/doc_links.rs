//! The documentation's links: every relative link and `#anchor` in
//! README.md, docs/*.md, ARCHITECTURE.md, CONTRIBUTING.md, CHANGELOG.md and
//! BENCHMARKS.md leads somewhere, with GitHub's rules for the anchor a
//! heading gets. Also the list of documentation files that `doc_blocks`
//! reads, and the fenced-block scanner both share.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's root directory.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every documentation file, relative to the workspace: the top-level
/// pages and every `docs/*.md`. Panics when a top-level page is missing
/// (a test that reads nothing would pass).
pub fn doc_files() -> Vec<PathBuf> {
    let root = workspace();
    let mut files: Vec<PathBuf> = [
        "README.md",
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
        "BENCHMARKS.md",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for file in &files {
        assert!(root.join(file).is_file(), "{} is missing", file.display());
    }
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("the docs/ folder")
        .map(|e| PathBuf::from("docs").join(e.expect("a docs/ entry").file_name()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    assert!(
        pages.len() >= 10,
        "docs/ has only {} pages: {pages:?}",
        pages.len()
    );
    files.extend(pages);
    files
}

/// One line of a markdown file, as a scanner sees it.
pub enum Line<'a> {
    /// Text outside fenced code blocks.
    Text(&'a str),
    /// The opening fence of a code block: its info string (trimmed).
    Open(&'a str),
    /// A line inside a fenced code block.
    Code(&'a str),
    /// The closing fence.
    Close,
}

/// Splits `text` into [`Line`]s: fences are lines of three backticks or
/// more, indented or not (a block inside a list item), closed by a fence
/// of at least as many backticks.
pub fn scan(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut open: Option<usize> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
        match open {
            None if ticks >= 3 => {
                open = Some(ticks);
                lines.push(Line::Open(trimmed[ticks..].trim()));
            }
            Some(n) if ticks >= n && trimmed[ticks..].trim().is_empty() => {
                open = None;
                lines.push(Line::Close);
            }
            Some(_) => lines.push(Line::Code(line)),
            None => lines.push(Line::Text(line)),
        }
    }
    lines
}

/// The anchor GitHub gives a heading: lower case, every character that
/// is not a letter, a digit, a space, `-` or `_` dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor of a markdown text: its headings' slugs, a repeated slug
/// numbered `-1`, `-2`, ... as GitHub does.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut all = BTreeSet::new();
    for line in scan(text) {
        let Line::Text(line) = line else { continue };
        let hashes = line.len() - line.trim_start_matches('#').len();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let title = line[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(title);
        let n = seen.entry(base.clone()).or_insert(0);
        all.insert(if *n == 0 { base } else { format!("{base}-{n}") });
        *n += 1;
    }
    all
}

/// The targets of the inline links `[text](target)` of one line, code
/// spans left out.
fn link_targets(line: &str) -> Vec<String> {
    let mut outside = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            outside.push_str(part);
        }
    }
    let mut targets = Vec::new();
    let mut rest = outside.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = &after[..end];
        if !target.is_empty() && !target.contains(char::is_whitespace) {
            targets.push(target.to_string());
        }
        rest = &after[end..];
    }
    targets
}

/// Whether a link leaves the repository: a scheme (`https:`, `mailto:`).
fn is_external(target: &str) -> bool {
    target.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphabetic())
    })
}

/// The anchors of each markdown file read so far, by path.
type AnchorCache = BTreeMap<PathBuf, BTreeSet<String>>;

/// The anchors of the markdown file at `path`, read once.
fn anchors_of<'c>(cache: &'c mut AnchorCache, path: &Path) -> &'c BTreeSet<String> {
    cache
        .entry(path.to_path_buf())
        .or_insert_with(|| anchors(&std::fs::read_to_string(path).unwrap()))
}

/// How many links `file` (relative to the workspace) has, and the broken
/// ones, a line each.
fn broken_links(file: &Path, cache: &mut AnchorCache) -> (usize, Vec<String>) {
    let root = workspace();
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let mut links = 0;
    let mut broken = Vec::new();
    for (number, line) in scan(&text).into_iter().enumerate() {
        let Line::Text(line) = line else { continue };
        for target in link_targets(line) {
            links += 1;
            if is_external(&target) {
                continue;
            }
            let (path, fragment) = match target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (target.as_str(), None),
            };
            let at = format!("{}:{}: {target}", file.display(), number + 1);
            let there = file.parent().unwrap_or(Path::new("")).join(path);
            let full = root.join(if path.is_empty() { file } else { &there });
            if !full.exists() {
                broken.push(format!("{at}: no file {}", there.display()));
                continue;
            }
            let Some(fragment) = fragment else { continue };
            if full.extension().is_none_or(|e| e != "md") {
                broken.push(format!("{at}: an anchor into a file that is not markdown"));
            } else if !anchors_of(cache, &full).contains(fragment) {
                broken.push(format!("{at}: no heading with the anchor #{fragment}"));
            }
        }
    }
    (links, broken)
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let files = doc_files();
    let mut cache = AnchorCache::new();
    let mut links = 0;
    let mut broken = Vec::new();
    for file in &files {
        let (count, found) = broken_links(file, &mut cache);
        links += count;
        broken.extend(found);
    }
    assert!(links > 100, "only {links} links read in {files:?}");
    assert!(
        broken.is_empty(),
        "{} broken links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn slugs_follow_github() {
    assert_eq!(
        slug("Is this machine ready? rtlat audit"),
        "is-this-machine-ready-rtlat-audit"
    );
    assert_eq!(
        slug("--explain: what recording kernel events costs (bench/explain)"),
        "--explain-what-recording-kernel-events-costs-benchexplain"
    );
    assert_eq!(
        slug("Each thread's run as blocks: \"blocks\""),
        "each-threads-run-as-blocks-blocks"
    );
    let text = "# A\n```\n# not a heading\n```\n## A\n## B `c`\n";
    let found = anchors(text);
    let want: BTreeSet<String> = ["a", "a-1", "b-c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(found, want);
}

#[test]
fn a_broken_link_is_found() {
    assert_eq!(
        link_targets("see [x](a.md#b) and `[y](not.md)` and [z](https://e.org)"),
        vec!["a.md#b", "https://e.org"]
    );
    assert!(is_external("https://e.org"));
    assert!(!is_external("docs/a.md"));
}
