//! A per-turn set of background futures, driven beside the turn body.
//!
//! Kernel calls, mediations and timers must keep running after whoever
//! started them stops listening (a plugin that threw, a race lost to the
//! hard signal), just as promises do in SharedOS. Everything here is `Rc`
//! based, so instead of `spawn_local` (which needs a `LocalSet`) the turn
//! drives its own set from inside `execute`.

use futures::future::LocalBoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// A cheap clone handle over the turn's background futures.
#[derive(Clone, Default)]
pub struct TaskSet {
    inner: Rc<TaskSetInner>,
}

#[derive(Default)]
struct TaskSetInner {
    running: RefCell<FuturesUnordered<LocalBoxFuture<'static, ()>>>,
    // Futures spawned while the set is being polled wait here, so spawning
    // from inside a running task never re-borrows `running`.
    incoming: RefCell<Vec<LocalBoxFuture<'static, ()>>>,
    waker: RefCell<Option<Waker>>,
}

impl std::fmt::Debug for TaskSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSet").field("pending", &self.pending()).finish()
    }
}

impl TaskSet {
    /// An empty set.
    #[must_use]
    pub fn new() -> TaskSet {
        TaskSet::default()
    }

    /// Adds a future; it runs whenever the set is driven.
    pub fn spawn(&self, future: impl Future<Output = ()> + 'static) {
        self.inner.incoming.borrow_mut().push(Box::pin(future));
        if let Some(waker) = self.inner.waker.borrow_mut().take() {
            waker.wake();
        }
    }

    /// How many futures have not finished yet.
    #[must_use]
    pub fn pending(&self) -> usize {
        let running = self.inner.running.try_borrow().map(|r| r.len()).unwrap_or(0);
        running + self.inner.incoming.borrow().len()
    }

    /// Drives the set forever (never resolves); race it against a body.
    pub async fn drive(&self) {
        std::future::poll_fn(|cx| {
            let _ = self.poll_until_idle(cx);
            Poll::<()>::Pending
        })
        .await;
    }

    /// Drives the set until every future in it has finished.
    pub async fn drive_to_completion(&self) {
        std::future::poll_fn(|cx| self.poll_until_idle(cx)).await;
    }

    /// Polls until nothing is ready; `Ready` once the set is empty.
    fn poll_until_idle(&self, cx: &mut Context<'_>) -> Poll<()> {
        *self.inner.waker.borrow_mut() = Some(cx.waker().clone());
        loop {
            let incoming = std::mem::take(&mut *self.inner.incoming.borrow_mut());
            let Ok(mut running) = self.inner.running.try_borrow_mut() else {
                return Poll::Pending;
            };
            running.extend(incoming);
            let polled = running.poll_next_unpin(cx);
            drop(running);
            let more = !self.inner.incoming.borrow().is_empty();
            match polled {
                Poll::Ready(Some(())) => continue,
                Poll::Ready(None) if !more => return Poll::Ready(()),
                Poll::Pending if !more => return Poll::Pending,
                _ => continue,
            }
        }
    }
}

impl TaskSet {
    /// Drops every future still in the set.
    pub fn clear(&self) {
        self.inner.incoming.borrow_mut().clear();
        if let Ok(mut running) = self.inner.running.try_borrow_mut() {
            running.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TaskSet;
    use futures::FutureExt;

    /// `pending` counts the futures still running and those not yet taken up.
    #[test]
    fn pending_counts_running_and_incoming_futures() {
        let set = TaskSet::new();
        set.spawn(std::future::pending());
        set.spawn(std::future::pending());
        assert_eq!(set.pending(), 2, "both incoming");
        assert!(set.drive().now_or_never().is_none());
        set.spawn(std::future::pending());
        assert_eq!(set.pending(), 3, "two running, one incoming");
        set.spawn(async {});
        assert!(set.drive().now_or_never().is_none());
        assert_eq!(set.pending(), 3, "the finished one is gone");
    }
}
