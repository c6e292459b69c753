//! `io`: writes that reach the storage device. Each worker has one file in
//! the set's temporary directory (made under $TMPDIR or /tmp, removed when
//! the load stops); it writes 64 KiB and fsyncs, starting over at the
//! beginning of the file every 16 MiB so the file stays small.

use std::io::{Seek, SeekFrom, Write};

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str = "64 KiB written and fsync'ed to a file in a temporary directory";

const BLOCK: usize = 64 << 10;
const WRAP: u64 = 16 << 20;

/// A worker's file.
pub(super) struct File(std::fs::File, std::path::PathBuf);

impl File {
    pub(super) fn create(ctx: &WorkerCtx) -> Result<File, String> {
        let dir = ctx.shared.io_dir.as_ref().ok_or("no temporary directory")?;
        let path = dir.join(format!("worker-{}", ctx.index));
        let f = std::fs::File::create(&path)
            .map_err(|e| format!("cannot create '{}': {e}", path.display()))?;
        Ok(File(f, path))
    }
}

pub(super) fn run(ctx: &WorkerCtx, file: File) -> WorkerResult {
    let File(mut f, path) = file;
    let block = vec![0xa5u8; BLOCK];
    let mut written = 0u64;
    let err = |e: std::io::Error| format!("writing '{}': {e}", path.display());
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
