//! Inbound turns (M13, M14): the host runs a recipient's turn on a
//! message the acting agent sent it. Built right, the turn's agent and actor
//! are the recipient and the message's receiver, purpose and trace match the
//! context; a condition can build it wrongly on purpose, one field at a
//! time, to see the envelope refuse it with the code of the first check that
//! fails (M13), or leave the recipient without an execution grant (M14).

use serde_json::json;
use sharedos_model::access::AccessContext;
use sharedos_model::execution::ExecutionRequest;
use sharedos_world::constants::{agent, PURPOSE};
use sharedos_world::options::messaging::{InboundActor, InboundTurn, MessagingOptions};

/// `request` rebuilt as the inbound turn `options` asks for, or unchanged
/// when the world runs the acting agent's own turn.
#[must_use]
pub fn built_for(mut request: ExecutionRequest, options: Option<&MessagingOptions>) -> ExecutionRequest {
    let Some(inbound) = options.and_then(|m| m.inbound.as_ref()) else { return request };
    let sender = agent();
    let actor = match inbound.actor {
        InboundActor::Recipient => inbound.recipient.clone(),
        InboundActor::Sender => sender.clone(),
    };
    // Only the actor changes: the rest of the context is the host's as built.
    let context = AccessContext { actor, ..request.context.clone() };
    let message = &mut request.message;
    message.sender = sender;
    message.receiver = inbound.receiver.clone().unwrap_or_else(|| inbound.recipient.clone());
    message.purpose = inbound.purpose.clone().unwrap_or_else(|| context.purpose.clone());
    message.trace_id = inbound.trace_id.clone().unwrap_or_else(|| context.trace_id.clone());
    message.payload = json!({ "question": "status" });
    request.agent = inbound.recipient.clone();
    request.context = context;
    request
}

/// Which of the three inbound checks a built turn breaks first, in the
/// envelope's order, as the code it must be refused with; `None` for a turn
/// built right.
#[must_use]
pub fn first_mismatch(inbound: &InboundTurn) -> Option<&'static str> {
    if inbound.actor == InboundActor::Sender {
        return Some("actor_mismatch");
    }
    if inbound.receiver.as_ref().is_some_and(|r| r != &inbound.recipient) {
        return Some("receiver_mismatch");
    }
    if inbound.purpose.as_deref().is_some_and(|p| p != PURPOSE) || inbound.trace_id.is_some() {
        return Some("message_context_mismatch");
    }
    None
}
