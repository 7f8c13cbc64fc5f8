//! A turn of the MCP runtime over the reference world, with a harness that
//! is rmcp's own client running a test's script.

use futures::future::LocalBoxFuture;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::ServiceExt;
use serde_json::{Map, Value};
use sharedos_drivers::vendor::Vendor;
use sharedos_envelope::options::ExecuteOptions;
use sharedos_mcp::bridge::CallIdMinter;
use sharedos_mcp::harness::{Connection, HarnessExit, HarnessLaunch, McpHarness};
use sharedos_mcp::runtime::McpHarnessRuntime;
use sharedos_model::execution::{ExecutionRequest, ExecutionResult};
use sharedos_testkit::world::World;
use std::cell::Cell;
use std::rc::Rc;

/// An rmcp client connected to the turn's server.
pub type Client = RunningService<RoleClient, ()>;

/// What a test's client does with its connection; it returns the exit code
/// and stdout lines the harness "writes".
pub type ClientScript = Rc<dyn Fn(Client) -> LocalBoxFuture<'static, (i32, Vec<String>)>>;

/// A harness that connects with rmcp's client and runs a script.
pub struct ScriptHarness {
    pub script: ClientScript,
}

impl McpHarness for ScriptHarness {
    fn id(&self) -> &str {
        "claude-code"
    }

    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit> {
        let script = Rc::clone(&self.script);
        Box::pin(async move {
            let Connection::InMemory(stream) = launch.connection;
            let client = ().serve(stream).await.expect("rmcp's client initialises against the server");
            let (code, stdout) = script(client).await;
            HarnessExit::Exited { code, stdout }
        })
    }
}

/// Ids `mcp-call-1`, `mcp-call-2`, … in call order.
pub fn sequential_ids() -> CallIdMinter {
    let next = Cell::new(0_u32);
    Rc::new(move |_, _| {
        next.set(next.get() + 1);
        format!("mcp-call-{}", next.get())
    })
}

/// The MCP runtime seating `harness`.
pub fn runtime(harness: impl McpHarness + 'static) -> Rc<McpHarnessRuntime> {
    Rc::new(McpHarnessRuntime::new(Vendor::ClaudeCode, Rc::new(harness), sequential_ids()))
}

/// Runs one turn of `runtime` over `world`.
pub async fn run(world: &World, runtime: Rc<McpHarnessRuntime>, request: ExecutionRequest) -> ExecutionResult {
    world.executor(runtime, 0).execute(request, ExecuteOptions::default()).await.expect("the turn executes")
}

/// A `tools/call` of `tool` with `arguments`.
pub async fn call(client: &Client, tool: &str, arguments: Map<String, Value>) -> CallToolResult {
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
    client.call_tool(params).await.expect("a tool result, never a transport error")
}

/// A Claude Code `result` frame of a completed turn.
pub fn completed() -> String {
    r#"{"type":"result","subtype":"success","is_error":false,"result":"done"}"#.to_string()
}

/// A result's metadata value at `key`.
pub fn meta(result: &ExecutionResult, key: &str) -> Option<Value> {
    result.metadata.as_ref().and_then(|m| m.get(key)).cloned()
}
