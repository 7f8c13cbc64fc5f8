//! The `messaging` world option: recipients and their grants, how the two
//! message ports answer (or whether they exist), and the host-driven
//! operations of `60-rule-families.md` (a host `sendMessage`, an inbound turn
//! built from a message).
//!
//! Like every world option it is strict: an unknown key or value is refused
//! at load, because a misspelt option would leave the world at baseline and
//! turn a fault row into a silent control.

use crate::loader::{LoadError, Site};
use crate::script::Role;
use serde::{Deserialize, Serialize};
use sharedos_model::address::Address;
use sharedos_model::tool::ToolStatus;
use sharedos_world::constants;
use sharedos_world::messaging::{MessagingArming, Recipient, SendGrant, CARRIER_UNAVAILABLE, RECIPIENT_UNREACHABLE};
use sharedos_world::transport::{ReplyShape, TransportMode};
use std::collections::BTreeMap;

/// Most recipients one world declares.
pub const MAX_RECIPIENTS: usize = 8;
/// Most host sends one world declares.
pub const MAX_HOST_SENDS: usize = 8;
/// Most keys a host send adds beyond the envelope's own.
pub const MAX_EXTRA_KEYS: usize = 4;
/// Largest count a lease or effect option may name.
const MAX_COUNT: u32 = 1000;
/// Longest purpose (the envelope's bound).
const MAX_PURPOSE: usize = 512;
/// Longest trace id or extra value.
const MAX_IDENTIFIER: usize = 256;
/// The keys a strict envelope defines; a host send sets them through its own
/// fields, never through `extra`.
pub const ENVELOPE_KEYS: &[&str] =
    &["version", "id", "sender", "receiver", "purpose", "payload", "traceId", "createdAt", "replyTo", "provenance"];

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

/// How the transport answers every dispatch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportOption {
    /// `accepted` receipts.
    #[default]
    Accepting,
    /// `delivered` receipts.
    Delivering,
    /// `denied` receipts with the host code `recipient_unreachable`.
    Rejecting,
    /// `failed` receipts with the host code `carrier_unavailable`.
    Failing,
    /// The transport throws.
    Throwing,
    /// No transport is given to the kernel.
    Absent,
}

