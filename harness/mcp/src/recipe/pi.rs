//! Pi: `pi --mode rpc`, the prompt as one RPC line on stdin, the served
//! tools through the harness's own MCP adapter extension. Pi has no MCP
//! client of its own, and no published adapter loads into the pinned Pi as
//! it is (`adapters/pi/sharedos-mcp.js` says why); the adapter is written
//! into the workspace and loaded with `-e`, and `--no-extensions` keeps
//! every other extension, skill and package out.

use super::{base_recipe, pretty, strings, ConfigFile, McpRecipe, RecipeInput, SCRIPTED_MODEL_NAME, TOOL_TIMEOUT_SECS};
use crate::harness::Connection;
use serde_json::{json, Value};
use sharedos_drivers::vendor::Vendor;

/// The adapter extension, written into each turn's workspace.
pub const PI_MCP_ADAPTER: &str = include_str!("../../adapters/pi/sharedos-mcp.js");
/// Its file name in the workspace.
const ADAPTER_FILE: &str = "sharedos-mcp.js";
/// Pi's agent folder, below the turn's home.
pub(super) const AGENT_DIR: &str = ".pi/agent";
/// The provider the scripted model is configured as.
const PROVIDER: &str = "sharedos-scripted";

/// `.mcp.json` for the adapter, the adapter itself, Pi's agent folder in
/// the turn's home and, with the scripted model, a provider pointing at it
/// with Pi's retries and its SDK's off (each would ask the model again).
pub(super) fn recipe(input: &RecipeInput<'_>) -> McpRecipe {
    let mut server = match input.connection {
        Connection::Http { url, token } => {
            let mut server = json!({ "url": url });
            if let Some(token) = token {
                server["headers"] = json!({ "Authorization": format!("Bearer {token}") });
            }
            server
        }
        Connection::Stdio { command, args } => json!({ "command": command, "args": args }),
        Connection::InMemory(_) => Value::Null,
    };
    server["requestTimeoutMs"] = json!(TOOL_TIMEOUT_SECS * 1000);
    let adapter = input.workspace.join(ADAPTER_FILE);
    let mut args = strings(&[
        "--mode",
        "rpc",
        "--no-session",
        "--offline",
        "--no-extensions",
        "--no-skills",
        "--no-prompt-templates",
        "--no-themes",
        "--no-context-files",
        "--no-builtin-tools",
        "-e",
    ]);
    args.push(adapter.display().to_string());
    let mut settings =
        json!({ "quietStartup": true, "enableInstallTelemetry": false, "compaction": { "enabled": false } });
    let mut files = vec![
        ConfigFile {
            name: ".mcp.json".into(),
            contents: pretty(&json!({ "mcpServers": { input.server_name: server } })),
        },
        ConfigFile { name: ADAPTER_FILE.into(), contents: PI_MCP_ADAPTER.into() },
    ];
    if let Some(model) = input.model {
        args.extend(strings(&["--provider", PROVIDER, "--model", SCRIPTED_MODEL_NAME]));
        settings["retry"] = json!({ "enabled": false, "provider": { "maxRetries": 0 } });
        let models = json!({ "providers": { PROVIDER: {
            "baseUrl": model.base_url, "api": "anthropic-messages", "apiKey": model.key,
            "models": [{ "id": SCRIPTED_MODEL_NAME, "name": "SharedOS scripted model", "reasoning": false,
                         "input": ["text"], "contextWindow": 200_000, "maxTokens": 8192,
                         "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0 } }] } } });
        files.push(ConfigFile { name: format!("home/{AGENT_DIR}/models.json"), contents: pretty(&models) });
    }
    files.push(ConfigFile { name: format!("home/{AGENT_DIR}/settings.json"), contents: pretty(&settings) });
    let mut recipe = base_recipe(Vendor::Pi, "pi", args, input.home);
    recipe.files = files;
    for (name, value) in [("PI_OFFLINE", "1"), ("PI_SKIP_VERSION_CHECK", "1"), ("PI_TELEMETRY", "0")] {
        recipe.env.insert(name.into(), value.into());
    }
    // The adapter reads its config from beside the working folder, not in it.
    recipe.env.insert("SHAREDOS_MCP_CONFIG".into(), input.workspace.join(".mcp.json").display().to_string());
    recipe.stdin = Some(json!({ "id": input.execution_id, "type": "prompt", "message": input.prompt }).to_string());
    recipe.keep_stdin_open = true;
    // Against the vendor's model Pi's own retries stay on, and the seat
    // must not end Pi mid-retry.
    recipe.cli_retries = input.model.is_none();
    recipe
}
