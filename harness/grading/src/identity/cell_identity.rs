//! The identity hashes a cell's records carry: the question it asks (spec),
//! the rules that grade it (evaluator), and the world it materialises.

use super::tags;
use super::world::world_hash;
use crate::input::case::Case;
use crate::input::script::AttackScript;
use crate::input::world::World;
use crate::vocab::RULES_VERSION;
use serde::Serialize;
use sharedos_model::canonical::{tagged_hash, CanonicalError};
use sharedos_model::tool::ToolDefinition;
use sharedos_world::options::WorldOptions;

/// The identity hashes every record of a cell carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The spec hash.
    pub spec: String,
    /// The evaluator hash.
    pub evaluator: String,
    /// The world's hashes.
    pub world: WorldIdentity,
}

/// The hashes of a materialised world. A world is a function of the
/// condition's options alone, so every row whose condition arms the world
/// alike shares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorldIdentity {
    /// The world hash.
    pub hash: String,
    /// The policy a turn runs under when it requests the world's tools with
    /// the world's namespaces enabled (every turn the runner builds): the
    /// namespaces and the policy hash, so each record need not hash the
    /// whole catalogue again.
    pub policy: (Vec<String>, String),
}

impl WorldIdentity {
    /// The hashes of `world`, built for `options`; `policy_hash` hashes the
    /// policy of its enabled namespaces with its tools (a caller may
    /// remember it: many worlds share one policy).
    ///
    /// # Errors
    /// When a hash cannot be computed.
    pub fn of(
        world: &World,
        options: &WorldOptions,
        policy_hash: impl FnOnce(&[String], &[ToolDefinition]) -> Result<String, CanonicalError>,
    ) -> Result<WorldIdentity, CanonicalError> {
        let enabled = world.enabled_tool_namespaces();
        let policy = policy_hash(&enabled, &world.requested_tools)?;
        Ok(WorldIdentity { hash: world_hash(world, options)?, policy: (enabled, policy) })
    }
}

impl Identity {
    /// The hashes of the question a cell asks, given its world's hashes.
    ///
    /// # Errors
    /// When a hash cannot be computed.
    pub fn new(
        case: &Case,
        script: &AttackScript,
        condition_id: &str,
        world: WorldIdentity,
    ) -> Result<Identity, CanonicalError> {
        Ok(Identity { spec: spec_hash(case, script, condition_id)?, evaluator: evaluator_hash()?, world })
    }
}

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
    tagged_hash(tags::SPEC, &Spec { case: &case.id, script, condition: condition_id })
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
    tagged_hash(tags::EVALUATOR, &Evaluator { judge: "sharedos-conformance", version: RULES_VERSION })
}
