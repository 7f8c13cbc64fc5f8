//! Interop over the real transports: rmcp's own client, not the harness's
//! code, lists and calls tools against the turn's server over streamable
//! HTTP on loopback and over the socket a stdio relay carries; raw HTTP
//! requests check what the gate answers a peer that is not a good client.
//! These turns run on a real clock, as a live seat's do.

use crate::support::{call, completed, meta, run, sequential_ids, try_connect, Client, ClientScript, ScriptHarness};
use futures::future::LocalBoxFuture;
use futures::FutureExt;
use serde_json::{json, Value};
use sharedos_drivers::vendor::Vendor;
use sharedos_mcp::harness::{Connection, HarnessExit, HarnessLaunch, McpHarness, Transport};
use sharedos_mcp::http::{BEARER_CHALLENGE, MAX_BODY_BYTES};
use sharedos_mcp::runtime::McpHarnessRuntime;
use sharedos_mcp::serve::{RelayCommand, ServeOptions};
use sharedos_model::execution::{ExecutionOptions, ExecutionResult, ExecutionStatus};
use sharedos_scripted_model::admission::MAX_CONNECTIONS;
use sharedos_testkit::events::events_of;
use sharedos_testkit::json::object;
use sharedos_testkit::world::{read_policy, World};
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// What a harness is handed: where to connect, and its workspace.
type Endpoint = (Connection, Option<PathBuf>);

/// What an endpoint harness does: it returns the exit code and stdout.
type EndpointScript = Rc<dyn Fn(Endpoint) -> LocalBoxFuture<'static, (i32, Vec<String>)>>;

/// A harness handed the connection itself, for requests no client makes.
struct EndpointHarness {
    transport: Transport,
    script: EndpointScript,
}

impl McpHarness for EndpointHarness {
    fn id(&self) -> &str {
        "claude-code"
    }

    fn transport(&self) -> Transport {
        self.transport
    }

    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit> {
        let script = Rc::clone(&self.script);
        Box::pin(async move {
            let (code, stdout) = script((launch.connection, launch.workspace)).await;
            HarnessExit::Exited { code, stdout }
        })
    }
}

/// The runtime serving `harness` over its transport, with a bearer token.
fn served(harness: impl McpHarness + 'static) -> Rc<McpHarnessRuntime> {
    let options = ServeOptions {
        token: true,
        relay: Some(RelayCommand { program: "sharedos-conformance".into(), args: vec!["mcp-relay".into()] }),
        workspace_root: None,
    };
    Rc::new(McpHarnessRuntime::new(Vendor::ClaudeCode, Rc::new(harness), sequential_ids()).with_serve_options(options))
}

fn to_json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

/// Lists the tools, then makes an allowed call, a refused one, the ask to
/// escalate and one call after it; the answers are kept in `seen`.
fn four_calls(seen: &Rc<RefCell<Vec<Value>>>) -> ClientScript {
    let seen = Rc::clone(seen);
    Rc::new(move |client: Client| {
        let seen = Rc::clone(&seen);
        async move {
            let tools = client.list_all_tools().await.expect("tools/list answers");
            let names: Vec<Value> = tools.iter().map(|tool| json!(tool.name)).collect();
            let read = call(&client, "files.read", read_policy()).await;
            let absent = call(&client, "no.such.tool", object(json!({}))).await;
            let ask = call(&client, "sharedos.escalate", object(json!({"reason": "needs a human"}))).await;
            let after = call(&client, "files.read", read_policy()).await;
            seen.borrow_mut().extend([json!(names), to_json(&read), to_json(&absent), to_json(&ask), to_json(&after)]);
            let _ = client.cancel().await;
            (0, vec![completed()])
        }
        .boxed_local()
    })
}

fn assert_four_calls(seen: &[Value], result: &ExecutionResult) {
    assert_eq!(seen.len(), 5);
    assert!(seen[0].as_array().unwrap().contains(&json!("files.read")), "the catalogue is listed");
    assert_eq!(seen[1]["isError"], json!(false), "the allowed call succeeds");
    assert_eq!(seen[2]["isError"], json!(true));
    let refused =
        json!({"sharedos/status": "denied", "sharedos/code": "tool_unavailable", "sharedos/protocolVersion": "2"});
    assert_eq!(seen[2]["_meta"], refused);
    assert_eq!(seen[3]["isError"], json!(false), "the ask is taken");
    assert_eq!(seen[4]["isError"], json!(true));
    assert_eq!(seen[4]["_meta"]["sharedos/code"], json!("escalation_pending"));
    assert_eq!(events_of(result, "tool.requested").len(), 2, "the ask and the call after it never reach the envelope");
    assert_eq!(result.status, ExecutionStatus::Escalated);
    assert_eq!(meta(result, "callsAfterEscalation"), Some(json!(1)));
}

