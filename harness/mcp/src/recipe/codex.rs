//! Codex: `codex exec --json`, the server and everything else as `-c`
//! settings. In `exec` Codex refuses every MCP tool not marked read-only
//! unless the server's tools are approved, and it keeps its own shell,
//! image, goal, agent and search tools unless each is turned off; what is
//! left besides the served namespace (`request_user_input` and the MCP
//! resource tools, which only reach the turn's server) acts on nothing
//! outside the envelope.

use super::{base_recipe, strings, ConfigFile, McpRecipe, RecipeInput, SCRIPTED_MODEL_NAME, TOOL_TIMEOUT_SECS};
use crate::harness::Connection;
use sharedos_drivers::vendor::Vendor;

/// Codex's own config file, in its home (`CODEX_HOME`, the turn's home):
/// it alone holds the bearer token and the model's key.
pub const CODEX_CONFIG_FILE: &str = "home/config.toml";
/// The provider the scripted model is configured as.
const PROVIDER: &str = "sharedos-scripted";

/// Codex's own tools and outside traffic, each turned off: the shell
/// (`shell_tool` is what removes `exec_command`), images, goals, plugins
/// (which run `git ls-remote` against the network), apps, the shell
/// snapshot (a login shell at start-up), sub-agents, web search, analytics
/// and the update check. A shell that came back would still not see any
/// variable named like a key or token.
const LOCKDOWN: &[&str] = &[
    "--disable",
    "shell_tool",
    "--disable",
    "unified_exec",
    "--disable",
    "view_image",
    "--disable",
    "goals",
    "--disable",
    "plugins",
    "--disable",
    "remote_plugin",
    "--disable",
    "apps",
    "--disable",
    "shell_snapshot",
    "-c",
    "agents.enabled=false",
    "-c",
    "web_search=\"disabled\"",
    "-c",
    "analytics.enabled=false",
    "-c",
    "check_for_update_on_startup=false",
    "-c",
    "shell_environment_policy.ignore_default_excludes=false",
];

/// Codex takes its server on the command line (`-c key=value`, values in
/// TOML), its state in the turn's home (`CODEX_HOME`), and the token and
/// the model's key in its own config file there (0600, in a 0700 home):
/// neither is in its environment, which every program Codex starts
/// inherits (it runs `lsb_release`, `getconf` and others found on `PATH`
/// at each turn), nor on its command line, which any local user can read.
pub(super) fn recipe(input: &RecipeInput<'_>) -> McpRecipe {
    let key = |name: &str| format!("mcp_servers.{}.{name}", input.server_name);
    let mut settings: Vec<(String, toml::Value)> = Vec::new();
    let mut secrets = toml::Table::new();
    match input.connection {
        Connection::Http { url, token } => {
            settings.push((key("url"), toml::Value::String(url.clone())));
            if let Some(token) = token {
                let headers = toml::Table::from_iter([("Authorization".to_string(), format!("Bearer {token}").into())]);
                let server = toml::Table::from_iter([("http_headers".to_string(), headers.into())]);
                let servers = toml::Table::from_iter([(input.server_name.to_string(), server.into())]);
                secrets.insert("mcp_servers".into(), servers.into());
            }
        }
        Connection::Stdio { command, args } => {
            settings.push((key("command"), toml::Value::String(command.clone())));
            let args = args.iter().cloned().map(toml::Value::String).collect();
            settings.push((key("args"), toml::Value::Array(args)));
        }
        Connection::InMemory(_) => {}
    }
    // Without `required`, a server Codex cannot reach is silently dropped
    // and the turn runs with no served tool at all.
    settings.push((key("required"), toml::Value::Boolean(true)));
    let timeout = i64::try_from(TOOL_TIMEOUT_SECS).unwrap_or(i64::MAX);
    settings.push((key("tool_timeout_sec"), toml::Value::Integer(timeout)));
    settings.push((key("default_tools_approval_mode"), toml::Value::String("approve".into())));
    if let Some(model) = input.model {
        let provider = |name: &str| format!("model_providers.{PROVIDER}.{name}");
        settings.push(("model_provider".into(), toml::Value::String(PROVIDER.into())));
        settings.push((provider("name"), toml::Value::String("SharedOS scripted model".into())));
        settings.push((provider("base_url"), toml::Value::String(format!("{}/v1", model.base_url))));
        settings.push((provider("wire_api"), toml::Value::String("responses".into())));
        settings.push((provider("request_max_retries"), toml::Value::Integer(0)));
        settings.push((provider("stream_max_retries"), toml::Value::Integer(0)));
        settings.push(("model".into(), toml::Value::String(SCRIPTED_MODEL_NAME.into())));
        let key = toml::Table::from_iter([("experimental_bearer_token".to_string(), model.key.clone().into())]);
        let providers = toml::Table::from_iter([(PROVIDER.to_string(), key.into())]);
        secrets.insert("model_providers".into(), providers.into());
    }
    let mut args = strings(&["exec", "--json", "--skip-git-repo-check", "--ephemeral"]);
    args.extend(strings(LOCKDOWN));
    for (key, value) in settings {
        args.push("-c".into());
        args.push(format!("{key}={value}"));
    }
    args.push(input.prompt.to_string());
    let mut recipe = base_recipe(Vendor::Codex, "codex", args, input.home);
    if !secrets.is_empty() {
        recipe.files.push(ConfigFile { name: CODEX_CONFIG_FILE.into(), contents: secrets.to_string() });
    }
    recipe
}
