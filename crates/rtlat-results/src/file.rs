//! Reading one results file for `rtlat plot` and `rtlat compare`: a path
//! or standard input (`-`), read whole but never more than
//! [`MAX_INPUT_BYTES`], refused at the first byte that cannot be text, its
//! UTF-8 byte-order mark skipped. Both tools read through [`read_text`].
//!
//! Paths are taken as [`Path`] and shown lossily, so a file name that is
//! not UTF-8 is read and named (with U+FFFD where its bytes are not).

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

/// The most a results file may hold: 256 MiB.
///
/// The largest inputs anyone means to give:
/// - rt-tests' `-h` block at its largest, `-h 1000000` (C clamps there),
///   in the 2.4 layout that prints every bucket: a row is `%06d` and a
///   TAB-separated `%06lu` per thread, 8 + 7 × threads bytes, so 1,000,000
///   rows are 232 MB for 32 threads (64 MB for 8);
/// - rtlat's `--json` with the full distribution of every thread: a
///   bucket is about 80 bytes pretty-printed and a thread has at most
///   about 4,000 non-empty ones by default (1 µs buckets up to 2 ms, 128
///   per power of two up to 68.7 s), 0.3 MB a thread, so 256 MiB holds
///   some 800 threads whose samples spread over every bucket.
///
/// Parsing needs a few times the text's size on top (JSON values, rows),
/// so a larger limit would let a wrong file (`/dev/zero` is refused at
/// once, an endless text stream is not) take gigabytes before it is
/// refused.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// How much is read at a time; each piece is checked before the next.
const CHUNK_BYTES: usize = 64 << 10;

/// An input: a file, or standard input (`-` on the command line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StdinOr {
    /// `-`.
    Stdin,
    /// A file.
    Path(PathBuf),
}

impl StdinOr {
    /// `-` is standard input, anything else a path.
    pub fn from_arg(arg: impl Into<PathBuf>) -> StdinOr {
        let path = arg.into();
        if path.as_os_str() == "-" {
            StdinOr::Stdin
        } else {
            StdinOr::Path(path)
        }
    }

    /// How messages and pictures name it: `stdin`, or the path as given
    /// (lossily, when it is not UTF-8).
    pub fn name(&self) -> String {
        match self {
            StdinOr::Stdin => "stdin".to_string(),
            StdinOr::Path(path) => path.display().to_string(),
        }
    }

    /// How legends name it: the file name without directory and
    /// extension; `stdin` for standard input.
    pub fn stem(&self) -> String {
        match self {
            StdinOr::Path(path) => path
                .file_stem()
                .map_or_else(|| self.name(), |s| s.to_string_lossy().into_owned()),
            StdinOr::Stdin => self.name(),
        }
    }
}

/// A problem with an input: `<file>: <problem>`, one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {problem}")]
pub struct InputError {
    /// The input's name ([`StdinOr::name`]).
    pub file: String,
    /// What is wrong with it.
    pub problem: String,
}

/// The whole text of `source`, without a leading byte-order mark.
/// `expected` says what the tool reads (`expected JSON or ...`); it ends
/// the messages of an input that is not text.
pub fn read_text(source: &StdinOr, expected: &str) -> Result<String, InputError> {
    let fail = |problem: String| InputError {
        file: source.name(),
        problem,
    };
    let result = match source {
        StdinOr::Stdin => read_bounded(std::io::stdin().lock(), None, MAX_INPUT_BYTES),
        StdinOr::Path(path) => read_file(path),
    };
    let mut text = result.map_err(|refusal| fail(refusal.describe(expected)))?;
    if text.starts_with('\u{feff}') {
        text.replace_range(..'\u{feff}'.len_utf8(), "");
    }
    Ok(text)
}

/// Opens `path` and reads it; a regular file larger than the limit is
/// refused by its size, before anything is read.
fn read_file(path: &Path) -> Result<String, Refusal> {
    let file = File::open(path).map_err(Refusal::Io)?;
    let size = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    if let Some(size) = size.filter(|&s| s > MAX_INPUT_BYTES) {
        return Err(Refusal::TooLarge {
            size: Some(size),
            limit: MAX_INPUT_BYTES,
        });
    }
    read_bounded(file, size, MAX_INPUT_BYTES)
}