#[tokio::test]
async fn interop_over_http_rmcp_lists_calls_is_refused_escalates_and_is_turned_away_after() {
    let world = World::baseline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let harness = ScriptHarness { script: four_calls(&seen), transport: Transport::Http };
    let result = run(&world, served(harness), world.request(None)).await;
    assert_four_calls(&seen.borrow(), &result);
}

#[tokio::test]
async fn interop_over_stdio_rmcp_lists_calls_is_refused_escalates_and_is_turned_away_after() {
    let world = World::baseline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let harness = ScriptHarness { script: four_calls(&seen), transport: Transport::Stdio };
    let result = run(&world, served(harness), world.request(None)).await;
    assert_four_calls(&seen.borrow(), &result);
}

/// The URL and token of an HTTP endpoint.
fn http_parts(connection: &Connection) -> (String, String) {
    match connection {
        Connection::Http { url, token } => (url.clone(), token.clone().expect("the runtime was told to use a token")),
        other => panic!("an HTTP endpoint, not {other:?}"),
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// A POST of `body` as a streamable HTTP client sends it.
async fn post(url: &str, bearer: Option<&str>, session: Option<&str>, body: &str) -> (u16, String, Option<String>) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(token) = bearer {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let challenge = response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_string());
    (status, response.text().await.unwrap(), challenge)
}

/// A turn the harness completed after its script.
trait Succeeded {
    fn assert_succeeded(&self);
}

impl Succeeded for ExecutionResult {
    fn assert_succeeded(&self) {
        assert_eq!(self.status, ExecutionStatus::Succeeded, "{:?}", self.error);
    }
}

/// Runs one HTTP turn whose harness runs `script` with the endpoint, then
/// completes.
async fn with_endpoint<F, Fut>(script: F) -> ExecutionResult
where
    F: Fn(Endpoint) -> Fut + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    let world = World::baseline();
    let script = Rc::new(script);
    let harness = EndpointHarness {
        transport: Transport::Http,
        script: Rc::new(move |endpoint| {
            let script = Rc::clone(&script);
            async move {
                script(endpoint).await;
                (0, vec![completed()])
            }
            .boxed_local()
        }),
    };
    run(&world, served(harness), world.request(None)).await
}

#[tokio::test]
async fn interop_over_http_a_missing_or_wrong_bearer_token_is_401_with_a_challenge() {
    with_endpoint(|(connection, _)| async move {
        let (url, token) = http_parts(&connection);
        for presented in [None, Some("not-the-token")] {
            let (status, _, challenge) = post(&url, presented, None, INITIALIZE).await;
            assert_eq!(status, 401, "token {presented:?}");
            assert_eq!(challenge.as_deref(), Some(BEARER_CHALLENGE));
        }
        let wrong = Connection::Http { url: url.clone(), token: Some(format!("{token}x")) };
        assert!(try_connect(wrong).await.is_err(), "rmcp's client cannot initialise with a wrong token");
        let (status, body, _) = post(&url, Some(&token), None, INITIALIZE).await;
        assert_eq!(status, 200, "the right token is let through: {body}");
    })
    .await
    .assert_succeeded();
}

/// A POST of `body` under the `authorization` header given verbatim: its status.
async fn post_authorized(url: &str, authorization: &str, body: &str) -> u16 {
    let request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", authorization)
        .body(body.to_string());
    request.send().await.expect("the server answers").status().as_u16()
}

#[tokio::test]
async fn interop_over_http_the_bearer_scheme_is_matched_whatever_its_case_and_the_token_exactly() {
    with_endpoint(|(connection, _)| async move {
        let (url, token) = http_parts(&connection);
        for scheme in ["bearer", "BEARER", "Bearer", "bEaReR"] {
            let status = post_authorized(&url, &format!("{scheme} {token}"), INITIALIZE).await;
            assert_eq!(status, 200, "RFC 7235 §2.1: the scheme {scheme:?} is case-insensitive");
        }
        let refused = [
            format!("bearer {token}x"),
            format!("bearer {}", &token[1..]),
            "bearer not-the-token".to_string(),
            token.clone(),
            format!("Basic {token}"),
            format!("Bearer{token}"),
            "Bearer".to_string(),
            "Bearer ".to_string(),
            String::new(),
        ];
        for authorization in refused {
            assert_eq!(post_authorized(&url, &authorization, INITIALIZE).await, 401, "{authorization:?}");
        }
    })
    .await
    .assert_succeeded();
}

