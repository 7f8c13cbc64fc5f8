//! The world's stores with fault injection: grant source, chain resolver,
//! usage counters, recording audit, host ceiling and clock.

use futures::executor::block_on;
use serde_json::{json, Value};
use sharedos_authz::memory::InMemoryResolver;
use sharedos_authz::memory::{FailingUsage, InMemoryUsage};
use sharedos_authz::ports::{CeilingVerdict, DelegationResolver, HostCeiling, UsageStore};
use sharedos_kernel::ports::{AuditSink, GrantSource};
use sharedos_model::address::Address;
use sharedos_model::audit::{AuditEvent, AuditOutcome, AuditType};
use sharedos_model::capability::{Decision, Grant, Requirement, ResourceRef};
use sharedos_port::signal::AbortSignal;
use sharedos_world::audit_log::{AuditFailure, AuditFault, AuditTrigger, RecordingAudit};
use sharedos_world::ceiling::FrozenCeiling;
use sharedos_world::clock::WorldClock;
use sharedos_world::constants::{self, conformance_instant, context, owner, NAMESPACE_ID, NOW, TRACE_ID};
use sharedos_world::grant_store::WorldGrantSource;
use sharedos_world::grants::{grant_set, GrantOptions, GRANT_READ, ROOT_FILES};
use std::rc::Rc;

fn source() -> WorldGrantSource {
    WorldGrantSource::new(&grant_set(&GrantOptions::default()).agent)
}

fn load(source: &WorldGrantSource) -> Result<Vec<Grant>, String> {
    let value = block_on(source.load(&context(NOW, TRACE_ID), &AbortSignal::new()))?;
    Ok(serde_json::from_value(value).unwrap())
}

fn event(kind: AuditType) -> AuditEvent {
    AuditEvent::about("audit-1".into(), kind, AuditOutcome::Succeeded, &context(NOW, TRACE_ID))
}

fn write(audit: &RecordingAudit, kind: AuditType) -> Result<(), String> {
    block_on(audit.write(&event(kind)))
}

#[test]
fn the_source_serves_copies_of_the_agents_grants_for_the_context() {
    let source = source();
    let loaded = load(&source).unwrap();
    assert_eq!(loaded, source.grants());
    let mut other = context(NOW, TRACE_ID);
    other.authority = Address::human("user-alice");
    assert!(
        block_on(source.load(&other, &AbortSignal::new())).unwrap().as_array().unwrap().is_empty(),
        "issuer must be the authority"
    );
    other = context(NOW, TRACE_ID);
    other.actor = Address::agent("agent-orchestrator");
    assert!(source.grants_for(&other).is_empty(), "subject must be the actor");
    other = context(NOW, TRACE_ID);
    other.namespace_id = "world-other".into();
    assert!(source.grants_for(&other).is_empty(), "another world sees nothing");
}

#[test]
fn r65_a_store_failing_after_zero_loads_refuses_the_first_load() {
    let source = source();
    source.fail_after_loads(0);
    assert!(load(&source).is_err());
    assert_eq!((source.load_attempts(), source.loads()), (1, 0));
}

#[test]
fn a_store_failing_after_n_loads_serves_n_then_throws() {
    let source = source();
    source.fail_after_loads(2);
    assert!(load(&source).is_ok());
    assert!(load(&source).is_ok());
    assert!(load(&source).is_err());
    assert!(load(&source).is_err());
    assert_eq!((source.load_attempts(), source.loads()), (4, 2));
}

#[test]
fn a_trusted_edit_lands_right_after_the_armed_load_once() {
    let source = source();
    let resolver = Rc::new(InMemoryResolver::new(grant_set(&GrantOptions::default()).all()));
    let chain = Rc::clone(&resolver);
    source.after_loads(1, move |s| {
        s.revoke(GRANT_READ, NOW);
        chain.revoke(GRANT_READ, NOW);
    });
    let first = load(&source).unwrap();
    assert!(first.iter().all(|g| g.revoked_at.is_none()), "the first turn's load is untouched");
    let second = load(&source).unwrap();
    let read = second.iter().find(|g| g.id == GRANT_READ).unwrap();
    assert_eq!(read.revoked_at.as_deref(), Some(NOW));
    assert_eq!(resolver.resolve(NAMESPACE_ID, GRANT_READ).unwrap().unwrap().revoked_at.as_deref(), Some(NOW));
}

