//! Resources, capabilities, grants, requirements and decisions.

use crate::address::Address;
use crate::codes::ReasonCode;
use crate::validate::{self, child, index, Validate, ValidationError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A resource in an authority domain, addressed by path segments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceRef {
    /// Authority domain (`files`, `sharedos.messaging`, ...).
    pub namespace: String,
    /// Whose resource; absent means the context owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Address>,
    /// Path segments, compared segment-wise.
    pub path: Vec<String>,
}

impl ResourceRef {
    /// A resource with an explicit owner.
    #[must_use]
    pub fn owned(namespace: &str, path: &[&str], owner: &Address) -> ResourceRef {
        ResourceRef {
            namespace: namespace.to_string(),
            path: path.iter().map(|s| (*s).to_string()).collect(),
            owner: Some(owner.clone()),
        }
    }
}

/// True when `segment` is a safe path segment (ADR 0004).
#[must_use]
pub fn is_segment(segment: &str) -> bool {
    !segment.is_empty()
        && validate::at_most_chars(segment, 256)
        && segment.trim() == segment
        && segment != "."
        && segment != ".."
        && !segment.chars().any(|c| c == '/' || c == '\\' || c.is_ascii_control())
}

impl Validate for ResourceRef {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        validate::within(p, "namespace", |at| validate::identifier(&self.namespace, at))?;
        validate::within(p, "path", |path| {
            validate::length(self.path.len(), 0, 64, path)?;
            match self.path.iter().position(|segment| !is_segment(segment)) {
                None => Ok(()),
                Some(i) => Err(ValidationError::new(
                    &index(path, i),
                    "a path segment (1..256 characters, not padded, not . or .., no slashes or control characters)",
                )),
            }
        })
    }
}

/// How far a capability reaches below its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Only the identical path.
    Exact,
    /// The path and everything segment-wise below it.
    Descendants,
}

/// Actions on one resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Capability {
    /// Actions, matched literally (`"*"` covers all).
    pub actions: Vec<String>,
    /// The resource.
    pub resource: ResourceRef,
    /// Exact or descendants.
    pub scope: Scope,
}

impl Validate for Capability {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        validate::within(p, "resource", |at| self.resource.validate_at(at))?;
        validate::within(p, "actions", |actions| {
            validate::length(self.actions.len(), 1, 64, actions)?;
            for (i, action) in self.actions.iter().enumerate() {
                validate::within_index(actions, i, |at| {
                    validate::bounded_text(action, 128, at)?;
                    if action.trim() == action {
                        Ok(())
                    } else {
                        Err(ValidationError::new(at, "an action that is not padded"))
                    }
                })?;
            }
            Ok(())
        })
    }
}

/// Limits a grant places on its own use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Constraints {
    /// How many further delegation links may hang below this grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegation_depth: Option<u64>,
    /// Inactive from this instant (judged at the operation instant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Bounded uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_uses: Option<u64>,
    /// Not active before this instant (judged at admission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<String>,
    /// Purposes the grant may be used for (exact match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purposes: Option<Vec<String>>,
}

impl Validate for Constraints {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        if let Some(purposes) = &self.purposes {
            validate::within(p, "purposes", |at| {
                validate::length(purposes.len(), 1, 64, at)?;
                for (i, purpose) in purposes.iter().enumerate() {
                    validate::within_index(at, i, |at| validate::bounded_text(purpose, 512, at))?;
                }
                Ok(())
            })?;
        }
        if let Some(t) = &self.not_before {
            validate::within(p, "notBefore", |at| validate::timestamp(t, at))?;
        }
        if let Some(t) = &self.expires_at {
            validate::within(p, "expiresAt", |at| validate::timestamp(t, at))?;
        }
        if self.max_uses == Some(0) {
            return Err(ValidationError::new(&child(p, "maxUses"), "a positive integer"));
        }
        let window = (
            self.not_before.as_deref().and_then(crate::instant::Instant::parse),
            self.expires_at.as_deref().and_then(crate::instant::Instant::parse),
        );
        if let (Some(start), Some(end)) = window {
            if start > end {
                return Err(ValidationError::new(&child(p, "notBefore"), "notBefore no later than expiresAt"));
            }
        }
        Ok(())
    }
}

/// Authority issued by `issuer` to `subject`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Grant {
    /// What it allows (1..=64).
    pub capabilities: Vec<Capability>,
    /// Limits on its use.
    pub constraints: Constraints,
    /// Grant id.
    pub id: String,
    /// When it was issued.
    pub issued_at: String,
    /// Who issued it.
    pub issuer: Address,
    /// Host-side data; never alters authority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// World the grant belongs to.
    pub namespace_id: String,
    /// The grant it claims to be derived from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_grant_id: Option<String>,
    /// When it was revoked (judged at admission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// Who may use it.
    pub subject: Address,
}

