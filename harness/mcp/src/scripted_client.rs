//! A stand-in for a vendor CLI: a real MCP client (rmcp's) that lists the
//! served catalogue, makes the calls it was told to, and writes its turn on
//! stdout in its vendor's stream shape. It is what the committed MCP column
//! seats: on the cell's own runtime, so virtual time stays exact.

use crate::catalog::harness_alias;
use crate::harness::{Connection, HarnessExit, HarnessLaunch, McpHarness};
use crate::runtime::DEFAULT_SERVER_NAME;
use futures::future::LocalBoxFuture;
use rmcp::model::CallToolRequestParams;
use rmcp::ServiceExt;
use serde_json::{Map, Value};
use sharedos_drivers::vendor::{Vendor, VendorWire};

/// One call the client makes.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedCall {
    /// The name it calls.
    pub tool: String,
    /// The arguments it sends.
    pub arguments: Map<String, Value>,
}

/// How the client ends its turn once its calls are made.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptedEnding {
    /// Writes its vendor's completion and exits 0.
    Complete,
    /// Writes its vendor's own failed-turn frame and exits 1.
    Failure,
    /// Makes this call (the ask to escalate), then completes.
    Escalate(ScriptedCall),
    /// Says nothing more and never exits.
    Stall,
    /// Exits 1 without writing an ending.
    HangUp,
}

/// The client's words for a failed turn.
pub const FAILURE_TEXT: &str = "the harness gave up on the turn";

/// The scripted client of one turn.
#[derive(Debug, Clone)]
pub struct ScriptedMcpClient {
    vendor: Vendor,
    calls: Vec<ScriptedCall>,
    ending: ScriptedEnding,
}

impl ScriptedMcpClient {
    /// A client writing `vendor`'s frames that makes `calls`, one after the
    /// other, then ends as `ending` says.
    #[must_use]
    pub fn new(vendor: Vendor, calls: Vec<ScriptedCall>, ending: ScriptedEnding) -> ScriptedMcpClient {
        ScriptedMcpClient { vendor, calls, ending }
    }

    async fn run_client(&self, launch: HarnessLaunch) -> HarnessExit {
        let writer = self.vendor.writer();
        let mut stdout = Vec::new();
        let failed = |stdout: Vec<String>| HarnessExit::Exited { code: 1, stdout };
        let Connection::InMemory(stream) = launch.connection else {
            return HarnessExit::NotStarted { detail: "the scripted client connects in memory only".into() };
        };
        let Ok(client) = ().serve(stream).await else { return failed(stdout) };
        if client.list_all_tools().await.is_err() {
            return failed(stdout);
        }
        let ask = match &self.ending {
            ScriptedEnding::Escalate(ask) => Some(ask),
            _ => None,
        };
        for (index, call) in self.calls.iter().chain(ask).enumerate() {
            // The CLI shows its model the call under its own alias; the
            // runtime reads past it, since calls leave over MCP.
            let frame = writer.tool_call(
                &format!("call_{index}"),
                &harness_alias(DEFAULT_SERVER_NAME, &call.tool),
                &call.arguments,
            );
            stdout.push(Value::Object(frame).to_string());
            let params = CallToolRequestParams::new(call.tool.clone()).with_arguments(call.arguments.clone());
            if client.call_tool(params).await.is_err() {
                return failed(stdout);
            }
        }
        let (code, frame) = match &self.ending {
            ScriptedEnding::Complete | ScriptedEnding::Escalate(_) => (0, Some(writer.complete(None))),
            ScriptedEnding::Failure => (1, Some(writer.failure(FAILURE_TEXT))),
            ScriptedEnding::HangUp => (1, None),
            ScriptedEnding::Stall => std::future::pending().await,
        };
        stdout.extend(frame.map(|frame| Value::Object(frame).to_string()));
        let _ = client.cancel().await;
        HarnessExit::Exited { code, stdout }
    }
}

impl McpHarness for ScriptedMcpClient {
    fn id(&self) -> &str {
        self.vendor.id()
    }

    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit> {
        Box::pin(self.run_client(launch))
    }
}