#[test]
fn revoke_and_expire_edit_the_stored_grant_only() {
    let source = source();
    let before = load(&source).unwrap();
    assert!(source.revoke(GRANT_READ, NOW));
    assert!(source.expire("grant-scratch", &conformance_instant(1)));
    assert!(!source.revoke("grant-missing", NOW));
    assert!(before.iter().all(|g| g.revoked_at.is_none()), "copies already handed out do not change");
    let after = load(&source).unwrap();
    assert_eq!(
        after.iter().find(|g| g.id == "grant-scratch").unwrap().constraints.expires_at.as_deref(),
        Some("2026-08-18T09:00:01.000Z")
    );
}

#[test]
fn the_source_can_serve_malformed_material() {
    let source = source();
    source.serve_material(json!({"not": "an array"}));
    let value = block_on(source.load(&context(NOW, TRACE_ID), &AbortSignal::new())).unwrap();
    assert_eq!(value, json!({"not": "an array"}));
}

#[test]
fn the_resolver_serves_every_grant_roots_included_and_can_fail() {
    let resolver = InMemoryResolver::new(grant_set(&GrantOptions::default()).all());
    let root = resolver.resolve(NAMESPACE_ID, ROOT_FILES).unwrap().unwrap();
    assert_eq!(root.id, ROOT_FILES);
    assert!(resolver.resolve("world-other", ROOT_FILES).unwrap().is_none(), "keyed by world and id");
    assert!(resolver.resolve(NAMESPACE_ID, "grant-missing").unwrap().is_none());
    assert!(resolver.expire(ROOT_FILES, NOW));
    assert_eq!(
        resolver.resolve(NAMESPACE_ID, ROOT_FILES).unwrap().unwrap().constraints.expires_at.as_deref(),
        Some(NOW)
    );
    resolver.set_failing(true);
    assert!(resolver.resolve(NAMESPACE_ID, ROOT_FILES).is_err());
    assert_eq!(resolver.lookups(), 5);
}

#[test]
fn the_memory_counter_spends_up_to_the_bound() {
    let usage = InMemoryUsage::new();
    assert_eq!(usage.get_usage(NAMESPACE_ID, "grant-ledger").unwrap(), 0);
    assert!(usage.try_consume(NAMESPACE_ID, "grant-ledger", 1).unwrap());
    assert!(!usage.try_consume(NAMESPACE_ID, "grant-ledger", 1).unwrap());
    assert_eq!(usage.spent(NAMESPACE_ID, "grant-ledger"), 1);
    assert_eq!(usage.get_usage("world-other", "grant-ledger").unwrap(), 0);
}

#[test]
fn r67_the_unreachable_counter_throws_on_reads_and_spends() {
    let usage = FailingUsage::new();
    assert!(usage.get_usage(NAMESPACE_ID, "grant-ledger").is_err());
    assert!(usage.try_consume(NAMESPACE_ID, "grant-ledger", 1).is_err());
    assert_eq!(usage.calls(), 2);
}

#[test]
fn the_audit_log_keeps_copies_in_order_and_tells_the_observer() {
    let audit = RecordingAudit::new();
    let clock = WorldClock::operation_indexed(constants::now_instant());
    audit.set_observer(clock.observer());
    write(&audit, AuditType::AuthorityResolved).unwrap();
    write(&audit, AuditType::ToolInvoked).unwrap();
    let kinds: Vec<AuditType> = audit.events().iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [AuditType::AuthorityResolved, AuditType::ToolInvoked]);
    assert_eq!(audit.operations(), 1);
    assert_eq!(clock.now(), "2026-08-18T09:00:01.000Z");
}

#[test]
fn the_audit_log_fails_from_the_nth_write_of_a_kind() {
    let audit = RecordingAudit::new();
    audit.fail_from_nth(AuditType::AuthorizationChecked, 2);
    write(&audit, AuditType::AuthorizationChecked).unwrap();
    write(&audit, AuditType::ToolInvoked).unwrap();
    assert!(write(&audit, AuditType::AuthorizationChecked).is_err());
    assert!(write(&audit, AuditType::AuthorizationChecked).is_err());
    write(&audit, AuditType::ToolInvoked).unwrap();
    assert_eq!(audit.events().len(), 3);
    assert_eq!(audit.refused().len(), 2);
}

