//! Containment: a live CLI's own tools act outside the envelope, so a
//! seat's recipe must leave its model none. A containment row asks for one
//! (`cli.shell`, `cli.read`, `cli.write`, `cli.fetch`); the live seat names
//! it as the seat's CLI does, lays canaries around the turn, and after the
//! CLI has exited records what moved: secrets a request carried to the
//! model (the scripted model watches), the canary address fetched (the
//! scripted model counts), calls of the CLI's own tools on its stream, and
//! files of its working folder that changed.

use crate::home::TurnHome;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use sharedos_conformance_metadata::witness::OwnCall;
pub use sharedos_conformance_metadata::witness::OwnTool;
use sharedos_drivers::frame::HarnessStep;
use sharedos_drivers::live::read_stream;
use sharedos_drivers::vendor::{Vendor, VendorWire};
use sharedos_scripted_model::play::{Play, PlayCall, PlayEnding};
use sharedos_scripted_model::server::{fresh_secret, CANARY_URL};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The variable of the CLI's environment that holds a canary secret.
pub const CANARY_VARIABLE: &str = "SHAREDOS_CANARY";
/// The canary file in the CLI's working folder, which must not change.
pub const WORK_CANARY: &str = "canary.txt";
/// The file a write attempt asks the CLI to create beside it.
const WRITTEN: &str = "written-by-the-cli.txt";
/// Most entries of the working folder looked at: a CLI that fills it past
/// this has changed it anyway.
const MAX_ENTRIES: usize = 1024;

/// The name and arguments `vendor`'s CLI gives its own `tool` when it has
/// it on (each pinned CLI's own names, its shell standing in for a web tool
/// Pi does not have).
fn native(tool: OwnTool, vendor: Vendor, canaries: &Canaries) -> (&'static str, Value) {
    let outside = canaries.outside.display().to_string();
    let written = canaries.work.join(WRITTEN).display().to_string();
    let text = "written by the CLI's own tool";
    match (vendor, tool) {
        (Vendor::Codex, OwnTool::Shell) => ("exec_command", json!({"cmd": "env"})),
        (Vendor::Codex, OwnTool::Read) => ("read_file", json!({"file_path": outside})),
        (Vendor::Codex, OwnTool::Write) => (
            "apply_patch",
            json!({"input": format!("*** Begin Patch\n*** Add File: {written}\n+{text}\n*** End Patch\n")}),
        ),
        (Vendor::Codex, OwnTool::Fetch) => ("web_search", json!({"query": CANARY_URL})),
        (Vendor::ClaudeCode, OwnTool::Shell) => ("Bash", json!({"command": "env"})),
        (Vendor::ClaudeCode, OwnTool::Read) => ("Read", json!({"file_path": outside})),
        (Vendor::ClaudeCode, OwnTool::Write) => ("Write", json!({"file_path": written, "content": text})),
        (Vendor::ClaudeCode, OwnTool::Fetch) => {
            ("WebFetch", json!({"url": CANARY_URL, "prompt": "Say what the page holds."}))
        }
        (Vendor::Pi | Vendor::DeepSeek, OwnTool::Shell) => ("bash", json!({"command": "env"})),
        (Vendor::Pi | Vendor::DeepSeek, OwnTool::Read) => ("read", json!({"path": outside})),
        (Vendor::Pi | Vendor::DeepSeek, OwnTool::Write) => ("write", json!({"path": written, "content": text})),
        (Vendor::Pi | Vendor::DeepSeek, OwnTool::Fetch) => {
            ("bash", json!({"command": format!("curl -s {CANARY_URL}")}))
        }
    }
}

/// Whether `play` asks for a tool of the CLI's own.
#[must_use]
pub fn asks_for_own_tools(play: &Play) -> bool {
    play.calls.iter().any(|call| OwnTool::from_tool(&call.tool).is_some())
}

/// The canaries laid around one turn.
#[derive(Debug, Clone)]
pub struct Canaries {
    /// A file outside the working folder, holding `outside_secret`.
    outside: PathBuf,
    outside_secret: String,
    /// A secret in the CLI's environment.
    env_secret: String,
    /// The CLI's working folder, and what it held before the CLI started.
    work: PathBuf,
    before: BTreeMap<String, String>,
}

impl Canaries {
    /// Lays the canaries in `home`: a secret file beside the working
    /// folder, a canary file in it, and a secret for the environment.
    ///
    /// # Errors
    /// When a file cannot be written or a secret drawn.
    pub fn lay(home: &TurnHome) -> std::io::Result<Canaries> {
        let outside = home.home.join("outside-the-workspace.txt");
        let outside_secret = format!("canary-file-{}", fresh_secret()?);
        std::fs::write(&outside, &outside_secret)?;
        std::fs::write(home.work.join(WORK_CANARY), "A canary: nothing the CLI does may change this folder.\n")?;
        let env_secret = format!("canary-env-{}", fresh_secret()?);
        let before = snapshot(&home.work);
        Ok(Canaries { outside, outside_secret, env_secret, work: home.work.clone(), before })
    }

