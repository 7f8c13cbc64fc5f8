//! The bridge between the MCP server and the turn.
//!
//! The server runs on rmcp's tasks, which must be `Send`; the turn's host
//! is not, and must stay on the cell's own thread and clock. So the server
//! holds only a [`BridgeSender`] and hands each `tools/call` across a
//! channel; the turn's side, [`Bridge::serve`], makes the call through the
//! escalation latch and sends the result back. Dropping the [`Bridge`]
//! closes it: every call still waiting, and every later one, is refused by
//! the server as `-32603` (D44: the bridge closes before the server).

use crate::latch::EscalationLatch;
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{Map, Value};
use sharedos_envelope::error::HostError;
use sharedos_model::tool::{ToolCall, ToolResult};
use std::cell::RefCell;
use std::rc::Rc;
use tokio::sync::{mpsc, oneshot};

/// One `tools/call`, as the server resolved it.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// The canonical name, or the raw name when none matched.
    pub tool: String,
    /// `params.arguments`, or `{}`.
    pub arguments: Map<String, Value>,
    /// The name the harness sent, when it differs from `tool`.
    pub alias: Option<String>,
}

/// Why the bridge could not answer a call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BridgeError {
    /// The turn has ended and its bridge is closed.
    #[error("reach the turn: its bridge is closed")]
    Closed,
    /// The host refused the call outright (not a tool result).
    #[error(transparent)]
    Host(#[from] HostError),
}

type Pending = (Invocation, oneshot::Sender<Result<ToolResult, BridgeError>>);

/// The server's end: cheap to clone, `Send`, and nothing but a way to ask.
#[derive(Debug, Clone)]
pub struct BridgeSender {
    calls: mpsc::UnboundedSender<Pending>,
}

impl BridgeSender {
    /// Hands one call to the turn and waits for its result.
    ///
    /// # Errors
    /// [`BridgeError::Closed`] once the turn's side is gone.
    pub async fn invoke(&self, invocation: Invocation) -> Result<ToolResult, BridgeError> {
        let (answer, answered) = oneshot::channel();
        self.calls.send((invocation, answer)).map_err(|_| BridgeError::Closed)?;
        answered.await.map_err(|_| BridgeError::Closed)?
    }
}

/// Mints the SharedOS call id of a call: never the harness's JSON-RPC id.
pub type CallIdMinter = Rc<dyn Fn(&str, &Map<String, Value>) -> String>;

/// Where a call is stamped: the turn's trace and the instant it is asked.
#[derive(Clone)]
pub struct CallStamp {
    /// The turn's trace id.
    pub trace_id: String,
    /// The instant a call is requested at.
    pub now: Rc<dyn Fn() -> String>,
}

/// The turn's end of the bridge.
pub struct Bridge {
    calls: mpsc::UnboundedReceiver<Pending>,
    aliases: RefCell<Vec<(String, String)>>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge").field("aliases", &self.aliases).finish_non_exhaustive()
    }
}

/// A new bridge: the turn's end, and the server's.
#[must_use]
pub fn open_bridge() -> (Bridge, BridgeSender) {
    let (sender, calls) = mpsc::unbounded_channel();
    (Bridge { calls, aliases: RefCell::default() }, BridgeSender { calls: sender })
}

impl Bridge {
    /// Answers calls until the turn stops polling it: each through `latch`,
    /// under an id from `mint`, several at once when the harness sends
    /// several. An alias is recorded, never put on the call.
    pub async fn serve(&mut self, latch: &EscalationLatch, mint: &CallIdMinter, stamp: &CallStamp) {
        let mut in_flight = FuturesUnordered::new();
        loop {
            tokio::select! {
                received = self.calls.recv() => {
                    let Some((invocation, answer)) = received else { break };
                    if let Some(alias) = &invocation.alias {
                        self.aliases.borrow_mut().push((alias.clone(), invocation.tool.clone()));
                    }
                    let call = ToolCall {
                        id: mint(&invocation.tool, &invocation.arguments),
                        tool: invocation.tool,
                        arguments: invocation.arguments,
                        trace_id: stamp.trace_id.clone(),
                        requested_at: (stamp.now)(),
                    };
                    let result = latch.invoke(call);
                    in_flight.push(async move {
                        let _ = answer.send(result.await.map_err(BridgeError::from));
                    });
                }
                Some(()) = in_flight.next(), if !in_flight.is_empty() => {}
            }
        }
        while in_flight.next().await.is_some() {}
    }

    /// Each alias a harness used, with the canonical name it stood for, in
    /// the order first used.
    #[must_use]
    pub fn aliases(&self) -> Vec<(String, String)> {
        let mut seen = Vec::new();
        for pair in self.aliases.borrow().iter() {
            if !seen.contains(pair) {
                seen.push(pair.clone());
            }
        }
        seen
    }
}
