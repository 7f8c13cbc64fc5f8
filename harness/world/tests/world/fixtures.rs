//! Building and arming a whole world's fixtures from its options.

use futures::executor::block_on;
use sharedos_authz::ports::DelegationResolver;
use sharedos_kernel::ports::{AuditSink, GrantSource};
use sharedos_model::capability::Grant;
use sharedos_port::signal::AbortSignal;
use sharedos_world::constants::{context, NAMESPACE_ID, NOW, TRACE_ID};
use sharedos_world::fixtures::WorldFixtures;
use sharedos_world::grants::{GRANT_READ, ROOT_FILES};
use sharedos_world::options::{BrokerMode, ExpiresAfterOperations, RevokedAfterTurn, WorldOptions};

fn load(world: &WorldFixtures) -> Result<Vec<Grant>, String> {
    let value = block_on(world.grant_source.load(&context(NOW, TRACE_ID), &AbortSignal::new()))?;
    Ok(serde_json::from_value(value).unwrap())
}

#[test]
fn the_baseline_registers_twelve_file_tools_then_five_fixtures() {
    let world = WorldFixtures::build(&WorldOptions::default());
    let names: Vec<String> = world.static_tools().iter().map(|t| t.definition().name.clone()).collect();
    assert_eq!(names.len(), 17);
    assert_eq!(names[11], "files.snapshot.restore");
    assert_eq!(names[12..], ["files.open", "files.fetch", "files.index", "files.describe", "files.purge"]);
    assert!(world.broker.is_none() && world.ceiling.is_none());
    assert_eq!(world.clock.now(), NOW);
}

#[test]
fn revoked_ancestors_are_revoked_in_the_chain_before_the_turn() {
    let world =
        WorldFixtures::build(&WorldOptions { revoked: Some(vec![ROOT_FILES.into()]), ..WorldOptions::default() });
    assert_eq!(world.chain.resolve(NAMESPACE_ID, ROOT_FILES).unwrap().unwrap().revoked_at.as_deref(), Some(NOW));
    assert!(load(&world).unwrap().iter().all(|g| g.revoked_at.is_none()), "the working grants are untouched");
}

#[test]
fn a_revocation_armed_after_turn_one_lands_for_turn_two() {
    let options = WorldOptions {
        revoked_after_turn: Some(RevokedAfterTurn { turn: 1, grant_ids: vec![GRANT_READ.into()] }),
        ..WorldOptions::default()
    };
    let world = WorldFixtures::build(&options);
    let read = |grants: Vec<Grant>| grants.into_iter().find(|g| g.id == GRANT_READ).unwrap();
    assert_eq!(read(load(&world).unwrap()).revoked_at, None);
    assert_eq!(read(load(&world).unwrap()).revoked_at.as_deref(), Some(NOW));
}

#[test]
fn r64_an_expiry_after_operations_starts_the_moving_clock() {
    let options = WorldOptions {
        expires_after_operations: Some(ExpiresAfterOperations { operations: 1, grant_ids: vec![GRANT_READ.into()] }),
        ..WorldOptions::default()
    };
    let world = WorldFixtures::build(&options);
    let read = load(&world).unwrap().into_iter().find(|g| g.id == GRANT_READ).unwrap();
    assert_eq!(read.constraints.expires_at.as_deref(), Some("2026-08-18T09:00:01.000Z"));
    let mut record: sharedos_model::audit::AuditEvent = serde_json::from_value(serde_json::json!({
        "version": "1", "id": "audit-1", "type": "tool.invoked", "outcome": "succeeded", "at": NOW,
        "traceId": TRACE_ID, "namespaceId": NAMESPACE_ID,
        "actor": {"kind": "agent", "agentId": "agent-mallory"}, "authority": {"kind": "agent", "agentId": "agent-orchestrator"},
        "owner": {"kind": "human", "userId": "user-alice"}, "purpose": "conformance-probe"
    }))
    .unwrap();
    block_on(world.audit.write(&record)).unwrap();
    assert_eq!(world.clock.now(), "2026-08-18T09:00:01.000Z");
    record.kind = sharedos_model::audit::AuditType::AuthorizationChecked;
    block_on(world.audit.write(&record)).unwrap();
    assert_eq!(world.clock.now(), "2026-08-18T09:00:01.000Z");
}

#[test]
fn outages_broker_and_ceiling_are_armed_from_the_options() {
    let options = WorldOptions {
        usage_store_unavailable: true,
        authority_fails_after_loads: Some(0),
        broker: Some(BrokerMode::Granted),
        host_policy_frozen: true,
        route_revoked_after_deliveries: Some(1),
        ..WorldOptions::default()
    };
    let world = WorldFixtures::build(&options);
    assert!(load(&world).is_err());
    assert!(world.usage.get_usage(NAMESPACE_ID, "grant-ledger").is_err());
    assert!(world.grants.find("grant-broker-search").is_some());
    assert!(world.grants.find("grant-ledger").is_some(), "the outage implies the bounded grant");
    assert!(world.broker.is_some() && world.ceiling.is_some());
}
