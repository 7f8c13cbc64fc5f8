//! Record assembly, completeness and redaction (R68–R77).

use serde_json::{json, Value};
use sharedos_grading::grade::completeness::{check_completeness, GapSeverity};
use sharedos_grading::identity::sets::record_hash;
use sharedos_grading::record::assemble::{assemble_record, AssemblyError, AssemblyInput, CostInput, SystemInput};
use sharedos_grading::record::redaction::check_redaction;
use sharedos_model::audit::{AuditEvent, Source};
use sharedos_model::execution::{ExecutionRequest, ExecutionResult, ExecutionStatus};
use sharedos_model::record::{
    DecisionOutcome, EndedBy, ExecutionRecord, ExperimentIdentity, OperationKind, OperationOutcome, StateRecord,
    StateReference,
};

const TRACE: &str = "trace-conformance";
const H1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const H2: &str = "2222222222222222222222222222222222222222222222222222222222222222";
const HP: &str = "abababababababababababababababababababababababababababababababab";

fn at(seconds: u32) -> String {
    format!("2026-08-18T09:00:{seconds:02}.000Z")
}

fn request() -> ExecutionRequest {
    serde_json::from_value(json!({
        "version": "1",
        "executionId": "exec-1",
        "agent": {"kind": "agent", "agentId": "agent-mallory"},
        "context": {
            "namespaceId": "world-conformance",
            "actor": {"kind": "agent", "agentId": "agent-mallory"},
            "authority": {"kind": "agent", "agentId": "agent-orchestrator"},
            "owner": {"kind": "human", "userId": "user-alice"},
            "purpose": "conformance-probe",
            "traceId": TRACE,
            "enabledToolNamespaces": ["files"],
            "now": at(0)
        },
        "message": {
            "version": "1", "id": "exec-1-message",
            "sender": {"kind": "agent", "agentId": "agent-mallory"},
            "receiver": {"kind": "agent", "agentId": "agent-mallory"},
            "purpose": "conformance-probe", "payload": {}, "traceId": TRACE, "createdAt": at(0)
        },
        "tools": []
    }))
    .unwrap()
}

fn event(sequence: u64, kind: &str, data: Value) -> Value {
    json!({
        "version": "1", "eventId": format!("exec-1.event-{sequence}"), "executionId": "exec-1",
        "traceId": TRACE, "sequence": sequence, "type": kind, "data": data, "occurredAt": at(sequence as u32)
    })
}

fn runtime() -> Value {
    json!({"id": "adversary", "version": "1", "protocolVersion": "1"})
}

fn result(status: &str, extra: Value, events: Vec<Value>) -> ExecutionResult {
    let mut value = json!({
        "version": "1", "executionId": "exec-1", "traceId": TRACE, "status": status,
        "events": events, "startedAt": at(0), "completedAt": at(5),
        "metadata": {"runtime": runtime()}
    });
    if let (Some(target), Some(extra)) = (value.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            if k == "metadata" {
                let meta = target.get_mut("metadata").and_then(Value::as_object_mut).unwrap();
                for (mk, mv) in v.as_object().unwrap() {
                    meta.insert(mk.clone(), mv.clone());
                }
            } else {
                target.insert(k.clone(), v.clone());
            }
        }
    }
    serde_json::from_value(value).unwrap()
}

fn audit(kind: &str, outcome: &str, second: u32, extra: Value) -> AuditEvent {
    let mut value = json!({
        "version": "1", "id": format!("audit-{kind}-{second}"), "type": kind, "outcome": outcome,
        "at": at(second), "traceId": TRACE, "namespaceId": "world-conformance",
        "actor": {"kind": "agent", "agentId": "agent-mallory"},
        "authority": {"kind": "agent", "agentId": "agent-orchestrator"},
        "owner": {"kind": "human", "userId": "user-alice"},
        "purpose": "conformance-probe"
    });
    for (k, v) in extra.as_object().unwrap() {
        value.as_object_mut().unwrap().insert(k.clone(), v.clone());
    }
    serde_json::from_value(value).unwrap()
}

