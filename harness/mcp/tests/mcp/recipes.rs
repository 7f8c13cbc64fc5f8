//! The live recipes, checked for exactly what
//! they write: each vendor's config files byte for byte, its command line
//! argument for argument, and where its bearer token goes (never on the
//! command line).

use sharedos_drivers::vendor::Vendor;
use sharedos_mcp::harness::Connection;
use sharedos_mcp::home::TurnHome;
use sharedos_mcp::recipe::{mcp_recipe, McpRecipe, RecipeError, RecipeInput, PI_MCP_ADAPTER};
use sharedos_scripted_model::server::ModelEndpoint;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const URL: &str = "http://127.0.0.1:4242/mcp";
const TOKEN: &str = "t0k3n";
const PROMPT: &str = "Call `files.read` with {}";

fn http() -> Connection {
    Connection::Http { url: URL.into(), token: Some(TOKEN.into()) }
}

fn stdio() -> Connection {
    Connection::Stdio { command: "/bin/relay".into(), args: vec!["mcp-relay".into(), "/ws/mcp.sock".into()] }
}

fn home() -> TurnHome {
    TurnHome { home: PathBuf::from("/ws/home"), tmp: PathBuf::from("/ws/tmp"), work: PathBuf::from("/ws/work") }
}

fn model() -> ModelEndpoint {
    ModelEndpoint { base_url: "http://127.0.0.1:5151".into(), key: "sk-sharedos-k3y".into() }
}

fn input<'a>(
    connection: &'a Connection,
    home: &'a TurnHome,
    model: Option<&'a ModelEndpoint>,
    seat_env: &'a BTreeMap<String, String>,
) -> RecipeInput<'a> {
    RecipeInput {
        server_name: "sharedos",
        connection,
        prompt: PROMPT,
        execution_id: "exec-1",
        workspace: Path::new("/ws"),
        home,
        model,
        seat_env,
    }
}

fn recipe_with(vendor: Vendor, connection: &Connection, seat_env: &BTreeMap<String, String>) -> McpRecipe {
    mcp_recipe(vendor, &input(connection, &home(), None, seat_env)).expect("a recipe")
}

fn scripted(vendor: Vendor) -> McpRecipe {
    let (home, model) = (home(), model());
    mcp_recipe(vendor, &input(&http(), &home, Some(&model), &BTreeMap::new())).expect("a recipe")
}

/// The variables every recipe sets: the turn's own home.
fn in_its_own_home(recipe: &McpRecipe) {
    for (name, value) in [
        ("HOME", "/ws/home"),
        ("TMPDIR", "/ws/tmp"),
        ("XDG_CONFIG_HOME", "/ws/home/.config"),
        ("XDG_CACHE_HOME", "/ws/home/.cache"),
    ] {
        assert_eq!(recipe.env.get(name).map(String::as_str), Some(value), "{name}");
    }
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
    assert!(recipe.env.values().all(|value| !value.contains(TOKEN)), "nor in the environment");
}

#[test]
fn claude_code_over_http_gets_an_mcp_json_with_the_token_and_no_tool_of_its_own() {
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
            "--bare",
            "--no-session-persistence",
            "--mcp-config",
            "/ws/.mcp.json",
            "--strict-mcp-config",
            "--tools",
            "",
            "--allowedTools",
            "mcp__sharedos",
            "--max-turns",
            "24",
        ]
    );
    assert_eq!(
        file(&recipe, ".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"sharedos\": {\n      \"headers\": {\n        \"Authorization\": \"Bearer t0k3n\"\n      },\n      \"timeout\": 120000,\n      \"type\": \"http\",\n      \"url\": \"http://127.0.0.1:4242/mcp\"\n    }\n  }\n}\n"
    );
    assert_eq!((recipe.stdin.as_deref(), recipe.keep_stdin_open), (None, false));
    in_its_own_home(&recipe);
    assert_eq!(recipe.env.get("CLAUDE_CONFIG_DIR").map(String::as_str), Some("/ws/home/.claude"));
    assert_eq!(recipe.env.get("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC").map(String::as_str), Some("1"));
    assert!(!recipe.env.contains_key("ANTHROPIC_BASE_URL"), "the vendor's own model unless the seat says scripted");
    token_only_in_files(&recipe);
}

