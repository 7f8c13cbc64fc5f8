//! What a vendor CLI would read from its recipe: the prompt, and where the
//! catalogue is served, from the command line and the config files, each
//! vendor in its own way. The vendor is known by the shape of the command
//! line its recipe writes.

use serde_json::Value;
use sharedos_drivers::vendor::Vendor;
use std::io::BufRead;

/// Where the catalogue is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Http { url: String, token: Option<String> },
    Stdio { command: String, args: Vec<String> },
}

/// One turn's launch, as the stand-in read it.
#[derive(Debug, Clone)]
pub struct StandinLaunch {
    pub vendor: Vendor,
    pub prompt: String,
    pub endpoint: Endpoint,
    /// Whether the CLI runs a session that ends with its input (Pi).
    pub session: bool,
}

fn after<'a>(args: &'a [String], flag: &str) -> Option<&'a String> {
    args.iter().position(|arg| arg == flag).and_then(|at| args.get(at + 1))
}

fn read_json(path: &str) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("read {path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("read {path} as JSON: {e}"))
}

/// The one server of an `mcpServers` config (Claude Code's and Pi's).
fn mcp_servers_entry(config: &Value) -> Result<Endpoint, String> {
    let servers = config["mcpServers"].as_object().ok_or("no mcpServers in the config")?;
    let server = servers.values().next().ok_or("no server in mcpServers")?;
    let text = |key: &str| server[key].as_str().map(str::to_string);
    if let Some(command) = text("command") {
        let args = server["args"].as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)));
        return Ok(Endpoint::Stdio { command, args: args.map(Iterator::collect).unwrap_or_default() });
    }
    let url = text("url").ok_or("a server with neither url nor command")?;
    let bearer = server["headers"]["Authorization"].as_str().and_then(|h| h.strip_prefix("Bearer "));
    let token = bearer.map(str::to_string).or_else(|| text("bearerToken"));
    Ok(Endpoint::Http { url, token })
}

/// Codex's `-c mcp_servers.<name>.<key>=<TOML value>` settings.
fn codex_endpoint(args: &[String]) -> Result<Endpoint, String> {
    let mut settings = std::collections::BTreeMap::new();
    for pair in args.windows(2).filter(|pair| pair[0] == "-c") {
        let (key, value) = pair[1].split_once('=').ok_or("a -c setting without =")?;
        let key = key.rsplit('.').next().unwrap_or(key).to_string();
        let value: toml::Table = toml::from_str(&format!("v = {value}")).map_err(|e| format!("read -c {key}: {e}"))?;
        settings.insert(key, value.get("v").cloned().unwrap_or(toml::Value::Boolean(false)));
    }
    let text = |key: &str| settings.get(key).and_then(toml::Value::as_str).map(str::to_string);
    if let Some(command) = text("command") {
        let args = settings
            .get("args")
            .and_then(toml::Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect::<Vec<_>>());
        return Ok(Endpoint::Stdio { command, args: args.unwrap_or_default() });
    }
    let url = text("url").ok_or("no mcp_servers url")?;
    Ok(Endpoint::Http { url, token: codex_config_token()? })
}

/// The bearer token of the one server in Codex's own config file
/// (`$CODEX_HOME/config.toml`, `http_headers`), when it has one.
fn codex_config_token() -> Result<Option<String>, String> {
    let Some(home) = std::env::var_os("CODEX_HOME") else { return Ok(None) };
    let path = std::path::Path::new(&home).join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("read {}: {error}", path.display())),
    };
    let config: toml::Table = toml::from_str(&text).map_err(|e| format!("read {}: {e}", path.display()))?;
    let servers = config.get("mcp_servers").and_then(toml::Value::as_table);
    let header = servers
        .and_then(|servers| servers.values().next())
        .and_then(|server| server.get("http_headers"))
        .and_then(|headers| headers.get("Authorization"))
        .and_then(toml::Value::as_str);
    Ok(header.and_then(|h| h.strip_prefix("Bearer ")).map(str::to_string))
}

/// A YAML single-quoted scalar, as DeepSeek's patch is written.
fn unquote(value: &str) -> String {
    let value = value.trim();
    value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')).unwrap_or(value).replace("''", "'")
}

/// DeepSeek's `cordis.patch.yml`.
fn deepseek_endpoint(path: &str) -> Result<Endpoint, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("read {path}: {e}"))?;
    let (mut url, mut token, mut command, mut args) = (None, None, None, Vec::new());
    for line in text.lines().map(str::trim) {
        if let Some(value) = line.strip_prefix("url:") {
            url = Some(unquote(value));
        } else if let Some(value) = line.strip_prefix("Authorization:") {
            token = unquote(value).strip_prefix("Bearer ").map(str::to_string);
        } else if let Some(value) = line.strip_prefix("command:") {
            command = Some(unquote(value));
        } else if let Some(value) = line.strip_prefix("- ").filter(|_| command.is_some()) {
            args.push(unquote(value));
        }
    }
    match (command, url) {
        (Some(command), _) => Ok(Endpoint::Stdio { command, args }),
        (None, Some(url)) => Ok(Endpoint::Http { url, token }),
        (None, None) => Err(format!("{path} names no server")),
    }
}

/// Reads the launch of whichever vendor the command line is shaped for.
pub fn read_launch(args: &[String]) -> Result<StandinLaunch, String> {
    let last = || args.last().cloned().ok_or_else(|| "no prompt".to_string());
    if let Some(config) = after(args, "--mcp-config") {
        let prompt = after(args, "-p").cloned().ok_or("no -p prompt")?;
        let endpoint = mcp_servers_entry(&read_json(config)?)?;
        return Ok(StandinLaunch { vendor: Vendor::ClaudeCode, prompt, endpoint, session: false });
    }
    if args.first().is_some_and(|verb| verb == "exec") {
        return Ok(StandinLaunch {
            vendor: Vendor::Codex,
            prompt: last()?,
            endpoint: codex_endpoint(args)?,
            session: false,
        });
    }
    if let Some(patch) = after(args, "--patch") {
        let endpoint = deepseek_endpoint(patch)?;
        return Ok(StandinLaunch { vendor: Vendor::DeepSeek, prompt: last()?, endpoint, session: false });
    }
    if after(args, "--mode").is_some_and(|mode| mode == "rpc") {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map_err(|e| format!("read the prompt line: {e}"))?;
        let prompt: Value = serde_json::from_str(&line).map_err(|e| format!("read the prompt line: {e}"))?;
        let prompt = prompt["message"].as_str().ok_or("a prompt line without a message")?.to_string();
        // As the harness's Pi adapter does: the file its variable names,
        // else `.mcp.json` in the working folder.
        let config = std::env::var("SHAREDOS_MCP_CONFIG").unwrap_or_else(|_| ".mcp.json".to_string());
        let endpoint = mcp_servers_entry(&read_json(&config)?)?;
        return Ok(StandinLaunch { vendor: Vendor::Pi, prompt, endpoint, session: true });
    }
    Err(format!("a command line no vendor recipe writes: {args:?}"))
}