fn resolved(second: u32, hash: &str) -> AuditEvent {
    audit(
        "authority.resolved",
        "succeeded",
        second,
        json!({"authorityHash": hash, "metadata": {"grantIds": ["grant-read", "grant-turn"], "grantCount": 2}}),
    )
}

fn checked(second: u32, outcome: &str, call: &str, reason: Option<&str>) -> AuditEvent {
    let mut extra = json!({"authorityHash": H1, "operationId": call, "action": "read"});
    if let Some(reason) = reason {
        extra["reason"] = json!(reason);
    }
    audit("authorization.checked", outcome, second, extra)
}

fn invoked(second: u32, outcome: &str, call: &str, reason: Option<&str>) -> AuditEvent {
    let mut extra = json!({"operationId": call, "tool": "files.read", "source": "kernel"});
    if let Some(reason) = reason {
        extra["reason"] = json!(reason);
    }
    audit("tool.invoked", outcome, second, extra)
}

fn experiment() -> ExperimentIdentity {
    ExperimentIdentity {
        experiment_id: "kernel-conformance".into(),
        task_id: "read-to-mutation".into(),
        run_id: "baseline.adversary-embedded".into(),
        spec_hash: H1.into(),
        world_hash: H1.into(),
        evaluator_hash: H1.into(),
        seed: None,
        metadata: None,
    }
}

fn system() -> SystemInput {
    SystemInput {
        protocol_version: "1".into(),
        shared_os_version: "0.1.0".into(),
        adapter_id: "adversary-embedded".into(),
        policy_hash: HP.into(),
        ..SystemInput::default()
    }
}

fn assemble(
    request: &ExecutionRequest,
    result: &ExecutionResult,
    audit: &[AuditEvent],
) -> Result<ExecutionRecord, AssemblyError> {
    assemble_record(AssemblyInput {
        request,
        result,
        audit,
        experiment: experiment(),
        system: system(),
        runtime: None,
        state: None,
        cost: CostInput::default(),
        audit_ref: None,
        recorded_at: None,
    })
}

fn started() -> Value {
    event(
        0,
        "turn.started",
        json!({"agent": {"kind": "agent", "agentId": "agent-mallory"}, "visibleTools": ["files.read", "files.replace"], "runtime": runtime()}),
    )
}

/// A turn with one allowed read and one denied replace.
fn ordinary_turn() -> (ExecutionRequest, ExecutionResult, Vec<AuditEvent>) {
    let events = vec![
        started(),
        event(1, "tool.requested", json!({"callId": "c1", "tool": "files.read"})),
        event(2, "tool.completed", json!({"callId": "c1", "tool": "files.read", "status": "succeeded"})),
        event(3, "tool.requested", json!({"callId": "c2", "tool": "files.replace"})),
        event(
            4,
            "tool.completed",
            json!({"callId": "c2", "tool": "files.replace", "status": "denied", "code": "no_matching_grant"}),
        ),
        event(5, "turn.completed", json!({})),
    ];
    let audit = vec![
        resolved(0, H1),
        checked(1, "allowed", "c1", None),
        invoked(2, "succeeded", "c1", None),
        checked(3, "denied", "c2", Some("no_matching_grant")),
        invoked(4, "denied", "c2", Some("no_matching_grant")),
    ];
    (request(), result("succeeded", json!({"output": {"declared": 2}}), events), audit)
}

#[test]
fn assembles_an_ordinary_turn() {
    let (request, result, audit) = ordinary_turn();
    let record = assemble(&request, &result, &audit).unwrap();
    assert_eq!(record.recorded_at, at(5));
    assert_eq!(record.system.runtime.id, "adversary");
    assert_eq!(record.execution.status, ExecutionStatus::Succeeded);
    assert_eq!(record.execution.output, Some(json!({"declared": 2})));
    assert_eq!(record.execution.exposed_tools, vec!["files.read", "files.replace"]);
    assert_eq!(record.execution.decisions.len(), 2);
    assert_eq!(record.execution.decisions[0].reason_code, "allowed");
    assert_eq!(record.execution.decisions[1].outcome, DecisionOutcome::Denied);
    assert_eq!(record.execution.operations.len(), 2, "kernel answers are not recovered twice");
    assert_eq!(record.authority.stable_authority_hash.as_deref(), Some(H1));
    assert_eq!(record.authority.snapshots[0].grant_count, 2);
    assert_eq!(record.cost.elapsed_ms, 5000);
    assert_eq!(record.cost.tool_calls, 2);
    assert_eq!(record.cost.authority_loads, 1);
    assert_eq!(record.cost.audit_events, 5);
    assert_eq!(record.execution.ended_by, None);
}

