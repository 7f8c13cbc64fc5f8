//! What the envelope checks of the turn's context before anything runs,
//! the turn's limits, and the narrowed request a runtime is shown.

use crate::options::ExecutorOptions;
use sharedos_model::access::{AccessContext, Reach, RuntimeVisibleContext};
use sharedos_model::capability::Capability;
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::{ExecutionRequest, RuntimeLimits, RuntimeTurnRequest};
use sharedos_model::tool::ToolDefinition;
use std::sync::Arc;

/// E5, E6: actor, then receiver, then trace-or-purpose; first mismatch wins.
#[must_use]
pub fn context_mismatch(request: &ExecutionRequest) -> Option<ReasonCode> {
    if request.context.actor != request.agent {
        return Some(ReasonCode::ActorMismatch);
    }
    if request.message.receiver != request.agent {
        return Some(ReasonCode::ReceiverMismatch);
    }
    if request.message.trace_id != request.context.trace_id || request.message.purpose != request.context.purpose {
        return Some(ReasonCode::MessageContextMismatch);
    }
    None
}

/// Request options first, then executor defaults; the call budget falls
/// back to the resolved step budget.
#[must_use]
pub fn resolve_limits(request: &ExecutionRequest, options: &ExecutorOptions) -> RuntimeLimits {
    let asked = request.options.clone().unwrap_or_default();
    let max_steps = asked.max_steps.unwrap_or(options.default_max_steps);
    RuntimeLimits {
        max_steps,
        max_tool_calls: asked.max_tool_calls.or(options.default_max_tool_calls).unwrap_or(max_steps),
        timeout_ms: asked.timeout_ms.unwrap_or(options.default_timeout_ms),
    }
}

/// The request with the context narrowed and the tools replaced by the
/// effective catalogue's definitions.
pub(crate) fn runtime_request(
    request: &ExecutionRequest,
    context: &AccessContext,
    reach: Reach,
    tools: Vec<Arc<ToolDefinition>>,
) -> RuntimeTurnRequest {
    RuntimeTurnRequest {
        version: request.version.clone(),
        execution_id: request.execution_id.clone(),
        agent: request.agent.clone(),
        context: RuntimeVisibleContext {
            actor: context.actor.clone(),
            owner: context.owner.clone(),
            namespace_id: context.namespace_id.clone(),
            purpose: context.purpose.clone(),
            trace_id: context.trace_id.clone(),
            now: context.now.clone(),
            reach: narrow_reach(reach, &tools),
        },
        message: request.message.clone(),
        tools,
        state: request.state.clone(),
        options: request.options.clone(),
        metadata: request.metadata.clone(),
    }
}

/// Keeps only reach entries some effective tool operates on: same resource
/// namespace, and paths where one is a segment prefix of the other. An
/// unavailable reach passes through untouched.
#[must_use]
pub fn narrow_reach(reach: Reach, tools: &[Arc<ToolDefinition>]) -> Reach {
    match reach {
        Reach::Computed { reach } => {
            Reach::Computed { reach: reach.into_iter().filter(|entry| reachable(entry, tools)).collect() }
        }
        unavailable @ Reach::Unavailable { .. } => unavailable,
    }
}

fn reachable(entry: &Capability, tools: &[Arc<ToolDefinition>]) -> bool {
    let resource = &entry.resource;
    tools.iter().any(|tool| {
        let declared = &tool.required_capability.resource;
        declared.namespace == resource.namespace && prefix_related(&declared.path, &resource.path)
    })
}

fn prefix_related(a: &[String], b: &[String]) -> bool {
    a.iter().zip(b.iter()).all(|(x, y)| x == y)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(path: &[&str]) -> Arc<ToolDefinition> {
        Arc::new(
            serde_json::from_value(json!({
                "name": "files.read", "description": "Reads.", "namespace": "files", "source": "sharedos",
                "readWrite": "read", "inputSchema": {"type": "object"},
                "requiredCapability": {"action": "read", "resource": {"namespace": "files", "path": path}},
            }))
            .unwrap(),
        )
    }

    fn entry(namespace: &str, path: &[&str]) -> Capability {
        serde_json::from_value(json!({
            "actions": ["read"], "resource": {"namespace": namespace, "path": path}, "scope": "descendants"
        }))
        .unwrap()
    }

    #[test]
    fn reach_keeps_only_entries_on_a_path_prefix_of_an_effective_tools_resource() {
        let tools = [tool(&["workspace", "docs"])];
        let reach = vec![
            entry("files", &["workspace"]),
            entry("files", &["workspace", "docs", "a"]),
            entry("files", &["workspace", "secrets"]),
            entry("files", &["other"]),
            entry("mail", &["workspace"]),
        ];
        let Reach::Computed { reach } = narrow_reach(Reach::Computed { reach }, &tools) else {
            panic!("a computed reach stays computed");
        };
        let kept: Vec<Vec<String>> = reach.iter().map(|e| e.resource.path.clone()).collect();
        assert_eq!(kept, [vec!["workspace".to_string()], vec!["workspace".into(), "docs".into(), "a".into()]]);
    }
}
