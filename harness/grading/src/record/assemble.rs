//! Building an [`ExecutionRecord`] from a turn's request, its result and the
//! kernel's audit trail.
//!
//! The assembler only copies and counts: every outcome it records was decided
//! by the kernel or the envelope. Instants come from the result and the audit
//! events (virtual clocks), so assembling the same turn twice gives the same
//! record.

use super::events::{self, PROMPT_HANDED};
use serde::Deserialize;
use serde_json::{Map, Value};
use sharedos_envelope::events::EventKind;
use sharedos_model::audit::{AuditEvent, AuditOutcome, AuditType, Source};
use sharedos_model::canonical::is_content_hash;
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::{ExecutionRequest, ExecutionResult, ExecutionStatus, RuntimeManifest};
use sharedos_model::instant::Instant;
use sharedos_model::record::{
    AuditRef, AuthorityRecord, AuthoritySnapshot, CostRecord, Decision, DecisionOutcome, EndedBy, EscalationAsked,
    ExecutionRecord, ExecutionSection, ExperimentIdentity, Operation, OperationKind, OperationOutcome, StateRecord,
    SystemIdentity, RECORD_VERSION,
};
use sharedos_model::validate::ValidationError;
use std::sync::Arc;

/// What the caller states about the system; the runtime comes separately.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SystemInput {
    /// Protocol epoch (`"1"`).
    pub protocol_version: String,
    /// Version of the kernel and envelope under test.
    pub shared_os_version: String,
    /// The adapter (the column id).
    pub adapter_id: String,
    /// The adapter's version.
    pub adapter_version: Option<String>,
    /// Overrides the model the result metadata names.
    pub model: Option<String>,
    /// Overrides the provider the result metadata names.
    pub model_provider: Option<String>,
    /// Hash of the tool policy.
    pub policy_hash: String,
    /// The declared tool surface.
    pub tool_policy: Option<Map<String, Value>>,
    /// Free-form metadata: carried as given, never interpreted.
    pub metadata: Option<Map<String, Value>>,
}

/// Costs the caller measured itself; each falls back to the result metadata.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CostInput {
    /// Time spent in infrastructure.
    pub infrastructure_ms: Option<u64>,
    /// Model input tokens.
    pub input_tokens: Option<u64>,
    /// Model output tokens.
    pub output_tokens: Option<u64>,
    /// Free-form metadata: carried as given, never interpreted.
    pub metadata: Option<Map<String, Value>>,
}

/// Everything one record is assembled from.
#[derive(Debug, Clone)]
pub struct AssemblyInput<'a> {
    /// The request the host passed to the envelope.
    pub request: &'a ExecutionRequest,
    /// What the envelope returned.
    pub result: &'a ExecutionResult,
    /// The world's audit trail; only events under the request's trace are read.
    pub audit: &'a [AuditEvent],
    /// The experiment identity.
    pub experiment: ExperimentIdentity,
    /// The system identity.
    pub system: SystemInput,
    /// Overrides the runtime manifest the result metadata names.
    pub runtime: Option<RuntimeManifest>,
    /// State references, when the caller captured any.
    pub state: Option<StateRecord>,
    /// Costs.
    pub cost: CostInput,
    /// Where the audit trail is kept.
    pub audit_ref: Option<AuditRef>,
    /// Overrides the record instant (defaults to the result's `completedAt`).
    pub recorded_at: Option<String>,
}

/// Why a record could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssemblyError {
    /// Neither the caller nor the result metadata named the runtime.
    #[error("assemble an execution record: no runtime manifest was given and the result metadata names none")]
    MissingRuntime,
    /// The assembled record broke a bound of its schema.
    #[error("assemble an execution record: {0}")]
    Invalid(ValidationError),
}

