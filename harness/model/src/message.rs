//! Messages between principals (ADR 0015): data and one purpose, never authority.

use crate::address::Address;
use crate::validate::{self, child, index, Validate, ValidationError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The wire protocol version this harness speaks.
pub const PROTOCOL_VERSION: &str = "1";

/// Host hop provenance; the kernel neither sets nor reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageProvenance {
    /// Where it came from.
    pub source: String,
    /// Parent message ids (at most 64).
    pub parent_ids: Vec<String>,
    /// Free-form metadata: carried as given, never interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// One message. Strict: `intent` and every other unknown key are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageEnvelope {
    /// Protocol epoch.
    pub version: String,
    /// Trusted message id.
    pub id: String,
    /// Who sends.
    pub sender: Address,
    /// Who receives.
    pub receiver: Address,
    /// The one policy-bound reason.
    pub purpose: String,
    /// Data only.
    pub payload: Value,
    /// Trace.
    pub trace_id: String,
    /// When it was written.
    pub created_at: String,
    /// On replies, the request's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// Host hop provenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<MessageProvenance>,
}

impl MessageEnvelope {
    /// Parses untrusted JSON strictly and checks every bound.
    ///
    /// # Errors
    /// When the value is not a valid envelope.
    pub fn from_value(value: &Value) -> Result<MessageEnvelope, ValidationError> {
        let envelope = MessageEnvelope::deserialize(value)
            .map_err(|e| ValidationError::new("", format!("a message envelope ({e})")))?;
        envelope.validate()?;
        Ok(envelope)
    }
}

impl Validate for MessageEnvelope {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        if self.version != PROTOCOL_VERSION {
            return Err(ValidationError::new(
                &child(p, "version"),
                format!("the protocol version \"{PROTOCOL_VERSION}\""),
            ));
        }
        validate::identifier(&self.id, &child(p, "id"))?;
        validate::bounded_text(&self.purpose, 512, &child(p, "purpose"))?;
        validate::identifier(&self.trace_id, &child(p, "traceId"))?;
        validate::timestamp(&self.created_at, &child(p, "createdAt"))?;
        if let Some(reply_to) = &self.reply_to {
            validate::identifier(reply_to, &child(p, "replyTo"))?;
        }
        if let Some(provenance) = &self.provenance {
            let at = child(p, "provenance");
            validate::identifier(&provenance.source, &child(&at, "source"))?;
            let parents = child(&at, "parentIds");
            validate::length(provenance.parent_ids.len(), 0, 64, &parents)?;
            for (i, id) in provenance.parent_ids.iter().enumerate() {
                validate::identifier(id, &index(&parents, i))?;
            }
        }
        Ok(())
    }
}

/// What a transport says happened to a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase", deny_unknown_fields)]
pub enum MessageDeliveryResult {
    /// Taken for delivery.
    Accepted {
        /// The envelope's id.
        #[serde(rename = "messageId")]
        message_id: String,
        /// When.
        timestamp: String,
        /// Free-form metadata: carried as given, never interpreted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// Delivered.
    Delivered {
        /// The envelope's id.
        #[serde(rename = "messageId")]
        message_id: String,
        /// When.
        timestamp: String,
        /// Free-form metadata: carried as given, never interpreted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// Refused (by the kernel or the transport, e.g. a dead route lease).
    Denied {
        /// The envelope's id.
        #[serde(rename = "messageId")]
        message_id: String,
        /// When.
        timestamp: String,
        /// Why.
        error: crate::tool::ProtocolError,
        /// Free-form metadata: carried as given, never interpreted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// Broke.
    Failed {
        /// The envelope's id.
        #[serde(rename = "messageId")]
        message_id: String,
        /// When.
        timestamp: String,
        /// Why.
        error: crate::tool::ProtocolError,
        /// Free-form metadata: carried as given, never interpreted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
}

impl MessageDeliveryResult {
    /// The message this receipt is about.
    #[must_use]
    pub fn message_id(&self) -> &str {
        match self {
            MessageDeliveryResult::Accepted { message_id, .. }
            | MessageDeliveryResult::Delivered { message_id, .. }
            | MessageDeliveryResult::Denied { message_id, .. }
            | MessageDeliveryResult::Failed { message_id, .. } => message_id,
        }
    }

    /// True for `accepted` and `delivered`.
    #[must_use]
    pub fn is_accepted(&self) -> bool {
        matches!(self, MessageDeliveryResult::Accepted { .. } | MessageDeliveryResult::Delivered { .. })
    }

    /// The refusal's error, if any.
    #[must_use]
    pub fn error(&self) -> Option<&crate::tool::ProtocolError> {
        match self {
            MessageDeliveryResult::Denied { error, .. } | MessageDeliveryResult::Failed { error, .. } => Some(error),
            _ => None,
        }
    }
}
