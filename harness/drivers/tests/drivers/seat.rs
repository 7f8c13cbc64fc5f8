//! The seat every driver shares: its words and their hash (D12), the
//! escalation affordance (D13, D14), declared steps (D15) and call stamping
//! (D16).

use serde_json::{json, Map, Value};
use sharedos_drivers::decision::AgentTurnDecision;
use sharedos_drivers::seat::{
    default_prompt, describe_reach, escalation_request, prompt_hash, seat_text, Instructions, SeatCalls,
    SeatTextOptions, DEFAULT_ESCALATION_REASON, PROMPT_HASH_TAG,
};
use sharedos_kernel::escalation::escalation_tool;
use sharedos_model::access::{Reach, RuntimeVisibleContext};
use sharedos_model::canonical::{is_content_hash, tagged_hash};
use sharedos_model::execution::RuntimeTurnRequest;
use sharedos_model::message::{MessageEnvelope, PROTOCOL_VERSION};
use sharedos_port::escalation::ESCALATION_TOOL;
use sharedos_testkit::json::object;
use sharedos_world::constants::{agent, owner, NOW, PURPOSE, TRACE_ID};
use sharedos_world::file_store::FileAction;
use sharedos_world::file_tools::definition;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

fn request(payload: Value, with_escalation: bool) -> RuntimeTurnRequest {
    let mut tools = vec![Arc::new(definition(FileAction::Read))];
    if with_escalation {
        tools.push(Arc::clone(escalation_tool().definition()));
    }
    RuntimeTurnRequest {
        version: PROTOCOL_VERSION.into(),
        execution_id: "seat-test".into(),
        agent: agent(),
        context: RuntimeVisibleContext {
            actor: agent(),
            owner: owner(),
            namespace_id: "world-conformance".into(),
            purpose: PURPOSE.into(),
            trace_id: TRACE_ID.into(),
            now: NOW.into(),
            reach: Reach::Computed {
                reach: vec![serde_json::from_value(json!({
                    "resource": {"namespace": "files", "path": ["Workspace"], "owner": {"kind": "human", "userId": "user-alice"}},
                    "actions": ["read", "list"],
                    "scope": "descendants",
                }))
                .unwrap()],
            },
        },
        message: MessageEnvelope {
            version: PROTOCOL_VERSION.into(),
            id: "m".into(),
            sender: agent(),
            receiver: agent(),
            purpose: PURPOSE.into(),
            payload,
            trace_id: TRACE_ID.into(),
            created_at: NOW.into(),
            reply_to: None,
            provenance: None,
        },
        tools,
        state: None,
        options: None,
        metadata: None,
    }
}

#[test]
fn d12_the_prompt_hash_covers_instructions_and_prompt_under_one_tag() {
    let turn = request(json!({"text": "Read the policy."}), true);
    let text = seat_text(&SeatTextOptions::default(), &turn).unwrap();
    let expected =
        tagged_hash(PROMPT_HASH_TAG, &json!({"instructions": text.instructions, "prompt": text.prompt})).unwrap();
    assert_eq!(text.prompt_hash, expected);
    assert!(is_content_hash(&text.prompt_hash));
    assert_eq!(
        prompt_hash(None, "p").unwrap(),
        tagged_hash(PROMPT_HASH_TAG, &json!({"instructions": null, "prompt": "p"})).unwrap()
    );
    assert_ne!(prompt_hash(None, "p").unwrap(), prompt_hash(Some(""), "p").unwrap(), "absent is not empty");
}

#[test]
fn d12_identical_words_give_identical_hashes() {
    let a = seat_text(&SeatTextOptions::default(), &request(json!("same"), true)).unwrap();
    let b = seat_text(&SeatTextOptions::default(), &request(json!({"text": "same"}), false)).unwrap();
    assert_eq!(a.prompt_hash, b.prompt_hash);
    let c = seat_text(&SeatTextOptions::default(), &request(json!("different"), true)).unwrap();
    assert_ne!(a.prompt_hash, c.prompt_hash);
}