/// Why an input was not read.
#[derive(Debug)]
enum Refusal {
    /// Opening or reading failed.
    Io(std::io::Error),
    /// More than `limit` bytes; `size` when known before reading.
    TooLarge { size: Option<u64>, limit: u64 },
    /// A NUL byte at this offset: never in JSON nor in a tool's text.
    Nul(u64),
    /// Not UTF-8 from this offset.
    NotUtf8(u64),
}

impl Refusal {
    fn describe(&self, expected: &str) -> String {
        match self {
            Refusal::Io(e) => format!("cannot read: {}", rtlat_base::io_strerror(e)),
            Refusal::TooLarge {
                size: Some(size),
                limit,
            } => format!(
                "too large: {}; a results file has at most {}",
                size_text(*size),
                size_text(*limit)
            ),
            Refusal::TooLarge { size: None, limit } => format!(
                "too large: read {limit} without reaching its end; a results file has at most \
                 {limit}",
                limit = size_text(*limit)
            ),
            Refusal::Nul(at) => {
                format!("not a text file (a NUL byte at offset {at}); {expected}")
            }
            Refusal::NotUtf8(at) => {
                format!("not a text file (not UTF-8 at offset {at}); {expected}")
            }
        }
    }
}

/// Reads `reader` to its end, refusing it as soon as it passes `limit`
/// bytes, holds a NUL byte or stops being UTF-8. `size_hint` is the size
/// when known (a regular file), to allocate once.
fn read_bounded(
    mut reader: impl Read,
    size_hint: Option<u64>,
    limit: u64,
) -> Result<String, Refusal> {
    let mut bytes = Vec::with_capacity(size_hint.map_or(0, |s| s.min(limit) as usize));
    let mut chunk = vec![0_u8; CHUNK_BYTES];
    // `bytes[..checked]` is UTF-8 without NUL; what follows is at most
    // the start of a character cut by the end of a chunk.
    let mut checked = 0;
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(Refusal::Io(e)),
        };
        if (bytes.len() + n) as u64 > limit {
            return Err(Refusal::TooLarge { size: None, limit });
        }
        bytes.extend_from_slice(&chunk[..n]);
        let unchecked = &bytes[checked..];
        if let Some(at) = unchecked.iter().position(|&b| b == 0) {
            return Err(Refusal::Nul((checked + at) as u64));
        }
        match std::str::from_utf8(unchecked) {
            Ok(_) => checked = bytes.len(),
            Err(e) if e.error_len().is_some() => {
                return Err(Refusal::NotUtf8((checked + e.valid_up_to()) as u64));
            }
            // A character cut by the end of this chunk: the next one
            // completes it.
            Err(e) => checked += e.valid_up_to(),
        }
    }
    String::from_utf8(bytes).map_err(|e| Refusal::NotUtf8(e.utf8_error().valid_up_to() as u64))
}

/// `bytes` for a message: `256 MiB`, `300.5 MiB`, or the exact count
/// where one decimal would hide the difference (`268435457 bytes`).
fn size_text(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes.is_multiple_of(MIB) {
        return format!("{} MiB", bytes / MIB);
    }
    let text = format!("{:.1} MiB", bytes as f64 / MIB as f64);
    if text.ends_with(".0 MiB") {
        format!("{bytes} bytes")
    } else {
        text
    }
}

