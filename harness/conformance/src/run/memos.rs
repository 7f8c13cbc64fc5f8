//! What one worker remembers between the rows it runs.

use crate::identity::cell_identity::WorldIdentity;
use crate::identity::record_hashes::policy_hash_of_canonical_tools;
use crate::run::world::{WorldMemos, WORLD_CAPACITY};
use serde_json::Value;
use sharedos_drivers::protocol::HarnessProtocol;
use sharedos_model::canonical::{canonical_bytes, CanonicalError};
use sharedos_model::memo::Memo;
use sharedos_model::tool::{same_definitions, ToolDefinition};
use sharedos_world::options::WorldOptions;
use std::convert::Infallible;
use std::sync::Arc;

/// How many distinct tool lists the memo keeps.
const CAPACITY: usize = 32;
/// How many (protocol, catalogue) renderings the memo keeps.
const RENDERING_CAPACITY: usize = 64;

/// Hashes and canonical bytes remembered by the value they cover, shared
/// by the rows one worker runs: most worlds list the same catalogue and
/// resolve the same grants, so each is written and hashed once per worker,
/// and each world's hashes once per run. Every answer is the one its value
/// gives, so results do not depend on which rows a worker ran before.
#[derive(Debug)]
pub struct RunMemos {
    /// Shared by every world these rows build.
    pub worlds: WorldMemos,
    /// What every worker of the run shares.
    shared: Arc<SharedMemos>,
}

/// The memos every worker of a run shares: world hashes and rendered
/// catalogues, which cost far more to compute, or to hold once per worker,
/// than to look up.
#[derive(Debug)]
pub struct SharedMemos {
    /// Canonical bytes of a world's requested tools.
    tools: Memo<Vec<ToolDefinition>, Arc<[u8]>>,
    /// The hashes of the world a condition's options arm.
    worlds: Memo<WorldOptions, WorldIdentity>,
    /// Policy hashes, by enabled namespaces and (the address of) the
    /// canonical bytes of the tools: many worlds share one policy.
    policies: Memo<(Vec<String>, Arc<[u8]>), String>,
    /// Catalogues as each vendor protocol renders them for its harness.
    renderings: Memo<(&'static str, Vec<Arc<ToolDefinition>>), Arc<Value>>,
}

impl Default for SharedMemos {
    fn default() -> SharedMemos {
        SharedMemos {
            tools: Memo::new(CAPACITY),
            worlds: Memo::new(WORLD_CAPACITY),
            policies: Memo::new(CAPACITY),
            renderings: Memo::new(RENDERING_CAPACITY),
        }
    }
}

impl Default for RunMemos {
    fn default() -> RunMemos {
        RunMemos::sharing(Arc::default())
    }
}

impl RunMemos {
    /// A worker's memos, sharing `shared` with the run's other workers.
    #[must_use]
    pub fn sharing(shared: Arc<SharedMemos>) -> RunMemos {
        RunMemos { worlds: WorldMemos::default(), shared }
    }

    /// The canonical bytes of `tools`.
    ///
    /// # Errors
    /// When the tools have no canonical form (they always have).
    pub fn tool_bytes(&self, tools: &[ToolDefinition]) -> Result<Arc<[u8]>, CanonicalError> {
        self.shared.tools.get_or_compute(
            |known| known.as_slice() == tools,
            || tools.to_vec(),
            || canonical_bytes(tools).map(Arc::from),
        )
    }

    /// The policy hash of `enabled` namespaces with `tools`, canonical
    /// bytes this memo handed out.
    ///
    /// # Errors
    /// When the policy has no canonical form (it always has).
    pub fn policy_hash(&self, enabled: &[String], tools: &Arc<[u8]>) -> Result<String, CanonicalError> {
        self.shared.policies.get_or_compute(
            |(known_enabled, known_tools)| known_enabled == enabled && Arc::ptr_eq(known_tools, tools),
            || (enabled.to_vec(), Arc::clone(tools)),
            || policy_hash_of_canonical_tools(enabled, tools),
        )
    }

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
        self.shared.worlds.get_or_compute(|known| known == options, || options.clone(), compute)
    }

