//! Strict argument parsing shared by the fixture tools, and the JSON Schema
//! fragments their definitions publish. A parser refuses unknown keys, wrong
//! types and out-of-range values, and returns a normalized copy (defaults
//! filled) that is the only thing the requirement and the effect see.

use serde_json::{json, Map, Value};
use sharedos_model::capability::is_segment;
use std::sync::Arc;

/// Largest `limit`, `contextBefore` or `contextAfter` a file tool accepts.
pub const MAX_COUNT: u64 = 1000;

/// Refuses any key of `arguments` not in `allowed`.
///
/// # Errors
/// Naming the first unknown key.
pub fn only_keys(arguments: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    match arguments.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(format!("unknown argument `{key}`")),
        None => Ok(()),
    }
}

/// A path of safe segments under `key`, with at least `min_len` segments.
///
/// # Errors
/// When absent, not an array of segments, or too short.
pub fn path(arguments: &Map<String, Value>, key: &str, min_len: usize) -> Result<Vec<String>, String> {
    let items = arguments
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("`{key}` must be an array of path segments"))?;
    if items.len() < min_len || items.len() > 64 {
        return Err(format!("`{key}` must hold {min_len}..64 segments"));
    }
    items
        .iter()
        .map(|item| match item.as_str() {
            Some(segment) if is_segment(segment) => Ok(segment.to_string()),
            _ => Err(format!("`{key}` holds a value that is not a safe path segment")),
        })
        .collect()
}

/// A required string under `key`.
///
/// # Errors
/// When absent or not a string.
pub fn string(arguments: &Map<String, Value>, key: &str) -> Result<String, String> {
    arguments.get(key).and_then(Value::as_str).map(str::to_string).ok_or_else(|| format!("`{key}` must be a string"))
}

/// A required non-empty string under `key`.
///
/// # Errors
/// When absent, not a string, or empty.
pub fn non_empty_string(arguments: &Map<String, Value>, key: &str) -> Result<String, String> {
    let text = string(arguments, key)?;
    if text.is_empty() {
        return Err(format!("`{key}` must not be empty"));
    }
    Ok(text)
}

/// An optional string under `key`.
///
/// # Errors
/// When present and not a string.
pub fn optional_string(arguments: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match arguments.get(key) {
        None => Ok(None),
        Some(_) => string(arguments, key).map(Some),
    }
}

/// An optional count in `0..=max` under `key`.
///
/// # Errors
/// When present and not an integer in range.
pub fn optional_count(arguments: &Map<String, Value>, key: &str, max: u64) -> Result<Option<u64>, String> {
    match arguments.get(key) {
        None => Ok(None),
        Some(value) => match value.as_u64() {
            Some(n) if n <= max => Ok(Some(n)),
            _ => Err(format!("`{key}` must be an integer in 0..={max}")),
        },
    }
}

/// An optional positive version under `key`.
///
/// # Errors
/// When present and not a positive integer.
pub fn optional_version(arguments: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match arguments.get(key) {
        None => Ok(None),
        Some(value) => match value.as_u64() {
            Some(n) if n >= 1 => Ok(Some(n)),
            _ => Err(format!("`{key}` must be a positive integer")),
        },
    }
}

/// An optional boolean under `key`.
///
/// # Errors
/// When present and not a boolean.
pub fn optional_bool(arguments: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match arguments.get(key) {
        None => Ok(None),
        Some(value) => value.as_bool().map(Some).ok_or_else(|| format!("`{key}` must be a boolean")),
    }
}

/// An optional JSON object under `key`.
///
/// # Errors
/// When present and not an object.
pub fn optional_object(arguments: &Map<String, Value>, key: &str) -> Result<Option<Map<String, Value>>, String> {
    match arguments.get(key) {
        None => Ok(None),
        Some(value) => value.as_object().cloned().map(Some).ok_or_else(|| format!("`{key}` must be an object")),
    }
}

/// One of `choices` under `key`, or `default` when absent.
///
/// # Errors
/// When present and not one of the choices.
pub fn choice(arguments: &Map<String, Value>, key: &str, choices: &[&str], default: &str) -> Result<String, String> {
    match arguments.get(key) {
        None => Ok(default.to_string()),
        Some(value) => match value.as_str() {
            Some(text) if choices.contains(&text) => Ok(text.to_string()),
            _ => Err(format!("`{key}` must be one of {}", choices.join(", "))),
        },
    }
}

/// Segments as a JSON array.
#[must_use]
pub fn path_value(path: &[String]) -> Value {
    Value::Array(path.iter().cloned().map(Value::String).collect())
}

/// The schema of a path argument with at least `min_items` segments.
#[must_use]
pub fn path_schema(min_items: u64) -> Value {
    json!({
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": 256},
        "minItems": min_items,
        "maxItems": 64
    })
}

/// What `table` holds for `key`, shared; built by `build` only for a key
/// the table lacks, so the answer is the same either way.
///
/// Fixture catalogues keep their tool definitions in a `LazyLock` table: a
/// definition is a constant that `json!` cannot write as a `const`, and
/// building every tool's definition for every world (a world is built per
/// cell) was most of what building a world cost.
pub fn shared<K: PartialEq + Copy, T>(table: &[(K, Arc<T>)], key: K, build: impl FnOnce(K) -> T) -> Arc<T> {
    table.iter().find(|(k, _)| *k == key).map_or_else(|| Arc::new(build(key)), |(_, shared)| Arc::clone(shared))
}

/// A strict object schema with `properties`, of which `required` must be present.
#[must_use]
pub fn object_schema(properties: Value, required: &[&str], open: bool) -> Map<String, Value> {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), properties);
    schema.insert("required".into(), json!(required));
    schema.insert("additionalProperties".into(), json!(open));
    schema
}
