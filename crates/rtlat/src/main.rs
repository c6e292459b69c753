//! `rtlat`: real-time latency measurement for Linux.
//!
//! `main` only picks the tool (from the subcommand, or from the name the
//! binary was started under: a `cyclictest` symlink runs `rtlat cyclictest`),
//! runs it, prints an error once and maps it to the exit status:
//! 0 normal end, 1 the machine refused something (standard output failing
//! included, or a normal end whose stderr lost a line: see [`stdio`]), 2 a
//! usage error, 3 a `--fail-if` limit broken (or, in `rtlat compare
//! --fail-on-regression`, a regression). Started as one of rtlat's helper
//! processes (the `fork` load's helper, the janitor: `argv[0]` names the
//! role AND the helper variable names the parent, see
//! `rtlat_core::helper`), it does that job instead. At the end, the
//! janitor of the run, if any, is waited for (a run whose janitor died
//! and could not be replaced ends with exit status 1).
#![forbid(unsafe_code)]

mod audit;
mod cli;
mod compare;
mod cyclicdeadline;
mod cyclictest;
mod deadline_test;
mod evaluate;
mod explain;
mod gate;
mod hackbench;
mod host;
mod hwlatdetect;
mod ipc;
mod latency;
mod limits;
mod live;
mod load;
mod markup;
mod migrate;
mod monitor;
mod oslat;
mod output;
mod pi_stress;
mod pip_stress;
mod queuelat;
mod report;
mod rtsetup;
mod run_audit;
mod signals;
mod signaltest;
mod ssdd;
mod tools;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use cli::dispatch::Command;
use rtlat_args::UsageError;
use rtlat_args::stdio::{self, tell};
use rtlat_core::helper::HelperRole;

fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let parent = std::env::var_os(rtlat_core::helper::PARENT_ENV);
    if let Some((role, parent)) = argv
        .first()
        .and_then(|argv0| HelperRole::of_invocation(argv0, parent.as_deref()))
    {
        return ExitCode::from(role.run(parent));
    }
    let mut argv = argv;
    if let Some(parent) = argv.first().and_then(|a| evaluate::phase_parent(a)) {
        if !evaluate::become_phase(parent) {
            return ExitCode::from(1);
        }
        argv[0] = OsString::from("rtlat");
    }
    let status = run_command(&argv);
    // Every object it was told about is removed by now. A run whose
    // janitor died and could not be replaced was stopped for it: the
    // machine refused something at run time (exit status 1).
    match rtlat_core::janitor::finish() {
        Err(_) if status == ExitCode::SUCCESS => ExitCode::from(1),
        _ => status,
    }
}

fn run_command(argv: &[OsString]) -> ExitCode {
    let command = match cli::dispatch::select(argv) {
        Ok(c) => c,
        Err(e) => {
            tell!("{e}");
            return ExitCode::from(2);
        }
    };
    stdio::set_program_name(command.program_name());
    let status = match run(command) {
        Ok(status) => status,
        Err(e) => {
            let _ = std::io::stdout().flush();
            tell!("{e:#}");
            if e.downcast_ref::<UsageError>().is_some() {
                2
            } else {
                1
            }
        }
    };
    ExitCode::from(stdio::exit_status(status))
}

fn run(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::TopHelp => {
            stdio::print(&cli::dispatch::top_help())?;
            Ok(0)
        }
        Command::Version => {
            stdio::print(&rtlat_args::version::line("rtlat"))?;
            Ok(0)
        }
        Command::Generate(args) => cli::generate::run(&args),
        Command::Tool {
            tool,
            args,
            cmdline,
            ..
        } => tool.run(&args, cmdline),
    }
}
