#![forbid(unsafe_code)]
//! `sharedos-conformance`: run, check and bless the conformance matrix.

mod args;
mod commands;
mod decode;
mod exit;
mod stream;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = args::Cli::parse();
    let exit = commands::dispatch(cli.command);
    std::process::ExitCode::from(exit.code())
}