/// Assembles and validates the record of one turn.
///
/// # Errors
/// [`AssemblyError::MissingRuntime`] when no runtime manifest is known;
/// [`AssemblyError::Invalid`] when the assembled record breaks its schema.
pub fn assemble_record(input: AssemblyInput<'_>) -> Result<ExecutionRecord, AssemblyError> {
    let trace = input.request.context.trace_id.as_str();
    let audit: Vec<&AuditEvent> = input.audit.iter().filter(|e| e.trace_id == trace).collect();
    let result = input.result;
    let metadata = result.metadata.as_ref();
    let exposed_tools = events::visible_tools(&result.events);

    let runtime = match input.runtime.clone() {
        Some(runtime) => runtime,
        None => metadata
            .and_then(|m| m.get("runtime"))
            .and_then(|v| RuntimeManifest::deserialize(v).ok())
            .ok_or(AssemblyError::MissingRuntime)?,
    };
    let system = system_identity(&input, runtime, exposed_tools.len());
    let record = ExecutionRecord {
        version: RECORD_VERSION.to_string(),
        recorded_at: input.recorded_at.clone().unwrap_or_else(|| result.completed_at.clone()),
        experiment: input.experiment.clone(),
        system,
        authority: authority_record(input.request, &audit),
        execution: execution_section(&input, &audit, exposed_tools),
        state: input.state.clone(),
        cost: cost_record(&input, &audit),
    };
    match record.issues().into_iter().next() {
        Some(issue) => Err(AssemblyError::Invalid(issue)),
        None => Ok(record),
    }
}

fn system_identity(input: &AssemblyInput<'_>, runtime: RuntimeManifest, exposed: usize) -> SystemIdentity {
    let metadata = input.result.metadata.as_ref();
    let text = |key: &str| metadata.and_then(|m| m.get(key)).and_then(Value::as_str).map(str::to_string);
    let catalog_hash = text("catalogHash").filter(|h| is_content_hash(h));
    let tool_count = catalog_hash.as_ref().map(|_| exposed as u64);
    let caller = &input.system;
    SystemIdentity {
        protocol_version: caller.protocol_version.clone(),
        shared_os_version: caller.shared_os_version.clone(),
        runtime,
        adapter_id: caller.adapter_id.clone(),
        adapter_version: caller.adapter_version.clone(),
        model: caller.model.clone().or_else(|| text("model")),
        model_provider: caller.model_provider.clone().or_else(|| text("modelProvider")),
        policy_hash: caller.policy_hash.clone(),
        catalog_hash,
        tool_count,
        prompt_hash: prompt_hash(input.result),
        tool_policy: caller.tool_policy.clone(),
        metadata: caller.metadata.clone(),
    }
}

/// The prompt hash the runtime stated: the result metadata's `promptHash`
/// when that key exists, else the first `prompt.handed` announcement. The
/// first source found decides; a value that is not a hash yields none rather
/// than falling through to the next source.
#[must_use]
pub fn prompt_hash(result: &ExecutionResult) -> Option<String> {
    let stated = match result.metadata.as_ref().and_then(|m| m.get("promptHash")) {
        Some(value) => Some(value),
        None => events::announcements(&result.events)
            .find(|a| a.kind == PROMPT_HANDED)
            .map(|a| a.data.get("promptHash").unwrap_or(&Value::Null)),
    };
    stated.and_then(Value::as_str).filter(|h| is_content_hash(h)).map(str::to_string)
}

