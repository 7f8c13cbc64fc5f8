//! Bounds of the `messaging` world option that serde's shape cannot state:
//! list lengths, unique ids, recipients that are not the world's own
//! principals, texts within the envelope's bounds.

use crate::input::error::{LoadError, Site};
use sharedos_model::address::Address;
use sharedos_world::constants;
use sharedos_world::options::messaging::{
    HostExpectation, HostRequest, HostSend, InboundTurn, MessagingOptions, RecipientOption,
};

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

/// Checks every bound the serde shape cannot express.
pub(crate) fn check(options: &MessagingOptions, site: &Site<'_>) -> Result<(), LoadError> {
    let recipients = site.child("recipients");
    recipients.length(options.recipients.len(), 0, MAX_RECIPIENTS, "recipients")?;
    for (i, recipient) in options.recipients.iter().enumerate() {
        let at = recipients.index(i);
        check_recipient(recipient, &at)?;
        if options.recipients[..i].iter().any(|r| r.address.id() == recipient.address.id()) {
            return Err(at
                .child("address")
                .duplicate_entry(format!("a recipient id not listed before (`{}` repeats)", recipient.address.id())));
        }
    }
    if let Some(n) = options.lease_closes_after {
        if n > MAX_COUNT {
            return Err(site.child("leaseClosesAfter").out_of_bounds(format!("an integer from 0 to {MAX_COUNT}")));
        }
    }
    if let Some(inbound) = &options.inbound {
        check_inbound(options, inbound, &site.child("inbound"))?;
    }
    let host = site.child("host");
    host.length(options.host.len(), 0, MAX_HOST_SENDS, "host sends")?;
    for (i, send) in options.host.iter().enumerate() {
        let at = host.index(i);
        check_send(send, &at)?;
        if options.host[..i].iter().any(|s| s.id == send.id) {
            return Err(at
                .child("id")
                .duplicate_entry(format!("a host send id not used before (`{}` repeats)", send.id)));
        }
    }
    let requests = site.child("hostRequests");
    requests.length(options.host_requests.len(), 0, MAX_HOST_SENDS, "host requests")?;
    for (i, request) in options.host_requests.iter().enumerate() {
        let at = requests.index(i);
        check_request(request, &at)?;
        if options.host_requests[..i].iter().any(|r| r.id == request.id)
            || options.host.iter().any(|s| s.id == request.id)
        {
            return Err(at
                .child("id")
                .duplicate_entry(format!("a host operation id not used before (`{}` repeats)", request.id)));
        }
    }
    if let Some(n) = options.expect_effects.as_ref().and_then(|e| e.dispatches) {
        if n > MAX_COUNT {
            return Err(site
                .child("expectEffects")
                .child("dispatches")
                .out_of_bounds(format!("an integer from 0 to {MAX_COUNT}")));
        }
    }
    Ok(())
}

fn check_inbound(options: &MessagingOptions, inbound: &InboundTurn, site: &Site<'_>) -> Result<(), LoadError> {
    let listed = options.recipient(&inbound.recipient).is_some();
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
