//! Bounds of the `ledger` option's handler timings.

use crate::input::error::{LoadError, Site};
use sharedos_model::execution::MAX_EXECUTION_TIMEOUT_MS;
use sharedos_world::options::ledger::LedgerOption;

/// Every timing within the longest turn deadline.
pub(crate) fn check(ledger: &LedgerOption, site: &Site<'_>) -> Result<(), LoadError> {
    let timings =
        [("transferMs", ledger.transfer_ms), ("balanceMs", ledger.balance_ms), ("setLimitMs", ledger.set_limit_ms)];
    for (key, value) in timings {
        if value.is_some_and(|ms| ms > MAX_EXECUTION_TIMEOUT_MS) {
            return Err(site.child(key).out_of_bounds(format!("an integer from 0 to {MAX_EXECUTION_TIMEOUT_MS}")));
        }
    }
    Ok(())
}
