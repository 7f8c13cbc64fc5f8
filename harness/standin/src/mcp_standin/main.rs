//! `sharedos-mcp-standin`: a stand-in for a vendor CLI seated live behind
//! MCP. It reads the command line and config files its vendor's recipe
//! wrote, as that CLI would, connects to the served catalogue with rmcp's
//! client (streamable HTTP with the bearer token, or the stdio server the
//! config names), makes the calls its prompt lists, and writes its turn on
//! stdout in the vendor's stream shape. `relay SOCKET` makes it a stdio
//! relay instead, for tests that have no harness binary to hand.
#![forbid(unsafe_code)]

mod endpoint;
mod prompt;

use endpoint::{read_launch, Endpoint, StandinLaunch};
use prompt::{PromptEnding, PromptedTurn};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::Value;
use sharedos_drivers::vendor::VendorWire;
use std::io::Write;
use std::process::ExitCode;

type Client = RunningService<RoleClient, ()>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [verb, socket] = args.as_slice() {
        if verb == "relay" {
            return match sharedos_mcp::relay::relay(socket.as_ref(), std::io::stdin(), std::io::stdout().lock()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => fail(&format!("failed to {error}")),
            };
        }
    }
    let launch = match read_launch(&args) {
        Ok(launch) => launch,
        Err(error) => return fail(&error),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(&format!("start a runtime: {error}")),
    };
    match runtime.block_on(run_turn(&launch)) {
        Ok(code) => ExitCode::from(code),
        Err(error) => fail(&error),
    }
}

fn fail(error: &str) -> ExitCode {
    eprintln!("sharedos-mcp-standin: {error}");
    ExitCode::from(2)
}

async fn connect(endpoint: &Endpoint) -> Result<Client, String> {
    let connected = match endpoint {
        Endpoint::Http { url, token } => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            if let Some(token) = token {
                config = config.auth_header(token.clone());
            }
            ().serve(StreamableHttpClientTransport::from_config(config)).await
        }
        Endpoint::Stdio { command, args } => {
            let mut relay = tokio::process::Command::new(command);
            relay.args(args);
            let child = TokioChildProcess::new(relay).map_err(|e| format!("start the stdio server: {e}"))?;
            ().serve(child).await
        }
    };
    connected.map_err(|e| format!("initialise with the served catalogue: {e}"))
}

fn write_frame(frame: serde_json::Map<String, Value>) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", Value::Object(frame));
    let _ = out.flush();
}

/// Connects, makes the prompt's calls, ends as the prompt says; returns
/// the exit code.
async fn run_turn(launch: &StandinLaunch) -> Result<u8, String> {
    let turn = PromptedTurn::read(&launch.prompt);
    let client = connect(&launch.endpoint).await?;
    client.list_all_tools().await.map_err(|e| format!("list the tools: {e}"))?;
    let writer = launch.vendor.writer();
    let ask = match &turn.ending {
        PromptEnding::Escalate(ask) => Some(ask),
        _ => None,
    };
    for (index, call) in turn.calls.iter().chain(ask).enumerate() {
        write_frame(writer.tool_call(&format!("call_{index}"), &call.tool, &call.arguments));
        let params = CallToolRequestParams::new(call.tool.clone()).with_arguments(call.arguments.clone());
        client.call_tool(params).await.map_err(|e| format!("call `{}`: {e}", call.tool))?;
    }
    let code = match turn.ending {
        PromptEnding::Complete | PromptEnding::Escalate(_) => {
            write_frame(writer.complete(None));
            0
        }
        PromptEnding::Failure => {
            write_frame(writer.failure("the stand-in gave up on the turn"));
            1
        }
        PromptEnding::HangUp => 1,
        PromptEnding::Stall => std::future::pending().await,
    };
    let _ = client.cancel().await;
    if launch.session {
        // A session CLI (Pi) ends only when its input does (D50).
        tokio::task::spawn_blocking(|| std::io::copy(&mut std::io::stdin(), &mut std::io::sink()))
            .await
            .map_err(|e| format!("wait for the end of input: {e}"))?
            .map_err(|e| format!("read stdin: {e}"))?;
    }
    Ok(code)
}
