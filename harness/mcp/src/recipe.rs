//! The live recipes: for each vendor CLI, the
//! config files that point it at the turn's server and the command line
//! that starts it with nothing of its own but that server.
//!
//! A bearer token never goes on a command line, which other processes can
//! read, nor in the CLI's environment, which every program it starts
//! inherits: each CLI reads it from a config file in the turn's workspace
//! (0600, the workspace 0700). Every recipe gives its CLI the turn's own home
//! ([`TurnHome`]), and, with the scripted model, points it at that model
//! with the CLI's own retries against it off.

mod claude_code;
mod codex;
mod deepseek;
mod digest;
mod pi;

use crate::harness::Connection;
use crate::home::TurnHome;
use serde_json::Value;
use sharedos_drivers::vendor::Vendor;
use sharedos_scripted_model::server::ModelEndpoint;
use std::collections::BTreeMap;
use std::path::Path;

pub use codex::CODEX_CONFIG_FILE;
pub use deepseek::DEEPSEEK_PROFILE_VARIABLE;
pub use digest::{recipe_digest, SeatRecipe};
pub use pi::PI_MCP_ADAPTER;

/// How long a CLI waits on one tool call, in seconds.
pub const TOOL_TIMEOUT_SECS: u64 = 120;
/// The model a CLI pointed at the scripted model asks for: a name no CLI
/// has metadata for, so none changes its wire for it.
pub const SCRIPTED_MODEL_NAME: &str = "scripted-model";

/// A file a recipe writes into the turn's workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// Its name inside the workspace.
    pub name: String,
    /// What it holds.
    pub contents: String,
}

/// How one vendor CLI is started for one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpRecipe {
    /// Files to write into the workspace first.
    pub files: Vec<ConfigFile>,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables the recipe itself sets for the CLI.
    pub env: BTreeMap<String, String>,
    /// A line written on stdin once it starts.
    pub stdin: Option<String>,
    /// Keep stdin open after that line (Pi's session ends at end of input).
    pub keep_stdin_open: bool,
    /// The CLI retries a failed model call itself after writing an ending
    /// (Pi with the vendor's model): stdin stays open past such an ending.
    pub cli_retries: bool,
}

/// What a recipe is written for.
#[derive(Debug, Clone, Copy)]
pub struct RecipeInput<'a> {
    /// The MCP server's name (`sharedos`).
    pub server_name: &'a str,
    /// Where the catalogue is served.
    pub connection: &'a Connection,
    /// The turn's prompt.
    pub prompt: &'a str,
    /// The turn's execution id.
    pub execution_id: &'a str,
    /// The turn's workspace.
    pub workspace: &'a Path,
    /// The turn's own home, inside the workspace.
    pub home: &'a TurnHome,
    /// The scripted model, when the seat points its CLI at it.
    pub model: Option<&'a ModelEndpoint>,
    /// The seat's own variables (DeepSeek reads its profile there).
    pub seat_env: &'a BTreeMap<String, String>,
}

/// Why no recipe could be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecipeError {
    /// A live CLI is reached over HTTP or stdio, never in memory.
    #[error("write a live recipe: the server is in memory, which no CLI can reach")]
    InMemory,
    /// A value would break the YAML DeepSeek reads.
    #[error("write DeepSeek's patch: `{0}` holds a line break")]
    LineBreak(String),
}

/// The recipe starting `vendor`'s CLI against the turn's server.
///
/// # Errors
/// [`RecipeError`] when the connection is in memory or a value cannot be
/// written into a config file.
pub fn mcp_recipe(vendor: Vendor, input: &RecipeInput<'_>) -> Result<McpRecipe, RecipeError> {
    if matches!(input.connection, Connection::InMemory(_)) {
        return Err(RecipeError::InMemory);
    }
    match vendor {
        Vendor::ClaudeCode => Ok(claude_code::recipe(input)),
        Vendor::Codex => Ok(codex::recipe(input)),
        Vendor::DeepSeek => deepseek::recipe(input),
        Vendor::Pi => Ok(pi::recipe(input)),
    }
}

/// The variables pointing `vendor`'s CLI at `home` for everything it
/// keeps: the home's own ([`TurnHome::variables`]) and the CLI's folder
/// variable, which it reads before `HOME`. The `--version` probe runs with
/// these too, in a home of its own.
#[must_use]
pub fn home_variables(vendor: Vendor, home: &TurnHome) -> BTreeMap<String, String> {
    let mut variables = home.variables();
    let own = match vendor {
        Vendor::Codex => Some(("CODEX_HOME", home.home.clone())),
        Vendor::ClaudeCode => Some(("CLAUDE_CONFIG_DIR", home.below(".claude"))),
        Vendor::Pi => Some(("PI_CODING_AGENT_DIR", home.below(pi::AGENT_DIR))),
        Vendor::DeepSeek => None,
    };
    variables.extend(own.map(|(name, path)| (name.to_string(), path.display().to_string())));
    variables
}

/// A recipe starting `vendor`'s `command` with `args` in the turn's own home.
fn base_recipe(vendor: Vendor, command: &str, args: Vec<String>, home: &TurnHome) -> McpRecipe {
    McpRecipe {
        files: Vec::new(),
        command: command.to_string(),
        args,
        env: home_variables(vendor, home),
        stdin: None,
        keep_stdin_open: false,
        cli_retries: false,
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_string()).collect()
}

fn pretty(value: &Value) -> String {
    format!("{value:#}\n")
}
