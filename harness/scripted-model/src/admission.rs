//! How many connections a loopback server serves at once.
//!
//! Every listener the harness opens for a turn (the scripted model here,
//! the MCP server over HTTP and on a Unix socket) takes a connection only
//! once it holds a permit, and the connection keeps it until it closes.
//! A connection past the cap is not refused: it waits in the kernel's
//! listen queue, where it costs the harness no memory, until a served one
//! closes. What one served connection can hold is bounded by its server
//! (a request's head by hyper's buffer, a body by the server's limit), so
//! what any number of peers can make a server hold is bounded too.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The connections a turn's server serves at once. A CLI keeps a few
/// (the model loop, a side request, a token count); the rest of the
/// queue waits.
pub const MAX_CONNECTIONS: usize = 16;

/// The permits of one server, and how many connections it serves.
#[derive(Debug, Clone)]
pub struct Admission {
    permits: Arc<Semaphore>,
    gauge: Arc<Gauge>,
}

#[derive(Debug, Default)]
struct Gauge {
    now: AtomicUsize,
    most: AtomicUsize,
}

/// A permit held while a connection is accepted.
#[derive(Debug)]
pub struct Permit {
    permit: OwnedSemaphorePermit,
    gauge: Arc<Gauge>,
}

/// An accepted connection's place: the permit goes back when it drops.
#[derive(Debug)]
pub struct Ticket {
    _permit: OwnedSemaphorePermit,
    gauge: Arc<Gauge>,
}

impl Admission {
    /// Permits for `cap` connections at once.
    #[must_use]
    pub fn new(cap: usize) -> Admission {
        Admission { permits: Arc::new(Semaphore::new(cap)), gauge: Arc::new(Gauge::default()) }
    }

    /// Waits for a free place. Dropped before it resolves, it takes none.
    /// `None` only once the permits are closed, which nothing does.
    pub async fn permit(&self) -> Option<Permit> {
        let permit = Arc::clone(&self.permits).acquire_owned().await.ok()?;
        Some(Permit { permit, gauge: Arc::clone(&self.gauge) })
    }

    /// How many connections are served now.
    #[must_use]
    pub fn serving(&self) -> usize {
        self.gauge.now.load(Ordering::SeqCst)
    }

    /// The most connections served at once so far.
    #[must_use]
    pub fn most_served(&self) -> usize {
        self.gauge.most.load(Ordering::SeqCst)
    }
}

impl Permit {
    /// The permit given to a connection just accepted.
    #[must_use]
    pub fn admit(self) -> Ticket {
        let now = self.gauge.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.gauge.most.fetch_max(now, Ordering::SeqCst);
        Ticket { _permit: self.permit, gauge: self.gauge }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.gauge.now.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_place_comes_back_when_its_connection_closes() {
        let admission = Admission::new(2);
        let first = admission.permit().await.unwrap().admit();
        let second = admission.permit().await.unwrap().admit();
        assert_eq!((admission.serving(), admission.most_served()), (2, 2));
        let third = admission.permit();
        tokio::pin!(third);
        assert!(futures::poll!(third.as_mut()).is_pending(), "a third waits for a place");
        drop(first);
        let third = third.await.unwrap().admit();
        assert_eq!((admission.serving(), admission.most_served()), (2, 2));
        drop((second, third));
        assert_eq!(admission.serving(), 0);
    }
}
