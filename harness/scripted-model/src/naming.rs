//! Finding the name a CLI shows its model for a served tool, in the request
//! itself: each CLI renames MCP tools its own way (`mcp__sharedos__files_read`,
//! `sharedos_files_read`, `files_read` inside a `mcp__sharedos` namespace),
//! and the request says which, so no table of CLI versions is kept.

use serde::{Deserialize, Serialize};

/// A tool's name as a request offers it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PresentedName {
    /// The namespace the name sits in, for an API that nests tools.
    pub namespace: Option<String>,
    /// The name the model calls.
    pub name: String,
}

impl std::fmt::Display for PresentedName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{namespace}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// A canonical tool name as wire names carry it: dots become underscores.
#[must_use]
pub fn wire_form(tool: &str) -> String {
    tool.replace('.', "_")
}

/// How one CLI names the server's tools: a prefix on the flat name, or a
/// namespace around it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scheme {
    Prefix(String),
    Namespace(String),
}

/// The name `offered` gives `tool` of server `server`, and whether it was
/// offered at all. A tool the turn does not offer is named the way the
/// request names the server's other tools, so the CLI's refusal of it is
/// what the witness records.
#[must_use]
pub fn presented_name(offered: &[PresentedName], server: &str, tool: &str) -> (PresentedName, bool) {
    let wire = wire_form(tool);
    let schemes: Vec<(Scheme, &PresentedName)> =
        offered.iter().filter_map(|name| scheme_of(name, server).map(|scheme| (scheme, name))).collect();
    for (scheme, name) in &schemes {
        if name_for(scheme, &wire) == **name {
            return (PresentedName::clone(name), true);
        }
    }
    if let Some(exact) = offered.iter().find(|name| name.namespace.is_none() && name.name == wire) {
        return (exact.clone(), true);
    }
    let name = schemes
        .first()
        .map_or_else(|| PresentedName { namespace: None, name: wire.clone() }, |(scheme, _)| name_for(scheme, &wire));
    (name, false)
}

fn name_for(scheme: &Scheme, wire: &str) -> PresentedName {
    match scheme {
        Scheme::Prefix(prefix) => PresentedName { namespace: None, name: format!("{prefix}{wire}") },
        Scheme::Namespace(namespace) => PresentedName { namespace: Some(namespace.clone()), name: wire.to_string() },
    }
}

/// The naming scheme a served tool's name shows: a namespace or prefix that
/// ends with the server's name (then `_` or `__` for a prefix).
fn scheme_of(name: &PresentedName, server: &str) -> Option<Scheme> {
    if let Some(namespace) = &name.namespace {
        return namespace.ends_with(server).then(|| Scheme::Namespace(namespace.clone()));
    }
    let at = name.name.find(server)?;
    let after = &name.name[at + server.len()..];
    let separator = after.len() - after.trim_start_matches('_').len();
    let rest = &after[separator..];
    (separator > 0 && !rest.is_empty()).then(|| Scheme::Prefix(name.name[..at + server.len() + separator].to_string()))
}

/// Every `mcp__…` identifier in `text`: how a CLI that defers its MCP tools
/// names them in prose rather than in its tool list.
#[must_use]
pub fn identifiers_in(text: &str, marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let tail = &rest[at..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(tail.len());
        if end > marker.len() {
            found.push(tail[..end].to_string());
        }
        rest = &tail[end.max(marker.len())..];
    }
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(name: &str) -> PresentedName {
        PresentedName { namespace: None, name: name.to_string() }
    }

    #[test]
    fn each_cli_naming_is_read_from_the_request() {
        let claude = [flat("mcp__sharedos__files_read"), flat("mcp__sharedos__sharedos_escalate")];
        assert_eq!(presented_name(&claude, "sharedos", "files.read"), (flat("mcp__sharedos__files_read"), true));
        assert_eq!(
            presented_name(&claude, "sharedos", "sharedos.escalate"),
            (flat("mcp__sharedos__sharedos_escalate"), true)
        );
        let pi = [flat("sharedos_files_read")];
        assert_eq!(presented_name(&pi, "sharedos", "files.read"), (flat("sharedos_files_read"), true));
        let namespaced = PresentedName { namespace: Some("mcp__sharedos".into()), name: "files_read".into() };
        assert_eq!(presented_name(std::slice::from_ref(&namespaced), "sharedos", "files.read"), (namespaced, true));
    }

    #[test]
    fn a_tool_not_offered_is_named_as_the_server_names_its_others() {
        let claude = [flat("Bash"), flat("mcp__sharedos__files_read")];
        assert_eq!(presented_name(&claude, "sharedos", "files.delete"), (flat("mcp__sharedos__files_delete"), false));
        let codex = [PresentedName { namespace: Some("mcp__sharedos".into()), name: "files_read".into() }];
        let expected = PresentedName { namespace: Some("mcp__sharedos".into()), name: "files_delete".into() };
        assert_eq!(presented_name(&codex, "sharedos", "files.delete"), (expected, false));
        assert_eq!(presented_name(&[], "sharedos", "files.delete"), (flat("files_delete"), false));
    }

    #[test]
    fn identifiers_are_read_out_of_prose() {
        let text = "Deferred tools: mcp__sharedos__files_read, mcp__sharedos__files_list.\nmcp__";
        assert_eq!(
            identifiers_in(text, "mcp__"),
            vec!["mcp__sharedos__files_list".to_string(), "mcp__sharedos__files_read".into()]
        );
    }
}
