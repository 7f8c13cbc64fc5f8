//! A seat's process across turns: started on first use, handshaken once,
//! reused by every later turn, and replaced after a violation.

use crate::breach::{Breach, BreachPhase};
use crate::launch::Launch;
use crate::session::Session;
use crate::violation::Violation;
use sharedos_model::execution::RuntimeManifest;
use sharedos_model::validate::Validate;
use std::cell::RefCell;
use std::rc::Rc;

/// One seat's runtime process, shared by the turns one worker runs.
pub struct ProcessSeat {
    launch: Launch,
    fallback: RuntimeManifest,
    session: RefCell<Option<Rc<Session>>>,
    manifest: RefCell<Option<RuntimeManifest>>,
    failed_start: RefCell<Option<Breach>>,
}

impl std::fmt::Debug for ProcessSeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessSeat").field("command", &self.launch.command).finish_non_exhaustive()
    }
}

impl ProcessSeat {
    /// A seat that starts `launch` when first asked; `fallback` is the
    /// manifest recorded for a turn whose process never said `ready`.
    #[must_use]
    pub fn new(launch: Launch, fallback: RuntimeManifest) -> ProcessSeat {
        ProcessSeat {
            launch,
            fallback,
            session: RefCell::new(None),
            manifest: RefCell::new(None),
            failed_start: RefCell::new(None),
        }
    }

    /// The running session, starting and handshaking a process when there
    /// is none. A failed start is remembered: every later turn of this
    /// seat fails with it at once rather than trying again (a runtime that
    /// never says `ready` would cost each turn its whole start-up wait).
    pub async fn prepare(&self) {
        if self.session.borrow().is_some() || self.failed_start.borrow().is_some() {
            return;
        }
        let started = match Session::start(&self.launch) {
            Ok(session) => Rc::new(session),
            Err(error) => {
                let violation =
                    Violation::FailedToStart { command: self.launch.command.clone(), error: error.to_string() };
                *self.failed_start.borrow_mut() = Some(violation.breach(BreachPhase::Start, None, ""));
                return;
            }
        };
        let violation = match started.handshake().await {
            Ok(manifest) => match manifest.validate() {
                Ok(()) => {
                    *self.manifest.borrow_mut() = Some(manifest);
                    *self.session.borrow_mut() = Some(started);
                    return;
                }
                Err(error) => Violation::NotReady { detail: format!("its manifest does not validate: {error}") },
            },
            Err(violation) => violation,
        };
        let received = if violation.is_the_last_line() { started.last_received().await } else { None };
        started.shut_down();
        let breach = violation.breach(BreachPhase::Start, received, &started.stderr_tail());
        *self.failed_start.borrow_mut() = Some(breach);
    }

    /// The session [`ProcessSeat::prepare`] started, or why there is none.
    ///
    /// # Errors
    /// The breach that kept the process from starting.
    pub async fn start(&self) -> Result<Rc<Session>, Breach> {
        self.prepare().await;
        if let Some(breach) = self.failed_start.borrow().clone() {
            return Err(breach);
        }
        let exited = Violation::Exited { awaited: crate::violation::Awaited::Ready };
        self.session().ok_or_else(|| exited.breach(BreachPhase::Start, None, ""))
    }

    /// The running session, if any.
    #[must_use]
    pub fn session(&self) -> Option<Rc<Session>> {
        self.session.borrow().clone()
    }

    /// The manifest the runtime said `ready` with (the fallback before it did).
    #[must_use]
    pub fn manifest(&self) -> RuntimeManifest {
        self.manifest.borrow().clone().unwrap_or_else(|| self.fallback.clone())
    }

    /// Kills the process (after a violation); the next turn starts a fresh
    /// one. Returns the end of what it wrote on stderr after `mark`.
    pub fn discard(&self, mark: u64) -> String {
        match self.session.borrow_mut().take() {
            Some(session) => {
                session.shut_down();
                session.stderr_since(mark)
            }
            None => String::new(),
        }
    }
}