#[test]
fn claude_code_with_the_scripted_model_is_pointed_at_it_with_its_retries_off() {
    let recipe = scripted(Vendor::ClaudeCode);
    let env = |name: &str| recipe.env.get(name).map(String::as_str);
    assert_eq!(env("ANTHROPIC_BASE_URL"), Some("http://127.0.0.1:5151"));
    assert_eq!(env("ANTHROPIC_API_KEY"), Some("sk-sharedos-k3y"));
    assert_eq!(env("CLAUDE_CODE_MAX_RETRIES"), Some("0"));
    assert_eq!(env("CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK"), Some("1"));
    assert!(recipe.args.iter().all(|arg| !arg.contains("k3y")), "the model's key is never on the command line");
}

#[test]
fn claude_code_over_stdio_starts_the_relay_as_its_server() {
    let recipe = recipe(Vendor::ClaudeCode, &stdio());
    assert_eq!(
        file(&recipe, ".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"sharedos\": {\n      \"args\": [\n        \"mcp-relay\",\n        \"/ws/mcp.sock\"\n      ],\n      \"command\": \"/bin/relay\",\n      \"timeout\": 120000,\n      \"type\": \"stdio\"\n    }\n  }\n}\n"
    );
}

/// The flags turning off Codex's own tools and outside traffic.
const CODEX_LOCKDOWN: [&str; 26] = [
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

#[test]
fn codex_takes_its_server_as_config_flags_its_token_from_its_own_config_file_and_approves_the_servers_tools() {
    let recipe = recipe(Vendor::Codex, &http());
    assert_eq!(recipe.command, "codex");
    let args = args(&recipe);
    assert_eq!(args[..4], ["exec", "--json", "--skip-git-repo-check", "--ephemeral"]);
    assert_eq!(args[4..30], CODEX_LOCKDOWN);
    assert_eq!(
        args[30..],
        [
            "-c",
            "mcp_servers.sharedos.url=\"http://127.0.0.1:4242/mcp\"",
            "-c",
            "mcp_servers.sharedos.required=true",
            "-c",
            "mcp_servers.sharedos.tool_timeout_sec=120",
            "-c",
            "mcp_servers.sharedos.default_tools_approval_mode=\"approve\"",
            PROMPT,
        ]
    );
    // The token is in Codex's own config file, in its home, and nowhere in
    // its environment, which every program Codex starts inherits.
    assert_eq!(
        file(&recipe, "home/config.toml"),
        "[mcp_servers.sharedos.http_headers]\nAuthorization = \"Bearer t0k3n\"\n"
    );
    assert_eq!(recipe.files.len(), 1);
    in_its_own_home(&recipe);
    assert_eq!(recipe.env.get("CODEX_HOME").map(String::as_str), Some("/ws/home"));
    token_only_in_files(&recipe);
}

#[test]
fn codex_with_the_scripted_model_gets_a_provider_of_its_own_with_no_retries() {
    let recipe = scripted(Vendor::Codex);
    let args = args(&recipe);
    let settings: Vec<&str> = args.windows(2).filter(|pair| pair[0] == "-c").map(|pair| pair[1]).collect();
    for expected in [
        "model_provider=\"sharedos-scripted\"",
        "model_providers.sharedos-scripted.base_url=\"http://127.0.0.1:5151/v1\"",
        "model_providers.sharedos-scripted.wire_api=\"responses\"",
        "model_providers.sharedos-scripted.request_max_retries=0",
        "model_providers.sharedos-scripted.stream_max_retries=0",
        "model=\"scripted-model\"",
    ] {
        assert!(settings.contains(&expected), "{expected} in {settings:?}");
    }
    let config = file(&recipe, "home/config.toml");
    assert!(
        config.contains("[model_providers.sharedos-scripted]\nexperimental_bearer_token = \"sk-sharedos-k3y\"\n"),
        "{config}"
    );
    assert!(recipe.args.iter().all(|arg| !arg.contains("k3y")), "the model's key is never on the command line");
    assert!(recipe.env.values().all(|value| !value.contains("k3y")), "nor in the environment");
}

#[test]
fn codex_over_stdio_names_the_relay_command_and_its_arguments() {
    let recipe = recipe(Vendor::Codex, &stdio());
    assert_eq!(
        args(&recipe)[30..36],
        [
            "-c",
            "mcp_servers.sharedos.command=\"/bin/relay\"",
            "-c",
            "mcp_servers.sharedos.args=[\"mcp-relay\", \"/ws/mcp.sock\"]",
            "-c",
            "mcp_servers.sharedos.required=true",
        ]
    );
    assert!(recipe.files.is_empty(), "no token, no config file");
}

#[test]
fn deepseek_inserts_the_mcp_client_plugin_with_a_patch_and_runs_the_headless_profile() {
    let recipe = recipe(Vendor::DeepSeek, &http());
    assert_eq!(recipe.command, "dsh");
    in_its_own_home(&recipe);
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
    let (home, env) = (home(), BTreeMap::new());
    let input = input(&broken, &home, None, &env);
    assert!(matches!(mcp_recipe(Vendor::DeepSeek, &input), Err(RecipeError::LineBreak(_))));
}

#[test]
fn pi_loads_the_harness_adapter_alone_and_reads_its_prompt_from_one_rpc_line_on_an_open_stdin() {
    let recipe = recipe(Vendor::Pi, &http());
    assert_eq!(recipe.command, "pi");
    assert_eq!(
        args(&recipe),
        [
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
            "/ws/sharedos-mcp.js",
        ]
    );
    assert_eq!(
        file(&recipe, ".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"sharedos\": {\n      \"headers\": {\n        \"Authorization\": \"Bearer t0k3n\"\n      },\n      \"requestTimeoutMs\": 120000,\n      \"url\": \"http://127.0.0.1:4242/mcp\"\n    }\n  }\n}\n"
    );
    assert_eq!(file(&recipe, "sharedos-mcp.js"), PI_MCP_ADAPTER);
    assert!(!recipe.files.iter().any(|f| f.name.ends_with("models.json")), "the vendor's own model");
    assert_eq!(
        recipe.stdin.as_deref(),
        Some(r#"{"id":"exec-1","message":"Call `files.read` with {}","type":"prompt"}"#)
    );
    assert!(recipe.keep_stdin_open, "the end of input would end Pi's session");
    assert!(recipe.cli_retries, "against the vendor's model Pi retries a failed model call itself");
    in_its_own_home(&recipe);
    let env = |name: &str| recipe.env.get(name).map(String::as_str);
    assert_eq!(env("PI_CODING_AGENT_DIR"), Some("/ws/home/.pi/agent"));
    assert_eq!(env("SHAREDOS_MCP_CONFIG"), Some("/ws/.mcp.json"));
    assert_eq!(env("PI_OFFLINE"), Some("1"));
    token_only_in_files(&recipe);
}

#[test]
fn pi_with_the_scripted_model_gets_a_provider_of_its_own_and_no_retries() {
    let recipe = scripted(Vendor::Pi);
    assert_eq!(args(&recipe)[12..], ["--provider", "sharedos-scripted", "--model", "scripted-model"]);
    let models: serde_json::Value = serde_json::from_str(&file(&recipe, "home/.pi/agent/models.json")).unwrap();
    let provider = &models["providers"]["sharedos-scripted"];
    assert_eq!(provider["baseUrl"], "http://127.0.0.1:5151");
    assert_eq!(provider["api"], "anthropic-messages");
    assert_eq!(provider["apiKey"], "sk-sharedos-k3y");
    assert_eq!(provider["models"][0]["id"], "scripted-model");
    let settings: serde_json::Value = serde_json::from_str(&file(&recipe, "home/.pi/agent/settings.json")).unwrap();
    assert_eq!(settings["retry"], serde_json::json!({ "enabled": false, "provider": { "maxRetries": 0 } }));
    assert!(!recipe.cli_retries, "no retry against the scripted model");
}

#[test]
fn no_recipe_is_written_for_an_in_memory_server() {
    let (stream, _) = tokio::io::duplex(8);
    let connection = Connection::InMemory(stream);
    let (home, env) = (home(), BTreeMap::new());
    assert_eq!(mcp_recipe(Vendor::Pi, &input(&connection, &home, None, &env)), Err(RecipeError::InMemory));
}
