//! The per-turn state shared by the executor, the host handle and the
//! mediation of calls.

use crate::annotations::Annotations;
use crate::deadline::TurnDeadlines;
use crate::events::EventLog;
use crate::options::Clock;
use crate::retry::RetryLedger;
use crate::tasks::TaskSet;
use serde_json::Value;
use sharedos_model::access::AccessContext;
use sharedos_model::execution::RuntimeLimits;
use sharedos_model::tool::ToolDefinition;
use sharedos_port::turn_kernel::TurnKernel;
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::Arc;
use tokio::sync::Notify;

/// The turn's effective catalogue, fixed once at opening: each offered
/// tool's name and whether a repeat of its call can add an effect. The
/// definitions themselves go to the runtime's request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Catalogue {
    entries: Vec<(String, bool)>,
}

impl Catalogue {
    /// Kernel-listed definitions whose names were requested, in kernel
    /// order, and the catalogue of their names.
    pub(crate) fn effective(
        listed: Vec<Arc<ToolDefinition>>,
        requested: &[ToolDefinition],
    ) -> (Catalogue, Vec<Arc<ToolDefinition>>) {
        let names: BTreeSet<&str> = requested.iter().map(|t| t.name.as_str()).collect();
        let tools: Vec<Arc<ToolDefinition>> = listed.into_iter().filter(|t| names.contains(t.name.as_str())).collect();
        let entries = tools.iter().map(|t| (t.name.clone(), t.is_repeatable())).collect();
        (Catalogue { entries }, tools)
    }

    pub(crate) fn offers(&self, name: &str) -> bool {
        self.entries.iter().any(|(offered, _)| offered == name)
    }

    /// A call to `name` cannot add an effect when repeated (read or idempotent).
    pub(crate) fn repeatable(&self, name: &str) -> bool {
        self.entries.iter().any(|(offered, repeatable)| offered == name && *repeatable)
    }

    pub(crate) fn names(&self) -> Vec<String> {
        self.entries.iter().map(|(name, _)| name.clone()).collect()
    }
}

/// Budgets consumed by mediated calls.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    pub(crate) tool_calls: u32,
    pub(crate) steps: BTreeSet<u64>,
}

/// Mediated calls that have not settled yet.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    count: Cell<usize>,
    idle: Notify,
}

impl InFlight {
    pub(crate) fn started(&self) {
        self.count.set(self.count.get() + 1);
    }

    pub(crate) fn finished(&self) {
        self.count.set(self.count.get().saturating_sub(1));
        if self.count.get() == 0 {
            self.idle.notify_waiters();
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.count.get() == 0
    }

    /// Resolves once no mediated call is in flight.
    pub(crate) async fn settled(&self) {
        loop {
            let idle = self.idle.notified();
            if self.is_empty() {
                return;
            }
            idle.await;
        }
    }
}

/// Everything one turn shares between its parts.
pub(crate) struct Turn {
    pub(crate) kernel: Rc<dyn TurnKernel>,
    pub(crate) clock: Rc<dyn Clock>,
    /// `{id, version, protocolVersion}` as events carry it.
    pub(crate) provenance: Value,
    pub(crate) execution_id: String,
    /// The request's context stamped at turn opening.
    pub(crate) context: AccessContext,
    pub(crate) limits: RuntimeLimits,
    pub(crate) deadlines: TurnDeadlines,
    pub(crate) tasks: TaskSet,
    pub(crate) events: EventLog,
    pub(crate) annotations: Annotations,
    pub(crate) ledger: RetryLedger,
    pub(crate) catalogue: RefCell<Catalogue>,
    pub(crate) budget: RefCell<Budget>,
    pub(crate) active: Cell<bool>,
    pub(crate) in_flight: InFlight,
    /// The context last stamped by [`Turn::context_now`], reused while the
    /// clock reads the same instant.
    pub(crate) stamped: RefCell<Option<Rc<AccessContext>>>,
}

impl Turn {
    /// The execution context at the clock's current instant.
    pub(crate) fn context_now(&self) -> Rc<AccessContext> {
        let now = self.clock.now();
        let mut stamped = self.stamped.borrow_mut();
        match &*stamped {
            Some(context) if context.now == now => Rc::clone(context),
            _ => {
                let context = Rc::new(AccessContext { now, ..self.context.clone() });
                *stamped = Some(Rc::clone(&context));
                context
            }
        }
    }

    /// Whether the host still takes calls: open, and the hard signal quiet.
    pub(crate) fn live(&self) -> bool {
        self.active.get() && !self.deadlines.hard().is_aborted()
    }
}