/// A DELETE of `session` as a streamable HTTP client ends it: its status.
async fn delete(url: &str, token: &str, session: Option<&str>) -> u16 {
    let mut request = reqwest::Client::new().delete(url).header("authorization", format!("Bearer {token}"));
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await.expect("the server answers").status().as_u16()
}

#[tokio::test]
async fn interop_over_http_a_session_delete_is_200_and_a_session_no_longer_known_is_404() {
    with_endpoint(|(connection, _)| async move {
        let (url, token) = http_parts(&connection);
        let response = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {token}"))
            .body(INITIALIZE)
            .send()
            .await
            .unwrap();
        let session = response.headers().get("mcp-session-id").expect("initialize opens a session");
        let session = session.to_str().unwrap().to_string();
        assert_eq!(delete(&url, &token, Some(&session)).await, 200, "the session is ended, not merely accepted");
        assert_eq!(delete(&url, &token, Some(&session)).await, 404, "an ended session is unknown");
        assert_eq!(delete(&url, &token, Some("no-such-session")).await, 404);
        assert_eq!(delete(&url, &token, None).await, 400, "a DELETE names the session it ends");
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        assert_eq!(post(&url, Some(&token), Some(&session), list).await.0, 404);
    })
    .await
    .assert_succeeded();
}

#[tokio::test]
async fn interop_over_http_an_unknown_session_is_404() {
    with_endpoint(|(connection, _)| async move {
        let (url, token) = http_parts(&connection);
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        let (status, _, _) = post(&url, Some(&token), Some("no-such-session"), list).await;
        assert_eq!(status, 404);
    })
    .await
    .assert_succeeded();
}

