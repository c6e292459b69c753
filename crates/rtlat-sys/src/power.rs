//! The PM QoS request through `/dev/cpu_dma_latency`: while the file stays
//! open, the kernel keeps CPUs out of idle states whose exit latency exceeds
//! the value written. Closing it (dropping [`DmaLatencyRequest`]) restores the
//! default.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};

/// Path of the PM QoS device.
pub const DMA_LATENCY_PATH: &str = "/dev/cpu_dma_latency";

/// An open PM QoS request; held for the whole run.
#[derive(Debug)]
pub struct DmaLatencyRequest {
    _file: File,
}

/// Why the request could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DmaLatencyError {
    /// Opening the device failed.
    #[error("open {DMA_LATENCY_PATH}: {0}")]
    Open(io::Error),
    /// Writing the value failed.
    #[error("writing {value} to {DMA_LATENCY_PATH}: {source}")]
    Write {
        /// The value that was being written.
        value: i32,
        /// The I/O error.
        source: io::Error,
    },
}

/// Writes `value_us` (a binary 32-bit integer, as the kernel expects) to
/// `/dev/cpu_dma_latency` and keeps the file open.
pub fn request_dma_latency(value_us: i32) -> Result<DmaLatencyRequest, DmaLatencyError> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(DMA_LATENCY_PATH)
        .map_err(DmaLatencyError::Open)?;
    file.write_all(&value_us.to_ne_bytes())
        .map_err(|source| DmaLatencyError::Write {
            value: value_us,
            source,
        })?;
    Ok(DmaLatencyRequest { _file: file })
}
