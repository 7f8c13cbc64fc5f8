//! Live MCP seats as this binary runs them: each is given this binary's
//! `mcp-relay` as the stdio server its CLI starts, and a seat whose CLI is
//! not installed is left out of the run with a message saying so, rather
//! than failing every one of its cells.

use crate::args::McpRelayArgs;
use crate::exit::Exit;
use sharedos_grading::input::loader::Suite;
use sharedos_mcp::live::{cli_version, command_available};
use sharedos_mcp::path::cli_path;
use sharedos_mcp::relay::relay as carry;
use sharedos_mcp::serve::RelayCommand;

/// The relay subcommand's name.
const RELAY_SUBCOMMAND: &str = "mcp-relay";

/// Readies `suite`'s MCP seats and returns the column ids of those left
/// out because their CLI is not installed.
pub fn prepare(suite: &mut Suite) -> Vec<String> {
    let relay = std::env::current_exe()
        .ok()
        .map(|exe| RelayCommand { program: exe.display().to_string(), args: vec![RELAY_SUBCOMMAND.to_string()] });
    let mut skipped = Vec::new();
    suite.seats.retain_mut(|seat| {
        let Some(mcp) = seat.mcp.as_mut() else { return true };
        mcp.relay.clone_from(&relay);
        // The CLI is found on the seat's own PATH when it names one.
        let path = seat.launch.env.get("PATH").map(std::ffi::OsString::from).or_else(|| std::env::var_os("PATH"));
        if command_available(&seat.launch.command, path.as_deref()) {
            // Unless the seat names one, the CLI's PATH is the harness's
            // choice: its interpreter's folder and the system's.
            if !seat.launch.env.contains_key("PATH") {
                seat.launch.env.insert("PATH".into(), cli_path(&seat.launch.command, path.as_deref()));
            }
            // Recorded in every record's runtime manifest: a newer CLI is a
            // deliberate bump, and its verdicts are compared with the old.
            mcp.cli_version = cli_version(mcp.vendor, &seat.launch.command, &seat.launch.env);
            return true;
        }
        tell!(
            "skipping column {}: `{}` is not installed (not found on PATH); install {} or name its program with \
             `command` in {}",
            seat.column_id,
            seat.launch.command,
            mcp.vendor.id(),
            seat.file.display()
        );
        skipped.push(seat.column_id.clone());
        false
    });
    skipped
}

/// `mcp-relay SOCKET`.
pub fn relay(args: &McpRelayArgs) -> Exit {
    match carry(&args.socket, std::io::stdin(), std::io::stdout().lock()) {
        Ok(()) => Exit::Success,
        Err(error) => {
            tell!("error: failed to {error}");
            Exit::Io
        }
    }
}
