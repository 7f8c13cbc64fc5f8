//! Live MCP seats from the command line: `mcp-relay` carries a real
//! child's stdio to a turn's socket for rmcp's own client, and a seat whose
//! CLI is not installed is left out with a message rather than failed.

use futures::future::LocalBoxFuture;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::json;
use sharedos_drivers::vendor::Vendor;
use sharedos_envelope::options::ExecuteOptions;
use sharedos_mcp::harness::{Connection, HarnessExit, HarnessLaunch, McpHarness, Transport};
use sharedos_mcp::runtime::McpHarnessRuntime;
use sharedos_mcp::serve::{RelayCommand, ServeOptions};
use sharedos_model::execution::ExecutionStatus;
use sharedos_testkit::world::{read_policy, World};
use std::cell::RefCell;
use std::path::Path;
use std::process::Command;
use std::rc::Rc;

const BINARY: &str = env!("CARGO_BIN_EXE_sharedos-conformance");

/// A harness that starts the relay its connection names, as a CLI starts
/// a stdio MCP server, and speaks to it with rmcp's client.
struct RelayedClient {
    seen: Rc<RefCell<Vec<serde_json::Value>>>,
}

impl McpHarness for RelayedClient {
    fn id(&self) -> &str {
        "claude-code"
    }

    fn transport(&self) -> Transport {
        Transport::Stdio
    }

    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit> {
        Box::pin(async move {
            let Connection::Stdio { command, args } = launch.connection else { panic!("a stdio connection") };
            let mut relay = tokio::process::Command::new(command);
            relay.args(args);
            let client = ().serve(TokioChildProcess::new(relay).unwrap()).await.expect("initialised through the relay");
            let tools = client.list_all_tools().await.unwrap();
            let params = CallToolRequestParams::new("files.read").with_arguments(read_policy());
            let read = client.call_tool(params).await.unwrap();
            self.seen.borrow_mut().extend([json!(tools.len()), serde_json::to_value(read).unwrap()]);
            let _ = client.cancel().await;
            let done = r#"{"type":"result","subtype":"success","is_error":false,"result":"done"}"#;
            HarnessExit::Exited { code: 0, stdout: vec![done.to_string()] }
        })
    }
}

#[tokio::test]
async fn mcp_relay_carries_a_child_processes_stdio_to_the_turns_socket() {
    let world = World::baseline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let harness = RelayedClient { seen: Rc::clone(&seen) };
    let relay = RelayCommand { program: BINARY.to_string(), args: vec!["mcp-relay".to_string()] };
    let options = ServeOptions { relay: Some(relay), ..ServeOptions::default() };
    let ids = Rc::new(|_: &str, _: &serde_json::Map<String, serde_json::Value>| "call-1".to_string());
    let runtime = McpHarnessRuntime::new(Vendor::ClaudeCode, Rc::new(harness), ids).with_serve_options(options);
    let result =
        world.executor(Rc::new(runtime), 0).execute(world.request(None), ExecuteOptions::default()).await.unwrap();
    assert_eq!(result.status, ExecutionStatus::Succeeded, "{:?}", result.error);
    let seen = seen.borrow();
    assert!(seen[0].as_u64().unwrap() > 0, "the catalogue came through the relay");
    assert_eq!(seen[1]["isError"], json!(false), "the call went through the relay and the envelope");
}

#[test]
fn mcp_relay_to_a_socket_that_is_not_there_is_an_io_error() {
    let output = Command::new(BINARY).args(["mcp-relay", "/nonexistent/sharedos/mcp.sock"]).output().unwrap();
    assert_eq!(output.status.code(), Some(74));
    assert!(String::from_utf8_lossy(&output.stderr).contains("connect to the turn's MCP socket"));
}

/// A live seat whose CLI is nowhere to be found.
fn missing_cli_seat(dir: &Path) -> String {
    let seat = dir.join("absent.json");
    let text = r#"{"name": "absent", "label": "Absent", "kind": "mcp", "vendor": "codex",
                   "command": "sharedos-no-such-cli", "passEnv": ["PATH"]}"#;
    std::fs::write(&seat, text).unwrap();
    seat.display().to_string()
}

fn run(args: &[&str]) -> (i32, String, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new(BINARY).args(args).current_dir(root).output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code().unwrap(), text(&output.stdout), text(&output.stderr))
}

#[test]
fn a_live_seat_whose_cli_is_not_installed_is_skipped_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let seat = missing_cli_seat(dir.path());
    let (code, said, told) = run(&["list", "--seat", &seat, "--case", "hidden-tool"]);
    assert_eq!(code, 0, "the other columns are still listed: {told}");
    assert!(told.contains("skipping column mcp:absent: `sharedos-no-such-cli` is not installed"), "{told}");
    assert!(!said.contains("mcp:absent"), "{said}");
    let (code, _, told) = run(&["check", "--seat", &seat, "--column", "mcp:absent"]);
    assert_eq!(code, 4, "nothing is left to run: {told}");
    assert!(told.contains("skipping column mcp:absent"), "{told}");
}
