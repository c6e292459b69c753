//! From a command line to a run: each tool's command line is parsed here
//! into its validated settings, and the tool is handed those settings.
//! This is the only place where the two meet, so the dependencies point
//! one way: `cli` knows the tools' settings and entry points, the tools
//! never know `cli`.

use std::ffi::OsString;

use rtlat_args::values::{SystemView, print_warnings};
use rtlat_args::{Invocation, stdio};

use super::dispatch::Tool;
use super::shared::Measure;
use crate::ipc::PairTool;
use crate::{audit, compare, cyclictest, ipc, latency, load, signaltest};

/// Parses `args` for `tool` and runs it; returns the exit status.
pub fn run_tool(tool: Tool, args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
    match tool {
        Tool::Cyclictest => run_cyclictest(args, cmdline),
        Tool::Signaltest => run_signaltest(args, cmdline),
        Tool::Latency => run_latency(args, cmdline),
        Tool::Monitor => run_monitor(args, cmdline),
        Tool::Compare => run_compare(args),
        Tool::Load => run_load(args),
        Tool::Audit => run_audit(args),
        Tool::Svsematest => run_pair_tool(PairTool::Svsematest, args, cmdline),
        Tool::Pmqtest => run_pair_tool(PairTool::Pmqtest, args, cmdline),
        Tool::Ptsematest => run_pair_tool(PairTool::Ptsematest, args, cmdline),
        Tool::Sigwaittest => run_pair_tool(PairTool::Sigwaittest, args, cmdline),
        Tool::Plot => run_plot(args),
    }
}

fn run_cyclictest(args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
    use super::cyclictest::{help_text, parse};
    let invocation = parse(args, cmdline, &SystemView::of_this_process())?;
    measure(invocation, help_text, cyclictest::run::run)
}

fn run_monitor(args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
    use super::cyclictest::parse_monitor;
    let invocation = parse_monitor(args, cmdline, &SystemView::of_this_process())?;
    measure(invocation, super::monitor::help_text, cyclictest::run::run)
}

fn run_signaltest(args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
    use super::signaltest::{help_text, parse};
    let invocation = parse(args, cmdline, &SystemView::of_this_process())?;
    measure(invocation, help_text, |s| signaltest::run::run(s))
}

fn run_latency(args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
    use super::latency::{help_text, parse};
    let invocation = parse(args, cmdline, &SystemView::of_this_process())?;
    measure(invocation, help_text, |s| latency::run::run(s))
}

fn run_pair_tool(tool: PairTool, args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
    use super::ipc::{Invocation, help_text, parse};
    match parse(tool, args, cmdline, &SystemView::of_this_process())? {
        Invocation::Help => help(&help_text(tool)),
        Invocation::ForkChild { side, pair } => ipc::fork::child(tool, side, pair),
        Invocation::Run(run) => measured(run, ipc::threads::run),
    }
}

fn run_compare(args: &[OsString]) -> anyhow::Result<u8> {
    use super::compare::{help_text, parse};
    settled(parse(args)?, help_text, compare::run)
}

fn run_load(args: &[OsString]) -> anyhow::Result<u8> {
    use super::load::{help_text, parse};
    let invocation = parse(args, &SystemView::of_this_process(), std::env::temp_dir())?;
    settled(invocation, help_text, load::run)
}

fn run_audit(args: &[OsString]) -> anyhow::Result<u8> {
    use super::audit::{help_text, parse};
    settled(parse(args, audit::machine_of)?, help_text, audit::run)
}

/// A tool that does not measure: its help, or `run` with its settings.
fn settled<S>(
    invocation: Invocation<S>,
    help_text: fn() -> String,
    run: fn(&S) -> anyhow::Result<u8>,
) -> anyhow::Result<u8> {
    match invocation {
        Invocation::Help => help(&help_text()),
        Invocation::Run(settings) => run(&settings),
    }
}

/// A measuring tool: its help, or its warnings and then `run`.
fn measure<S>(
    invocation: Invocation<Measure<S>>,
    help_text: fn() -> String,
    run: impl FnOnce(&S) -> anyhow::Result<u8>,
) -> anyhow::Result<u8> {
    match invocation {
        Invocation::Help => help(&help_text()),
        Invocation::Run(measure) => measured(measure, run),
    }
}

/// Prints the warnings, then runs.
fn measured<S>(
    measure: Measure<S>,
    run: impl FnOnce(&S) -> anyhow::Result<u8>,
) -> anyhow::Result<u8> {
    print_warnings(&measure.warnings);
    run(&measure.settings)
}

/// `rtlat plot ARGS`: runs `rtlat-plot ARGS`, the binary built beside this
/// one that holds the plotting code (kept out of this binary, which `-m`
/// locks in RAM), in place of this process.
fn run_plot(args: &[OsString]) -> anyhow::Result<u8> {
    use std::os::unix::process::CommandExt;
    let own = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find rtlat's own path: {e}"))?;
    let plotter = own.with_file_name("rtlat-plot");
    let error = std::process::Command::new(&plotter).args(args).exec();
    anyhow::bail!(
        "cannot run '{}', the plotting half of rtlat plot (cargo build makes it beside rtlat): {error}",
        plotter.display()
    )
}

/// `--help`: the text on stdout, exit 0.
fn help(text: &str) -> anyhow::Result<u8> {
    stdio::print(text)?;
    Ok(0)
}
