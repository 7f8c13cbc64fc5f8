//! A small ledger whose balances are world effects (they go into golden
//! snapshots): accounts, a journal of every debit and credit, and account
//! limits. Its tools take virtual time, so an abort can land between the
//! two halves of a transfer.

use std::cell::RefCell;
use std::collections::BTreeMap;

/// The account a transfer debits in the drain rows.
pub const ACCOUNT_A: &str = "account-a";
/// The account a transfer credits in the drain rows.
pub const ACCOUNT_B: &str = "account-b";
/// Opening balance of account A.
pub const OPENING_A: i64 = 100;
/// Opening balance of account B.
pub const OPENING_B: i64 = 0;

/// Which half of a movement a journal line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Movement {
    /// Money left the account.
    Debit,
    /// Money reached the account.
    Credit,
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalLine {
    /// The call that moved it.
    pub call_id: String,
    /// Debit or credit.
    pub movement: Movement,
    /// The account.
    pub account: String,
    /// The amount (positive).
    pub amount: i64,
}

/// Why the ledger refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// No such account.
    #[error("find account `{0}`")]
    UnknownAccount(String),
}

impl LedgerError {
    /// The code a ledger tool fails with.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            LedgerError::UnknownAccount(_) => "account_absent",
        }
    }
}

#[derive(Debug, Default)]
struct State {
    balances: BTreeMap<String, i64>,
    limits: BTreeMap<String, i64>,
    journal: Vec<JournalLine>,
}

/// The ledger store. Share it as `Rc<Ledger>`.
#[derive(Debug, Default)]
pub struct Ledger {
    state: RefCell<State>,
}

impl Ledger {
    /// The seeded ledger: account A holds 100, account B holds 0.
    #[must_use]
    pub fn seeded() -> Ledger {
        let ledger = Ledger::default();
        {
            let mut state = ledger.state.borrow_mut();
            state.balances.insert(ACCOUNT_A.to_string(), OPENING_A);
            state.balances.insert(ACCOUNT_B.to_string(), OPENING_B);
        }
        ledger
    }

    /// Every balance, by account.
    #[must_use]
    pub fn balances(&self) -> BTreeMap<String, i64> {
        self.state.borrow().balances.clone()
    }

    /// One balance.
    ///
    /// # Errors
    /// When the account does not exist.
    pub fn balance(&self, account: &str) -> Result<i64, LedgerError> {
        self.state
            .borrow()
            .balances
            .get(account)
            .copied()
            .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))
    }

    /// Every limit set, by account.
    #[must_use]
    pub fn limits(&self) -> BTreeMap<String, i64> {
        self.state.borrow().limits.clone()
    }

    /// The journal, in order.
    #[must_use]
    pub fn journal(&self) -> Vec<JournalLine> {
        self.state.borrow().journal.clone()
    }

    /// How many lines the journal holds.
    #[must_use]
    pub fn journal_len(&self) -> usize {
        self.state.borrow().journal.len()
    }

    /// Moves `amount` out of or into `account`, journaled under `call_id`.
    ///
    /// # Errors
    /// When the account does not exist.
    pub fn post(&self, call_id: &str, movement: Movement, account: &str, amount: i64) -> Result<i64, LedgerError> {
        let mut state = self.state.borrow_mut();
        let balance =
            state.balances.get_mut(account).ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))?;
        match movement {
            Movement::Debit => *balance -= amount,
            Movement::Credit => *balance += amount,
        }
        let now = *balance;
        state.journal.push(JournalLine {
            call_id: call_id.to_string(),
            movement,
            account: account.to_string(),
            amount,
        });
        Ok(now)
    }

    /// Sets an account's limit; repeating it changes nothing further.
    ///
    /// # Errors
    /// When the account does not exist.
    pub fn set_limit(&self, account: &str, limit: i64) -> Result<(), LedgerError> {
        let mut state = self.state.borrow_mut();
        if !state.balances.contains_key(account) {
            return Err(LedgerError::UnknownAccount(account.to_string()));
        }
        state.limits.insert(account.to_string(), limit);
        Ok(())
    }
}
