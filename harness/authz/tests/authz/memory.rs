//! The in-memory ports used by the kernel and by tests.

use crate::common;

use common::*;
use sharedos_authz::memory::{FailingUsage, InMemoryResolver, InMemoryUsage};
use sharedos_authz::ports::{DelegationResolver, UsageStore};

#[test]
fn k46_in_memory_usage_counts_per_namespace_and_grant_and_stops_at_the_bound() {
    let usage = InMemoryUsage::new();
    assert_eq!(usage.try_consume(NS, "g", 2), Ok(true));
    assert_eq!(usage.try_consume(NS, "g", 2), Ok(true));
    assert_eq!(usage.try_consume(NS, "g", 2), Ok(false));
    assert_eq!(usage.get_usage(NS, "g"), Ok(2));
    assert_eq!(usage.get_usage("world-other", "g"), Ok(0), "namespaces never share a counter");
    assert_eq!(usage.get_usage(NS, "h"), Ok(0));
}

#[test]
fn k48_the_failing_usage_store_fails_every_call() {
    let usage = FailingUsage::new();
    assert!(usage.get_usage(NS, "g").is_err());
    assert!(usage.try_consume(NS, "g", 1).is_err());
    assert_eq!(usage.calls(), 2);
}

#[test]
fn k53_the_in_memory_resolver_revokes_and_expires_by_id_within_its_namespace() {
    let parent = root("grant-root-files", vec![files(&["Workspace"], &["read"])]);
    let resolver = InMemoryResolver::new([parent.clone()]);
    assert_eq!(resolver.resolve(NS, "grant-root-files"), Ok(Some(parent)));
    assert_eq!(resolver.resolve("world-other", "grant-root-files"), Ok(None));
    assert!(resolver.revoke("grant-root-files", LATER));
    assert!(resolver.expire("grant-root-files", "2026-08-19T00:00:00.000Z"));
    assert!(!resolver.revoke("grant-unknown", LATER));
    let edited = resolver.resolve(NS, "grant-root-files").unwrap().unwrap();
    assert_eq!(edited.revoked_at.as_deref(), Some(LATER));
    assert_eq!(edited.constraints.expires_at.as_deref(), Some("2026-08-19T00:00:00.000Z"));
    resolver.set_failing(true);
    assert!(resolver.resolve(NS, "grant-root-files").is_err());
    assert_eq!(resolver.lookups(), 4);
}
