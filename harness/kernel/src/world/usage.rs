//! Usage stores for bounded grants: an in-memory counter and one that is
//! unreachable for both reads and spends (so discovery and execution agree).

use sharedos_authz::ports::{StoreError, UsageStore};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// An in-memory counter keyed by world and grant.
#[derive(Debug, Default)]
pub struct MemoryUsage {
    spent: RefCell<BTreeMap<(String, String), u64>>,
}

impl MemoryUsage {
    /// A counter with nothing spent.
    #[must_use]
    pub fn new() -> MemoryUsage {
        MemoryUsage::default()
    }

    /// Uses spent on `grant_id` so far.
    #[must_use]
    pub fn spent(&self, namespace_id: &str, grant_id: &str) -> u64 {
        self.spent.borrow().get(&(namespace_id.to_string(), grant_id.to_string())).copied().unwrap_or(0)
    }
}

impl UsageStore for MemoryUsage {
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

/// A counter that cannot be reached; counts the attempts.
#[derive(Debug, Default)]
pub struct UnreachableUsage {
    attempts: RefCell<u64>,
}

impl UnreachableUsage {
    /// A new unreachable counter.
    #[must_use]
    pub fn new() -> UnreachableUsage {
        UnreachableUsage::default()
    }

    /// Reads and spends attempted.
    #[must_use]
    pub fn attempts(&self) -> u64 {
        *self.attempts.borrow()
    }

    fn refuse(&self) -> StoreError {
        *self.attempts.borrow_mut() += 1;
        StoreError { store: "usage", detail: "the usage counter is unreachable".to_string() }
    }
}

impl UsageStore for UnreachableUsage {
    fn get_usage(&self, _namespace_id: &str, _grant_id: &str) -> Result<u64, StoreError> {
        Err(self.refuse())
    }

    fn try_consume(&self, _namespace_id: &str, _grant_id: &str, _max_uses: u64) -> Result<bool, StoreError> {
        Err(self.refuse())
    }
}