/// How the reply router answers a request the transport accepted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouterOption {
    /// A reply that answers the request.
    #[default]
    WellFormed,
    /// `replyTo` names another message.
    WrongReplyTo,
    /// Sender and receiver are not the request's reversed.
    PartiesNotReversed,
    /// The purpose differs from the request's.
    ChangedPurpose,
    /// The trace differs from the request's.
    ChangedTrace,
    /// The reply carries `intent`, a key no envelope has.
    UnknownKey,
    /// The reply is not an envelope at all.
    NotAnEnvelope,
    /// The router throws.
    Throws,
    /// No router is given to the kernel.
    Absent,
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
    pub transport: Option<TransportOption>,
    /// The route lease closes after this many accepted dispatches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_closes_after: Option<u32>,
    /// How the reply router answers (default: well formed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router: Option<RouterOption>,
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
    /// The kernel world's arming for these options.
    #[must_use]
    pub fn arming(&self) -> MessagingArming {
        let recipients = self
            .recipients
            .iter()
            .map(|r| Recipient {
                address: r.address.clone(),
                send: match r.send {
                    SendOption::None => SendGrant::Withheld,
                    SendOption::Granted => SendGrant::Unbounded,
                    SendOption::Bounded => SendGrant::SingleUse,
                    SendOption::Revoked => SendGrant::Revoked,
                },
                execution: r.execution,
                reads: r.reads,
            })
            .collect();
        MessagingArming {
            recipients,
            owner_send_withheld: self.owner_send_withheld,
            transport: transport_mode(self.transport.unwrap_or_default()),
            lease_closes_after: self.lease_closes_after.map(u64::from),
            router: reply_shape(self.router.unwrap_or_default()),
        }
    }

    /// The recipient with this address, when listed.
    #[must_use]
    pub fn recipient(&self, address: &Address) -> Option<&RecipientOption> {
        self.recipients.iter().find(|r| &r.address == address)
    }

    /// Checks every bound the serde shape cannot express.
    pub(crate) fn check(&self, site: &Site<'_>) -> Result<(), LoadError> {
        let recipients = site.child("recipients");
        recipients.length(self.recipients.len(), 0, MAX_RECIPIENTS, "recipients")?;
        for (i, recipient) in self.recipients.iter().enumerate() {
            let at = recipients.index(i);
            check_recipient(recipient, &at)?;
            if self.recipients[..i].iter().any(|r| r.address.id() == recipient.address.id()) {
                return Err(at.child("address").duplicate_entry(format!(
                    "a recipient id not listed before (`{}` repeats)",
                    recipient.address.id()
                )));
            }
        }
        if let Some(n) = self.lease_closes_after {
            if n > MAX_COUNT {
                return Err(site.child("leaseClosesAfter").out_of_bounds(format!("an integer from 0 to {MAX_COUNT}")));
            }
        }
        if let Some(inbound) = &self.inbound {
            self.check_inbound(inbound, &site.child("inbound"))?;
        }
        let host = site.child("host");
        host.length(self.host.len(), 0, MAX_HOST_SENDS, "host sends")?;
        for (i, send) in self.host.iter().enumerate() {
            let at = host.index(i);
            check_send(send, &at)?;
            if self.host[..i].iter().any(|s| s.id == send.id) {
                return Err(at
                    .child("id")
                    .duplicate_entry(format!("a host send id not used before (`{}` repeats)", send.id)));
            }
        }
        let requests = site.child("hostRequests");
        requests.length(self.host_requests.len(), 0, MAX_HOST_SENDS, "host requests")?;
        for (i, request) in self.host_requests.iter().enumerate() {
            let at = requests.index(i);
            check_request(request, &at)?;
            if self.host_requests[..i].iter().any(|r| r.id == request.id)
                || self.host.iter().any(|s| s.id == request.id)
            {
                return Err(at
                    .child("id")
                    .duplicate_entry(format!("a host operation id not used before (`{}` repeats)", request.id)));
            }
        }
        if let Some(n) = self.expect_effects.as_ref().and_then(|e| e.dispatches) {
            if n > MAX_COUNT {
                return Err(site
                    .child("expectEffects")
                    .child("dispatches")
                    .out_of_bounds(format!("an integer from 0 to {MAX_COUNT}")));
            }
        }
        Ok(())
    }

    fn check_inbound(&self, inbound: &InboundTurn, site: &Site<'_>) -> Result<(), LoadError> {
        let listed = self.recipient(&inbound.recipient).is_some();
        if !listed || inbound.recipient.kind() != "agent" {
            return Err(site.child("recipient").out_of_bounds("an agent listed under `recipients`"));
        }
        if let Some(receiver) = &inbound.receiver {
            check_address(receiver, &site.child("receiver"))?;
        }
        if let Some(purpose) = &inbound.purpose {
            site.child("purpose").text(purpose, MAX_PURPOSE)?;
        }
        if let Some(trace) = &inbound.trace_id {
            site.child("traceId").text(trace, MAX_IDENTIFIER)?;
        }
        Ok(())
    }
}

fn check_address(address: &Address, site: &Site<'_>) -> Result<(), LoadError> {
    let at = match address {
        Address::Human { .. } => site.child("userId"),
        Address::Agent { .. } => site.child("agentId"),
        Address::Group { .. } => site.child("conversationId"),
        Address::Service { .. } => site.child("serviceId"),
    };
    at.id(address.id())
}

fn check_recipient(recipient: &RecipientOption, site: &Site<'_>) -> Result<(), LoadError> {
    let address = &recipient.address;
    check_address(address, &site.child("address"))?;
    let taken = [constants::owner(), constants::agent(), constants::orchestrator()];
    if taken.iter().any(|a| a.id() == address.id()) {
        return Err(site.child("address").out_of_bounds(format!(
            "a principal other than the owner, the acting agent and the orchestrator (`{}` is one of them)",
            address.id()
        )));
    }
    let agent_only = [("execution", recipient.execution), ("reads", recipient.reads)];
    for (key, set) in agent_only {
        if set && address.kind() != "agent" {
            return Err(site.child(key).out_of_bounds("an agent recipient (only agents run turns)"));
        }
    }
    Ok(())
}

