//! A turn of the MCP runtime over the reference world, with a harness that
//! is rmcp's own client running a test's script.

use futures::future::LocalBoxFuture;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{Map, Value};
use sharedos_drivers::vendor::Vendor;
use sharedos_envelope::options::ExecuteOptions;
use sharedos_mcp::bridge::CallIdMinter;
use sharedos_mcp::harness::{Connection, HarnessExit, HarnessLaunch, McpHarness, Transport};
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

/// A harness that connects with rmcp's client, over the transport it asks
/// for, and runs a script.
pub struct ScriptHarness {
    pub script: ClientScript,
    pub transport: Transport,
}

impl ScriptHarness {
    /// A harness connecting in memory.
    pub fn in_memory(script: ClientScript) -> ScriptHarness {
        ScriptHarness { script, transport: Transport::InMemory }
    }
}

impl McpHarness for ScriptHarness {
    fn id(&self) -> &str {
        "claude-code"
    }

    fn transport(&self) -> Transport {
        self.transport
    }

    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit> {
        let script = Rc::clone(&self.script);
        Box::pin(async move {
            let client = connect(launch.connection).await;
            let (code, stdout) = script(client).await;
            HarnessExit::Exited { code, stdout }
        })
    }
}

/// rmcp's client, connected as a CLI would be told to connect: over the
/// in-memory stream, over streamable HTTP with the bearer token, or to the
/// socket a stdio relay would carry it to.
pub async fn connect(connection: Connection) -> Client {
    try_connect(connection).await.expect("rmcp's client initialises against the server")
}

/// [`connect`], or why rmcp's client could not initialise.
pub async fn try_connect(connection: Connection) -> Result<Client, String> {
    let connected = match connection {
        Connection::InMemory(stream) => ().serve(stream).await,
        Connection::Http { url, token } => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url);
            if let Some(token) = token {
                config = config.auth_header(token);
            }
            ().serve(StreamableHttpClientTransport::from_config(config)).await
        }
        Connection::Stdio { args, .. } => {
            let socket = args.last().expect("the relay is given the socket last");
            ().serve(tokio::net::UnixStream::connect(socket).await.expect("the socket accepts")).await
        }
    };
    connected.map_err(|error| error.to_string())
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
