//! The four vendors (the list itself is in `sharedos-conformance-metadata`):
//! their protocols, codecs and manifests.

use crate::codec::{claude_code, codex, deepseek, pi};
use crate::live::LiveStreamReader;
use crate::protocol::{HarnessFrameWriter, HarnessProtocol};
use serde_json::{json, Map, Value};
use sharedos_model::execution::RuntimeManifest;
use sharedos_model::message::PROTOCOL_VERSION;

/// The version every driven manifest states.
pub const ADAPTER_VERSION: &str = "1.0.0-preview";

pub use sharedos_conformance_metadata::vendor::Vendor;

/// What the harness speaks with each vendor's CLI: its wire protocol, its
/// frame writer, its stream reader, and the manifest of a driven turn.
pub trait VendorWire {
    /// The vendor's protocol.
    fn protocol(self) -> Box<dyn HarnessProtocol>;
    /// The vendor's frame writer.
    fn writer(self) -> Box<dyn HarnessFrameWriter>;
    /// A fresh reader for the CLI's real stream.
    fn live_reader(self) -> Box<dyn LiveStreamReader>;
    /// The manifest of a driven turn: `sharedos.<id>`.
    fn manifest(self) -> RuntimeManifest;
}

impl VendorWire for Vendor {
    /// The vendor's protocol.
    fn protocol(self) -> Box<dyn HarnessProtocol> {
        match self {
            Vendor::Codex => Box::new(codex::CodexProtocol),
            Vendor::ClaudeCode => Box::new(claude_code::ClaudeCodeProtocol),
            Vendor::DeepSeek => Box::new(deepseek::DeepSeekProtocol),
            Vendor::Pi => Box::new(pi::PiProtocol),
        }
    }

    /// The vendor's frame writer.
    fn writer(self) -> Box<dyn HarnessFrameWriter> {
        match self {
            Vendor::Codex => Box::new(codex::CodexWriter),
            Vendor::ClaudeCode => Box::new(claude_code::ClaudeCodeWriter),
            Vendor::DeepSeek => Box::new(deepseek::DeepSeekWriter),
            Vendor::Pi => Box::new(pi::PiWriter),
        }
    }

    /// A fresh reader for the CLI's real stream.
    fn live_reader(self) -> Box<dyn LiveStreamReader> {
        match self {
            Vendor::Codex => Box::new(codex::CodexLiveReader::default()),
            Vendor::ClaudeCode => Box::new(claude_code::ClaudeCodeLiveReader::default()),
            Vendor::DeepSeek => Box::new(deepseek::DeepSeekLiveReader::default()),
            Vendor::Pi => Box::new(pi::PiLiveReader::default()),
        }
    }

    /// The manifest of a driven turn: `sharedos.<id>`.
    fn manifest(self) -> RuntimeManifest {
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
