//! The `messaging` world option: recipients and their grants, how the two
//! message ports answer (or whether they exist), and the host-driven
//! operations the messaging rows use (a host `sendMessage`, an inbound turn
//! built from a message; `docs/rules/messaging.md`).
//!
//! Like every world option it is strict: an unknown key or value is refused
//! at load, because a misspelt option would leave the world at baseline and
//! turn a fault row into a silent control.

use crate::transport::{ReplyShape, TransportMode};
use serde::{Deserialize, Serialize};
use sharedos_model::address::Address;
use sharedos_model::role::Role;
use sharedos_model::tool::ToolStatus;
use std::collections::BTreeMap;

/// How the acting agent's send grant to a recipient is issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendOption {
    /// No send grant names the recipient.
    #[default]
    None,
    /// An unbounded send grant.
    Granted,
    /// A send grant spent after one use (`maxUses: 1`).
    Bounded,
    /// A send grant revoked at the world's start instant.
    Revoked,
}

/// One recipient besides the owner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecipientOption {
    /// Its address; the id becomes part of grant ids.
    pub address: Address,
    /// The acting agent's send grant to it.
    #[serde(default, skip_serializing_if = "is_none_send")]
    pub send: SendOption,
    /// An agent recipient's own `sharedos.execution` invoke grant.
    #[serde(default, skip_serializing_if = "is_false")]
    pub execution: bool,
    /// An agent recipient's own workspace read grant.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reads: bool,
}

/// Who the inbound turn's context names as actor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InboundActor {
    /// The recipient, as the host should build it.
    #[default]
    Recipient,
    /// The message's sender (the acting agent): a wrongly built turn.
    Sender,
}

/// The turn is the recipient's, built from a message the acting agent sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InboundTurn {
    /// The executing agent: a listed agent recipient.
    pub recipient: Address,
    /// Who the context names as actor.
    #[serde(default, skip_serializing_if = "is_recipient_actor")]
    pub actor: InboundActor,
    /// The message's receiver when it is not the recipient.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<Address>,
    /// The message's purpose when it is not the context's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// The message's trace when it is not the context's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

/// What a host send ended as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostOutcome {
    /// An `accepted` delivery result.
    Accepted,
    /// A `delivered` delivery result.
    Delivered,
    /// A `denied` delivery result.
    Denied,
    /// A `failed` delivery result.
    Failed,
    /// No result: the kernel threw (an envelope off the strict schema).
    Thrown,
}

impl HostOutcome {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            HostOutcome::Accepted => "accepted",
            HostOutcome::Delivered => "delivered",
            HostOutcome::Denied => "denied",
            HostOutcome::Failed => "failed",
            HostOutcome::Thrown => "thrown",
        }
    }

    /// True for the two outcomes that carry no refusal code.
    #[must_use]
    pub fn is_accepted(self) -> bool {
        matches!(self, HostOutcome::Accepted | HostOutcome::Delivered)
    }
}

/// What SharedOS must answer to a host send, and what it may leave behind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostExpectation {
    /// Acceptable outcomes (1..=3, distinct).
    pub outcomes: Vec<HostOutcome>,
    /// Acceptable codes of a refusal (1..=8); absent accepts any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_codes: Option<Vec<String>>,
    /// Exactly this many transport calls made by the send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatches: Option<u32>,
    /// Exactly this many audit records written by the send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_events: Option<u32>,
}

/// A `sendMessage` the host makes before the first turn, under the world's
/// context (the acting agent, the first turn's trace). Unset fields take the
/// context's values, so a well-built send names only its receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostSend {
    /// Unique within the world; part of the envelope id.
    pub id: String,
    /// Attack, probe or control.
    pub role: Role,
    /// The envelope's sender when it is not the context's actor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<Address>,
    /// The envelope's receiver.
    pub receiver: Address,
    /// The envelope's purpose when it is not the context's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// The envelope's trace when it is not the context's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// Keys the strict envelope does not define, with string values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, String>,
    /// What SharedOS must answer.
    pub expect: HostExpectation,
}

/// What SharedOS must answer to a host request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostRequestExpectation {
    /// Acceptable statuses (1..=3, distinct).
    pub statuses: Vec<ToolStatus>,
    /// Acceptable codes of a refusal (1..=8); absent accepts any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_codes: Option<Vec<String>>,
    /// The output must be exactly the payload of the reply the router gave
    /// (M27), nothing of the reply envelope around it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub output_is_reply_payload: bool,
}

/// A `messages.request` call the host hands the kernel directly, outside
/// any turn, under the world's context, so the tool's own answer (its
/// output included) can be read; made after the host sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostRequest {
    /// Unique within the world; part of the call id.
    pub id: String,
    /// Attack, probe or control.
    pub role: Role,
    /// The request's recipient.
    pub recipient: Address,
    /// What SharedOS must answer.
    pub expect: HostRequestExpectation,
}

/// What the row requires of the message ports over the whole cell, graded
/// as one probe of the row (`world.messaging`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EffectsExpectation {
    /// Exactly this many transport calls, host sends included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatches: Option<u32>,
    /// Every envelope a turn's request handed the transport carries that
    /// turn's sender, purpose, trace and instant, under an id that is no
    /// call's id (M18).
    #[serde(default, skip_serializing_if = "is_false")]
    pub trusted_fields: bool,
}

/// The messaging arming of one condition's world.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessagingOptions {
    /// Recipients besides the owner (0..=8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recipients: Vec<RecipientOption>,
    /// Drop the acting agent's send grant to the owner.
    #[serde(default, skip_serializing_if = "is_false")]
    pub owner_send_withheld: bool,
    /// How the transport answers (default: accepting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportMode>,
    /// The route lease closes after this many accepted dispatches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_closes_after: Option<u32>,
    /// How the reply router answers (default: well formed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router: Option<ReplyShape>,
    /// Give the kernel a message capability resolver that throws (M6).
    #[serde(default, skip_serializing_if = "is_false")]
    pub resolver_throws: bool,
    /// Build the turn as a recipient's inbound turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inbound: Option<InboundTurn>,
    /// Host sends made before the first turn (0..=8), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host: Vec<HostSend>,
    /// Host requests made before the first turn (0..=8), after the host sends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_requests: Vec<HostRequest>,
    /// What the message ports must show after the cell ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_effects: Option<EffectsExpectation>,
}

// serde's `skip_serializing_if` hands the field by reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(flag: &bool) -> bool {
    !*flag
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_none_send(send: &SendOption) -> bool {
    *send == SendOption::None
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_recipient_actor(actor: &InboundActor) -> bool {
    *actor == InboundActor::Recipient
}

impl MessagingOptions {
    /// The recipient with this address, when listed.
    #[must_use]
    pub fn recipient(&self, address: &Address) -> Option<&RecipientOption> {
        self.recipients.iter().find(|r| &r.address == address)
    }
}
