//! The runtime in a column's seat, as the column's records name it. ADR
//! 0007 puts the runtime's manifest in every result so that outcomes of
//! semantically different harnesses are never pooled: a manifest names
//! each column's runtime, and `diff` and `check --verdicts` say when it
//! changed.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sharedos_model::record::SystemIdentity;

/// See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ColumnRuntime {
    /// The runtime's id (`system.runtime.id`).
    pub id: String,
    /// The runtime's version (`system.runtime.version`).
    pub version: String,
    /// A live seat's CLI, by its program's file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli: Option<String>,
    /// The first line of that CLI's `--version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
    /// The digest of the recipe that starts that CLI (its config files and
    /// command line, with every per-turn value held fixed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe_digest: Option<String>,
    /// The model in the seat (`system.model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl ColumnRuntime {
    /// What a record's system identity says of its runtime.
    #[must_use]
    pub fn of(system: &SystemIdentity) -> ColumnRuntime {
        let metadata = |key: &str| {
            system.runtime.metadata.as_ref().and_then(|m| m.get(key)).and_then(Value::as_str).map(str::to_string)
        };
        ColumnRuntime {
            id: system.runtime.id.clone(),
            version: system.runtime.version.clone(),
            cli: metadata("cli"),
            cli_version: metadata("cliVersion"),
            recipe_digest: metadata("recipeDigest"),
            model: system.model.clone(),
        }
    }

    /// One line naming it: `codex 0.1.0, CLI codex (codex-cli 0.169.0),
    /// recipe 1a2b3c4d5e6f, model scripted`.
    #[must_use]
    pub fn describe(&self) -> String {
        let mut text = format!("{} {}", self.id, self.version);
        if let Some(cli) = &self.cli {
            text.push_str(&format!(", CLI {cli} ({})", self.cli_version.as_deref().unwrap_or("version unknown")));
        }
        if let Some(digest) = &self.recipe_digest {
            text.push_str(&format!(", recipe {}", digest.get(..12).unwrap_or(digest)));
        }
        if let Some(model) = &self.model {
            text.push_str(&format!(", model {model}"));
        }
        text
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_is_described_by_every_part_it_has() {
        let mut runtime = ColumnRuntime {
            id: "codex".into(),
            version: "0.1.0".into(),
            cli: Some("codex".into()),
            cli_version: Some("codex-cli 0.169.0".into()),
            recipe_digest: Some("1a2b3c4d5e6f7a8b9c0d".into()),
            model: Some("scripted".into()),
        };
        assert_eq!(
            runtime.describe(),
            "codex 0.1.0, CLI codex (codex-cli 0.169.0), recipe 1a2b3c4d5e6f, model scripted"
        );
        runtime.cli_version = None;
        runtime.recipe_digest = None;
        runtime.model = None;
        assert_eq!(runtime.describe(), "codex 0.1.0, CLI codex (version unknown)");
        runtime.cli = None;
        assert_eq!(runtime.describe(), "codex 0.1.0");
    }
}
