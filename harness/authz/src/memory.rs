//! In-memory ports for a single-threaded kernel and for tests.

use crate::ports::{DelegationResolver, StoreError, UsageStore};
use sharedos_model::capability::Grant;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

/// A usage counter per (namespace, grant), spent atomically by construction
/// (one thread, no await between read and write).
#[derive(Debug, Default)]
pub struct InMemoryUsage {
    spent: RefCell<BTreeMap<(String, String), u64>>,
}

impl InMemoryUsage {
    /// An empty counter.
    #[must_use]
    pub fn new() -> InMemoryUsage {
        InMemoryUsage::default()
    }

    /// Uses spent so far on `grant_id` in `namespace_id`.
    #[must_use]
    pub fn spent(&self, namespace_id: &str, grant_id: &str) -> u64 {
        self.spent.borrow().get(&(namespace_id.to_string(), grant_id.to_string())).copied().unwrap_or(0)
    }
}

impl UsageStore for InMemoryUsage {
    fn get_usage(&self, namespace_id: &str, grant_id: &str) -> Result<u64, StoreError> {
        Ok(self.spent(namespace_id, grant_id))
    }

    fn try_consume(&self, namespace_id: &str, grant_id: &str, max_uses: u64) -> Result<bool, StoreError> {
        let mut spent = self.spent.borrow_mut();
        let count = spent.entry((namespace_id.to_string(), grant_id.to_string())).or_insert(0);
        if *count >= max_uses {
            return Ok(false);
        }
        *count += 1;
        Ok(true)
    }
}

/// A usage store that is always down, for fail-closed paths.
#[derive(Debug, Default)]
pub struct FailingUsage {
    reads: Cell<usize>,
}

impl FailingUsage {
    /// A store that fails every call.
    #[must_use]
    pub fn new() -> FailingUsage {
        FailingUsage::default()
    }

    /// How many calls it refused.
    #[must_use]
    pub fn calls(&self) -> usize {
        self.reads.get()
    }

    fn fail(&self) -> StoreError {
        self.reads.set(self.reads.get() + 1);
        StoreError { store: "usage", detail: "the in-memory usage store is configured to fail".to_string() }
    }
}

impl UsageStore for FailingUsage {
    fn get_usage(&self, _namespace_id: &str, _grant_id: &str) -> Result<u64, StoreError> {
        Err(self.fail())
    }

    fn try_consume(&self, _namespace_id: &str, _grant_id: &str, _max_uses: u64) -> Result<bool, StoreError> {
        Err(self.fail())
    }
}

/// Ancestor grants held in memory, keyed by (namespace, id); the issuing
/// side can revoke or expire them while turns run.
#[derive(Debug, Default)]
pub struct InMemoryResolver {
    // Shared so a lookup hands out a reference count; an edit copies a grant
    // some caller still holds, so nothing a caller holds ever changes.
    grants: RefCell<BTreeMap<String, BTreeMap<String, Rc<Grant>>>>,
    failing: Cell<bool>,
    lookups: Cell<usize>,
}

impl InMemoryResolver {
    /// A resolver over `grants` (a later grant with the same key replaces an earlier one).
    #[must_use]
    /// Grants may come shared (`Rc<Grant>`): the resolver then holds the
    /// same grant, and an edit copies it.
    pub fn new<G: Into<Rc<Grant>>>(grants: impl IntoIterator<Item = G>) -> InMemoryResolver {
        let resolver = InMemoryResolver::default();
        for grant in grants {
            resolver.insert_shared(grant.into());
        }
        resolver
    }

    /// Adds or replaces one grant.
    pub fn insert(&self, grant: Grant) {
        self.insert_shared(Rc::new(grant));
    }

    fn insert_shared(&self, grant: Rc<Grant>) {
        let mut grants = self.grants.borrow_mut();
        grants.entry(grant.namespace_id.clone()).or_default().insert(grant.id.clone(), grant);
    }

    /// Marks every grant with `grant_id` revoked at `at`; false when there is none.
    pub fn revoke(&self, grant_id: &str, at: &str) -> bool {
        self.edit(grant_id, |g| g.revoked_at = Some(at.to_string()))
    }

    /// Sets every grant with `grant_id` to expire at `at`; false when there is none.
    pub fn expire(&self, grant_id: &str, at: &str) -> bool {
        self.edit(grant_id, |g| g.constraints.expires_at = Some(at.to_string()))
    }

    /// Makes every later lookup fail (`true`) or answer again (`false`).
    pub fn set_failing(&self, failing: bool) {
        self.failing.set(failing);
    }

    /// How many lookups were made.
    #[must_use]
    pub fn lookups(&self) -> usize {
        self.lookups.get()
    }

    fn edit(&self, grant_id: &str, change: impl Fn(&mut Grant)) -> bool {
        let mut found = false;
        for grant in self.grants.borrow_mut().values_mut().flat_map(BTreeMap::values_mut).filter(|g| g.id == grant_id) {
            change(Rc::make_mut(grant));
            found = true;
        }
        found
    }
}

impl DelegationResolver for InMemoryResolver {
    fn resolve(&self, namespace_id: &str, grant_id: &str) -> Result<Option<Grant>, StoreError> {
        self.resolve_shared(namespace_id, grant_id).map(|grant| grant.map(|g| (*g).clone()))
    }

    fn resolve_shared(&self, namespace_id: &str, grant_id: &str) -> Result<Option<Rc<Grant>>, StoreError> {
        self.lookups.set(self.lookups.get() + 1);
        if self.failing.get() {
            return Err(StoreError {
                store: "delegation",
                detail: "the in-memory resolver is configured to fail".to_string(),
            });
        }
        Ok(self.grants.borrow().get(namespace_id).and_then(|ids| ids.get(grant_id)).map(Rc::clone))
    }
}
