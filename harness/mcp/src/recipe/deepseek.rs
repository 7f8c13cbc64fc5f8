//! DeepSeek Harness: `dsh`, with the MCP client plugin inserted by a
//! patch file. Unverified: `dsh` is on no registry this project installs
//! from, so no pinned CLI has run this recipe.

use super::{base_recipe, ConfigFile, McpRecipe, RecipeError, RecipeInput, TOOL_TIMEOUT_SECS};
use crate::harness::Connection;
use sharedos_drivers::vendor::Vendor;

/// The variable naming DeepSeek's profile, `headless` unless a seat sets it.
pub const DEEPSEEK_PROFILE_VARIABLE: &str = "DSH_PROFILE";

/// DeepSeek's `cordis.patch.yml` inserts the MCP client plugin (a bare
/// `id:` entry would override an installed plugin and add none).
pub(super) fn recipe(input: &RecipeInput<'_>) -> Result<McpRecipe, RecipeError> {
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
    let mut recipe = base_recipe(Vendor::DeepSeek, "dsh", args, input.home);
    recipe.files.push(ConfigFile { name: "cordis.patch.yml".into(), contents: lines.join("\n") + "\n" });
    Ok(recipe)
}

/// A YAML single-quoted scalar: quotes doubled, no line breaks.
fn yaml_string(value: &str) -> Result<String, RecipeError> {
    if value.contains(['\n', '\r']) {
        return Err(RecipeError::LineBreak(value.to_string()));
    }
    Ok(format!("'{}'", value.replace('\'', "''")))
}
