//! What the message ports show after a cell ran: every envelope handed to
//! the transport with the receipt it got, how many the transport took, which
//! requests the router was asked about and what it handed back, and, to
//! judge whether a turn's envelope carries that turn's trusted fields
//! (M18), each turn's context and every call id the turns issued.

use crate::input::world::World;
use crate::record::turn::ExecutedTurn;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sharedos_envelope::events::EventKind;
use sharedos_model::address::Address;
use sharedos_model::message::MessageEnvelope;
use std::collections::BTreeSet;

/// The message ports after the last turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PortObservation {
    /// Every envelope handed to the transport, in order.
    pub dispatches: Vec<DispatchObservation>,
    /// How many of them the transport took (accepted or delivered).
    pub accepted: u32,
    /// The requests the router was asked for a reply to, in order.
    pub replies_asked_for: Vec<String>,
    /// Every reply the router handed back, as handed, in order.
    pub replies: Vec<Value>,
    /// Each turn's context, in turn order.
    pub turns: Vec<TurnContextObservation>,
    /// Every call id any turn issued, sorted.
    pub call_ids: BTreeSet<String>,
}

/// One envelope handed to the transport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DispatchObservation {
    /// The envelope as handed over.
    pub envelope: MessageEnvelope,
    /// The receipt returned (absent when the transport threw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Value>,
}

/// The context one turn ran under, and when it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnContextObservation {
    /// The turn's trace.
    pub trace_id: String,
    /// Who acted.
    pub actor: Address,
    /// The turn's purpose.
    pub purpose: String,
    /// The turn's `now`.
    pub started_at: String,
    /// When its result was completed.
    pub completed_at: String,
}

impl PortObservation {
    /// Reads the world's ports after `turns` ran.
    #[must_use]
    pub fn read(world: &World, turns: &[ExecutedTurn]) -> PortObservation {
        let transport = &world.fixtures.transport;
        PortObservation {
            dispatches: transport
                .dispatches()
                .into_iter()
                .map(|d| DispatchObservation { envelope: d.envelope, receipt: d.receipt })
                .collect(),
            accepted: u32::try_from(transport.accepted_count()).unwrap_or(u32::MAX),
            replies_asked_for: world.fixtures.router.asked(),
            replies: world.fixtures.router.answered(),
            turns: turns.iter().map(TurnContextObservation::of).collect(),
            call_ids: call_ids(turns),
        }
    }
}

impl TurnContextObservation {
    fn of(turn: &ExecutedTurn) -> TurnContextObservation {
        let context = &turn.request.context;
        TurnContextObservation {
            trace_id: context.trace_id.clone(),
            actor: context.actor.clone(),
            purpose: context.purpose.clone(),
            started_at: context.now.clone(),
            completed_at: turn.result.completed_at.clone(),
        }
    }
}

/// Every call id any turn of the cell issued.
fn call_ids(turns: &[ExecutedTurn]) -> BTreeSet<String> {
    turns
        .iter()
        .flat_map(|t| t.result.events.iter())
        .filter(|e| e.kind == EventKind::ToolRequested.as_str())
        .filter_map(|e| e.data.get("callId").and_then(Value::as_str).map(str::to_string))
        .collect()
}
