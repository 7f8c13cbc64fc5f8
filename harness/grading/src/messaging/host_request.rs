//! Host requests: a `messages.request` call handed to the kernel directly,
//! outside any turn, so the tool's own answer can be read whole. A turn's
//! runtime sees the same answer (the envelope passes a tool result through),
//! but no runtime receipt carries an output; this is where what M27 grades
//! ("the output is the reply's payload and nothing else") is observed.

use crate::input::world::World;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sharedos_kernel::message_tool::MESSAGES_REQUEST;
use sharedos_model::tool::{ToolCall, ToolOutcome, ToolStatus};
use sharedos_port::signal::AbortSignal;
use sharedos_world::constants::{agent, turn_trace_id};
use sharedos_world::messaging::acting_context;
use sharedos_world::options::messaging::{HostRequest, MessagingOptions};

/// The call-id prefix of a host request.
pub const HOST_REQUEST_PREFIX: &str = "host-request-";

/// What one host request got back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostRequestObservation {
    /// The request's id.
    pub id: String,
    /// The call id it was made under.
    pub call_id: String,
    /// The tool result's status (absent when the kernel threw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ToolStatus>,
    /// The refusal code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// The output of a success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// The payload of the reply the router handed back for this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_payload: Option<Value>,
    /// What the kernel threw, when it threw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threw: Option<String>,
}

/// Makes every host request of `options`, in order.
pub async fn run_host_requests(world: &World, options: &MessagingOptions) -> Vec<HostRequestObservation> {
    let mut observed = Vec::with_capacity(options.host_requests.len());
    for request in &options.host_requests {
        observed.push(run_host_request(world, request).await);
    }
    observed
}

async fn run_host_request(world: &World, request: &HostRequest) -> HostRequestObservation {
    let now = world.fixtures.clock.now();
    let trace_id = turn_trace_id(1);
    let context = acting_context(&now, &trace_id, &agent());
    let mut arguments = Map::new();
    arguments.insert("recipient".into(), json!(request.recipient));
    arguments.insert("payload".into(), json!({ "question": "status" }));
    let call_id = format!("{HOST_REQUEST_PREFIX}{}", request.id);
    let call =
        ToolCall { id: call_id.clone(), tool: MESSAGES_REQUEST.to_string(), arguments, trace_id, requested_at: now };
    let replies_before = world.fixtures.router.answered().len();
    let answer = world.kernel.invoke_tool(&context, &call, &AbortSignal::new()).await;
    let reply_payload =
        world.fixtures.router.answered().get(replies_before).and_then(|reply| reply.get("payload")).cloned();
    let mut observed = HostRequestObservation {
        id: request.id.clone(),
        call_id,
        status: None,
        reason_code: None,
        output: None,
        reply_payload,
        threw: None,
    };
    match answer {
        Ok(result) => {
            observed.status = Some(result.status());
            observed.reason_code = result.error().map(|e| e.code.clone());
            if let ToolOutcome::Succeeded { output } = result.outcome {
                observed.output = Some(output);
            }
        }
        Err(error) => observed.threw = Some(error.to_string()),
    }
    observed
}
