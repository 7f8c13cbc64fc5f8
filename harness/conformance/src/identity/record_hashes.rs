//! The identity hashes a record carries (`experiment.*Hash`,
//! `system.policyHash`) and the record hash the evidence root is built from.

use crate::grade::judge::RULES_VERSION;
use crate::input::case::Case;
use crate::input::script::AttackScript;
use crate::run::world::{World, FIXTURE_VERSION};
use serde::Serialize;
use sharedos_model::canonical::{canonical_bytes, tagged_hash, tagged_hash_of_bytes, CanonicalError};
use sharedos_model::capability::Grant;
use sharedos_model::record::ExecutionRecord;
use sharedos_model::tool::ToolDefinition;
use sharedos_world::constants::NAMESPACE_ID;
use sharedos_world::options::WorldOptions;

/// The question a cell asks: its case, its whole script (prose included, so
/// a reworded attempt is a different experiment for this hash) and condition.
///
/// # Errors
/// When the value has no canonical form (it always has).
pub fn spec_hash(case: &Case, script: &AttackScript, condition_id: &str) -> Result<String, CanonicalError> {
    /// The hashed value, borrowed rather than copied into a JSON tree.
    #[derive(Serialize)]
    struct Spec<'a> {
        case: &'a str,
        #[serde(rename = "move")]
        script: &'a AttackScript,
        condition: &'a str,
    }
    tagged_hash("sharedos-conformance/spec/v1", &Spec { case: &case.id, script, condition: condition_id })
}

/// The hash of a materialised world, over the canonical bytes of its
/// [`WorldDescription`].
#[must_use]
pub fn world_hash_of_canonical(description: &[u8]) -> String {
    tagged_hash_of_bytes(WORLD_TAG, description)
}

/// Domain tag of the world hash.
const WORLD_TAG: &str = "sharedos-conformance/world/v1";

/// What a world is, for the world and world-set hashes: the arming as
/// declared, the grants as issued and as the grant store holds them after
/// arming, the enabled namespaces, every tool definition a turn is offered,
/// and the fixture version; borrowed from the world rather than copied.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorldDescription<'a> {
    condition: &'a WorldOptions,
    namespace_id: &'static str,
    enabled_tool_namespaces: Vec<String>,
    grants_issued: Vec<&'a Grant>,
    grants_held: Vec<Grant>,
    tools: &'a [ToolDefinition],
    fixtures: &'static str,
}

impl WorldDescription<'_> {
    /// The canonical bytes of this description with `tools`, the canonical
    /// bytes of its tool list, spliced in rather than written again.
    ///
    /// # Errors
    /// When a member has no canonical form (none has).
    pub fn canonical_with_tools(&self, tools: &[u8]) -> Result<Vec<u8>, CanonicalError> {
        let members = [
            ("condition", canonical_bytes(self.condition)?),
            ("namespaceId", canonical_bytes(self.namespace_id)?),
            ("enabledToolNamespaces", canonical_bytes(&self.enabled_tool_namespaces)?),
            ("grantsIssued", canonical_bytes(&self.grants_issued)?),
            ("grantsHeld", canonical_bytes(&self.grants_held)?),
            ("fixtures", canonical_bytes(self.fixtures)?),
        ];
        let mut members: Vec<(&str, &[u8])> = members.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        members.push(("tools", tools));
        Ok(canonical_object(members))
    }
}

/// The canonical object of members whose values are already canonical:
/// sorted by the UTF-16 code units of their keys, as RFC 8785 sorts them.
fn canonical_object(mut members: Vec<(&str, &[u8])>) -> Vec<u8> {
    members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
    let mut bytes = Vec::with_capacity(members.iter().map(|(k, v)| k.len() + v.len() + 4).sum::<usize>() + 2);
    bytes.push(b'{');
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            bytes.push(b',');
        }
        // Member names here are plain identifiers; their JSON text needs no escape.
        bytes.push(b'"');
        bytes.extend_from_slice(key.as_bytes());
        bytes.extend_from_slice(b"\":");
        bytes.extend_from_slice(value);
    }
    bytes.push(b'}');
    bytes
}

impl<'a> WorldDescription<'a> {
    /// The description of `world`, built for `options`.
    #[must_use]
    pub fn of(world: &'a World, options: &'a WorldOptions) -> WorldDescription<'a> {
        let grants = &world.fixtures.grants;
        WorldDescription {
            condition: options,
            namespace_id: NAMESPACE_ID,
            enabled_tool_namespaces: world.enabled_tool_namespaces(),
            // Roots first, as `GrantSet::all` orders them.
            grants_issued: grants.roots.iter().chain(grants.agent.iter()).map(|g| &**g).collect(),
            grants_held: world.fixtures.grant_source.grants(),
            tools: &world.requested_tools,
            fixtures: FIXTURE_VERSION,
        }
    }
}

/// The grading rules that judged the record.
///
/// # Errors
/// As [`spec_hash`].
pub fn evaluator_hash() -> Result<String, CanonicalError> {
    /// The hashed value.
    #[derive(Serialize)]
    struct Evaluator {
        judge: &'static str,
        version: &'static str,
    }
    tagged_hash(
        "sharedos-conformance/evaluator/v1",
        &Evaluator { judge: "sharedos-conformance", version: RULES_VERSION },
    )
}

/// The tool policy a turn ran under: enabled namespaces and the tools requested.
///
/// # Errors
/// As [`spec_hash`].
pub fn policy_hash(enabled: &[String], tools: &[ToolDefinition]) -> Result<String, CanonicalError> {
    /// The hashed value, borrowed rather than copied into a JSON tree.
    #[derive(Serialize)]
    struct Policy<'a> {
        #[serde(rename = "enabledToolNamespaces")]
        enabled: &'a [String],
        tools: &'a [ToolDefinition],
    }
    tagged_hash(POLICY_TAG, &Policy { enabled, tools })
}

/// [`policy_hash`] with the tools given as their canonical bytes.
///
/// # Errors
/// As [`spec_hash`].
pub fn policy_hash_of_canonical_tools(enabled: &[String], tools: &[u8]) -> Result<String, CanonicalError> {
    let enabled = canonical_bytes(enabled)?;
    let bytes = canonical_object(vec![("enabledToolNamespaces", &enabled), ("tools", tools)]);
    Ok(tagged_hash_of_bytes(POLICY_TAG, &bytes))
}

/// Domain tag of the policy hash.
const POLICY_TAG: &str = "sharedos-conformance/policy/v1";

/// A record's content hash.
///
/// # Errors
/// As [`spec_hash`].
pub fn record_hash(record: &ExecutionRecord) -> Result<String, CanonicalError> {
    tagged_hash("sharedos-conformance/record/v1", record)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use sharedos_world::options::WorldOptions;

    #[test]
    fn spliced_tool_bytes_give_the_same_canonical_description_and_policy() {
        let options = [
            WorldOptions::default(),
            WorldOptions { bounded: true, restorable: true, ..WorldOptions::default() },
            WorldOptions { revoked: Some(vec!["grant-read".into()]), ..WorldOptions::default() },
        ];
        for options in options {
            let world = World::build(&options).unwrap();
            let description = WorldDescription::of(&world, &options);
            let tools = canonical_bytes(&world.requested_tools).unwrap();
            assert_eq!(description.canonical_with_tools(&tools).unwrap(), canonical_bytes(&description).unwrap());
            let enabled = world.enabled_tool_namespaces();
            assert_eq!(
                policy_hash_of_canonical_tools(&enabled, &tools).unwrap(),
                policy_hash(&enabled, &world.requested_tools).unwrap()
            );
        }
    }
}
