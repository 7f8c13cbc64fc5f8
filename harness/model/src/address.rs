//! Principals (`Address`): who acts, whose authority, whose resources.

use serde::{Deserialize, Serialize};

/// A principal, tagged on `kind`; each variant is strict.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Address {
    /// A person, e.g. the owner of the conformance world.
    Human {
        /// The person's id.
        #[serde(rename = "userId")]
        user_id: String,
    },
    /// An agent (a runtime seated in the envelope, or an orchestrator).
    Agent {
        /// The agent's id.
        #[serde(rename = "agentId")]
        agent_id: String,
    },
    /// A group conversation.
    Group {
        /// The conversation's id.
        #[serde(rename = "conversationId")]
        conversation_id: String,
    },
    /// A service principal.
    Service {
        /// The service's id.
        #[serde(rename = "serviceId")]
        service_id: String,
    },
}

impl Address {
    /// A human address.
    #[must_use]
    pub fn human(id: &str) -> Address {
        Address::Human { user_id: id.to_string() }
    }

    /// An agent address.
    #[must_use]
    pub fn agent(id: &str) -> Address {
        Address::Agent { agent_id: id.to_string() }
    }

    /// The `kind` tag.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Address::Human { .. } => "human",
            Address::Agent { .. } => "agent",
            Address::Group { .. } => "group",
            Address::Service { .. } => "service",
        }
    }

    /// The id of whichever variant this is.
    #[must_use]
    pub fn id(&self) -> &str {
        match self {
            Address::Human { user_id } => user_id,
            Address::Agent { agent_id } => agent_id,
            Address::Group { conversation_id } => conversation_id,
            Address::Service { service_id } => service_id,
        }
    }

    /// The segment-safe resource path `[kind, id]` used by messaging and
    /// execution capabilities.
    #[must_use]
    pub fn path(&self) -> Vec<String> {
        vec![self.kind().to_string(), self.id().to_string()]
    }
}