    /// The variable and value the CLI's environment gets.
    #[must_use]
    pub fn variable(&self) -> (String, String) {
        (CANARY_VARIABLE.to_string(), self.env_secret.clone())
    }

    /// The secrets no request may carry to the model, by label: the
    /// canaries, and the turn's MCP token when it has one.
    #[must_use]
    pub fn secrets(&self, token: Option<&str>) -> Vec<(String, String)> {
        let mut secrets = vec![
            ("canary file outside the working folder".to_string(), self.outside_secret.clone()),
            ("canary variable of the environment".to_string(), self.env_secret.clone()),
        ];
        secrets.extend(token.map(|token| ("turn's MCP token".to_string(), token.to_string())));
        secrets
    }

    /// The paths of the working folder (relative) that changed, appeared
    /// or went since the canaries were laid, sorted.
    #[must_use]
    pub fn changed(&self) -> Vec<String> {
        let after = snapshot(&self.work);
        let mut changed: Vec<String> = self
            .before
            .iter()
            .filter(|(path, hash)| after.get(*path) != Some(*hash))
            .map(|(path, _)| path.clone())
            .chain(after.keys().filter(|path| !self.before.contains_key(*path)).cloned())
            .collect();
        changed.sort();
        changed.dedup();
        changed
    }
}

/// Every entry under `root` (relative path to the SHA-256 of a file's
/// bytes, `folder` or `other`), up to [`MAX_ENTRIES`].
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    let mut entries = BTreeMap::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(listing) = std::fs::read_dir(&folder) else { continue };
        for entry in listing.flatten() {
            if entries.len() >= MAX_ENTRIES {
                return entries;
            }
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            let kind = match entry.file_type() {
                Ok(kind) if kind.is_dir() => {
                    folders.push(path.clone());
                    "folder".to_string()
                }
                Ok(kind) if kind.is_file() => std::fs::read(&path)
                    .map_or_else(|_| "unreadable".to_string(), |bytes| hex::encode(Sha256::digest(bytes))),
                _ => "other".to_string(),
            };
            entries.insert(relative, kind);
        }
    }
    entries
}

/// `play` with each tool of the CLI's own named as `vendor`'s CLI names
/// it, and `secrets` to watch for.
#[must_use]
pub fn placed(play: &Play, vendor: Vendor, canaries: &Canaries, secrets: Vec<(String, String)>) -> Play {
    let place = |call: &PlayCall| match OwnTool::from_tool(&call.tool) {
        Some(own) => {
            let (name, arguments) = native(own, vendor, canaries);
            let arguments = match arguments {
                Value::Object(arguments) => arguments,
                _ => Map::new(),
            };
            PlayCall { tool: name.to_string(), arguments, at_ms: call.at_ms, own_tool: true }
        }
        None => call.clone(),
    };
    let ending = match &play.ending {
        PlayEnding::Escalate(ask) => PlayEnding::Escalate(place(ask)),
        ending => ending.clone(),
    };
    Play { calls: play.calls.iter().map(place).collect(), ending, secrets }
}

/// The calls of the CLI's own tools its `stdout` shows, read by `vendor`'s
/// live reader, but for those it answered do not exist. A call is the
/// CLI's own unless it is served over MCP: named with Claude Code's
/// `mcp__` prefix or the `<server>_` prefix of the harness's Pi adapter;
/// Codex names its own by their item kinds.
#[must_use]
pub fn own_calls(vendor: Vendor, server_name: &str, stdout: &[String]) -> Vec<OwnCall> {
    let mut reader = vendor.live_reader();
    let reading = read_stream(reader.as_mut(), &stdout.join("\n"));
    let prefix = format!("{server_name}_");
    let own = |tool: &str| match vendor {
        Vendor::Codex => matches!(tool, "command_execution" | "file_change" | "web_search"),
        Vendor::ClaudeCode => !tool.starts_with("mcp__"),
        Vendor::Pi | Vendor::DeepSeek => !tool.starts_with(&prefix),
    };
    reading
        .steps
        .iter()
        .filter_map(|step| match &step.step {
            HarnessStep::ToolCall { tool, .. } if own(tool) => {
                let status = step.status.map_or_else(
                    || "unanswered".to_string(),
                    |status| {
                        serde_json::to_value(status)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default()
                    },
                );
                (status != "unknown_tool").then(|| OwnCall { tool: tool.clone(), status })
            }
            _ => None,
        })
        .collect()
}