/// What is wrong with JSON that does not parse, for both tools: a text
/// that ends inside the document is named as cut short.
pub fn json_problem(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Eof => {
            format!("cut short: the JSON ends before it is complete ({e})")
        }
        _ => format!("not valid JSON ({e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8], limit: u64) -> Result<String, String> {
        read_bounded(bytes, None, limit).map_err(|r| r.describe("expected X"))
    }

    #[test]
    fn text_up_to_the_limit() {
        const MIB: usize = 1 << 20;
        let full = " ".repeat(MIB);
        assert_eq!(read(full.as_bytes(), MIB as u64).unwrap(), full);
        assert_eq!(read(b"", 3).unwrap(), "");
        assert_eq!(
            read(format!("{full}\n").as_bytes(), MIB as u64).unwrap_err(),
            "too large: read 1 MiB without reaching its end; a results file has at most 1 MiB"
        );
    }

    #[test]
    fn an_endless_stream_stops_at_the_limit() {
        let endless = std::io::repeat(b' ');
        let e = read_bounded(endless, None, 1 << 20).unwrap_err();
        assert!(
            matches!(e, Refusal::TooLarge { size: None, limit } if limit == 1 << 20),
            "{e:?}"
        );
        // /dev/zero: refused at its first byte, not at the limit.
        let e = read_bounded(std::io::repeat(0), None, u64::MAX).unwrap_err();
        assert!(matches!(e, Refusal::Nul(0)), "{e:?}");
    }

    #[test]
    fn binary_is_refused_where_it_starts() {
        assert_eq!(
            read(b"{\"a\":\0}", 100).unwrap_err(),
            "not a text file (a NUL byte at offset 5); expected X"
        );
        assert_eq!(
            read(b"ab\xffcd", 100).unwrap_err(),
            "not a text file (not UTF-8 at offset 2); expected X"
        );
        // A character cut at the very end of the input.
        assert_eq!(
            read("aé".as_bytes().split_last().unwrap().1, 100).unwrap_err(),
            "not a text file (not UTF-8 at offset 1); expected X"
        );
    }

    #[test]
    fn characters_cut_by_a_chunk_boundary_are_text() {
        // 'é' (2 bytes) and '€' (3 bytes) straddling the chunk boundary.
        for pad in [CHUNK_BYTES - 1, CHUNK_BYTES - 2] {
            let text = format!("{}é€x", " ".repeat(pad));
            assert_eq!(read(text.as_bytes(), u64::MAX).unwrap(), text);
        }
    }

    #[test]
    fn files_stdin_names_and_the_byte_order_mark() {
        assert_eq!(StdinOr::from_arg("-"), StdinOr::Stdin);
        assert_eq!(StdinOr::Stdin.name(), "stdin");
        assert_eq!(
            StdinOr::from_arg("./-"),
            StdinOr::Path(PathBuf::from("./-"))
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bom.json");
        std::fs::write(&path, "\u{feff}{}\n").unwrap();
        let source = StdinOr::from_arg(&path);
        assert_eq!(read_text(&source, "x").unwrap(), "{}\n");

        let missing = StdinOr::from_arg(dir.path().join("missing.json"));
        let e = read_text(&missing, "x").unwrap_err();
        assert_eq!(e.problem, "cannot read: No such file or directory");
        assert_eq!(e.file, missing.name());
    }

    #[test]
    fn a_path_that_is_not_utf8_is_read_and_named_lossily() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir
            .path()
            .join(std::ffi::OsStr::from_bytes(b"run-\xff.json"));
        std::fs::write(&path, "{}\n").unwrap();
        let source = StdinOr::from_arg(&path);
        assert_eq!(read_text(&source, "x").unwrap(), "{}\n");
        assert!(
            source.name().ends_with("run-\u{fffd}.json"),
            "{}",
            source.name()
        );
    }

    #[test]
    fn a_large_file_is_refused_by_its_size_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.txt");
        let file = File::create(&path).unwrap();
        // Sparse: no disk used.
        file.set_len(MAX_INPUT_BYTES * 3 / 2).unwrap();
        let e = read_text(&StdinOr::from_arg(&path), "x").unwrap_err();
        assert_eq!(
            e.problem,
            "too large: 384 MiB; a results file has at most 256 MiB"
        );
        assert_eq!(size_text(MAX_INPUT_BYTES + 1), "268435457 bytes");
        assert_eq!(size_text(300 << 20 | 1 << 19), "300.5 MiB");
    }

    #[test]
    fn truncated_json_is_named_so() {
        let cut = serde_json::from_str::<serde_json::Value>("{\"a\": [1,").unwrap_err();
        assert!(
            json_problem(&cut).starts_with("cut short: the JSON ends before it is complete (EOF"),
            "{}",
            json_problem(&cut)
        );
        let bad = serde_json::from_str::<serde_json::Value>("{\"a\" 1}").unwrap_err();
        assert!(json_problem(&bad).starts_with("not valid JSON (expected `:`"));
    }
}