#[test]
fn r68_record_assembly_filters_audit_to_the_requests_trace() {
    let (request, result, mut audit) = ordinary_turn();
    let mut foreign = invoked(3, "denied", "c9", Some("no_matching_grant"));
    foreign.trace_id = "trace-conformance-turn-2".into();
    audit.push(foreign);
    let record = assemble(&request, &result, &audit).unwrap();
    assert!(record.execution.operations.iter().all(|o| o.operation_id.as_deref() != Some("c9")));
    assert_eq!(record.cost.audit_events, 5);
}

#[test]
fn r69_record_assembly_validates_the_record_against_its_schema() {
    let (request, result, audit) = ordinary_turn();
    let mut input_system = system();
    input_system.policy_hash = "not-a-hash".into();
    let err = assemble_record(AssemblyInput {
        request: &request,
        result: &result,
        audit: &audit,
        experiment: experiment(),
        system: input_system,
        runtime: None,
        state: None,
        cost: CostInput::default(),
        audit_ref: None,
        recorded_at: None,
    })
    .unwrap_err();
    match err {
        AssemblyError::Invalid(issue) => assert_eq!(issue.pointer, "/system/policyHash"),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_record_needs_a_runtime_manifest() {
    let (request, mut result, audit) = ordinary_turn();
    result.metadata = None;
    assert_eq!(assemble(&request, &result, &audit).unwrap_err(), AssemblyError::MissingRuntime);
}

#[test]
fn r70_envelope_refusals_absent_from_audit_are_recovered_once() {
    let events = vec![
        started(),
        event(1, "tool.requested", json!({"callId": "c1", "tool": "admin.grant.issue"})),
        event(
            2,
            "tool.completed",
            json!({"callId": "c1", "tool": "admin.grant.issue", "status": "denied", "code": "tool_unavailable"}),
        ),
        event(3, "tool.requested", json!({"callId": "c2", "tool": "files.read"})),
        event(4, "tool.completed", json!({"callId": "c2", "tool": "files.read", "status": "succeeded"})),
        event(5, "turn.completed", json!({})),
    ];
    let audit = vec![resolved(0, H1), checked(3, "allowed", "c2", None), invoked(4, "succeeded", "c2", None)];
    let record = assemble(&request(), &result("succeeded", json!({}), events), &audit).unwrap();
    let ops = &record.execution.operations;
    assert_eq!(ops.len(), 2);
    assert_eq!(ops[0].operation_id.as_deref(), Some("c1"), "sorted by instant");
    assert_eq!(ops[0].source, Source::Envelope);
    assert_eq!(ops[0].outcome, OperationOutcome::Denied);
    assert_eq!(ops[0].reason_code.as_deref(), Some("tool_unavailable"));
    assert_eq!(ops[1].source, Source::Kernel);
}

#[test]
fn operations_carry_kind_source_and_cause_from_audit() {
    let audit = vec![
        resolved(0, H1),
        checked(1, "allowed", "c1", None),
        audit(
            "message.sent",
            "denied",
            2,
            json!({"operationId": "c1", "reason": "route_lease_revoked", "source": "kernel"}),
        ),
        audit(
            "tool.invoked",
            "failed",
            2,
            json!({"operationId": "c1", "tool": "messages.request", "reason": "message_request_not_accepted", "cause": "route_lease_revoked"}),
        ),
        audit(
            "tool.invoked",
            "denied",
            3,
            json!({"operationId": "c2", "tool": "files.purge", "reason": "tool_unavailable", "source": "envelope", "cause": "not_offered"}),
        ),
    ];
    let record = assemble(&request(), &result("succeeded", json!({}), vec![started()]), &audit).unwrap();
    let ops = &record.execution.operations;
    assert_eq!(ops[0].kind, OperationKind::Message, "stable sort keeps audit order at one instant");
    assert_eq!(ops[1].kind, OperationKind::Tool);
    assert_eq!(ops[1].source, Source::Kernel, "no stated source means the kernel");
    assert_eq!(ops[1].cause.as_deref(), Some("route_lease_revoked"));
    assert_eq!(ops[2].source, Source::Envelope);
    assert_eq!(ops[2].cause.as_deref(), Some("not_offered"));
}

#[test]
fn r71_an_escalated_turn_records_escalation_requested_and_a_pending_escalation() {
    let escalation = json!({"reason": "outside my authority", "reviewer": {"kind": "human", "userId": "user-alice"}, "requestedAt": at(3), "status": "pending"});
    let events = vec![started(), event(1, "turn.escalated", json!({"reason": "outside my authority"}))];
    let record =
        assemble(&request(), &result("escalated", json!({"escalation": escalation}), events), &[resolved(0, H1)])
            .unwrap();
    assert_eq!(record.execution.status, ExecutionStatus::Escalated);
    assert_eq!(record.execution.terminal_reason_code.as_deref(), Some("escalation_requested"));
    assert_eq!(record.execution.escalation.as_ref().map(|e| e.status.as_str()), Some("pending"));
}

#[test]
fn r72_ended_by_distinguishes_an_envelope_ended_turn_from_a_runtime_failure() {
    for (source, expected) in [("envelope", EndedBy::Envelope), ("runtime", EndedBy::Runtime)] {
        let events = vec![
            started(),
            event(1, "turn.failed", json!({"code": "x_first", "source": "runtime"})),
            event(2, "turn.failed", json!({"code": "runtime_failed", "source": source})),
        ];
        let error = json!({"error": {"code": "runtime_failed", "message": "the runtime stopped"}});
        let record = assemble(&request(), &result("failed", error, events), &[resolved(0, H1)]).unwrap();
        assert_eq!(record.execution.ended_by, Some(expected), "the last turn.failed decides");
        assert_eq!(record.execution.terminal_reason_code.as_deref(), Some("runtime_failed"));
    }
}

#[test]
fn ended_by_is_absent_on_turns_that_did_not_fail() {
    let events = vec![started(), event(1, "turn.failed", json!({"code": "x", "source": "envelope"}))];
    let record = assemble(&request(), &result("succeeded", json!({}), events), &[resolved(0, H1)]).unwrap();
    assert_eq!(record.execution.ended_by, None);
}

fn announcement(sequence: u64, kind: &str, data: Value) -> Value {
    event(sequence, "runtime.event", json!({"runtime": runtime(), "type": kind, "data": data}))
}

#[test]
fn e95_prompt_hash_and_escalation_asked_are_lifted_from_result_metadata() {
    let meta = json!({"metadata": {"promptHash": H2, "escalationAsked": {"tool": "sharedos.escalate", "reason": "needs a human"}}});
    let record = assemble(&request(), &result("succeeded", meta, vec![started()]), &[resolved(0, H1)]).unwrap();
    assert_eq!(record.system.prompt_hash.as_deref(), Some(H2));
    let asked = record.execution.escalation_asked.unwrap();
    assert_eq!((asked.tool.as_str(), asked.reason.as_str()), ("sharedos.escalate", "needs a human"));
}

#[test]
fn a_malformed_escalation_claim_is_not_lifted() {
    let meta = json!({"metadata": {"escalationAsked": {"tool": "sharedos.escalate"}}});
    let record = assemble(&request(), &result("succeeded", meta, vec![started()]), &[resolved(0, H1)]).unwrap();
    assert_eq!(record.execution.escalation_asked, None);
}

#[test]
fn r73_prompt_hash_falls_back_to_the_first_prompt_handed_announcement() {
    let events = vec![
        started(),
        announcement(1, "prompt.handed", json!({"promptHash": H1})),
        announcement(2, "prompt.handed", json!({"promptHash": H2})),
    ];
    let record = assemble(&request(), &result("cancelled", json!({}), events), &[resolved(0, H1)]).unwrap();
    assert_eq!(record.system.prompt_hash.as_deref(), Some(H1));
}

#[test]
fn a_prompt_hash_that_is_not_a_hash_does_not_fall_through() {
    let events = vec![started(), announcement(1, "prompt.handed", json!({"promptHash": H1}))];
    let meta = json!({"metadata": {"promptHash": "short"}});
    let record = assemble(&request(), &result("succeeded", meta, events), &[resolved(0, H1)]).unwrap();
    assert_eq!(record.system.prompt_hash, None);
}

#[test]
fn r77_fail_closed_is_set_on_infrastructure_denials() {
    let audit = vec![
        resolved(0, H1),
        checked(1, "denied", "c1", Some("usage_store_unavailable")),
        invoked(2, "denied", "c1", Some("usage_store_unavailable")),
        checked(3, "denied", "c2", Some("no_matching_grant")),
        invoked(4, "denied", "c2", Some("no_matching_grant")),
    ];
    let record = assemble(&request(), &result("succeeded", json!({}), vec![started()]), &audit).unwrap();
    let decisions = &record.execution.decisions;
    assert!(decisions[0].fail_closed && !decisions[1].fail_closed);
    let ops = &record.execution.operations;
    assert!(ops[0].fail_closed && !ops[1].fail_closed);
}

#[test]
fn snapshots_are_distinct_by_hash_in_first_seen_order() {
    let audit = vec![resolved(0, H2), resolved(1, H1), resolved(2, H2)];
    let record = assemble(&request(), &result("succeeded", json!({}), vec![started()]), &audit).unwrap();
    let snaps = &record.authority.snapshots;
    assert_eq!(snaps.len(), 2);
    assert_eq!((snaps[0].hash.as_str(), snaps[0].observations), (H2, 2));
    assert_eq!((snaps[0].first_seen_at.as_str(), snaps[0].last_seen_at.as_str()), (at(0).as_str(), at(2).as_str()));
    assert_eq!(record.authority.stable_authority_hash, None, "only a single snapshot is stable");
}

#[test]
fn assembly_is_deterministic_and_the_record_hash_is_a_content_hash() {
    let (request, result, audit) = ordinary_turn();
    let a = assemble(&request, &result, &audit).unwrap();
    let b = assemble(&request, &result, &audit).unwrap();
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    let hash = record_hash(&a).unwrap();
    assert_eq!(hash, record_hash(&b).unwrap());
    assert!(sharedos_model::canonical::is_content_hash(&hash));
    let back: ExecutionRecord = serde_json::from_value(serde_json::to_value(&a).unwrap()).unwrap();
    assert_eq!(back, a);
}

#[test]
fn records_are_strict() {
    let (request, result, audit) = ordinary_turn();
    let mut value = serde_json::to_value(assemble(&request, &result, &audit).unwrap()).unwrap();
    value["execution"]["verdict"] = json!("pass");
    assert!(serde_json::from_value::<ExecutionRecord>(value).is_err());
}

// ---- completeness (R74, R75) ----

#[test]
fn r74_an_ordinary_record_is_usable_with_only_expected_gaps() {
    let (request, result, audit) = ordinary_turn();
    let report = check_completeness(&assemble(&request, &result, &audit).unwrap());
    assert!(report.usable);
    assert!(!report.complete);
    let fields: Vec<&str> = report.gaps.iter().map(|g| g.field.as_str()).collect();
    assert_eq!(fields, vec!["state", "cost.tokens", "cost.infrastructureMs"]);
    assert!(report.gaps.iter().all(|g| g.severity == GapSeverity::Expected));
}

#[test]
fn r74_a_record_with_state_tokens_and_infrastructure_time_is_complete() {
    let (request, result, audit) = ordinary_turn();
    let mut record = assemble(&request, &result, &audit).unwrap();
    let reference = |id: &str| StateReference { snapshot_id: id.into(), hash: H2.into(), captured_at: None };
    record.state =
        Some(StateRecord { before: Some(reference("before")), after: Some(reference("after")), diff_ref: None });
    record.cost.input_tokens = Some(10);
    record.cost.infrastructure_ms = Some(1);
    let report = check_completeness(&record);
    assert!(report.complete && report.usable);
}

#[test]
fn r74_required_gaps_are_named_by_field_path() {
    let (request, result, audit) = ordinary_turn();
    let mut record = assemble(&request, &result, &audit).unwrap();
    record.execution.decisions[0].authority_hash = None;
    record.execution.decisions[1].authority_hash = Some(H2.into());
    let report = check_completeness(&record);
    assert!(!report.usable);
    assert_eq!(
        report.required_fields(),
        vec!["execution.decisions.0.authorityHash", "execution.decisions.1.authorityHash"]
    );

    record.authority.snapshots.clear();
    record.authority.stable_authority_hash = None;
    record.execution.decisions.clear();
    record.execution.events = Vec::new().into();
    let report = check_completeness(&record);
    assert_eq!(report.required_fields(), vec!["authority.snapshots", "execution.decisions", "execution.events"]);
}

#[test]
fn schema_issues_become_required_gaps_at_their_path() {
    let (request, result, audit) = ordinary_turn();
    let mut record = assemble(&request, &result, &audit).unwrap();
    record.execution.operations[1].at = "yesterday".into();
    let report = check_completeness(&record);
    assert_eq!(report.required_fields(), vec!["execution.operations.1.at"]);
}

#[test]
fn record_issues_name_the_array_element_they_are_in() {
    let (request, result, audit) = ordinary_turn();
    let mut record = assemble(&request, &result, &audit).unwrap();
    record.authority.snapshots[0].hash = "not a hash".into();
    record.authority.snapshots[0].observations = 0;
    record.execution.decisions[1].at = "yesterday".into();
    record.execution.decisions[1].reason_code = " padded".into();
    record.execution.decisions[0].authority_hash = Some("short".into());
    let pointers: Vec<String> = record.issues().into_iter().map(|issue| issue.pointer).collect();
    assert_eq!(
        pointers,
        [
            "/authority/snapshots/0/hash",
            "/authority/snapshots/0/observations",
            "/authority/stableAuthorityHash",
            "/execution/decisions/0/authorityHash",
            "/execution/decisions/1/at",
            "/execution/decisions/1/reasonCode",
        ]
    );
}

#[test]
fn r75_a_fail_closed_turn_whose_grant_store_was_unreachable_stays_usable() {
    let events = vec![event(0, "turn.denied", json!({"code": "authority_unavailable"}))];
    let error = json!({"error": {"code": "authority_unavailable", "message": "grant store unreachable"}});
    let failed_load =
        audit("authority.resolved", "failed", 0, json!({"reason": "authority_unavailable", "failClosed": true}));
    let record = assemble(&request(), &result("denied", error, events), &[failed_load]).unwrap();
    assert!(record.authority.snapshots.is_empty());
    let report = check_completeness(&record);
    assert!(report.usable, "{:?}", report.gaps);

    // The same record without the fail-closed ending has nothing to excuse it.
    let mut ordinary = record.clone();
    ordinary.execution.terminal_reason_code = Some("no_matching_grant".into());
    assert_eq!(check_completeness(&ordinary).required_fields(), vec!["authority.snapshots"]);
}

// ---- redaction (R76) ----

#[test]
fn r76_a_clean_record_has_no_forbidden_keys_even_with_an_output_that_has_them() {
    let (request, _, audit) = ordinary_turn();
    let events = vec![started()];
    let result = result("succeeded", json!({"output": {"payload": 1, "content": "x"}}), events);
    let record = assemble(&request, &result, &audit).unwrap();
    assert!(check_redaction(&record).unwrap().is_empty());
}

#[test]
fn r76_forbidden_keys_are_found_anywhere_else() {
    let (request, _, audit) = ordinary_turn();
    let events =
        vec![started(), announcement(1, "leak", json!({"arguments": {"path": "x"}, "nested": [{"goldFacts": []}]}))];
    let record = assemble(&request, &result("succeeded", json!({}), events), &audit).unwrap();
    let findings = check_redaction(&record).unwrap();
    let paths: Vec<&str> = findings.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        vec!["execution.events.1.data.data.arguments", "execution.events.1.data.data.nested.0.goldFacts"]
    );
}
