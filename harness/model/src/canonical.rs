//! Canonical JSON (RFC 8785) and domain-tagged SHA-256.
//!
//! Every hash this harness publishes is `SHA-256(tag || "\n" || JCS(value))`,
//! with a tag such as `sharedos-conformance/case-set/v1`, so two kinds of hash
//! can never collide even over equal values.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// The canonical (RFC 8785) bytes of a serialisable value.
///
/// # Errors
/// When the value cannot be represented as JSON (non-finite numbers, maps
/// with non-string keys).
pub fn canonical_bytes<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CanonicalError> {
    match crate::jcs::write(value) {
        Ok(canonical) => Ok(canonical.into_bytes()),
        // The streaming writer declines what it does not handle itself
        // (floats, huge integers, odd keys, errors); the reference decides those.
        Err(_) => serde_json_canonicalizer::to_vec(&value).map_err(|e| CanonicalError(e.to_string())),
    }
}

/// The canonical (RFC 8785) text of a serialisable value.
///
/// # Errors
/// As [`canonical_bytes`].
pub fn canonical_string<T: Serialize + ?Sized>(value: &T) -> Result<String, CanonicalError> {
    let bytes = canonical_bytes(value)?;
    String::from_utf8(bytes).map_err(|e| CanonicalError(e.to_string()))
}

/// The compact JSON text `serde_json` writes for `value` once converted to
/// a `serde_json::Value` (object keys sorted by their bytes), written
/// without building that value; `None` when the value holds something this
/// shortcut does not vouch for (a float, an integer beyond 2^53, a key that
/// is not plain ASCII), so the caller goes through `serde_json::Value`.
#[must_use]
pub fn sorted_compact_json<T: Serialize + ?Sized>(value: &T) -> Option<Vec<u8>> {
    let canonical = crate::jcs::write(value).ok()?;
    canonical.plain_keys().then(|| canonical.into_bytes())
}

/// The text `serde_json`'s pretty printer writes for `value` once converted
/// to a `serde_json::Value`, written directly; `None` where
/// [`sorted_compact_json`] declines, and for an enum variant written as an
/// object.
#[must_use]
pub fn sorted_pretty_json<T: Serialize + ?Sized>(value: &T) -> Option<Vec<u8>> {
    let indented = crate::jcs::write_indented(value).ok()?;
    indented.plain_keys().then(|| indented.into_bytes())
}

/// A value that has no canonical JSON form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("serialise a value as canonical JSON: {0}")]
pub struct CanonicalError(pub String);

/// Lowercase hex SHA-256 over `tag`, a newline, and the canonical bytes.
///
/// # Errors
/// As [`canonical_bytes`].
pub fn tagged_hash<T: Serialize + ?Sized>(tag: &str, value: &T) -> Result<String, CanonicalError> {
    let Ok(canonical) = crate::jcs::write(value) else {
        return Ok(tagged_hash_of_bytes(tag, &canonical_bytes(value)?));
    };
    let mut hasher = TaggedHasher::new(tag);
    canonical.emit(&mut |chunk| hasher.update(chunk));
    Ok(hasher.finish())
}

/// Lowercase hex SHA-256 over `tag`, a newline, and `canonical`, which the
/// caller vouches are canonical bytes (e.g. from [`canonical_bytes`], kept
/// to hash the same value under several tags or inside a larger value).
#[must_use]
pub fn tagged_hash_of_bytes(tag: &str, canonical: &[u8]) -> String {
    let mut hasher = TaggedHasher::new(tag);
    hasher.update(canonical);
    hasher.finish()
}

/// [`tagged_hash_of_bytes`] fed in pieces, for canonical bytes the caller
/// writes part by part rather than gathering them first.
#[derive(Debug, Clone)]
pub struct TaggedHasher(Sha256);

impl TaggedHasher {
    /// A hash in the domain of `tag`.
    #[must_use]
    pub fn new(tag: &str) -> TaggedHasher {
        let mut hasher = Sha256::new();
        hasher.update(tag.as_bytes());
        hasher.update(b"\n");
        TaggedHasher(hasher)
    }

    /// Appends the next canonical bytes.
    pub fn update(&mut self, canonical: &[u8]) {
        self.0.update(canonical);
    }

    /// The lowercase hex hash of everything appended.
    #[must_use]
    pub fn finish(self) -> String {
        hex::encode(self.0.finalize())
    }
}

/// True for 64 lowercase hex characters.
#[must_use]
pub fn is_content_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorts_keys_and_drops_whitespace() {
        let text = canonical_string(&json!({"b": 1, "a": [true, null, "x"]})).unwrap();
        assert_eq!(text, r#"{"a":[true,null,"x"],"b":1}"#);
    }

    #[test]
    fn tags_separate_hash_domains() {
        let value = json!({"k": "v"});
        let a = tagged_hash("sharedos-conformance/case-set/v1", &value).unwrap();
        let b = tagged_hash("sharedos-conformance/world-set/v1", &value).unwrap();
        assert_ne!(a, b);
        assert!(is_content_hash(&a));
    }
}
