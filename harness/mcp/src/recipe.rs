//! The live recipes of 40-messaging-drivers §5.7: for each vendor CLI, the
//! config files that point it at the turn's server and the command line
//! that starts it with nothing of its own but that server.
//!
//! A bearer token never goes on a command line, which other processes can
//! read: Claude Code, DeepSeek and Pi read it from a config file in the
//! turn's workspace, Codex from an environment variable its config names
//! (`bearer_token_env_var`).

use crate::harness::Connection;
use serde_json::{json, Value};
use sharedos_drivers::vendor::Vendor;
use std::collections::BTreeMap;
use std::path::Path;

/// How long a CLI waits on one tool call, in seconds.
pub const TOOL_TIMEOUT_SECS: u64 = 120;
/// The variable Codex reads the bearer token from.
pub const CODEX_TOKEN_VARIABLE: &str = "SHAREDOS_MCP_TOKEN";
/// The variable naming DeepSeek's profile, `headless` unless a seat sets it.
pub const DEEPSEEK_PROFILE_VARIABLE: &str = "DSH_PROFILE";
/// Claude Code's own tools, every one refused so only the served catalogue
/// is left to it.
pub const CLAUDE_OWN_TOOLS: &str = "Bash,Edit,Write,Read,Glob,Grep,NotebookEdit,Task,WebFetch,WebSearch,TodoWrite";

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
        Vendor::ClaudeCode => Ok(claude_code(input)),
        Vendor::Codex => Ok(codex(input)),
        Vendor::DeepSeek => deepseek(input),
        Vendor::Pi => Ok(pi(input)),
    }
}

fn recipe(command: &str, args: Vec<String>) -> McpRecipe {
    McpRecipe {
        files: Vec::new(),
        command: command.to_string(),
        args,
        env: BTreeMap::new(),
        stdin: None,
        keep_stdin_open: false,
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_string()).collect()
}

fn pretty(value: &Value) -> String {
    format!("{value:#}\n")
}

/// `.mcp.json` of Claude Code, passed with `--mcp-config`, and a print-mode
/// run whose only allowed tools are the server's.
fn claude_code(input: &RecipeInput<'_>) -> McpRecipe {
    let server = match input.connection {
        Connection::Http { url, token } => {
            let mut server = json!({ "type": "http", "url": url });
            if let Some(token) = token {
                server["headers"] = json!({ "Authorization": format!("Bearer {token}") });
            }
            server
        }
        Connection::Stdio { command, args } => json!({ "type": "stdio", "command": command, "args": args }),
        Connection::InMemory(_) => Value::Null,
    };
    let config = input.workspace.join(".mcp.json");
    let mut args = strings(&["-p", input.prompt, "--output-format", "stream-json", "--verbose", "--mcp-config"]);
    args.push(config.display().to_string());
    args.extend(strings(&["--strict-mcp-config", "--allowedTools"]));
    args.push(format!("mcp__{}", input.server_name));
    args.extend(strings(&["--disallowedTools", CLAUDE_OWN_TOOLS, "--max-turns", "24"]));
    let mut recipe = recipe("claude", args);
    recipe.files.push(ConfigFile {
        name: ".mcp.json".into(),
        contents: pretty(&json!({ "mcpServers": { input.server_name: server } })),
    });
    recipe
}

/// Codex takes its server on the command line (`-c key=value`, values in
/// TOML); the token, if any, through a variable the config names.
fn codex(input: &RecipeInput<'_>) -> McpRecipe {
    let key = |name: &str| format!("mcp_servers.{}.{name}", input.server_name);
    let mut settings: Vec<(String, toml::Value)> = Vec::new();
    let mut env = BTreeMap::new();
    match input.connection {
        Connection::Http { url, token } => {
            settings.push((key("url"), toml::Value::String(url.clone())));
            if let Some(token) = token {
                settings.push((key("bearer_token_env_var"), toml::Value::String(CODEX_TOKEN_VARIABLE.into())));
                env.insert(CODEX_TOKEN_VARIABLE.to_string(), token.clone());
            }
        }
        Connection::Stdio { command, args } => {
            settings.push((key("command"), toml::Value::String(command.clone())));
            let args = args.iter().cloned().map(toml::Value::String).collect();
            settings.push((key("args"), toml::Value::Array(args)));
        }
        Connection::InMemory(_) => {}
    }
    settings.push((key("required"), toml::Value::Boolean(true)));
    let timeout = i64::try_from(TOOL_TIMEOUT_SECS).unwrap_or(i64::MAX);
    settings.push((key("tool_timeout_sec"), toml::Value::Integer(timeout)));
    let mut args = strings(&["exec", "--json", "--skip-git-repo-check"]);
    for (key, value) in settings {
        args.push("-c".into());
        args.push(format!("{key}={value}"));
    }
    args.push(input.prompt.to_string());
    let mut recipe = recipe("codex", args);
    recipe.env = env;
    recipe
}

