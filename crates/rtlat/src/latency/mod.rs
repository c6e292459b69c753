//! `rtlat latency`: Xenomai 3's `latency` test on Linux. One SCHED_FIFO
//! thread on a periodic timerfd, a discarded warm-up second, then per-second
//! minimum, average and maximum (`RTD|` lines), three histograms, their
//! statistics and a summary, in Xenomai's formats. `settings` is the
//! validated configuration, `run` carries it out, `output` holds Xenomai's
//! text formats and `gnuplot` the `-g` data file. The measuring loop is the
//! cyclic engine's (`rtlat_core::engine`); `--json` writes cyclictest's
//! document and `--verdict` its verdict lines.

pub mod gnuplot;
pub mod output;
pub mod run;
pub mod settings;
