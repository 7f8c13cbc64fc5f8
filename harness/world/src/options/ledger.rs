//! The ledger a world can attach: two accounts, tools whose handlers take
//! virtual time and honour the abort, and a grant over every account. Its
//! balances are world effects, graded and kept in golden snapshots.

use crate::constants::LEDGER;
use crate::ledger::Ledger;
use crate::ledger_tools::{ledger_tools, LedgerTimings};
use serde::{Deserialize, Serialize};
use sharedos_kernel::ports::ToolHandler;
use std::rc::Rc;

/// Attach the ledger, optionally with its own handler timings (virtual ms).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LedgerOption {
    /// Between a transfer's debit and its credit (default 3000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_ms: Option<u64>,
    /// Before a balance is read (default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance_ms: Option<u64>,
    /// Before a limit is written (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_limit_ms: Option<u64>,
}

impl LedgerOption {
    /// The handler timings, defaults filled in.
    #[must_use]
    pub fn timings(&self) -> LedgerTimings {
        let defaults = LedgerTimings::default();
        LedgerTimings {
            transfer_ms: self.transfer_ms.unwrap_or(defaults.transfer_ms),
            set_limit_ms: self.set_limit_ms.unwrap_or(defaults.set_limit_ms),
            balance_ms: self.balance_ms.unwrap_or(defaults.balance_ms),
        }
    }
}

/// The tool namespace a turn must enable to be offered the ledger tools.
pub const LEDGER_TOOL_NAMESPACE: &str = LEDGER;

/// Registers the ledger tools after `registered` when `option` asks for the
/// ledger, and returns the seeded ledger they share.
#[must_use]
pub fn attach(option: Option<&LedgerOption>, registered: &mut Vec<Rc<dyn ToolHandler>>) -> Option<Rc<Ledger>> {
    let option = option?;
    let ledger = Rc::new(Ledger::seeded());
    registered.extend(ledger_tools(&ledger, option.timings()));
    Some(ledger)
}
