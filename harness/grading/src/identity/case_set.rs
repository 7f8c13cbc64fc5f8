//! The case-set identity: what a run's cases and scripts are, minus prose.
//!
//! The identity is built from an explicit list of fields rather than by
//! stripping keys by name, so a new field is left out of the hash until it is
//! deliberately added here (and the tag's version bumped). Descriptions and
//! the `$schema` editor hint are never hashed: rewording must not look like a
//! different experiment. Defaults are written out (`turn`, `overBudget`,
//! `toolArguments`), so spelling a default or leaving it out hashes the same.

use crate::input::case::{Case, Condition};
use crate::input::loader::Suite;
use crate::input::script::{AttackScript, Attempt};
use serde::Serialize;
use serde_json::{Map, Value};
use sharedos_model::canonical::{tagged_hash, CanonicalError};
use std::collections::BTreeMap;

/// Script fields in the identity.
pub const HASHED_SCRIPT_FIELDS: &[&str] = &["id", "kind", "invariant", "expectedOutcome", "terminal", "attempts"];
/// Attempt fields in the identity.
pub const HASHED_ATTEMPT_FIELDS: &[&str] = &[
    "id",
    "role",
    "tool",
    "toolArguments",
    "forge",
    "inspect",
    "turn",
    "overBudget",
    "expect",
    "unreachable",
    "uncatalogued",
    "annotate",
    "emit",
    "read",
    "atMs",
    "concurrent",
    "afterClose",
    "stepBehind",
    "traceId",
];
/// Case fields in the identity.
pub const HASHED_CASE_FIELDS: &[&str] = &["id", "family", "adversary", "notImplemented", "conditions"];
/// Condition fields in the identity.
pub const HASHED_CONDITION_FIELDS: &[&str] = &["id", "world", "expectTurn", "requiresDeclaredSteps", "notApplicableIn"];

/// `{ "cases": [...], "scripts": [...] }`: the given cases in order, and the
/// scripts they use, sorted by id.
///
/// # Errors
/// When a value has no JSON form (not expected for loaded data).
pub fn case_set_identity<'a>(
    cases: impl IntoIterator<Item = &'a Case>,
    scripts: &BTreeMap<String, AttackScript>,
) -> Result<Value, CanonicalError> {
    let cases: Vec<&Case> = cases.into_iter().collect();
    let used: BTreeMap<&str, &AttackScript> =
        cases.iter().filter_map(|c| scripts.get(&c.adversary).map(|s| (s.id.as_str(), s))).collect();
    let mut out = Map::new();
    out.insert("cases".into(), Value::Array(cases.iter().map(|c| case_identity(c)).collect::<Result<_, _>>()?));
    out.insert("scripts".into(), Value::Array(used.values().map(|s| script_identity(s)).collect::<Result<_, _>>()?));
    Ok(Value::Object(out))
}

/// The case-set hash of a suite (or of a selection made with [`Suite::select`]).
///
/// # Errors
/// As [`case_set_identity`].
pub fn case_set_hash(suite: &Suite) -> Result<String, CanonicalError> {
    tagged_hash(super::tags::CASE_SET, &case_set_identity(&suite.cases, &suite.scripts)?)
}

/// One script's hashed fields.
///
/// # Errors
/// As [`case_set_identity`].
pub fn script_identity(script: &AttackScript) -> Result<Value, CanonicalError> {
    let mut out = Map::new();
    put(&mut out, "id", &script.id)?;
    put(&mut out, "kind", &script.kind)?;
    put(&mut out, "invariant", &script.invariant)?;
    put(&mut out, "expectedOutcome", &script.expected_outcome)?;
    put_some(&mut out, "terminal", script.terminal.as_ref())?;
    let attempts = script.attempts.iter().map(attempt_identity).collect::<Result<Vec<_>, _>>()?;
    out.insert("attempts".into(), Value::Array(attempts));
    Ok(Value::Object(out))
}

fn attempt_identity(attempt: &Attempt) -> Result<Value, CanonicalError> {
    let mut out = Map::new();
    put(&mut out, "id", &attempt.id)?;
    put(&mut out, "role", &attempt.role)?;
    put_some(&mut out, "tool", attempt.tool.as_ref())?;
    put(&mut out, "toolArguments", &attempt.tool_arguments)?;
    put_some(&mut out, "forge", attempt.forge.as_ref())?;
    put_some(&mut out, "inspect", attempt.inspect.as_ref())?;
    put(&mut out, "turn", &attempt.turn)?;
    put(&mut out, "overBudget", &attempt.over_budget)?;
    put(&mut out, "expect", &attempt.expect)?;
    put_some(&mut out, "unreachable", attempt.unreachable.as_ref())?;
    put_some(&mut out, "uncatalogued", attempt.uncatalogued.as_ref())?;
    // Step fields added after the first identity: written only when used,
    // so every earlier script keeps its identity.
    put_some(&mut out, "annotate", attempt.annotate.as_ref())?;
    put_some(&mut out, "emit", attempt.emit.as_ref())?;
    put_some(&mut out, "read", attempt.read.as_ref())?;
    put_some(&mut out, "atMs", attempt.at_ms.as_ref())?;
    put_some(&mut out, "concurrent", attempt.concurrent.then_some(&true))?;
    put_some(&mut out, "afterClose", attempt.after_close.then_some(&true))?;
    put_some(&mut out, "stepBehind", attempt.step_behind.then_some(&true))?;
    put_some(&mut out, "traceId", attempt.trace_id.as_ref())?;
    Ok(Value::Object(out))
}

/// One case's hashed fields.
///
/// # Errors
/// As [`case_set_identity`].
pub fn case_identity(case: &Case) -> Result<Value, CanonicalError> {
    let mut out = Map::new();
    put(&mut out, "id", &case.id)?;
    put(&mut out, "family", &case.family)?;
    put(&mut out, "adversary", &case.adversary)?;
    put_some(&mut out, "notImplemented", case.not_implemented.as_ref())?;
    let conditions = case.conditions.iter().map(condition_identity).collect::<Result<Vec<_>, _>>()?;
    out.insert("conditions".into(), Value::Array(conditions));
    Ok(Value::Object(out))
}

fn condition_identity(condition: &Condition) -> Result<Value, CanonicalError> {
    let mut out = Map::new();
    put(&mut out, "id", &condition.id)?;
    put(&mut out, "world", &condition.world)?;
    put_some(&mut out, "expectTurn", condition.expect_turn.as_ref())?;
    put_some(&mut out, "requiresDeclaredSteps", condition.requires_declared_steps.as_ref())?;
    if !condition.not_applicable_in.is_empty() {
        put(&mut out, "notApplicableIn", &condition.not_applicable_in)?;
    }
    Ok(Value::Object(out))
}

fn put<T: Serialize>(out: &mut Map<String, Value>, key: &str, value: &T) -> Result<(), CanonicalError> {
    let value = serde_json::to_value(value).map_err(|e| CanonicalError(e.to_string()))?;
    out.insert(key.to_string(), value);
    Ok(())
}

fn put_some<T: Serialize>(out: &mut Map<String, Value>, key: &str, value: Option<&T>) -> Result<(), CanonicalError> {
    match value {
        Some(v) => put(out, key, v),
        None => Ok(()),
    }
}
