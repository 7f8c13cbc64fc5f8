//! Calls into the kernel from the turn body: each raced against the hard
//! signal, run on the turn's task set so a lost race cannot cancel it, and
//! what such a call (or the runtime) throws into the turn.

use crate::error::RuntimeFailure;
use crate::turn::Turn;
use sharedos_port::audit::AuditUnavailable;
use sharedos_port::error::KernelError;
use sharedos_port::signal::{AbortReason, AbortSignal};
use std::future::Future;
use std::rc::Rc;
use tokio::sync::oneshot;

/// Something thrown inside the turn body.
#[derive(Debug, Clone)]
pub(crate) enum Thrown {
    /// The runtime's `run` returned `Err`.
    Runtime(RuntimeFailure),
    /// A kernel future rejected.
    Kernel(KernelError),
    /// A race was lost to the hard signal.
    Aborted(AbortReason),
    /// The runtime answered although the turn had met an outage.
    Outage(AuditUnavailable),
}

/// Awaits `future` unless the hard signal fires first (already fired counts).
pub(crate) async fn race<T>(hard: &AbortSignal, future: impl Future<Output = T>) -> Result<T, AbortReason> {
    tokio::select! {
        biased;
        () = hard.aborted() => Err(hard.reason().unwrap_or(AbortReason::TurnClosed)),
        value = future => Ok(value),
    }
}

/// Runs a kernel future on the turn's task set (so it outlives a lost
/// race), latches any outage it rejects with, and races its answer.
pub(crate) async fn kernel_op<T: 'static>(
    turn: &Rc<Turn>,
    operation: impl Future<Output = Result<T, KernelError>> + 'static,
) -> Result<T, Thrown> {
    let (tx, rx) = oneshot::channel();
    let watcher = turn.clone();
    turn.tasks.spawn(async move {
        let answer = operation.await;
        if let Err(error) = &answer {
            let _ = watcher.ledger.watch(error);
        }
        let _ = tx.send(answer);
    });
    match race(turn.deadlines.hard(), rx).await {
        Err(reason) => Err(Thrown::Aborted(reason)),
        Ok(Err(_)) => Err(Thrown::Aborted(AbortReason::TurnClosed)),
        Ok(Ok(Err(error))) => Err(Thrown::Kernel(error)),
        Ok(Ok(Ok(value))) => Ok(value),
    }
}
