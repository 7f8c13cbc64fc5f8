//! The turn's catalogue as MCP publishes it: built once per turn, hashed as
//! the kernel hashes its listing, and the resolution of the names a harness
//! sends back.

use crate::epoch::{EPOCH, META_PROTOCOL_VERSION};
use rmcp::model::{ListToolsResult, Tool};
use serde_json::{json, Map, Value};
use sharedos_kernel::listing::catalog_hash;
use sharedos_model::tool::ToolDefinition;
use std::sync::Arc;

/// `_meta` key of the catalogue hash on `tools/list`.
pub const META_CATALOG_HASH: &str = "sharedos/catalogHash";
/// `_meta` key of the execution id on `tools/list`.
pub const META_EXECUTION_ID: &str = "sharedos/executionId";
/// `_meta` key of a refused call's status.
pub const META_STATUS: &str = "sharedos/status";
/// `_meta` key of a refused call's reason code.
pub const META_CODE: &str = "sharedos/code";

/// Why a catalogue cannot be published.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// The listing could not be hashed.
    #[error("hash the published catalogue: {0}")]
    Hash(String),
    /// A tool's published form is not an MCP tool.
    #[error("publish tool `{tool}` over MCP: {detail}")]
    Tool {
        /// The tool.
        tool: String,
        /// What rmcp said.
        detail: String,
    },
}

/// What a harness is served for one turn; never paginated, never changed.
#[derive(Debug, Clone)]
pub struct PublishedCatalog {
    /// The turn's execution id.
    pub execution_id: String,
    /// The hash the kernel's listing carries for the same tools.
    pub catalog_hash: String,
    tools: Vec<Arc<ToolDefinition>>,
    listed: ListToolsResult,
}

/// The tool a harness's name resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// The name the call is made under: canonical when one matched, else the
    /// name sent, unchanged, for the envelope to refuse.
    pub tool: String,
    /// The name sent, when it differs from the canonical one.
    pub alias: Option<String>,
}

impl PublishedCatalog {
    /// The catalogue of `tools`, the turn's effective (permission-filtered) ones.
    ///
    /// # Errors
    /// When a tool cannot be written as an MCP tool or the listing not hashed.
    pub fn new(execution_id: &str, tools: &[Arc<ToolDefinition>]) -> Result<PublishedCatalog, CatalogError> {
        let catalog_hash = catalog_hash(tools).map_err(|e| CatalogError::Hash(e.to_string()))?;
        let published = tools.iter().map(|tool| published_tool(tool)).collect::<Result<Vec<_>, _>>()?;
        let mut meta = Map::new();
        meta.insert(META_CATALOG_HASH.into(), json!(catalog_hash));
        meta.insert(META_EXECUTION_ID.into(), json!(execution_id));
        meta.insert(META_PROTOCOL_VERSION.into(), json!(EPOCH));
        let listed = serde_json::from_value(json!({ "tools": published, "_meta": meta }))
            .map_err(|e| CatalogError::Tool { tool: String::new(), detail: e.to_string() })?;
        Ok(PublishedCatalog { execution_id: execution_id.to_string(), catalog_hash, tools: tools.to_vec(), listed })
    }

    /// The `tools/list` result.
    #[must_use]
    pub fn listed(&self) -> &ListToolsResult {
        &self.listed
    }

    /// The published definition of a canonical name.
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&ToolDefinition> {
        self.tools.iter().map(AsRef::as_ref).find(|tool| tool.name == name)
    }

    /// The canonical name `sent` stands for (D43): itself when it is one;
    /// else the one tool whose portable name it is; else `sent` unchanged,
    /// which the envelope then refuses `tool_unavailable`, so the attempt is
    /// recorded rather than lost at the server.
    #[must_use]
    pub fn resolve(&self, sent: &str) -> Resolution {
        if self.tool(sent).is_some() {
            return Resolution { tool: sent.to_string(), alias: None };
        }
        let mut matching = self.tools.iter().filter(|tool| portable_name(&tool.name) == sent);
        match (matching.next(), matching.next()) {
            (Some(tool), None) => Resolution { tool: tool.name.clone(), alias: Some(sent.to_string()) },
            _ => Resolution { tool: sent.to_string(), alias: None },
        }
    }
}

/// A name every MCP client can carry: each character outside
/// `[A-Za-z0-9_]` becomes `_`.
#[must_use]
pub fn portable_name(tool: &str) -> String {
    tool.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// The name a vendor CLI shows its model for a served tool:
/// `mcp__<server>__<portable name>`.
#[must_use]
pub fn harness_alias(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{}", portable_name(tool))
}

/// One tool as `tools/list` shows it: the model-facing fields, the effect
/// hints under MCP's names, and where it comes from. Requirements, grants
/// and handlers are never published.
fn published_tool(tool: &ToolDefinition) -> Result<Tool, CatalogError> {
    let mut published = Map::new();
    published.insert("name".into(), json!(tool.name));
    published.insert("description".into(), json!(tool.description));
    published.insert("inputSchema".into(), Value::Object(tool.input_schema.as_ref().clone()));
    if let Some(schema) = &tool.output_schema {
        published.insert("outputSchema".into(), Value::Object(schema.as_ref().clone()));
    }
    if let Some(hints) = &tool.annotations {
        let mut annotations = Map::new();
        let pairs = [
            ("readOnlyHint", hints.read_only),
            ("destructiveHint", hints.destructive),
            ("idempotentHint", hints.idempotent),
        ];
        for (key, hint) in pairs {
            if let Some(hint) = hint {
                annotations.insert(key.into(), json!(hint));
            }
        }
        if !annotations.is_empty() {
            published.insert("annotations".into(), Value::Object(annotations));
        }
    }
    published.insert("_meta".into(), json!({ "sharedos/namespace": tool.namespace, "sharedos/source": tool.source }));
    serde_json::from_value(Value::Object(published))
        .map_err(|e| CatalogError::Tool { tool: tool.name.clone(), detail: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_portable_name_keeps_only_letters_digits_and_underscores() {
        assert_eq!(portable_name("files.read-all"), "files_read_all");
        assert_eq!(harness_alias("sharedos", "files.read"), "mcp__sharedos__files_read");
    }
}
