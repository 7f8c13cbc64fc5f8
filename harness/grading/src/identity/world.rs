//! What a world is, for the world and world-set hashes, and the tool policy
//! a turn runs under.

use super::tags;
use crate::input::world::World;
use serde::Serialize;
use sharedos_model::canonical::{tagged_hash, CanonicalError};
use sharedos_model::capability::Grant;
use sharedos_model::tool::ToolDefinition;
use sharedos_world::constants::{FIXTURE_VERSION, NAMESPACE_ID};
use sharedos_world::options::WorldOptions;

/// What a world is: the arming as declared, the grants as issued and as the
/// grant store holds them after arming, the enabled namespaces, every tool
/// definition a turn is offered, and the fixture version; borrowed from the
/// world rather than copied.
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

/// The hash of `world`, built for `options` (a record's `experiment.worldHash`).
///
/// # Errors
/// When the description has no canonical form (it always has).
pub fn world_hash(world: &World, options: &WorldOptions) -> Result<String, CanonicalError> {
    tagged_hash(tags::WORLD, &WorldDescription::of(world, options))
}

/// The tool policy a turn ran under: enabled namespaces and the tools requested.
///
/// # Errors
/// When the policy has no canonical form (it always has).
pub fn policy_hash(enabled: &[String], tools: &[ToolDefinition]) -> Result<String, CanonicalError> {
    /// The hashed value, borrowed rather than copied into a JSON tree.
    #[derive(Serialize)]
    struct Policy<'a> {
        #[serde(rename = "enabledToolNamespaces")]
        enabled: &'a [String],
        tools: &'a [ToolDefinition],
    }
    tagged_hash(tags::POLICY, &Policy { enabled, tools })
}
