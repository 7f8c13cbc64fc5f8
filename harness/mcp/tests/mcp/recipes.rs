//! The live recipes of 40-messaging-drivers §5.7, checked for exactly what
//! they write: each vendor's config files byte for byte, its command line
//! argument for argument, and where its bearer token goes (never on the
//! command line).

use sharedos_drivers::vendor::Vendor;
use sharedos_mcp::harness::Connection;
use sharedos_mcp::recipe::{mcp_recipe, McpRecipe, RecipeError, RecipeInput};
use std::collections::BTreeMap;
use std::path::Path;

const URL: &str = "http://127.0.0.1:4242/mcp";
const TOKEN: &str = "t0k3n";
const PROMPT: &str = "Call `files.read` with {}";

fn http() -> Connection {
    Connection::Http { url: URL.into(), token: Some(TOKEN.into()) }
}

fn stdio() -> Connection {
    Connection::Stdio { command: "/bin/relay".into(), args: vec!["mcp-relay".into(), "/ws/mcp.sock".into()] }
}

fn recipe_with(vendor: Vendor, connection: &Connection, seat_env: &BTreeMap<String, String>) -> McpRecipe {
    let input = RecipeInput {
        server_name: "sharedos",
        connection,
        prompt: PROMPT,
        execution_id: "exec-1",
        workspace: Path::new("/ws"),
        seat_env,
    };
    mcp_recipe(vendor, &input).expect("a recipe")
}

fn recipe(vendor: Vendor, connection: &Connection) -> McpRecipe {
    recipe_with(vendor, connection, &BTreeMap::new())
}

fn file(recipe: &McpRecipe, name: &str) -> String {
    recipe.files.iter().find(|f| f.name == name).map(|f| f.contents.clone()).expect("the file is written")
}

fn args(recipe: &McpRecipe) -> Vec<&str> {
    recipe.args.iter().map(String::as_str).collect()
}

fn token_only_in_files(recipe: &McpRecipe) {
    assert!(recipe.args.iter().all(|arg| !arg.contains(TOKEN)), "the token is never on the command line");
}

