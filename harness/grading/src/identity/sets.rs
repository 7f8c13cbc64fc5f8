//! The hashes over a whole run: the world set, each column's prompt set,
//! and the evidence root over every record hash.

use super::tags;
use super::world::world_hash;
use crate::input::case::Case;
use crate::input::world::{World, WorldError};
use serde::Serialize;
use sharedos_model::canonical::{tagged_hash, CanonicalError};
use sharedos_model::record::ExecutionRecord;
use std::collections::BTreeMap;

/// Why the world-set hash could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum WorldSetError {
    /// A world no cell had built could not be built.
    #[error(transparent)]
    World(#[from] WorldError),
    /// A hash could not be computed.
    #[error(transparent)]
    Hash(#[from] CanonicalError),
}

/// The world-set hash: every given case's conditions, in order, each with
/// the hash of the world it materialises.
///
/// # Errors
/// When a world cannot be built.
pub fn world_set_hash<'a>(cases: impl IntoIterator<Item = &'a Case>) -> Result<String, WorldSetError> {
    world_set_hash_with(cases, &BTreeMap::new())
}

/// [`world_set_hash`], taking a world's hash from `hashed` by (case,
/// condition) when a run cell already computed it.
///
/// # Errors
/// When a world cannot be built.
pub fn world_set_hash_with<'a>(
    cases: impl IntoIterator<Item = &'a Case>,
    hashed: &BTreeMap<(&str, &str), &str>,
) -> Result<String, WorldSetError> {
    #[derive(Serialize)]
    struct CaseWorlds<'a> {
        case: &'a str,
        conditions: Vec<ConditionWorld<'a>>,
    }
    #[derive(Serialize)]
    struct ConditionWorld<'a> {
        condition: &'a str,
        world: String,
    }
    let mut hashed_cases = Vec::new();
    for case in cases {
        let mut conditions = Vec::with_capacity(case.conditions.len());
        for condition in &case.conditions {
            let world = match hashed.get(&(case.id.as_str(), condition.id.as_str())) {
                Some(hash) => (*hash).to_string(),
                None => world_hash(&World::build(&condition.world)?, &condition.world)?,
            };
            conditions.push(ConditionWorld { condition: &condition.id, world });
        }
        hashed_cases.push(CaseWorlds { case: &case.id, conditions });
    }
    Ok(tagged_hash(tags::WORLD_SET, &hashed_cases)?)
}

/// One turn's entry in its column's prompt set.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptEntry<'a> {
    /// The case.
    pub case: &'a str,
    /// The condition.
    pub condition: &'a str,
    /// The turn, from 1.
    pub turn: u32,
    /// The prompt hash the runtime stated.
    pub prompt_hash: &'a str,
}

/// A column's prompt-set hash over its turns' entries in canonical order;
/// `None` when no turn stated a prompt hash.
///
/// # Errors
/// When hashing fails (it cannot for these values).
pub fn hash_prompt_set(entries: &[PromptEntry<'_>]) -> Result<Option<String>, CanonicalError> {
    if entries.is_empty() {
        return Ok(None);
    }
    tagged_hash(tags::PROMPT_SET, &entries).map(Some)
}

/// One run cell's leaf of the evidence root.
#[derive(Debug, Serialize)]
pub struct EvidenceLeaf<'a> {
    /// The case.
    pub case: &'a str,
    /// The condition.
    pub condition: &'a str,
    /// The column.
    pub column: &'a str,
    /// Its turns' record hashes, in turn order.
    pub records: Vec<&'a str>,
    /// Which run of a repeated cell, from 2 (`--repeat`); the first run's
    /// leaf has none, as every leaf of a run without repeats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
}

/// The evidence root: one hash over every run cell's record hashes, with
/// cells sorted by (case, condition, column) so run order cannot move it.
///
/// # Errors
/// When hashing fails (it cannot for these values).
pub fn hash_evidence_root(mut leaves: Vec<EvidenceLeaf<'_>>) -> Result<String, CanonicalError> {
    leaves.sort_by(|a, b| (a.case, a.condition, a.column, a.repeat).cmp(&(b.case, b.condition, b.column, b.repeat)));
    tagged_hash(tags::EVIDENCE_ROOT, &leaves)
}

/// A record's content hash: a leaf of the evidence root.
///
/// # Errors
/// When the record holds a value with no canonical form (none does).
pub fn record_hash(record: &ExecutionRecord) -> Result<String, CanonicalError> {
    tagged_hash(tags::RECORD, record)
}
