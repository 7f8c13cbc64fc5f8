//! The turn request a cell hands the envelope.

use serde_json::Map;
use sharedos_grading::input::world::World;
use sharedos_model::access::AccessContext;
use sharedos_model::execution::{ExecutionOptions, ExecutionRequest};
use sharedos_model::message::{MessageEnvelope, PROTOCOL_VERSION};
use sharedos_world::constants::{agent, context, turn_trace_id, NOW, PURPOSE};
use sharedos_world::options::WorldOptions;

/// The execution id of `turn` of a cell: turn 1 is `<case>.<condition>.<column>`;
/// later turns of a multi-turn script add `.turn-<n>`.
#[must_use]
pub fn execution_id(case: &str, condition: &str, column: &str, turn: u32) -> String {
    if turn <= 1 {
        format!("{case}.{condition}.{column}")
    } else {
        format!("{case}.{condition}.{column}.turn-{turn}")
    }
}

/// Builds the request for one turn against `world`.
#[must_use]
pub fn turn_request(world: &World, options: &WorldOptions, execution_id: &str, turn: u32) -> ExecutionRequest {
    let trace_id = turn_trace_id(turn);
    let agent = agent();
    let limits = ExecutionOptions {
        max_steps: options.max_steps,
        max_tool_calls: options.max_tool_calls,
        timeout_ms: options.timeout_ms,
    };
    let has_limits = limits != ExecutionOptions::default();
    let request = ExecutionRequest {
        version: PROTOCOL_VERSION.to_string(),
        execution_id: execution_id.to_string(),
        agent: agent.clone(),
        context: AccessContext {
            enabled_tool_namespaces: world.enabled_tool_namespaces(),
            ..context(&world.fixtures.clock.now(), &trace_id)
        },
        message: MessageEnvelope {
            version: PROTOCOL_VERSION.to_string(),
            id: format!("{execution_id}-message"),
            sender: agent.clone(),
            receiver: agent,
            purpose: PURPOSE.to_string(),
            payload: serde_json::Value::Object(Map::new()),
            trace_id,
            created_at: NOW.to_string(),
            reply_to: None,
            provenance: None,
        },
        tools: world.requested_tools.clone(),
        state: None,
        options: has_limits.then_some(limits),
        metadata: None,
    };
    sharedos_grading::messaging::inbound::built_for(request, options.messaging.as_ref())
}