/// DeepSeek's `cordis.patch.yml` inserts the MCP client plugin (a bare
/// `id:` entry would override an installed plugin and add none).
fn deepseek(input: &RecipeInput<'_>) -> Result<McpRecipe, RecipeError> {
    let mut lines = vec![
        "insert:".to_string(),
        format!("  - id: {}", yaml_string(&format!("mcp-{}", input.server_name))?),
        "    name: '@deepseek-ai/dsh-mcp-client'".to_string(),
        "    config:".to_string(),
        format!("      serverName: {}", yaml_string(input.server_name)?),
    ];
    match input.connection {
        Connection::Http { url, token } => {
            lines.push("      transport: streamable-http".into());
            lines.push(format!("      url: {}", yaml_string(url)?));
            if let Some(token) = token {
                lines.push("      headers:".into());
                lines.push(format!("        Authorization: {}", yaml_string(&format!("Bearer {token}"))?));
            }
        }
        Connection::Stdio { command, args } => {
            lines.push("      transport: stdio".into());
            lines.push(format!("      command: {}", yaml_string(command)?));
            lines.push("      args:".into());
            for arg in args {
                lines.push(format!("        - {}", yaml_string(arg)?));
            }
        }
        Connection::InMemory(_) => {}
    }
    lines.push("      failOnStartupError: true".into());
    lines.push(format!("      toolCallTimeoutMs: {}", TOOL_TIMEOUT_SECS * 1000));
    let profile = input.seat_env.get(DEEPSEEK_PROFILE_VARIABLE).map_or("headless", String::as_str);
    let patch = input.workspace.join("cordis.patch.yml");
    let args = vec![
        "--profile".to_string(),
        profile.to_string(),
        "--patch".to_string(),
        patch.display().to_string(),
        input.prompt.to_string(),
    ];
    let mut recipe = recipe("dsh", args);
    recipe.files.push(ConfigFile { name: "cordis.patch.yml".into(), contents: lines.join("\n") + "\n" });
    Ok(recipe)
}

/// Pi's `pi-mcp-adapter` reads `.mcp.json` from the working directory; the
/// prompt arrives as one RPC line, and stdin stays open because the end of
/// input ends Pi's session.
fn pi(input: &RecipeInput<'_>) -> McpRecipe {
    let mut server = match input.connection {
        Connection::Http { url, token } => {
            let mut server = json!({ "url": url });
            if let Some(token) = token {
                server["auth"] = json!("bearer");
                server["bearerToken"] = json!(token);
            }
            server
        }
        Connection::Stdio { command, args } => json!({ "command": command, "args": args }),
        Connection::InMemory(_) => Value::Null,
    };
    server["lifecycle"] = json!("eager");
    server["requestTimeoutMs"] = json!(TOOL_TIMEOUT_SECS * 1000);
    let mut recipe = recipe("pi", strings(&["--mode", "rpc", "--no-session", "--no-builtin-tools"]));
    recipe.files.push(ConfigFile {
        name: ".mcp.json".into(),
        contents: pretty(&json!({ "mcpServers": { input.server_name: server } })),
    });
    recipe.stdin = Some(json!({ "id": input.execution_id, "type": "prompt", "message": input.prompt }).to_string());
    recipe.keep_stdin_open = true;
    recipe
}

/// A YAML single-quoted scalar: quotes doubled, no line breaks.
fn yaml_string(value: &str) -> Result<String, RecipeError> {
    if value.contains(['\n', '\r']) {
        return Err(RecipeError::LineBreak(value.to_string()));
    }
    Ok(format!("'{}'", value.replace('\'', "''")))
}
