//! The run's one cache, owned by the runner and shared by its workers:
//! answers that equal values give, so each is computed once per run.
//!
//! It holds what measurably pays for itself (`reports/bench.md`): the
//! hashes of each distinct world (118 conditions arm 67 worlds, and a
//! world's description is tens of kilobytes), the policy hash of each
//! distinct tool policy (most worlds request the same tools), and each
//! catalogue as a vendor protocol renders it for a driven turn's request
//! frame (every driven turn of a world offers the same one). Every answer is the one
//! its value gives, so no result depends on which cells ran before or on
//! which worker.

pub mod memo;

use memo::Memo;
use serde_json::Value;
use sharedos_drivers::protocol::HarnessProtocol;
use sharedos_grading::identity::cell_identity::WorldIdentity;
use sharedos_grading::identity::world::policy_hash;
use sharedos_model::canonical::CanonicalError;
use sharedos_model::tool::{same_definitions, ToolDefinition};
use sharedos_world::options::WorldOptions;
use std::convert::Infallible;
use std::sync::Arc;

/// See the module documentation.
#[derive(Debug, Default)]
pub struct RunCache {
    /// The hashes of the world a condition's options arm.
    worlds: Memo<WorldOptions, WorldIdentity>,
    /// Policy hashes, by enabled namespaces and requested tools.
    policies: Memo<(Vec<String>, Vec<ToolDefinition>), String>,
    /// Catalogues as each vendor protocol renders them.
    renderings: Memo<(&'static str, Vec<Arc<ToolDefinition>>), Arc<Value>>,
}

impl RunCache {
    /// The hashes of the world `options` arm, or `compute`'s. A world is
    /// built from its options alone (the fixtures are code), so equal
    /// options mean an equal world.
    ///
    /// # Errors
    /// What `compute` answered, when it failed.
    pub fn world_identity(
        &self,
        options: &WorldOptions,
        compute: impl FnOnce() -> Result<WorldIdentity, CanonicalError>,
    ) -> Result<WorldIdentity, CanonicalError> {
        self.worlds.get_or_compute(|known| known == options, || options.clone(), compute)
    }

    /// The policy hash of `enabled` namespaces with `tools`.
    ///
    /// # Errors
    /// When the policy has no canonical form (it always has).
    pub fn policy_hash(&self, enabled: &[String], tools: &[ToolDefinition]) -> Result<String, CanonicalError> {
        self.policies.get_or_compute(
            |(known_enabled, known_tools)| known_enabled == enabled && known_tools.as_slice() == tools,
            || (enabled.to_vec(), tools.to_vec()),
            || policy_hash(enabled, tools),
        )
    }

    /// `tools` in `protocol`'s tool shape. A protocol renders a catalogue
    /// from the catalogue alone, so the rendering is the same for every
    /// turn that offers these tools.
    pub fn rendered_tools(&self, protocol: &dyn HarnessProtocol, tools: &[Arc<ToolDefinition>]) -> Arc<Value> {
        let id = protocol.id();
        let Ok(rendered) = self.renderings.get_or_compute(
            |(known_id, known)| *known_id == id && same_definitions(known, tools),
            || (id, tools.to_vec()),
            || Ok::<_, Infallible>(Arc::new(protocol.describe_tools(tools))),
        );
        rendered
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::RunCache;
    use sharedos_drivers::vendor::{Vendor, VendorWire};
    use sharedos_grading::identity::cell_identity::WorldIdentity;
    use sharedos_grading::identity::world::policy_hash;
    use sharedos_grading::input::world::World;
    use sharedos_model::tool::ToolDefinition;
    use sharedos_world::options::WorldOptions;
    use std::sync::Arc;

    #[test]
    fn a_catalogue_is_rendered_once_per_protocol_and_as_the_protocol_renders_it() {
        let cache = RunCache::default();
        let shared = |tools: &[ToolDefinition]| tools.iter().cloned().map(Arc::new).collect::<Vec<_>>();
        let requested = World::build(&WorldOptions::default()).unwrap().requested_tools;
        let tools = shared(&requested);
        let (codex, pi) = (Vendor::Codex.protocol(), Vendor::Pi.protocol());
        let first = cache.rendered_tools(codex.as_ref(), &tools);
        assert_eq!(*first, codex.describe_tools(&tools));
        assert!(Arc::ptr_eq(&first, &cache.rendered_tools(codex.as_ref(), &tools)), "remembered");
        let copies = shared(&requested);
        assert!(Arc::ptr_eq(&first, &cache.rendered_tools(codex.as_ref(), &copies)), "equal copies are remembered too");
        assert_eq!(*cache.rendered_tools(pi.as_ref(), &tools), pi.describe_tools(&tools), "keyed by protocol");
        let fewer = &tools[1..];
        assert_eq!(*cache.rendered_tools(codex.as_ref(), fewer), codex.describe_tools(fewer), "keyed by catalogue");
    }

    #[test]
    fn a_world_identity_is_the_one_its_options_give_and_keyed_by_options() {
        let cache = RunCache::default();
        let plain = WorldOptions::default();
        let bounded = WorldOptions { bounded: true, ..WorldOptions::default() };
        let of = |options: &WorldOptions| WorldIdentity::of(&World::build(options).unwrap(), options, policy_hash);
        let first = cache.world_identity(&plain, || of(&plain)).unwrap();
        assert_eq!(first, of(&plain).unwrap());
        let again = cache.world_identity(&plain, || panic!("computed twice")).unwrap();
        assert_eq!(again, first);
        let other = cache.world_identity(&bounded, || of(&bounded)).unwrap();
        assert_ne!(other.hash, first.hash, "keyed by options");
    }

    #[test]
    fn a_policy_is_hashed_as_the_policy_hash_hashes_it_and_keyed_by_namespaces() {
        let cache = RunCache::default();
        let world = World::build(&WorldOptions::default()).unwrap();
        let enabled = world.enabled_tool_namespaces();
        let direct = policy_hash(&enabled, &world.requested_tools).unwrap();
        assert_eq!(cache.policy_hash(&enabled, &world.requested_tools).unwrap(), direct);
        assert_eq!(cache.policy_hash(&enabled, &world.requested_tools).unwrap(), direct, "remembered");
        let fewer = &enabled[1..];
        let other = cache.policy_hash(fewer, &world.requested_tools).unwrap();
        assert_eq!(other, policy_hash(fewer, &world.requested_tools).unwrap(), "keyed by namespaces");
        assert_ne!(other, direct);
    }
}
