//! One integration-test binary for `rtlat` (ripgrep-style): every module runs
//! the real binary, with `--synthetic` where no privilege is needed and as a
//! real-time run (root) where the structure of real measurements matters.

#[macro_use]
mod util;

mod audit_cli;
mod bad_input;
mod compare;
mod cyclictest_extras;
mod differential;
mod differential_extras;
mod disturbances;
mod environment;
mod explain;
mod faults_children;
mod faults_limits;
mod faults_outputs;
mod faults_readers;
mod faults_stdio;
mod gates;
mod idle_states;
mod ipc_differential;
mod ipc_real;
mod ipc_synthetic;
mod ipc_util;
mod latency;
mod latency_results;
mod load;
mod load_beside;
mod messages;
mod methods;
mod percentiles;
mod plot;
mod privilege;
mod real_extras;
mod real_runs;
mod signals;
mod signaltest;
mod signaltest_real;
mod snapshot_file;
mod stats_stream;
mod synthetic;
mod syscalls;
mod verdict;