impl Validate for Grant {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        validate::within(p, "id", |at| validate::identifier(&self.id, at))?;
        validate::within(p, "namespaceId", |at| validate::identifier(&self.namespace_id, at))?;
        validate::within(p, "capabilities", |caps| {
            validate::length(self.capabilities.len(), 1, 64, caps)?;
            for (i, capability) in self.capabilities.iter().enumerate() {
                validate::within_index(caps, i, |at| capability.validate_at(at))?;
            }
            Ok(())
        })?;
        validate::within(p, "constraints", |at| self.constraints.validate_at(at))?;
        validate::within(p, "issuedAt", |at| validate::timestamp(&self.issued_at, at))?;
        if let Some(t) = &self.revoked_at {
            validate::within(p, "revokedAt", |at| validate::timestamp(t, at))?;
        }
        if let Some(parent) = &self.parent_grant_id {
            validate::within(p, "parentGrantId", |at| validate::identifier(parent, at))?;
            if parent == &self.id {
                return Err(ValidationError::new(&child(p, "parentGrantId"), "a parent other than the grant itself"));
            }
        }
        Ok(())
    }
}

/// The exact thing one operation needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Requirement {
    /// The one action.
    pub action: String,
    /// The resource.
    pub resource: ResourceRef,
}

/// A description of missing authority; never authority itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilityRequest {
    /// Derived deterministically from the request's content.
    pub id: String,
    /// World.
    pub namespace_id: String,
    /// Who asks.
    pub requester: Address,
    /// Whose resources.
    pub owner: Address,
    /// What is asked for.
    pub capabilities: Vec<Capability>,
    /// Why.
    pub purpose: String,
    /// Requested limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Constraints>,
    /// When.
    pub requested_at: String,
    /// Free-form metadata: carried as given, never interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// One authorization answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[must_use]
pub struct Decision {
    /// Whether the operation may proceed.
    pub allowed: bool,
    /// `allowed` or the refusal code.
    pub reason_code: ReasonCode,
    /// The grant that allowed it, or the one a host ceiling overrode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_grant_id: Option<String>,
    /// Decision details (ceiling rule, delegation code, authority code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Only on an invocation-time `no_matching_grant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_authority: Option<CapabilityRequest>,
}

impl Decision {
    /// An allow naming the grant that carried it.
    pub fn allow(grant_id: &str) -> Decision {
        Decision {
            allowed: true,
            reason_code: ReasonCode::Allowed,
            matched_grant_id: Some(grant_id.to_string()),
            metadata: None,
            required_authority: None,
        }
    }

    /// A refusal with `code`.
    pub fn deny(code: ReasonCode) -> Decision {
        Decision { allowed: false, reason_code: code, matched_grant_id: None, metadata: None, required_authority: None }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::address::Address;
    use crate::validate::Validate;

    fn grant() -> Grant {
        Grant {
            id: "grant-1".into(),
            namespace_id: "world-1".into(),
            subject: Address::agent("agent-a"),
            issuer: Address::human("user-b"),
            capabilities: vec![Capability {
                resource: ResourceRef { namespace: "files".into(), path: vec!["a".into(), "b".into()], owner: None },
                actions: vec!["read".into()],
                scope: Scope::Exact,
            }],
            constraints: Constraints::default(),
            issued_at: "2026-01-01T00:00:00.000Z".into(),
            revoked_at: None,
            parent_grant_id: None,
            metadata: None,
        }
    }

    #[test]
    fn pointers_written_lazily_are_the_full_paths() {
        assert_eq!(grant().validate_at("/grants/2"), Ok(()));
        let mut bad = grant();
        bad.capabilities[0].resource.path[1] = "..".into();
        assert_eq!(bad.validate_at("/grants/2").unwrap_err().pointer, "/grants/2/capabilities/0/resource/path/1");
        let mut bad = grant();
        bad.issued_at = "yesterday".into();
        assert_eq!(bad.validate_at("").unwrap_err().pointer, "/issuedAt");
        let mut bad = grant();
        bad.constraints.expires_at = Some("never".into());
        assert_eq!(bad.validate_at("/a~1b").unwrap_err().pointer, "/a~1b/constraints/expiresAt");
        let mut bad = grant();
        bad.capabilities[0].actions.push(" write".into());
        let error = bad.validate_at("/grants/2").unwrap_err();
        assert_eq!(
            (error.pointer.as_str(), error.expected.as_str()),
            ("/grants/2/capabilities/0/actions/1", "an action that is not padded")
        );
        let mut bad = grant();
        bad.constraints.purposes = Some(vec!["audit".into(), " ".into()]);
        assert_eq!(bad.validate_at("").unwrap_err().pointer, "/constraints/purposes/1");
    }
}
