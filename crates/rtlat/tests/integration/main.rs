//! One integration-test binary for `rtlat` (ripgrep-style): every module runs
//! the real binary, with `--synthetic` where no privilege is needed and as a
//! real-time run (root) where the structure of real measurements matters.
//!
//! Grouped by what is tested: a folder per tool (`synthetic` runs need no
//! privilege, `real` runs are root, `differential` runs compare with the C
//! tool), `results/` for the result documents and what reads them, `faults/`
//! for outputs, inputs, children and limits under faults, `cli/` for the
//! command line's messages, and `support/` for the shared helpers.

#[macro_use]
mod support;

mod audit;
mod blocks;
mod cli;
mod columns;
mod cyclicdeadline;
mod cyclictest;
mod deadline_test;
mod doc_blocks;
mod doc_links;
mod docs;
mod evaluate;
mod evaluate_browser;
mod evaluate_compare;
mod explain;
mod faults;
mod fleet;
mod hackbench;
mod hostile_text;
mod hwlatdetect;
mod ipc;
mod kernel_vm;
mod latency;
mod load;
mod migrate;
mod monitor;
mod monitor_files;
mod monitor_http;
mod oslat;
mod package;
mod pi_stress;
mod queuelat;
mod reader_bounds;
mod results;
mod rt_tests_newer;
mod signaltest;
mod smoke;
mod ssdd;
