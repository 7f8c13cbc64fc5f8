//! The recording audit sink: deep copies of every accepted record, an
//! optional observer (the moving clock), and outages a condition can arm.

use futures::future::LocalBoxFuture;
use sharedos_kernel::ports::AuditSink;
use sharedos_model::audit::{AuditEvent, AuditType};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Receives every accepted record (the moving clock listens here).
pub type AuditObserver = Rc<dyn Fn(&AuditEvent)>;

/// When the sink starts refusing writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditTrigger {
    /// From the `nth` (1-based) write of `kind` on, every write of that kind.
    NthOfKind {
        /// The record type.
        kind: AuditType,
        /// Which write of that type fails first.
        nth: u64,
    },
    /// Once `operations` `tool.invoked` records were accepted, every write.
    AfterOperations(u64),
}

/// What a refused write does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditFailure {
    /// The write returns an error.
    Throw,
    /// The write never answers (exercises write timeouts).
    Hang,
}

/// An armed outage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditFault {
    /// When it starts.
    pub trigger: AuditTrigger,
    /// What it does.
    pub failure: AuditFailure,
}

/// The recording sink.
#[derive(Default)]
pub struct RecordingAudit {
    events: RefCell<Vec<AuditEvent>>,
    refused: RefCell<Vec<AuditEvent>>,
    attempts_by_kind: RefCell<std::collections::BTreeMap<AuditType, u64>>,
    operations: Cell<u64>,
    fault: Cell<Option<AuditFault>>,
    observer: RefCell<Option<AuditObserver>>,
}

impl RecordingAudit {
    /// A sink that accepts everything.
    #[must_use]
    pub fn new() -> RecordingAudit {
        RecordingAudit::default()
    }

    /// Calls `observer` with every accepted record, after it is stored.
    pub fn set_observer(&self, observer: AuditObserver) {
        *self.observer.borrow_mut() = Some(observer);
    }

    /// Arms an outage (replacing any armed one).
    pub fn arm(&self, fault: AuditFault) {
        self.fault.set(Some(fault));
    }

    /// Throws from the `nth` write of `kind` on.
    pub fn fail_from_nth(&self, kind: AuditType, nth: u64) {
        self.arm(AuditFault { trigger: AuditTrigger::NthOfKind { kind, nth }, failure: AuditFailure::Throw });
    }

    /// Throws on every write once `n` tool operations were recorded.
    pub fn fail_after_operations(&self, n: u64) {
        self.arm(AuditFault { trigger: AuditTrigger::AfterOperations(n), failure: AuditFailure::Throw });
    }

    /// Copies of the accepted records, in order.
    #[must_use]
    pub fn events(&self) -> Vec<AuditEvent> {
        self.events.borrow().clone()
    }

    /// What `read` answers from the accepted records, lent rather than
    /// copied. `read` must not write to this log.
    pub fn with_events<R>(&self, read: impl FnOnce(&[AuditEvent]) -> R) -> R {
        read(&self.events.borrow())
    }

    /// Accepted records of `kind`.
    #[must_use]
    pub fn of_kind(&self, kind: AuditType) -> Vec<AuditEvent> {
        self.events.borrow().iter().filter(|e| e.kind == kind).cloned().collect()
    }

    /// Records the sink refused (never part of the log).
    #[must_use]
    pub fn refused(&self) -> Vec<AuditEvent> {
        self.refused.borrow().clone()
    }

    /// How many records were accepted and how many refused so far, without
    /// copying either list.
    #[must_use]
    pub fn counts(&self) -> (usize, usize) {
        (self.events.borrow().len(), self.refused.borrow().len())
    }

    /// `tool.invoked` records accepted so far.
    #[must_use]
    pub fn operations(&self) -> u64 {
        self.operations.get()
    }

    /// Counts the write and answers whether the armed fault refuses it.
    fn refusal(&self, event: &AuditEvent) -> Option<AuditFailure> {
        let nth = {
            let mut attempts = self.attempts_by_kind.borrow_mut();
            let count = attempts.entry(event.kind).or_insert(0);
            *count += 1;
            *count
        };
        let fault = self.fault.get()?;
        let refuses = match fault.trigger {
            AuditTrigger::NthOfKind { kind, nth: from } => event.kind == kind && nth >= from,
            AuditTrigger::AfterOperations(n) => self.operations.get() >= n,
        };
        refuses.then_some(fault.failure)
    }

    fn accept(&self, event: &AuditEvent) {
        self.events.borrow_mut().push(event.clone());
        if event.kind == AuditType::ToolInvoked {
            self.operations.set(self.operations.get() + 1);
        }
        let observer = self.observer.borrow().clone();
        if let Some(observe) = observer {
            observe(event);
        }
    }
}

impl AuditSink for RecordingAudit {
    fn write<'a>(&'a self, event: &'a AuditEvent) -> LocalBoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            match self.refusal(event) {
                None => {
                    self.accept(event);
                    Ok(())
                }
                Some(failure) => {
                    self.refused.borrow_mut().push(event.clone());
                    if failure == AuditFailure::Hang {
                        futures::future::pending::<()>().await;
                    }
                    Err(format!("the audit sink refused a {} record", event.kind.as_str()))
                }
            }
        })
    }

    fn write_owned<'a>(&'a self, event: AuditEvent) -> LocalBoxFuture<'a, Result<(), (AuditEvent, String)>> {
        Box::pin(async move {
            match self.refusal(&event) {
                // Without an observer an accepted record is kept as handed over.
                None if self.observer.borrow().is_none() => {
                    if event.kind == AuditType::ToolInvoked {
                        self.operations.set(self.operations.get() + 1);
                    }
                    self.events.borrow_mut().push(event);
                    Ok(())
                }
                None => {
                    self.accept(&event);
                    Ok(())
                }
                Some(failure) => {
                    self.refused.borrow_mut().push(event.clone());
                    if failure == AuditFailure::Hang {
                        futures::future::pending::<()>().await;
                    }
                    let why = format!("the audit sink refused a {} record", event.kind.as_str());
                    Err((event, why))
                }
            }
        })
    }
}
