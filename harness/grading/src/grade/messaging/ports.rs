//! The message ports graded (M18 and the effects a row expects): whether an
//! envelope a turn's request handed over carries that turn's trusted fields
//! under a minted id, and every way the ports fall short of the row's
//! effects expectation.

use crate::messaging::host_send::HOST_MESSAGE_PREFIX;
use crate::messaging::ports::{DispatchObservation, PortObservation, TurnContextObservation};
use sharedos_model::instant::Instant;
use sharedos_model::message::MessageEnvelope;
use sharedos_world::options::messaging::EffectsExpectation;

/// Whether the envelope of `dispatch` carries its turn's trusted fields
/// (M18); `None` for a host send's envelope, which no turn made.
#[must_use]
pub fn trusted_fields(dispatch: &DispatchObservation, ports: &PortObservation) -> Option<Result<(), String>> {
    let envelope = &dispatch.envelope;
    if envelope.id.starts_with(HOST_MESSAGE_PREFIX) {
        return None;
    }
    let Some(turn) = ports.turns.iter().find(|t| t.trace_id == envelope.trace_id) else {
        return Some(Err(format!("envelope `{}` names a trace no turn ran", envelope.id)));
    };
    Some(check_against(envelope, turn, ports))
}

/// Whether `at` lies within the turn: from its `now` to its end. On
/// virtual time nothing passes before a call, so that is exactly the
/// turn's `now`; a real clock moves between the turn's start and the call.
fn within_the_turn(at: &str, turn: &TurnContextObservation) -> bool {
    match (Instant::parse(at), Instant::parse(&turn.started_at), Instant::parse(&turn.completed_at)) {
        (Some(at), Some(start), Some(end)) => start <= at && at <= end,
        _ => false,
    }
}

fn check_against(
    envelope: &MessageEnvelope,
    turn: &TurnContextObservation,
    ports: &PortObservation,
) -> Result<(), String> {
    let mut wrong = Vec::new();
    if envelope.sender != turn.actor {
        wrong.push("sender");
    }
    if envelope.purpose != turn.purpose {
        wrong.push("purpose");
    }
    if !within_the_turn(&envelope.created_at, turn) {
        wrong.push("createdAt");
    }
    if ports.call_ids.contains(&envelope.id) {
        wrong.push("id (a call id)");
    }
    if envelope.reply_to.is_some() || envelope.provenance.is_some() {
        wrong.push("replyTo or provenance (set by no one)");
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("envelope `{}` does not carry the turn's {}", envelope.id, wrong.join(", ")))
    }
}

/// Every way the ports fall short of `expect`, in words.
#[must_use]
pub fn effect_misses(expect: &EffectsExpectation, ports: &PortObservation) -> Vec<String> {
    let dispatches = ports.dispatches.len();
    let mut misses = Vec::new();
    if let Some(n) = expect.dispatches {
        if usize::try_from(n).ok() != Some(dispatches) {
            misses.push(format!("the transport was called {dispatches} time(s), not {n}"));
        }
    }
    if expect.trusted_fields {
        let from_turns: Vec<Result<(), String>> =
            ports.dispatches.iter().filter_map(|d| trusted_fields(d, ports)).collect();
        if from_turns.is_empty() {
            misses.push("no turn's request reached the transport".to_string());
        }
        misses.extend(from_turns.into_iter().filter_map(Result::err));
    }
    misses
}
