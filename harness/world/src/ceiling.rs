//! The `hostPolicyFrozen` host ceiling: any decision on `files` paths under
//! `Workspace/ledger`, or on any mutation action, is refused. It also
//! applies at discovery, so mutation tools vanish from the catalogue. With
//! `hostPolicyMalfunctions` the same ceiling breaks instead of refusing on
//! the ledger subtree, which the kernel must treat as an outage.

use super::constants::{FILES, LEDGER_TREE, MUTATION_ACTIONS};
use serde_json::{json, Map, Value};
use sharedos_authz::ports::{CeilingVerdict, HostCeiling};
use sharedos_model::access::AccessContext;
use sharedos_model::capability::{Decision, Requirement};
use std::cell::RefCell;

/// The rule a refusal names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FrozenRule {
    /// The ledger subtree is frozen.
    LedgerFrozen,
    /// No mutation is allowed anywhere.
    NoMutations,
}

impl FrozenRule {
    /// The metadata spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            FrozenRule::LedgerFrozen => "ledger-frozen",
            FrozenRule::NoMutations => "no-mutations",
        }
    }

    /// The refusal's metadata, `{rule}`.
    #[must_use]
    pub fn metadata(self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("rule".into(), json!(self.as_str()));
        map
    }
}

/// The rule that refuses `requirement`, if any (the ledger rule first).
#[must_use]
pub fn frozen_rule(requirement: &Requirement) -> Option<FrozenRule> {
    let resource = &requirement.resource;
    let in_ledger = resource.namespace == FILES
        && resource.path.len() >= LEDGER_TREE.len()
        && resource.path.iter().zip(LEDGER_TREE).all(|(a, b)| a == b);
    if in_ledger {
        Some(FrozenRule::LedgerFrozen)
    } else if MUTATION_ACTIONS.contains(&requirement.action.as_str()) {
        Some(FrozenRule::NoMutations)
    } else {
        None
    }
}

/// The frozen-ledger ceiling; records every requirement it was shown.
#[derive(Debug, Default)]
pub struct FrozenCeiling {
    consulted: RefCell<Vec<Requirement>>,
    ledger_malfunctions: bool,
}

impl FrozenCeiling {
    /// A new ceiling.
    #[must_use]
    pub fn new() -> FrozenCeiling {
        FrozenCeiling::default()
    }

    /// A ceiling that malfunctions on the ledger subtree instead of refusing.
    #[must_use]
    pub fn malfunctioning_on_the_ledger() -> FrozenCeiling {
        FrozenCeiling { ledger_malfunctions: true, ..FrozenCeiling::default() }
    }

    /// Requirements it was consulted on, in order.
    #[must_use]
    pub fn consulted(&self) -> Vec<Requirement> {
        self.consulted.borrow().clone()
    }
}

impl HostCeiling for FrozenCeiling {
    fn narrow(
        &self,
        allowed: &Decision,
        requirement: &Requirement,
        _context: &AccessContext,
        _policy: Option<&Value>,
    ) -> CeilingVerdict {
        self.consulted.borrow_mut().push(requirement.clone());
        match frozen_rule(requirement) {
            Some(FrozenRule::LedgerFrozen) if self.ledger_malfunctions => CeilingVerdict::Malfunction,
            Some(rule) => CeilingVerdict::Deny(Some(rule.metadata())),
            None => CeilingVerdict::Allow(allowed.clone()),
        }
    }
}
