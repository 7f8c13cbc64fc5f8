//! The four vendors: identity, requirements, manifests, and their codecs.

use crate::codec::{claude_code, codex, deepseek, pi};
use crate::live::LiveStreamReader;
use crate::protocol::{HarnessFrameWriter, HarnessProtocol};
use serde_json::{json, Map, Value};
use sharedos_model::execution::RuntimeManifest;
use sharedos_model::message::PROTOCOL_VERSION;

/// The version every driven manifest states.
pub const ADAPTER_VERSION: &str = "1.0.0-preview";

/// A vendor whose CLI can be seated through the eval driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Vendor {
    /// OpenAI Codex (`codex exec --json`).
    Codex,
    /// Anthropic Claude Code (`claude -p --output-format stream-json`).
    ClaudeCode,
    /// DeepSeek Harness (JSON-RPC 2.0 SDK server).
    DeepSeek,
    /// Pi (`pi --mode rpc`).
    Pi,
}

impl Vendor {
    /// Every vendor, in column order.
    pub const ALL: [Vendor; 4] = [Vendor::Codex, Vendor::ClaudeCode, Vendor::DeepSeek, Vendor::Pi];

    /// The vendor id, as in `sharedos.<id>` and `<id>-scripted`.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Vendor::Codex => "codex",
            Vendor::ClaudeCode => "claude-code",
            Vendor::DeepSeek => "deepseek",
            Vendor::Pi => "pi",
        }
    }

    /// The vendor's name for people (`Claude Code`).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Vendor::Codex => "Codex",
            Vendor::ClaudeCode => "Claude Code",
            Vendor::DeepSeek => "DeepSeek",
            Vendor::Pi => "Pi",
        }
    }

    /// Parses a vendor id.
    #[must_use]
    pub fn from_id(id: &str) -> Option<Vendor> {
        Vendor::ALL.into_iter().find(|vendor| vendor.id() == id)
    }

    /// The executable expected on PATH.
    #[must_use]
    pub fn executable(self) -> &'static str {
        match self {
            Vendor::Codex => "codex",
            Vendor::ClaudeCode => "claude",
            Vendor::DeepSeek => "dsh",
            Vendor::Pi => "pi",
        }
    }

    /// Environment variables any one of which carries a credential.
    #[must_use]
    pub fn credential_variables(self) -> &'static [&'static str] {
        match self {
            Vendor::Codex => &["OPENAI_API_KEY", "CODEX_API_KEY"],
            Vendor::ClaudeCode => &["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
            Vendor::DeepSeek => &["DEEPSEEK_API_KEY", "DSH_API_KEY"],
            Vendor::Pi => &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PI_API_KEY"],
        }
    }

    /// Whether the catalogue reaches the CLI outside its wire.
    #[must_use]
    pub fn catalogue_out_of_band(self) -> bool {
        matches!(self, Vendor::DeepSeek | Vendor::Pi)
    }

    /// The vendor's protocol.
    #[must_use]
    pub fn protocol(self) -> Box<dyn HarnessProtocol> {
        match self {
            Vendor::Codex => Box::new(codex::CodexProtocol),
            Vendor::ClaudeCode => Box::new(claude_code::ClaudeCodeProtocol),
            Vendor::DeepSeek => Box::new(deepseek::DeepSeekProtocol),
            Vendor::Pi => Box::new(pi::PiProtocol),
        }
    }

    /// The vendor's frame writer.
    #[must_use]
    pub fn writer(self) -> Box<dyn HarnessFrameWriter> {
        match self {
            Vendor::Codex => Box::new(codex::CodexWriter),
            Vendor::ClaudeCode => Box::new(claude_code::ClaudeCodeWriter),
            Vendor::DeepSeek => Box::new(deepseek::DeepSeekWriter),
            Vendor::Pi => Box::new(pi::PiWriter),
        }
    }

    /// A fresh reader for the CLI's real stream.
    #[must_use]
    pub fn live_reader(self) -> Box<dyn LiveStreamReader> {
        match self {
            Vendor::Codex => Box::new(codex::CodexLiveReader::default()),
            Vendor::ClaudeCode => Box::new(claude_code::ClaudeCodeLiveReader::default()),
            Vendor::DeepSeek => Box::new(deepseek::DeepSeekLiveReader::default()),
            Vendor::Pi => Box::new(pi::PiLiveReader::default()),
        }
    }

    /// The manifest of a driven turn: `sharedos.<id>`.
    #[must_use]
    pub fn manifest(self) -> RuntimeManifest {
        let mut metadata = Map::new();
        metadata.insert("package".into(), json!("@aicoo/sharedos-adapters"));
        metadata.insert("harness".into(), json!(self.id()));
        metadata.insert("wireProtocol".into(), Value::String(self.protocol().id().to_string()));
        metadata.insert("executionModel".into(), json!("bounded-driver-loop"));
        if self.catalogue_out_of_band() {
            metadata.insert("catalogueDelivery".into(), json!("out-of-band"));
        }
        RuntimeManifest {
            id: format!("sharedos.{}", self.id()),
            version: ADAPTER_VERSION.to_string(),
            protocol_version: PROTOCOL_VERSION.to_string(),
            metadata: Some(metadata),
        }
    }
}