#[test]
fn the_audit_log_fails_every_write_after_n_operations() {
    let audit = RecordingAudit::new();
    audit.fail_after_operations(1);
    write(&audit, AuditType::AuthorizationChecked).unwrap();
    write(&audit, AuditType::ToolInvoked).unwrap();
    assert!(write(&audit, AuditType::AuthorizationChecked).is_err());
    assert!(write(&audit, AuditType::TurnEnded).is_err());
    assert_eq!(audit.of_kind(AuditType::ToolInvoked).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_hanging_audit_write_never_answers() {
    let audit = RecordingAudit::new();
    audit.arm(AuditFault {
        trigger: AuditTrigger::NthOfKind { kind: AuditType::TurnEnded, nth: 1 },
        failure: AuditFailure::Hang,
    });
    let record = event(AuditType::TurnEnded);
    let waited = tokio::time::timeout(std::time::Duration::from_millis(5000), audit.write(&record)).await;
    assert!(waited.is_err(), "the write was still pending at the timeout");
    assert!(audit.events().is_empty());
}

#[test]
fn r64_the_moving_clock_steps_one_second_per_tool_invoked_only() {
    let clock = WorldClock::operation_indexed(constants::now_instant());
    assert_eq!(clock.now(), conformance_instant(0));
    for kind in [
        AuditType::AuthorityResolved,
        AuditType::AuthorizationChecked,
        AuditType::ToolCatalogListed,
        AuditType::TurnEnded,
    ] {
        clock.observe(&event(kind));
    }
    assert_eq!(clock.now(), NOW, "admission and listing do not move it");
    clock.observe(&event(AuditType::ToolInvoked));
    assert_eq!(clock.now(), conformance_instant(1));
    clock.clone().observe(&event(AuditType::ToolInvoked));
    assert_eq!(clock.now(), "2026-08-18T09:00:02.000Z", "clones share the count");
}

#[test]
fn the_frozen_clock_never_moves() {
    let clock = WorldClock::frozen(constants::now_instant());
    clock.observe(&event(AuditType::ToolInvoked));
    assert_eq!(clock.now(), NOW);
}

fn files_requirement(path: &[&str], action: &str) -> Requirement {
    Requirement { resource: ResourceRef::owned("files", path, &owner()), action: action.into() }
}

fn rule(verdict: &CeilingVerdict) -> Option<Value> {
    match verdict {
        CeilingVerdict::Deny(Some(metadata)) => metadata.get("rule").cloned(),
        _ => None,
    }
}

#[test]
fn the_frozen_ceiling_refuses_the_ledger_and_every_mutation() {
    let ceiling = FrozenCeiling::new();
    let ctx = context(NOW, TRACE_ID);
    let allowed = Decision::allow(GRANT_READ);
    let ledger_read = ceiling.narrow(&allowed, &files_requirement(&constants::LEDGER_ENTRY, "read"), &ctx, None);
    assert_eq!(rule(&ledger_read), Some(json!("ledger-frozen")));
    let mutation = ceiling.narrow(&allowed, &files_requirement(&constants::DRAFT_FILE, "append"), &ctx, None);
    assert_eq!(rule(&mutation), Some(json!("no-mutations")));
    let declared_mutation = ceiling.narrow(&allowed, &files_requirement(&[], "replace"), &ctx, None);
    assert_eq!(rule(&declared_mutation), Some(json!("no-mutations")), "mutation tools vanish at discovery");
    let read = ceiling.narrow(&allowed, &files_requirement(&constants::POLICY_FILE, "read"), &ctx, None);
    assert_eq!(read, CeilingVerdict::Allow(allowed.clone()));
    let declared_read = ceiling.narrow(&allowed, &files_requirement(&[], "read"), &ctx, None);
    assert_eq!(declared_read, CeilingVerdict::Allow(allowed));
    assert_eq!(ceiling.consulted().len(), 5);
}