fn authority_record(request: &ExecutionRequest, audit: &[&AuditEvent]) -> AuthorityRecord {
    let mut snapshots: Vec<AuthoritySnapshot> = Vec::new();
    for event in audit.iter().filter(|e| e.kind == AuditType::AuthorityResolved) {
        let Some(hash) = &event.authority_hash else {
            continue;
        };
        if let Some(seen) = snapshots.iter_mut().find(|s| &s.hash == hash) {
            seen.last_seen_at.clone_from(&event.at);
            seen.observations += 1;
            continue;
        }
        let grant_ids: Vec<String> = event
            .metadata
            .as_ref()
            .and_then(|m| m.get("grantIds"))
            .and_then(Value::as_array)
            .map(|ids| ids.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        let grant_count = event
            .metadata
            .as_ref()
            .and_then(|m| m.get("grantCount"))
            .and_then(Value::as_u64)
            .unwrap_or(grant_ids.len() as u64);
        snapshots.push(AuthoritySnapshot {
            hash: hash.clone(),
            grant_ids,
            grant_count,
            first_seen_at: event.at.clone(),
            last_seen_at: event.at.clone(),
            observations: 1,
        });
    }
    let stable_authority_hash = match snapshots.as_slice() {
        [only] => Some(only.hash.clone()),
        _ => None,
    };
    let context = &request.context;
    AuthorityRecord {
        principal: context.authority.clone(),
        actor: context.actor.clone(),
        owner: context.owner.clone(),
        namespace_id: context.namespace_id.clone(),
        purpose: context.purpose.clone(),
        snapshots,
        stable_authority_hash,
    }
}

fn execution_section(input: &AssemblyInput<'_>, audit: &[&AuditEvent], exposed_tools: Vec<String>) -> ExecutionSection {
    let result = input.result;
    let (terminal_reason_code, output, escalation) = match result.status {
        ExecutionStatus::Succeeded => (None, result.output.clone(), None),
        ExecutionStatus::Escalated => {
            (Some(ReasonCode::EscalationRequested.as_str().to_string()), None, result.escalation.clone())
        }
        _ => (result.code().map(str::to_string), None, None),
    };
    let ended_by = match result.status {
        ExecutionStatus::Failed => events::last_of(&result.events, EventKind::TurnFailed)
            .and_then(|e| events::data_str(e, "source"))
            .and_then(EndedBy::parse),
        _ => None,
    };
    let escalation_asked = result
        .metadata
        .as_ref()
        .and_then(|m| m.get("escalationAsked"))
        .and_then(|v| EscalationAsked::deserialize(v).ok());
    ExecutionSection {
        execution_id: result.execution_id.clone(),
        trace_id: result.trace_id.clone(),
        agent: input.request.agent.clone(),
        status: result.status,
        terminal_reason_code,
        output,
        escalation,
        ended_by,
        escalation_asked,
        exposed_tools,
        requested_tools: input.request.tools.iter().map(|t| t.name.clone()).collect(),
        decisions: audit.iter().filter(|e| e.kind == AuditType::AuthorizationChecked).map(|e| decision(e)).collect(),
        operations: operations(audit, result),
        events: Arc::clone(&result.events),
        audit_ref: input.audit_ref.clone(),
    }
}

fn is_fail_closed(flag: Option<bool>, code: Option<&str>) -> bool {
    flag == Some(true) || code.and_then(ReasonCode::parse).is_some_and(ReasonCode::is_fail_closed)
}

fn decision(event: &AuditEvent) -> Decision {
    let outcome =
        if event.outcome == AuditOutcome::Allowed { DecisionOutcome::Allowed } else { DecisionOutcome::Denied };
    let fallback = match outcome {
        DecisionOutcome::Allowed => "allowed",
        DecisionOutcome::Denied => "denied",
    };
    let reason_code = event.reason.clone().unwrap_or_else(|| fallback.to_string());
    Decision {
        at: event.at.clone(),
        outcome,
        fail_closed: is_fail_closed(event.fail_closed, Some(&reason_code)),
        reason_code,
        operation_id: event.operation_id.clone(),
        resource: event.resource.clone(),
        action: event.action.clone(),
        grant_id: event.grant_id.clone(),
        authority_hash: event.authority_hash.clone(),
    }
}

fn operation_outcome(outcome: AuditOutcome) -> OperationOutcome {
    match outcome {
        AuditOutcome::Succeeded | AuditOutcome::Allowed => OperationOutcome::Succeeded,
        AuditOutcome::Denied => OperationOutcome::Denied,
        AuditOutcome::Failed | AuditOutcome::Interrupted | AuditOutcome::Escalated => OperationOutcome::Failed,
    }
}

fn audited_operation(event: &AuditEvent) -> Option<Operation> {
    let kind = match event.kind {
        AuditType::ToolInvoked => OperationKind::Tool,
        AuditType::ResourceInvoked => OperationKind::Resource,
        AuditType::MessageSent => OperationKind::Message,
        _ => return None,
    };
    let marked_envelope =
        event.metadata.as_ref().and_then(|m| m.get("source")).and_then(Value::as_str) == Some("envelope");
    let source = event.source.unwrap_or(if marked_envelope { Source::Envelope } else { Source::Kernel });
    Some(Operation {
        at: event.at.clone(),
        kind,
        source,
        outcome: operation_outcome(event.outcome),
        operation_id: event.operation_id.clone(),
        tool: event.tool.clone(),
        resource: event.resource.clone(),
        action: event.action.clone(),
        grant_id: event.grant_id.clone(),
        reason_code: event.reason.clone(),
        cause: event.cause.clone(),
        fail_closed: is_fail_closed(event.fail_closed, event.reason.as_deref()),
    })
}

/// Audited operations, plus envelope refusals that reached no audit sink
/// (recovered from `tool.completed` events), sorted by instant. The sort is
/// stable, so operations at one instant keep their audit order.
fn operations(audit: &[&AuditEvent], result: &ExecutionResult) -> Vec<Operation> {
    let mut operations: Vec<Operation> = audit.iter().filter_map(|e| audited_operation(e)).collect();
    for event in result.events.iter().filter(|e| e.kind == EventKind::ToolCompleted.as_str()) {
        let Some(call_id) = events::data_str(event, "callId") else {
            continue;
        };
        let outcome = match events::data_str(event, "status") {
            Some("denied") => OperationOutcome::Denied,
            Some("failed") => OperationOutcome::Failed,
            _ => continue,
        };
        let known =
            operations.iter().any(|o| o.kind == OperationKind::Tool && o.operation_id.as_deref() == Some(call_id));
        if known {
            continue;
        }
        let code = events::data_str(event, "code").map(str::to_string);
        operations.push(Operation {
            at: event.occurred_at.clone(),
            kind: OperationKind::Tool,
            source: Source::Envelope,
            outcome,
            operation_id: Some(call_id.to_string()),
            tool: events::data_str(event, "tool").map(str::to_string),
            resource: None,
            action: None,
            grant_id: None,
            fail_closed: is_fail_closed(None, code.as_deref()),
            reason_code: code,
            cause: None,
        });
    }
    operations.sort_by_key(|o| Instant::parse(&o.at));
    operations
}

fn cost_record(input: &AssemblyInput<'_>, audit: &[&AuditEvent]) -> CostRecord {
    let result = input.result;
    let elapsed_ms = match (Instant::parse(&result.started_at), Instant::parse(&result.completed_at)) {
        (Some(start), Some(end)) => u64::try_from(end.0.saturating_sub(start.0)).unwrap_or(0),
        _ => 0,
    };
    let tokens = |key: &str| result.metadata.as_ref().and_then(|m| m.get(key)).and_then(Value::as_u64);
    let count = |n: usize| n as u64;
    CostRecord {
        started_at: result.started_at.clone(),
        completed_at: result.completed_at.clone(),
        elapsed_ms,
        infrastructure_ms: input.cost.infrastructure_ms,
        tool_calls: count(result.events.iter().filter(|e| e.kind == EventKind::ToolRequested.as_str()).count()),
        authority_loads: count(audit.iter().filter(|e| e.kind == AuditType::AuthorityResolved).count()),
        audit_events: count(audit.len()),
        input_tokens: input.cost.input_tokens.or_else(|| tokens("inputTokens")),
        output_tokens: input.cost.output_tokens.or_else(|| tokens("outputTokens")),
        metadata: input.cost.metadata.clone(),
    }
}
