//! The identity hashes a cell's records carry: the question it asks (spec),
//! the rules that grade it (evaluator), and the world it materialises.

use crate::identity::record_hashes::{
    evaluator_hash, policy_hash_of_canonical_tools, spec_hash, world_hash_of_canonical, WorldDescription,
};
use crate::input::case::{Case, Condition};
use crate::input::script::AttackScript;
use crate::run::world::World;
use sharedos_model::canonical::{canonical_bytes, CanonicalError};
use sharedos_world::options::WorldOptions;
use std::sync::Arc;

/// The identity hashes every record of a cell carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub(crate) spec: String,
    pub(crate) evaluator: String,
    pub(crate) world: WorldIdentity,
}

/// The hashes of a materialised world. A world is a function of the
/// condition's options alone, so every row whose condition arms the world
/// alike shares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorldIdentity {
    /// The world hash.
    pub(crate) hash: String,
    /// The canonical bytes of the world's requested tools (part of the
    /// description, and of each turn's policy when the turn requested them).
    pub(crate) tools: Arc<[u8]>,
    /// The policy a turn runs under when it requests the world's tools with
    /// the world's namespaces enabled (every turn the runner builds): the
    /// namespaces and the policy hash, so each record need not hash the
    /// whole catalogue again.
    pub(crate) policy: (Vec<String>, String),
}

impl WorldIdentity {
    /// The hashes of `world`, built for `options`, whose requested tools
    /// have the canonical bytes `tools`; `policy_hash` hashes the policy of
    /// its enabled namespaces with those tools (a caller may remember it).
    ///
    /// # Errors
    /// When a hash cannot be computed.
    pub fn of(
        world: &World,
        options: &WorldOptions,
        tools: Arc<[u8]>,
        policy_hash: impl FnOnce(&[String], &Arc<[u8]>) -> Result<String, CanonicalError>,
    ) -> Result<WorldIdentity, CanonicalError> {
        let description = WorldDescription::of(world, options).canonical_with_tools(&tools)?;
        let enabled = world.enabled_tool_namespaces();
        let policy_hash = policy_hash(&enabled, &tools)?;
        Ok(WorldIdentity { hash: world_hash_of_canonical(&description), tools, policy: (enabled, policy_hash) })
    }
}

impl Identity {
    /// The hashes of the question a cell asks, its materialised world, and the rules.
    ///
    /// # Errors
    /// When a hash cannot be computed.
    pub fn new(
        case: &Case,
        script: &AttackScript,
        condition: &Condition,
        world: &World,
    ) -> Result<Identity, CanonicalError> {
        let tools: Arc<[u8]> = canonical_bytes(&world.requested_tools)?.into();
        let world = WorldIdentity::of(world, &condition.world, tools, |enabled, tools| {
            policy_hash_of_canonical_tools(enabled, tools)
        })?;
        Identity::with_world(case, script, &condition.id, world)
    }

    /// [`Identity::new`], given the world's hashes.
    ///
    /// # Errors
    /// When a hash cannot be computed.
    pub fn with_world(
        case: &Case,
        script: &AttackScript,
        condition_id: &str,
        world: WorldIdentity,
    ) -> Result<Identity, CanonicalError> {
        Ok(Identity { spec: spec_hash(case, script, condition_id)?, evaluator: evaluator_hash()?, world })
    }
}