#[tokio::test]
async fn interop_over_http_a_body_that_is_not_one_message_is_400_with_its_json_rpc_error() {
    with_endpoint(|(connection, _)| async move {
        let (url, token) = http_parts(&connection);
        for (body, code) in [("{not json", -32700), ("[]", -32600), (r#"{"jsonrpc":"2.0","id":7,"x":1}"#, -32600)] {
            let (status, answer, _) = post(&url, Some(&token), None, body).await;
            assert_eq!(status, 400, "{body}");
            let answer: Value = serde_json::from_str(&answer).unwrap();
            assert_eq!(answer["error"]["code"], json!(code), "{body}");
        }
        let elsewhere = url.replace("/mcp", "/other");
        assert_eq!(post(&elsewhere, Some(&token), None, INITIALIZE).await.0, 404);
        let put = reqwest::Client::new().put(&url).header("authorization", format!("Bearer {token}")).send();
        assert_eq!(put.await.unwrap().status().as_u16(), 405);
    })
    .await
    .assert_succeeded();
}

/// A peer that sends more than the gate reads: 413 past 4 MiB, the body
/// read no further; a body at the bound is read, and answered as what it
/// is. Without the token the size is never looked at.
#[tokio::test]
async fn interop_over_http_a_body_over_4_mib_is_413_and_one_at_the_bound_is_read() {
    with_endpoint(|(connection, _)| async move {
        let (url, token) = http_parts(&connection);
        let at_the_bound = format!("{{not json{}", " ".repeat(MAX_BODY_BYTES - "{not json".len()));
        let (status, answer, _) = post(&url, Some(&token), None, &at_the_bound).await;
        assert_eq!(status, 400, "read whole, and not a message: {answer}");
        let over = format!("{at_the_bound} ");
        let (status, answer, _) = post(&url, Some(&token), None, &over).await;
        assert_eq!((status, answer.as_str()), (413, "Payload Too Large: the body exceeds 4 MiB"));
        assert_eq!(post(&url, None, None, &over).await.0, 401);
    })
    .await
    .assert_succeeded();
}

/// A connection that has sent a POST's head with `headers` and no body.
async fn posted_head(url: &str, headers: &str) -> tokio::net::TcpStream {
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!("POST /mcp HTTP/1.1\r\nhost: mcp\r\ncontent-type: application/json\r\n{headers}\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// The status code first answered on `stream`; the test fails as hung
/// when none comes within a (generous) watchdog.
async fn first_status(stream: &mut tokio::net::TcpStream) -> u16 {
    use tokio::io::AsyncReadExt;
    let mut line = [0_u8; 12];
    let read = tokio::time::timeout(Duration::from_secs(30), stream.read_exact(&mut line)).await;
    read.expect("no answer: the server waits for the body").unwrap();
    String::from_utf8_lossy(&line[9..]).parse().unwrap()
}

#[tokio::test]
async fn interop_over_http_a_body_is_read_only_with_the_token_and_one_declared_over_the_limit_not_at_all() {
    with_endpoint(|(connection, _)| async move {
        let (url, token) = http_parts(&connection);
        let claimed = MAX_BODY_BYTES + 1;
        let mut unauthorized = posted_head(&url, &format!("content-length: {claimed}\r\n")).await;
        assert_eq!(first_status(&mut unauthorized).await, 401, "refused on its head");
        let keyed = format!("authorization: Bearer {token}\r\ncontent-length: {claimed}\r\n");
        let mut oversize = posted_head(&url, &keyed).await;
        assert_eq!(first_status(&mut oversize).await, 413, "refused on its declared length");
    })
    .await
    .assert_succeeded();
}

#[tokio::test]
async fn interop_over_http_connections_past_the_cap_wait_until_a_served_one_closes() {
    with_endpoint(|(connection, _)| async move {
        let (url, token) = http_parts(&connection);
        let address = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
        let mut idle = Vec::new();
        for _ in 0..MAX_CONNECTIONS + 8 {
            idle.push(tokio::net::TcpStream::connect(&address).await.unwrap());
        }
        // Queued behind every idle one, it is not served while they stay.
        let request = post(&url, Some(&token), None, INITIALIZE);
        tokio::pin!(request);
        tokio::select! {
            _ = &mut request => panic!("a connection past the cap was served"),
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
        drop(idle);
        assert_eq!(request.await.0, 200);
    })
    .await
    .assert_succeeded();
}

#[tokio::test]
async fn interop_over_stdio_a_line_that_is_not_json_is_ignored_and_json_that_is_no_message_is_32600() {
    let world = World::baseline();
    let harness = EndpointHarness {
        transport: Transport::Stdio,
        script: Rc::new(|(connection, _)| {
            async move {
                let Connection::Stdio { args, .. } = connection else { panic!("a stdio endpoint") };
                let stream = tokio::net::UnixStream::connect(args.last().unwrap()).await.unwrap();
                let (read, mut write) = stream.into_split();
                let mut lines = BufReader::new(read).lines();
                write.write_all(b"this is not json\n{\"jsonrpc\":\"2.0\",\"id\":5,\"nonsense\":1}\n").await.unwrap();
                let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await;
                let answer: Value = serde_json::from_str(&line.unwrap().unwrap().unwrap()).unwrap();
                assert_eq!(answer["error"]["code"], json!(-32600), "only the JSON line is answered");
                write.write_all(format!("{INITIALIZE}\n").as_bytes()).await.unwrap();
                let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await;
                let answer: Value = serde_json::from_str(&line.unwrap().unwrap().unwrap()).unwrap();
                assert_eq!(answer["id"], json!(1), "the connection still serves");
                (0, vec![completed()])
            }
            .boxed_local()
        }),
    };
    let result = run(&world, served(harness), world.request(None)).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
}

/// Whether anything still accepts connections at `url`'s address.
async fn accepts(url: &str) -> bool {
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    tokio::net::TcpStream::connect(address).await.is_ok()
}

#[tokio::test]
async fn d44_once_the_turn_ends_the_port_refuses_connections_and_the_workspace_is_gone() {
    let kept = Rc::new(RefCell::new(None));
    let keep = Rc::clone(&kept);
    with_endpoint(move |(connection, workspace)| {
        let keep = Rc::clone(&keep);
        async move {
            let (url, _) = http_parts(&connection);
            assert!(accepts(&url).await, "the port is open during the turn");
            *keep.borrow_mut() = Some((url, workspace.expect("a live transport has a workspace")));
        }
    })
    .await
    .assert_succeeded();
    let (url, workspace) = kept.borrow_mut().take().unwrap();
    assert!(!accepts(&url).await, "the port is released when the turn ends");
    assert!(!workspace.exists(), "the workspace is deleted");
}

#[tokio::test]
async fn d44_a_turn_stopped_at_its_deadline_still_releases_the_port_and_deletes_the_workspace() {
    let world = World::baseline();
    let kept = Rc::new(RefCell::new(None));
    let keep = Rc::clone(&kept);
    let harness = EndpointHarness {
        transport: Transport::Http,
        script: Rc::new(move |(connection, workspace)| {
            let (url, _) = http_parts(&connection);
            *keep.borrow_mut() = Some((url, workspace.unwrap()));
            std::future::pending().boxed_local()
        }),
    };
    let mut request = world.request(None);
    request.options = Some(ExecutionOptions { max_steps: None, max_tool_calls: None, timeout_ms: Some(200) });
    let result = run(&world, served(harness), request).await;
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    let (url, workspace) = kept.borrow_mut().take().unwrap();
    // The accepting task drops its listener the next time it is polled.
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!accepts(&url).await, "the port is released");
    assert!(!workspace.exists(), "the workspace is deleted");
}
