//! `rtlat plot INPUT... -o OUT.svg|OUT.png`: latency plots from cyclictest
//! results (rtlat's or rt-tests' JSON, or the `-h` histogram block).
//! `input` reads the results, `render` draws them, `settings` is the
//! validated command line. The picture is made whole in memory and then
//! written to a temporary file beside the output and renamed over it, so a
//! failure never leaves a partial picture behind.

pub mod glyphs;
pub mod input;
pub mod render;
pub mod settings;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::UsageError;
use crate::cli::plot::{Invocation, help_text, parse};
use settings::Settings;

/// `rtlat plot ARGS...`: parse, read, draw, write. Returns the exit status.
pub fn main(args: &[OsString]) -> anyhow::Result<u8> {
    match parse(args)? {
        Invocation::Help => {
            crate::stdio::print(&help_text())?;
            Ok(0)
        }
        Invocation::Run(settings) => {
            run(&settings)?;
            Ok(0)
        }
    }
}

/// Reads every input (a bad one is a usage error naming it), draws, writes.
pub fn run(settings: &Settings) -> anyhow::Result<()> {
    let inputs = settings
        .inputs
        .iter()
        .map(|i| input::read(i).map_err(|e| UsageError(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let bytes = render::render(&inputs, settings)?;
    write_whole(&settings.output, &bytes)
        .with_context(|| format!("cannot write '{}'", settings.output.display()))
}

/// Writes `bytes` to a temporary file in `path`'s directory and renames it
/// to `path`; on any failure the temporary file is removed.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temp = temp_beside(path);
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// `.<name>.<pid>.tmp` in the directory of `path`.
fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "plot".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_file_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("p.svg");
        std::fs::write(&out, "old").unwrap();
        write_whole(&out, b"new").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("p.svg")]);

        // Renaming onto a directory fails: nothing is left behind.
        let taken = dir.path().join("taken.png");
        std::fs::create_dir(&taken).unwrap();
        std::fs::write(taken.join("inside"), "x").unwrap();
        assert!(write_whole(&taken, b"png").is_err());
        assert!(!temp_beside(&taken).exists());
    }
}
