//! The validated settings of `rtlat monitor` beyond cyclictest's own:
//! where the metrics go, the rolling windows, the checkpoints.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The address `--listen` defaults to: this machine only, port 9489.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9489";
/// The windows `--window` defaults to.
pub const DEFAULT_WINDOWS: &str = "1m,5m,1h";
/// `--checkpoint-interval`'s default.
pub const DEFAULT_CHECKPOINT_INTERVAL: Duration = Duration::from_secs(60);

/// A rolling window: the figures of its last `length`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// As given (`1m`, `90s`): the `window` label of its metrics.
    pub label: String,
    /// How far back it reaches.
    pub length: Duration,
}

/// Everything the monitor adds to a cyclictest run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MonitorPlan {
    /// `--listen`: where `/metrics` is served; `None` with `--textfile`
    /// alone.
    pub listen: Option<SocketAddr>,
    /// `--textfile`: rewritten whole at every update, for node_exporter's
    /// textfile collector.
    pub textfile: Option<PathBuf>,
    /// `--window`, shortest first.
    pub windows: Vec<Window>,
    /// `--checkpoint`, if given.
    pub checkpoint: Option<PathBuf>,
    /// `--checkpoint-interval`.
    pub checkpoint_interval: Duration,
    /// `--resume`: the checkpoint's totals are carried on.
    pub resume: bool,
}