#[test]
fn d12_the_default_prompt_follows_the_payload() {
    assert_eq!(default_prompt(&json!("plain")), "plain");
    assert_eq!(default_prompt(&json!({"text": "field", "other": 1})), "field");
    assert_eq!(default_prompt(&json!({"text": 5})), r#"{"text":5}"#);
    assert_eq!(default_prompt(&json!([1, 2])), "[1,2]");
    assert_eq!(default_prompt(&json!(null)), "null");
}

#[test]
fn d12_the_default_instructions_describe_the_reach_after_any_configured_text() {
    let turn = request(json!("p"), true);
    let reach = describe_reach(&turn.context.reach);
    assert_eq!(reach, "This turn can reach (a description, not a grant):\n- files /Workspace and below, owned by human/user-alice: read, list");
    let plain = seat_text(&SeatTextOptions::default(), &turn).unwrap();
    assert_eq!(plain.instructions.as_deref(), Some(reach.as_str()));
    let options = SeatTextOptions { instructions: Some(Instructions::Text("Be brief.".into())), prompt: None };
    let prefixed = seat_text(&options, &turn).unwrap();
    assert_eq!(prefixed.instructions, Some(format!("Be brief.\n\n{reach}")));
    assert_eq!(
        describe_reach(&Reach::Unavailable { reason_code: "authority_unavailable".into() }),
        "What this turn can reach could not be determined (authority_unavailable)."
    );
    assert_eq!(describe_reach(&Reach::Computed { reach: vec![] }), "Nothing is reachable in this turn.");
}

#[test]
fn d12_an_instructions_function_replaces_the_composition_and_may_give_none() {
    let turn = request(json!("p"), true);
    let none = SeatTextOptions { instructions: Some(Instructions::Compose(Rc::new(|_| None))), prompt: None };
    let text = seat_text(&none, &turn).unwrap();
    assert_eq!(text.instructions, None);
    assert_eq!(text.prompt_hash, prompt_hash(None, "p").unwrap());
    let own = SeatTextOptions {
        instructions: Some(Instructions::Compose(Rc::new(|r| Some(format!("for {}", r.execution_id))))),
        prompt: Some(Rc::new(|_| "custom prompt".to_string())),
    };
    let text = seat_text(&own, &turn).unwrap();
    assert_eq!((text.instructions.as_deref(), text.prompt.as_str()), (Some("for seat-test"), "custom prompt"));
}

#[test]
fn d13_the_affordance_is_recognised_only_when_the_catalogue_offers_it() {
    let offered = SeatCalls::new(Rc::new(request(json!("p"), true)), None);
    assert!(offered.escalation_offered());
    assert_eq!(offered.escalation(ESCALATION_TOOL, Some(&object(json!({"reason": "why"})))), Some("why".into()));
    assert_eq!(offered.escalation("files.read", Some(&object(json!({"reason": "why"})))), None);
    let withheld = SeatCalls::new(Rc::new(request(json!("p"), false)), None);
    assert!(!withheld.escalation_offered());
    assert_eq!(withheld.escalation(ESCALATION_TOOL, Some(&object(json!({"reason": "why"})))), None);
}

#[test]
fn d14_the_reason_is_trimmed_and_cut_to_512_utf16_units() {
    let reason = |value: Value| escalation_request(ESCALATION_TOOL, value.as_object());
    assert_eq!(reason(json!({"reason": "  spaced out \n"})), Some("spaced out".into()));
    assert_eq!(reason(json!({"reason": "r".repeat(600)})), Some("r".repeat(512)));
    // 511 units, then a two-unit character that does not fit: its high half is not left dangling.
    let astral = format!("{}😀tail", "a".repeat(511));
    assert_eq!(reason(json!({"reason": astral})), Some("a".repeat(511)));
    let fits = format!("{}😀", "a".repeat(510));
    assert_eq!(reason(json!({"reason": fits.clone()})), Some(fits));
    assert_eq!(escalation_request("files.read", Some(&object(json!({"reason": "x"})))), None);
}

#[test]
fn d14_a_missing_blank_or_unreadable_reason_gives_the_default_sentence() {
    let default = Some(DEFAULT_ESCALATION_REASON.to_string());
    assert_eq!(DEFAULT_ESCALATION_REASON, "the turn asked for a human decision without saying what needs deciding");
    for value in [json!({}), json!({"reason": "   "}), json!({"reason": 42}), json!({"reason": null})] {
        assert_eq!(escalation_request(ESCALATION_TOOL, value.as_object()), default, "{value}");
    }
    assert_eq!(escalation_request(ESCALATION_TOOL, None), default, "arguments that are not an object");
}

#[test]
fn d15_declare_step_is_consulted_with_the_release_index() {
    let seen: Rc<RefCell<Vec<u64>>> = Rc::default();
    let log = seen.clone();
    let policy = Rc::new(move |index: u64, _: &RuntimeTurnRequest| {
        log.borrow_mut().push(index);
        (index == 1).then_some(7)
    });
    let mut calls = SeatCalls::new(Rc::new(request(json!("p"), true)), Some(policy));
    let mut steps = Vec::new();
    for id in ["a", "b", "c"] {
        // An escalation is recognised, never released, so it takes no index.
        assert!(calls.escalation(ESCALATION_TOOL, None).is_some());
        let call = calls.tool_call(id, "files.read", Map::new());
        match calls.release(call) {
            AgentTurnDecision::ToolCall { step, .. } => steps.push(step),
            other => panic!("released {other:?}"),
        }
    }
    assert_eq!(*seen.borrow(), vec![0, 1, 2]);
    assert_eq!(steps, vec![None, Some(7), None]);
    assert_eq!(calls.released(), 3);
}

#[test]
fn d16_every_call_is_stamped_with_the_turns_trace_and_instant() {
    let mut calls = SeatCalls::new(Rc::new(request(json!("p"), true)), None);
    let call = calls.tool_call("id-1", "not.in.the.catalogue", object(json!({"k": 1})));
    assert_eq!(
        serde_json::to_value(&call).unwrap(),
        json!({"id": "id-1", "tool": "not.in.the.catalogue", "arguments": {"k": 1}, "traceId": TRACE_ID, "requestedAt": NOW})
    );
    let AgentTurnDecision::ToolCall { call, step } = calls.release(call) else { panic!("not a call") };
    assert_eq!((call.tool.as_str(), step), ("not.in.the.catalogue", None));
}