#[test]
fn claude_code_over_http_gets_an_mcp_json_with_the_token_and_only_the_servers_tools() {
    let recipe = recipe(Vendor::ClaudeCode, &http());
    assert_eq!(recipe.command, "claude");
    assert_eq!(
        args(&recipe),
        [
            "-p",
            PROMPT,
            "--output-format",
            "stream-json",
            "--verbose",
            "--mcp-config",
            "/ws/.mcp.json",
            "--strict-mcp-config",
            "--allowedTools",
            "mcp__sharedos",
            "--disallowedTools",
            "Bash,Edit,Write,Read,Glob,Grep,NotebookEdit,Task,WebFetch,WebSearch,TodoWrite",
            "--max-turns",
            "24",
        ]
    );
    assert_eq!(
        file(&recipe, ".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"sharedos\": {\n      \"headers\": {\n        \"Authorization\": \"Bearer t0k3n\"\n      },\n      \"type\": \"http\",\n      \"url\": \"http://127.0.0.1:4242/mcp\"\n    }\n  }\n}\n"
    );
    assert_eq!((recipe.stdin.as_deref(), recipe.keep_stdin_open, recipe.env.len()), (None, false, 0));
    token_only_in_files(&recipe);
}

#[test]
fn claude_code_over_stdio_starts_the_relay_as_its_server() {
    let recipe = recipe(Vendor::ClaudeCode, &stdio());
    assert_eq!(
        file(&recipe, ".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"sharedos\": {\n      \"args\": [\n        \"mcp-relay\",\n        \"/ws/mcp.sock\"\n      ],\n      \"command\": \"/bin/relay\",\n      \"type\": \"stdio\"\n    }\n  }\n}\n"
    );
}

#[test]
fn codex_takes_its_server_as_config_flags_and_its_token_from_a_variable() {
    let recipe = recipe(Vendor::Codex, &http());
    assert_eq!(recipe.command, "codex");
    assert_eq!(
        args(&recipe),
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-c",
            "mcp_servers.sharedos.url=\"http://127.0.0.1:4242/mcp\"",
            "-c",
            "mcp_servers.sharedos.bearer_token_env_var=\"SHAREDOS_MCP_TOKEN\"",
            "-c",
            "mcp_servers.sharedos.required=true",
            "-c",
            "mcp_servers.sharedos.tool_timeout_sec=120",
            PROMPT,
        ]
    );
    assert!(recipe.files.is_empty());
    assert_eq!(recipe.env, BTreeMap::from([("SHAREDOS_MCP_TOKEN".to_string(), TOKEN.to_string())]));
    token_only_in_files(&recipe);
}

#[test]
fn codex_over_stdio_names_the_relay_command_and_its_arguments() {
    let recipe = recipe(Vendor::Codex, &stdio());
    assert_eq!(
        args(&recipe)[3..9],
        [
            "-c",
            "mcp_servers.sharedos.command=\"/bin/relay\"",
            "-c",
            "mcp_servers.sharedos.args=[\"mcp-relay\", \"/ws/mcp.sock\"]",
            "-c",
            "mcp_servers.sharedos.required=true",
        ]
    );
    assert!(recipe.env.is_empty());
}

#[test]
fn deepseek_inserts_the_mcp_client_plugin_with_a_patch_and_runs_the_headless_profile() {
    let recipe = recipe(Vendor::DeepSeek, &http());
    assert_eq!(recipe.command, "dsh");
    assert_eq!(args(&recipe), ["--profile", "headless", "--patch", "/ws/cordis.patch.yml", PROMPT]);
    assert_eq!(
        file(&recipe, "cordis.patch.yml"),
        "insert:\n  - id: 'mcp-sharedos'\n    name: '@deepseek-ai/dsh-mcp-client'\n    config:\n      serverName: 'sharedos'\n      transport: streamable-http\n      url: 'http://127.0.0.1:4242/mcp'\n      headers:\n        Authorization: 'Bearer t0k3n'\n      failOnStartupError: true\n      toolCallTimeoutMs: 120000\n"
    );
    token_only_in_files(&recipe);
    let profiled = BTreeMap::from([("DSH_PROFILE".to_string(), "ci".to_string())]);
    assert_eq!(args(&recipe_with(Vendor::DeepSeek, &http(), &profiled))[1], "ci");
}

#[test]
fn deepseek_over_stdio_lists_the_relays_arguments_and_quotes_every_value() {
    let quoted = Connection::Stdio { command: "/it's/relay".into(), args: vec!["a".into()] };
    assert_eq!(
        file(&recipe(Vendor::DeepSeek, &quoted), "cordis.patch.yml"),
        "insert:\n  - id: 'mcp-sharedos'\n    name: '@deepseek-ai/dsh-mcp-client'\n    config:\n      serverName: 'sharedos'\n      transport: stdio\n      command: '/it''s/relay'\n      args:\n        - 'a'\n      failOnStartupError: true\n      toolCallTimeoutMs: 120000\n"
    );
    let broken = Connection::Stdio { command: "/relay\nx: 1".into(), args: Vec::new() };
    let input = RecipeInput {
        server_name: "sharedos",
        connection: &broken,
        prompt: PROMPT,
        execution_id: "exec-1",
        workspace: Path::new("/ws"),
        seat_env: &BTreeMap::new(),
    };
    assert!(matches!(mcp_recipe(Vendor::DeepSeek, &input), Err(RecipeError::LineBreak(_))));
}

#[test]
fn pi_reads_its_adapters_mcp_json_and_its_prompt_from_one_rpc_line_on_an_open_stdin() {
    let recipe = recipe(Vendor::Pi, &http());
    assert_eq!(recipe.command, "pi");
    assert_eq!(args(&recipe), ["--mode", "rpc", "--no-session", "--no-builtin-tools"]);
    assert_eq!(
        file(&recipe, ".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"sharedos\": {\n      \"auth\": \"bearer\",\n      \"bearerToken\": \"t0k3n\",\n      \"lifecycle\": \"eager\",\n      \"requestTimeoutMs\": 120000,\n      \"url\": \"http://127.0.0.1:4242/mcp\"\n    }\n  }\n}\n"
    );
    assert_eq!(
        recipe.stdin.as_deref(),
        Some(r#"{"id":"exec-1","message":"Call `files.read` with {}","type":"prompt"}"#)
    );
    assert!(recipe.keep_stdin_open, "the end of input would end Pi's session");
    token_only_in_files(&recipe);
}

#[test]
fn no_recipe_is_written_for_an_in_memory_server() {
    let (stream, _) = tokio::io::duplex(8);
    let connection = Connection::InMemory(stream);
    let input = RecipeInput {
        server_name: "sharedos",
        connection: &connection,
        prompt: PROMPT,
        execution_id: "exec-1",
        workspace: Path::new("/ws"),
        seat_env: &BTreeMap::new(),
    };
    assert_eq!(mcp_recipe(Vendor::Pi, &input), Err(RecipeError::InMemory));
}
