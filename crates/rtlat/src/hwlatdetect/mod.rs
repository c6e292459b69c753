//! `rtlat hwlatdetect`: rt-tests' hwlatdetect (a Python script in 2.4)
//! over the kernel's `hwlat` tracer: its settings, its run, its report.

mod output;
pub mod run;
mod sample;
pub mod settings;
mod tracer;