    /// `tools` in `protocol`'s tool shape. A protocol renders a catalogue
    /// from the catalogue alone, so the rendering is the same for every
    /// turn that offers these tools.
    pub fn rendered_tools(&self, protocol: &dyn HarnessProtocol, tools: &[Arc<ToolDefinition>]) -> Arc<Value> {
        let id = protocol.id();
        let Ok(rendered) = self.shared.renderings.get_or_compute(
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
    use super::{RunMemos, SharedMemos};
    use crate::run::world::World;
    use sharedos_drivers::vendor::Vendor;
    use sharedos_model::tool::ToolDefinition;
    use sharedos_world::options::WorldOptions;
    use std::sync::Arc;

    #[test]
    fn a_catalogue_is_rendered_once_per_protocol_and_as_the_protocol_renders_it() {
        let memos = RunMemos::default();
        let shared = |tools: &[ToolDefinition]| tools.iter().cloned().map(Arc::new).collect::<Vec<_>>();
        let requested = World::build(&WorldOptions::default()).unwrap().requested_tools;
        let tools = shared(&requested);
        let (codex, pi) = (Vendor::Codex.protocol(), Vendor::Pi.protocol());
        let first = memos.rendered_tools(codex.as_ref(), &tools);
        assert_eq!(*first, codex.describe_tools(&tools));
        assert!(Arc::ptr_eq(&first, &memos.rendered_tools(codex.as_ref(), &tools)), "remembered");
        let copies = shared(&requested);
        assert!(Arc::ptr_eq(&first, &memos.rendered_tools(codex.as_ref(), &copies)), "equal copies are remembered too");
        assert_eq!(*memos.rendered_tools(pi.as_ref(), &tools), pi.describe_tools(&tools), "keyed by protocol");
        let fewer = &tools[1..];
        assert_eq!(*memos.rendered_tools(codex.as_ref(), fewer), codex.describe_tools(fewer), "keyed by catalogue");
    }

    #[test]
    fn every_worker_of_a_run_shares_one_rendering_of_a_catalogue() {
        let shared = Arc::new(SharedMemos::default());
        let (one, other) = (RunMemos::sharing(Arc::clone(&shared)), RunMemos::sharing(shared));
        let world = World::build(&WorldOptions::default()).unwrap();
        let tools: Vec<_> = world.requested_tools.iter().cloned().map(Arc::new).collect();
        let codex = Vendor::Codex.protocol();
        let first = one.rendered_tools(codex.as_ref(), &tools);
        assert!(Arc::ptr_eq(&first, &other.rendered_tools(codex.as_ref(), &tools)));
        let apart = RunMemos::default().rendered_tools(codex.as_ref(), &tools);
        assert!(!Arc::ptr_eq(&first, &apart), "runs do not share");
        assert_eq!(first, apart);
    }

    #[test]
    fn a_policy_is_hashed_as_the_policy_hash_hashes_it_and_keyed_by_namespaces() {
        let memos = RunMemos::default();
        let world = World::build(&WorldOptions::default()).unwrap();
        let tools = memos.tool_bytes(&world.requested_tools).unwrap();
        let enabled = world.enabled_tool_namespaces();
        let direct = crate::identity::record_hashes::policy_hash(&enabled, &world.requested_tools).unwrap();
        assert_eq!(memos.policy_hash(&enabled, &tools).unwrap(), direct);
        assert_eq!(memos.policy_hash(&enabled, &tools).unwrap(), direct, "remembered");
        let fewer = &enabled[1..];
        assert_eq!(
            memos.policy_hash(fewer, &tools).unwrap(),
            crate::identity::record_hashes::policy_hash(fewer, &world.requested_tools).unwrap(),
            "keyed by namespaces"
        );
    }
}
