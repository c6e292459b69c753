//! `io`: writes that reach the storage device. Each worker has one file in
//! $TMPDIR (or /tmp); it writes 64 KiB and fsyncs, starting over at the
//! beginning of the file every 16 MiB so the file stays small.
//!
//! The files have no name: made with `O_TMPFILE` (or, on a file system
//! without it, unlinked right after being made), they disappear with their
//! last descriptor, however the run ends, SIGKILL included.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str = "64 KiB written and fsync'ed to an unnamed file in $TMPDIR";

const BLOCK: usize = 64 << 10;
const WRAP: u64 = 16 << 20;

/// A worker's file, and the directory it is in.
pub(super) struct File(std::fs::File, std::path::PathBuf);

/// A new file without a name in `dir`.
pub(super) fn unnamed_file(dir: &Path) -> std::io::Result<std::fs::File> {
    tempfile::tempfile_in(dir)
}

impl File {
    pub(super) fn create(ctx: &WorkerCtx) -> Result<File, String> {
        let dir = ctx
            .shared
            .io_dir
            .as_ref()
            .ok_or("no directory for its files")?;
        let f = unnamed_file(dir)
            .map_err(|e| format!("cannot create a file in '{}': {e}", dir.display()))?;
        Ok(File(f, dir.clone()))
    }
}

pub(super) fn run(ctx: &WorkerCtx, file: File) -> WorkerResult {
    let File(mut f, dir) = file;
    let block = vec![0xa5u8; BLOCK];
    let mut written = 0u64;
    let err = |e: std::io::Error| format!("writing a file in '{}': {e}", dir.display());
    while !ctx.stopping() {
        if written >= WRAP {
            f.seek(SeekFrom::Start(0)).map_err(err)?;
            written = 0;
        }
        f.write_all(&block).map_err(err)?;
        f.sync_all().map_err(err)?;
        written += BLOCK as u64;
        ctx.counter.add(1);
    }
    Ok(())
}
