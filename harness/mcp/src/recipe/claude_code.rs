//! Claude Code: `claude -p` in print mode with `stream-json` output, the
//! server in an `--mcp-config` file kept outside the CLI's working folder.
//!
//! `--tools ""` leaves the model no built-in tool at all (a deny list goes
//! stale with every release: `Glob` and `Grep` reappear once `Bash` is
//! denied, `Agent`, `Skill`, `Workflow`, `ToolSearch` and the `Cron*` tools
//! were added), and `--allowedTools mcp__<server>` grants the served tools,
//! which print mode otherwise refuses. `--bare` keeps the user's own
//! context (CLAUDE.md, skills, plugins, hooks) out of the turn.

use super::{base_recipe, pretty, strings, ConfigFile, McpRecipe, RecipeInput, TOOL_TIMEOUT_SECS};
use crate::harness::Connection;
use serde_json::{json, Value};
use sharedos_drivers::vendor::Vendor;

/// The config file's name, in the workspace (not the CLI's working folder).
const CONFIG_FILE: &str = ".mcp.json";

/// See the module documentation.
pub(super) fn recipe(input: &RecipeInput<'_>) -> McpRecipe {
    let mut server = match input.connection {
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
    server["timeout"] = json!(TOOL_TIMEOUT_SECS * 1000);
    let config = input.workspace.join(CONFIG_FILE);
    let mut args = strings(&["-p", input.prompt, "--output-format", "stream-json", "--verbose", "--bare"]);
    args.extend(strings(&["--no-session-persistence", "--mcp-config"]));
    args.push(config.display().to_string());
    args.extend(strings(&["--strict-mcp-config", "--tools", "", "--allowedTools"]));
    args.push(format!("mcp__{}", input.server_name));
    args.extend(strings(&["--max-turns", "24"]));
    let mut recipe = base_recipe(Vendor::ClaudeCode, "claude", args, input.home);
    for (name, value) in
        [("DISABLE_TELEMETRY", "1"), ("DISABLE_AUTOUPDATER", "1"), ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")]
    {
        recipe.env.insert(name.into(), value.into());
    }
    if let Some(model) = input.model {
        recipe.env.insert("ANTHROPIC_BASE_URL".into(), model.base_url.clone());
        recipe.env.insert("ANTHROPIC_API_KEY".into(), model.key.clone());
        // Its own retries, and a dropped stream asked again without
        // streaming, would each ask the model again.
        recipe.env.insert("CLAUDE_CODE_MAX_RETRIES".into(), "0".into());
        recipe.env.insert("CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK".into(), "1".into());
    }
    recipe.files.push(ConfigFile {
        name: CONFIG_FILE.into(),
        contents: pretty(&json!({ "mcpServers": { input.server_name: server } })),
    });
    recipe
}