fn check_send(send: &HostSend, site: &Site<'_>) -> Result<(), LoadError> {
    site.child("id").id(&send.id)?;
    if let Some(sender) = &send.sender {
        check_address(sender, &site.child("sender"))?;
    }
    check_address(&send.receiver, &site.child("receiver"))?;
    if let Some(purpose) = &send.purpose {
        site.child("purpose").text(purpose, MAX_PURPOSE)?;
    }
    if let Some(trace) = &send.trace_id {
        site.child("traceId").text(trace, MAX_IDENTIFIER)?;
    }
    let extra = site.child("extra");
    extra.length(send.extra.len(), 0, MAX_EXTRA_KEYS, "extra keys")?;
    for (key, value) in &send.extra {
        let at = extra.child(key);
        if ENVELOPE_KEYS.contains(&key.as_str()) {
            return Err(at.out_of_bounds("a key the envelope does not define (set envelope fields directly)"));
        }
        at.text(key, 64)?;
        at.text(value, MAX_IDENTIFIER)?;
    }
    check_expectation(&send.expect, &site.child("expect"))
}

fn check_request(request: &HostRequest, site: &Site<'_>) -> Result<(), LoadError> {
    site.child("id").id(&request.id)?;
    check_address(&request.recipient, &site.child("recipient"))?;
    let expect = site.child("expect");
    let statuses = expect.child("statuses");
    statuses.length(request.expect.statuses.len(), 1, 3, "statuses")?;
    for (i, status) in request.expect.statuses.iter().enumerate() {
        if request.expect.statuses[..i].contains(status) {
            return Err(statuses
                .index(i)
                .duplicate_entry(format!("a status not listed before (`{}` repeats)", status.as_str())));
        }
    }
    check_codes(request.expect.reason_codes.as_deref(), &expect.child("reasonCodes"))
}

fn check_codes(codes: Option<&[String]>, at: &Site<'_>) -> Result<(), LoadError> {
    let Some(codes) = codes else { return Ok(()) };
    at.length(codes.len(), 1, 8, "reason codes")?;
    for (i, code) in codes.iter().enumerate() {
        at.index(i).reason_code(code)?;
        if codes[..i].contains(code) {
            return Err(at.index(i).duplicate_entry(format!("a reason code not listed before (`{code}` repeats)")));
        }
    }
    Ok(())
}

fn check_expectation(expect: &HostExpectation, site: &Site<'_>) -> Result<(), LoadError> {
    let outcomes = site.child("outcomes");
    outcomes.length(expect.outcomes.len(), 1, 3, "outcomes")?;
    for (i, outcome) in expect.outcomes.iter().enumerate() {
        if expect.outcomes[..i].contains(outcome) {
            return Err(outcomes
                .index(i)
                .duplicate_entry(format!("an outcome not listed before (`{}` repeats)", outcome.as_str())));
        }
    }
    check_codes(expect.reason_codes.as_deref(), &site.child("reasonCodes"))?;
    for (key, value) in [("dispatches", expect.dispatches), ("auditEvents", expect.audit_events)] {
        if value.is_some_and(|n| n > MAX_COUNT) {
            return Err(site.child(key).out_of_bounds(format!("an integer from 0 to {MAX_COUNT}")));
        }
    }
    Ok(())
}

fn transport_mode(option: TransportOption) -> Option<TransportMode> {
    match option {
        TransportOption::Accepting => Some(TransportMode::Accepting),
        TransportOption::Delivering => Some(TransportMode::Delivering),
        TransportOption::Rejecting => Some(TransportMode::Rejecting(RECIPIENT_UNREACHABLE.to_string())),
        TransportOption::Failing => Some(TransportMode::Failing(CARRIER_UNAVAILABLE.to_string())),
        TransportOption::Throwing => Some(TransportMode::Throwing),
        TransportOption::Absent => None,
    }
}

fn reply_shape(option: RouterOption) -> Option<ReplyShape> {
    match option {
        RouterOption::WellFormed => Some(ReplyShape::WellFormed),
        RouterOption::WrongReplyTo => Some(ReplyShape::WrongReplyTo),
        RouterOption::PartiesNotReversed => Some(ReplyShape::PartiesNotReversed),
        RouterOption::ChangedPurpose => Some(ReplyShape::ChangedPurpose),
        RouterOption::ChangedTrace => Some(ReplyShape::ChangedTrace),
        RouterOption::UnknownKey => Some(ReplyShape::UnknownKey),
        RouterOption::NotAnEnvelope => Some(ReplyShape::NotAnEnvelope),
        RouterOption::Throws => Some(ReplyShape::Throws),
        RouterOption::Absent => None,
    }
}
