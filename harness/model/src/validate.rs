//! Bounds checks that serde's structural parse cannot express.
//!
//! Each failure names the JSON pointer of the offending value and what was
//! expected there, so a caller can report it as-is.

use crate::instant::is_timestamp;
use serde_json::{Map, Value};

/// A value that parsed structurally but broke a bound of the contract.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at {pointer}: expected {expected}")]
pub struct ValidationError {
    /// JSON pointer of the offending value (`""` for the whole document).
    pub pointer: String,
    /// What the contract expects at that place.
    pub expected: String,
}

impl ValidationError {
    /// A failure at `pointer`.
    #[must_use]
    pub fn new(pointer: &str, expected: impl Into<String>) -> ValidationError {
        ValidationError { pointer: pointer.to_string(), expected: expected.into() }
    }
}

/// Checks the bounds of a parsed wire object.
pub trait Validate {
    /// Checks every bound; `pointer` is where this value sits in its document.
    ///
    /// # Errors
    /// The first bound that does not hold.
    fn validate_at(&self, pointer: &str) -> Result<(), ValidationError>;

    /// Checks every bound of a value at the document root.
    ///
    /// # Errors
    /// The first bound that does not hold.
    fn validate(&self) -> Result<(), ValidationError> {
        self.validate_at("")
    }
}

/// Joins a pointer and a key (escaping `~` and `/` as RFC 6901 says).
#[must_use]
pub fn child(pointer: &str, key: &str) -> String {
    let mut joined = String::with_capacity(pointer.len() + key.len() + 1);
    joined.push_str(pointer);
    joined.push('/');
    if key.contains(['~', '/']) {
        joined.push_str(&key.replace('~', "~0").replace('/', "~1"));
    } else {
        joined.push_str(key);
    }
    joined
}

/// Runs `check` at `pointer/key`, writing that pointer only when the check
/// fails: `check` sees a pointer relative to it (`""`), and every pointer a
/// check writes extends the one it was given, so prefixing is exact.
///
/// # Errors
/// What `check` finds, at its full pointer.
pub fn within(
    pointer: &str,
    key: &str,
    check: impl FnOnce(&str) -> Result<(), ValidationError>,
) -> Result<(), ValidationError> {
    check("").map_err(|e| ValidationError { pointer: child(pointer, key) + &e.pointer, expected: e.expected })
}

/// [`within`] for an array element.
///
/// # Errors
/// What `check` finds, at its full pointer.
pub fn within_index(
    pointer: &str,
    i: usize,
    check: impl FnOnce(&str) -> Result<(), ValidationError>,
) -> Result<(), ValidationError> {
    check("").map_err(|e| ValidationError { pointer: index(pointer, i) + &e.pointer, expected: e.expected })
}

/// Joins a pointer and an array index.
#[must_use]
pub fn index(pointer: &str, i: usize) -> String {
    format!("{pointer}/{i}")
}

/// Whether `text` has at most `max` characters. A string never has more
/// characters than bytes, so most strings are answered without counting.
#[must_use]
pub fn at_most_chars(text: &str, max: usize) -> bool {
    text.len() <= max || text.chars().count() <= max
}

/// An identifier: trimmed, 1..=256 characters.
///
/// # Errors
/// When `text` is empty, padded or too long.
pub fn identifier(text: &str, pointer: &str) -> Result<(), ValidationError> {
    if text.is_empty() || text.trim() != text || !at_most_chars(text, 256) {
        return Err(ValidationError::new(pointer, "an identifier (1..256 characters, not padded)"));
    }
    Ok(())
}

/// A trimmed, non-empty string of at most `max` characters.
///
/// # Errors
/// When `text` is empty after trimming or longer than `max`.
pub fn bounded_text(text: &str, max: usize, pointer: &str) -> Result<(), ValidationError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || !at_most_chars(trimmed, max) {
        return Err(ValidationError::new(pointer, format!("text of 1..{max} characters")));
    }
    Ok(())
}

/// An RFC 3339 timestamp with an offset.
///
/// # Errors
/// When `text` does not parse.
pub fn timestamp(text: &str, pointer: &str) -> Result<(), ValidationError> {
    if is_timestamp(text) {
        Ok(())
    } else {
        Err(ValidationError::new(pointer, "an RFC 3339 timestamp with an offset"))
    }
}

/// A collection length within `min..=max`.
///
/// # Errors
/// When `len` is outside the bounds.
pub fn length(len: usize, min: usize, max: usize, pointer: &str) -> Result<(), ValidationError> {
    if len < min || len > max {
        return Err(ValidationError::new(pointer, format!("between {min} and {max} entries")));
    }
    Ok(())
}

/// A JSON object (not an array, string or scalar).
///
/// # Errors
/// When `value` is not an object.
pub fn object(value: &Value, pointer: &str) -> Result<(), ValidationError> {
    if value.is_object() {
        Ok(())
    } else {
        Err(ValidationError::new(pointer, "a JSON object"))
    }
}

/// Unique entries.
///
/// # Errors
/// When two entries are equal.
pub fn unique(items: &[String], pointer: &str) -> Result<(), ValidationError> {
    let mut seen = std::collections::BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        if !seen.insert(item) {
            return Err(ValidationError::new(&index(pointer, i), "a value not listed before"));
        }
    }
    Ok(())
}

/// Removes every object key named `__proto__`, at every depth, as SharedOS's
/// JSON schema silently does.
pub fn drop_proto_keys(value: &mut Value) {
    match value {
        Value::Object(map) => drop_proto_keys_in(map),
        Value::Array(items) => items.iter_mut().for_each(drop_proto_keys),
        _ => {}
    }
}

/// [`drop_proto_keys`] for an object.
pub fn drop_proto_keys_in(map: &mut Map<String, Value>) {
    map.remove("__proto__");
    map.values_mut().for_each(drop_proto_keys);
}

/// Whether [`drop_proto_keys`] would remove anything from `value`.
#[must_use]
pub fn holds_proto_keys(value: &Value) -> bool {
    match value {
        Value::Object(map) => holds_proto_keys_in(map),
        Value::Array(items) => items.iter().any(holds_proto_keys),
        _ => false,
    }
}

/// [`holds_proto_keys`] for an object.
#[must_use]
pub fn holds_proto_keys_in(map: &Map<String, Value>) -> bool {
    map.contains_key("__proto__") || map.values().any(holds_proto_keys)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_escaped_in_the_pointer_it_adds() {
        assert_eq!(within("/x", "k/~", |at| Err(ValidationError::new(at, "y"))).unwrap_err().pointer, "/x/k~1~0");
    }

    #[test]
    fn holds_proto_keys_answers_whether_dropping_them_changes_the_value() {
        let values = [
            serde_json::json!({"a": 1}),
            serde_json::json!({"__proto__": 1}),
            serde_json::json!({"a": [{"b": {"__proto__": null}}]}),
            serde_json::json!([1, {"c": "__proto__"}]),
            serde_json::json!("__proto__"),
        ];
        for value in values {
            let mut dropped = value.clone();
            drop_proto_keys(&mut dropped);
            assert_eq!(holds_proto_keys(&value), dropped != value, "{value}");
        }
    }

    #[test]
    fn at_most_chars_counts_characters_not_bytes() {
        assert!(at_most_chars("abc", 3));
        assert!(!at_most_chars("abcd", 3));
        // Three characters in six bytes.
        assert!(at_most_chars("ééé", 3));
        assert!(!at_most_chars("éééé", 3));
    }
}
