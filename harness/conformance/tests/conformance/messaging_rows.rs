//! The messaging family's rows: the `messaging` world option and how the
//! loader refuses it, host sends and host requests, inbound turns, port
//! effects and how they are graded, and the committed rows' values.

use crate::support;

use support::committed_suite;

use serde_json::{json, Value};
use sharedos_conformance::run::request::turn_request;
use sharedos_conformance::suite::cell::{run_cell, CellRun};
use sharedos_grading::input::case::{Case, Family};
use sharedos_grading::input::error::{LoadError, LoadErrorKind};
use sharedos_grading::input::loader::{parse_case, Suite};
use sharedos_grading::input::world::World;
use sharedos_grading::messaging::inbound::{built_for, first_mismatch};
use sharedos_grading::vocab::CellStatus;
use sharedos_model::address::Address;
use sharedos_world::options::messaging::MessagingOptions;
use sharedos_world::options::WorldOptions;
use std::path::Path;
use std::rc::Rc;

const COLUMN: &str = "adversary-embedded";

fn suite() -> Suite {
    committed_suite()
}

fn run_row(suite: &Suite, case: &str, condition: &str) -> CellRun {
    let case = suite.case(case).unwrap();
    run_case(suite, case, condition)
}

fn run_case(suite: &Suite, case: &Case, condition: &str) -> CellRun {
    let script = Rc::new(suite.script_for(case).unwrap().clone());
    run_cell(case, case.condition(condition).unwrap(), &script, &[], COLUMN).unwrap()
}

fn effects(run: &CellRun) -> Value {
    run.snapshot.value()["world"]["messaging"].clone()
}

fn messaging_case(messaging: Value) -> Value {
    json!({
        "id": "sample", "family": "messaging", "adversary": "messaging.sample",
        "conditions": [{"id": "only", "description": "One world.", "world": {"messaging": messaging}}]
    })
}

fn refusal(messaging: Value) -> LoadError {
    let text = messaging_case(messaging).to_string();
    match parse_case(Path::new("cases/sample.json"), &text) {
        Ok(_) => panic!("the case was expected to be refused"),
        Err(e) => e,
    }
}

fn bob() -> Value {
    json!({"kind": "agent", "agentId": "agent-bob"})
}

const AT: &str = "/conditions/0/world/messaging";

// ---- the option and the loader ----------------------------------------------

#[test]
fn a_messaging_world_loads_and_round_trips() {
    let value = json!({
        "recipients": [{"address": bob(), "send": "bounded", "execution": true}],
        "transport": "rejecting", "router": "changed_trace", "leaseClosesAfter": 2,
        "inbound": {"recipient": bob(), "actor": "sender"},
        "host": [{"id": "h", "role": "attack", "receiver": bob(),
                  "extra": {"intent": "x"}, "expect": {"outcomes": ["thrown"], "auditEvents": 0}}],
        "hostRequests": [{"id": "r", "role": "probe", "recipient": bob(),
                          "expect": {"statuses": ["succeeded"], "outputIsReplyPayload": true}}],
        "expectEffects": {"dispatches": 1, "trustedFields": true}
    });
    let case = parse_case(Path::new("cases/sample.json"), &messaging_case(value.clone()).to_string()).unwrap();
    let options = case.conditions[0].world.messaging.clone().unwrap();
    assert_eq!(serde_json::to_value(&options).unwrap(), value);
    assert!(options.transport_attached() && options.router_attached());
    assert_eq!(options.lease_closes_after, Some(2));
}

#[test]
fn an_empty_messaging_option_is_not_the_baseline_world() {
    let options = WorldOptions { messaging: Some(MessagingOptions::default()), ..WorldOptions::default() };
    assert!(!options.is_baseline());
}

#[test]
fn unknown_keys_and_values_are_refused_with_their_pointer() {
    let error = refusal(json!({"recipient": []}));
    assert!(error.kind == LoadErrorKind::UnknownKey, "{error}");
    assert_eq!(error.file(), Path::new("cases/sample.json"));
    let error = refusal(json!({"router": "polite"}));
    assert!(error.kind == LoadErrorKind::UnknownValue, "{error}");
    assert_eq!(error.pointer(), format!("{AT}/router"));
}

#[test]
fn recipients_must_be_other_principals_with_unique_ids() {
    let owner = refusal(json!({"recipients": [{"address": {"kind": "human", "userId": "user-alice"}}]}));
    assert_eq!(owner.pointer(), format!("{AT}/recipients/0/address"));
    let twice =
        refusal(json!({"recipients": [{"address": bob()}, {"address": {"kind": "human", "userId": "agent-bob"}}]}));
    assert!(twice.kind == LoadErrorKind::DuplicateEntry, "{twice}");
    assert_eq!(twice.pointer(), format!("{AT}/recipients/1/address"));
    let person =
        refusal(json!({"recipients": [{"address": {"kind": "human", "userId": "user-carol"}, "execution": true}]}));
    assert_eq!(person.pointer(), format!("{AT}/recipients/0/execution"));
    let spaced = refusal(json!({"recipients": [{"address": {"kind": "agent", "agentId": "Agent Bob"}}]}));
    assert_eq!(spaced.pointer(), format!("{AT}/recipients/0/address/agentId"));
}

#[test]
fn an_inbound_turn_names_a_listed_agent() {
    let unlisted = refusal(json!({"inbound": {"recipient": bob()}}));
    assert_eq!(unlisted.pointer(), format!("{AT}/inbound/recipient"));
    let person = json!({"kind": "human", "userId": "user-carol"});
    let not_an_agent = refusal(json!({"recipients": [{"address": person}], "inbound": {"recipient": person}}));
    assert_eq!(not_an_agent.pointer(), format!("{AT}/inbound/recipient"));
}

#[test]
fn host_operations_are_checked_like_attempts() {
    let send = |extra: Value, expect: Value| json!({"host": [{"id": "h", "role": "attack", "receiver": bob(), "extra": extra, "expect": expect}]});
    let envelope_key = refusal(send(json!({"sender": "x"}), json!({"outcomes": ["thrown"]})));
    assert_eq!(envelope_key.pointer(), format!("{AT}/host/0/extra/sender"));
    let repeated = refusal(send(json!({}), json!({"outcomes": ["denied", "denied"]})));
    assert_eq!(repeated.pointer(), format!("{AT}/host/0/expect/outcomes/1"));
    let bad_code = refusal(send(json!({}), json!({"outcomes": ["denied"], "reasonCodes": ["Not A Code"]})));
    assert_eq!(bad_code.pointer(), format!("{AT}/host/0/expect/reasonCodes/0"));
    let shared_id = refusal(json!({
        "host": [{"id": "h", "role": "attack", "receiver": bob(), "expect": {"outcomes": ["denied"]}}],
        "hostRequests": [{"id": "h", "role": "probe", "recipient": bob(), "expect": {"statuses": ["succeeded"]}}]
    }));
    assert!(shared_id.kind == LoadErrorKind::DuplicateEntry, "{shared_id}");
    assert_eq!(shared_id.pointer(), format!("{AT}/hostRequests/0/id"));
}

// ---- the committed rows -----------------------------------------------------

fn messaging_cases(suite: &Suite) -> Vec<&Case> {
    suite.cases.iter().filter(|c| c.family == Family::Messaging).collect()
}

#[test]
fn every_messaging_row_names_its_rules_and_passes_in_the_adversary_column() {
    let suite = suite();
    let cases = messaging_cases(&suite);
    assert_eq!(cases.len(), 17);
    for case in cases {
        let description = case.description.as_deref().unwrap_or_default();
        assert!(description.starts_with('M'), "{} names no rule id", case.id);
        for condition in &case.conditions {
            let run = run_case(&suite, case, &condition.id);
            assert_eq!(run.cell.status, CellStatus::Pass, "{}/{}: {:?}", case.id, condition.id, run.cell.detail);
        }
    }
}

#[test]
fn m17_each_field_adr_0015_names_is_its_own_attack_beside_a_two_argument_control() {
    let suite = suite();
    let script = suite.script("messaging.request-arguments").unwrap();
    for key in ["sender", "purpose", "traceId", "messageId", "intent", "replyTo"] {
        let attack = script.attempts.iter().find(|a| a.tool_arguments.contains_key(key)).unwrap();
        assert_eq!(attack.tool_arguments.len(), 3, "{key} is the only extra argument");
        assert_eq!(attack.expect.reason_codes.as_deref(), Some(&["invalid_tool_arguments".to_string()][..]));
    }
    let control = &script.attempts[0];
    assert_eq!(control.tool_arguments.keys().collect::<Vec<_>>(), ["payload", "recipient"]);
    let run = run_row(&suite, "messaging-request-arguments", "recipient-granted");
    assert_eq!(effects(&run)["dispatches"], json!(1), "only the control was delivered");
    assert_eq!(run.cell.reason_codes, ["invalid_tool_arguments"]);
}

#[test]
fn m18_delivered_envelopes_carry_the_turns_trusted_fields_under_minted_ids() {
    let suite = suite();
    let run = run_row(&suite, "messaging-trusted-fields", "two-recipients");
    let envelopes = effects(&run)["envelopes"].as_array().unwrap().clone();
    assert_eq!(envelopes.len(), 2);
    let calls: Vec<String> =
        run.snapshot.value()["receipts"].as_array().unwrap().iter().map(|r| r["callId"].to_string()).collect();
    for envelope in &envelopes {
        assert_eq!(envelope["sender"], json!({"kind": "agent", "agentId": "agent-mallory"}));
        assert_eq!(envelope["purpose"], json!("conformance-probe"));
        assert_eq!(envelope["traceId"], json!("trace-conformance"));
        assert_eq!(envelope["createdAt"], json!("2026-08-18T09:00:00.000Z"));
        assert_eq!(envelope["fromTurnContext"], json!(true));
        assert!(!calls.contains(&envelope["id"].to_string()));
    }
    assert_ne!(envelopes[0]["id"], envelopes[1]["id"]);
}

#[test]
fn m20_m28_an_ungranted_or_revoked_recipient_spends_nothing_of_another_grant() {
    let suite = suite();
    let run = run_row(&suite, "messaging-recipient-scoped", "one-bounded-one-ungranted-one-revoked");
    assert_eq!(run.cell.reason_codes, ["no_matching_grant"]);
    let envelopes = effects(&run)["envelopes"].as_array().unwrap().clone();
    assert_eq!(envelopes.len(), 1);
    assert_eq!(envelopes[0]["receiver"], bob());
}

#[test]
fn m8_m16_m19_a_single_use_send_grant_delivers_once_then_withdraws_the_tool() {
    let suite = suite();
    let run = run_row(&suite, "messaging-bounded-send", "single-use-send-grant");
    assert_eq!(run.cell.reason_codes, ["tool_unavailable"]);
    assert_eq!(run.cell.causes, ["grant_exhausted"]);
    assert_eq!(effects(&run)["dispatches"], json!(1));
}

#[test]
fn m26_each_malformed_reply_is_refused_and_shown() {
    let suite = suite();
    let case = suite.case("messaging-reply-correlation").unwrap();
    let shapes: Vec<String> = case
        .conditions
        .iter()
        .map(|c| serde_json::to_value(c.world.messaging.as_ref().unwrap().router).unwrap().to_string())
        .collect();
    for shape in ["wrong_reply_to", "parties_not_reversed", "changed_purpose", "changed_trace"] {
        assert!(shapes.contains(&format!("\"{shape}\"")), "{shape} has no condition");
    }
    let run = run_row(&suite, "messaging-reply-correlation", "parties-not-reversed");
    assert_eq!(run.cell.reason_codes, ["invalid_message_reply"]);
    let reply = &effects(&run)["replies"][0];
    assert_eq!(reply["sender"], reply["receiver"], "the router kept the request's sender");
}

#[test]
fn m27_the_output_of_a_well_formed_reply_is_exactly_its_payload() {
    let suite = suite();
    let run = run_row(&suite, "messaging-reply-accepted", "well-formed-reply");
    let request = &effects(&run)["hostRequests"][0];
    assert_eq!(request["status"], json!("succeeded"));
    assert_eq!(request["output"], json!({"answer": "received"}));
    assert_eq!(request["output"], request["replyPayload"]);
    assert_eq!(request["met"], json!(true));
}

#[test]
fn m24_a_delivery_not_accepted_fails_the_request_and_keeps_the_transports_code_as_cause() {
    let suite = suite();
    // A host send in the same world shows the transport's failure itself
    // (M10, M11); only the tool path rewraps it.
    let expected = [
        ("transport-rejects", "recipient_unreachable", None),
        ("transport-fails", "carrier_unavailable", None),
        ("transport-throws", "message_delivery_failed", Some("message_delivery_failed")),
        ("transport-mismatched-receipt", "invalid_message_receipt", Some("invalid_message_receipt")),
        ("route-lease-closed", "route_lease_revoked", None),
    ];
    for (condition, cause, host_send) in expected {
        let run = run_row(&suite, "messaging-not-accepted", condition);
        let mut codes: Vec<&str> = host_send.into_iter().chain(["message_request_not_accepted"]).collect();
        codes.sort_unstable();
        assert_eq!(run.cell.reason_codes, codes, "{condition}");
        assert_eq!(run.cell.causes, [cause], "{condition}");
    }
}

#[test]
fn m6_a_throwing_resolver_fails_both_send_paths_closed() {
    let suite = suite();
    let run = run_row(&suite, "messaging-resolver-throws", "resolver-throws");
    assert_eq!(run.cell.status, CellStatus::Pass, "{:?}", run.cell.detail);
    assert_eq!(run.cell.reason_codes, ["message_requirement_resolution_failed", "tool_requirement_resolution_failed"]);
}

#[test]
fn m25_a_throwing_reply_router_fails_the_request() {
    let suite = suite();
    let run = run_row(&suite, "messaging-reply-router-throws", "router-throws");
    assert_eq!(run.cell.status, CellStatus::Pass, "{:?}", run.cell.detail);
    assert_eq!(run.cell.reason_codes, ["message_reply_resolution_failed"]);
}

#[test]
fn m15_without_both_ports_the_request_tool_is_not_offered() {
    let suite = suite();
    // Without a transport the host's own send fails as M9 says.
    let expected =
        [("transport-without-router", None), ("router-without-transport", Some("message_transport_not_configured"))];
    for (condition, host_send) in expected {
        let run = run_row(&suite, "messaging-both-ports", condition);
        let codes: Vec<&str> = host_send.into_iter().chain(["tool_unavailable"]).collect();
        assert_eq!(run.cell.reason_codes, codes, "{condition}");
        let snapshot = run.snapshot.value();
        let exposed = snapshot["turns"][0]["exposedTools"].as_array().unwrap();
        assert!(!exposed.contains(&json!("messages.request")), "{condition}");
    }
}

#[test]
fn m13_each_inbound_row_expects_the_first_check_that_fails() {
    let suite = suite();
    let mut seen = Vec::new();
    for case in messaging_cases(&suite) {
        for condition in &case.conditions {
            let Some(inbound) = condition.world.messaging.as_ref().and_then(|m| m.inbound.as_ref()) else { continue };
            let expected = condition.expect_turn.as_ref().unwrap();
            let has_execution =
                condition.world.messaging.as_ref().unwrap().recipient(&inbound.recipient).unwrap().execution;
            let code = first_mismatch(inbound).or((!has_execution).then_some("no_matching_grant"));
            assert_eq!(expected.reason_code.as_deref(), code, "{}/{}", case.id, condition.id);
            seen.extend(code);
        }
    }
    for code in ["actor_mismatch", "receiver_mismatch", "message_context_mismatch", "no_matching_grant"] {
        assert!(seen.contains(&code), "no inbound row expects {code}");
    }
}

#[test]
fn m13_a_refused_inbound_turn_leaves_no_decision_and_runs_nothing() {
    let suite = suite();
    let run = run_row(&suite, "messaging-inbound-actor-mismatch", "every-check-broken");
    let turn = &run.snapshot.value()["turns"][0];
    assert_eq!(turn["code"], json!("actor_mismatch"));
    assert_eq!(turn["decisions"], json!([]));
    assert_eq!(turn["events"], json!(["turn.denied"]));
}

#[test]
fn m14_an_inbound_turn_uses_only_the_recipients_grants() {
    let suite = suite();
    let run = run_row(&suite, "messaging-inbound-recipient", "built-for-the-recipient");
    let decisions = run.snapshot.value()["turns"][0]["decisions"].as_array().unwrap().clone();
    let grants: Vec<&str> = decisions.iter().filter_map(|d| d["grantId"].as_str()).collect();
    assert_eq!(grants, ["grant-turn-agent-bob", "grant-read-agent-bob"]);
    let refused = run_row(&suite, "messaging-inbound-execution-grant", "recipient-without-execution-grant");
    assert_eq!(refused.snapshot.value()["turns"][0]["code"], json!("no_matching_grant"));
}

#[test]
fn m5_a_mismatched_host_send_writes_one_record_and_never_reaches_the_transport() {
    let suite = suite();
    let run = run_row(&suite, "messaging-host-send", "single-use-send-grant");
    let host = effects(&run)["host"].as_array().unwrap().clone();
    for report in &host[..3] {
        assert_eq!(report["outcome"], json!("denied"));
        assert_eq!(report["reasonCode"], json!("message_context_mismatch"));
        assert_eq!((report["dispatches"].clone(), report["auditEvents"].clone()), (json!(0), json!(1)));
    }
    assert_eq!(host[3]["outcome"], json!("accepted"), "the single use was still there");
    assert_eq!(effects(&run)["dispatches"], json!(1));
}

#[test]
fn m1_m4_an_envelope_with_unknown_keys_throws_before_delivery_and_audit() {
    let suite = suite();
    let run = run_row(&suite, "messaging-envelope-strict", "unknown-keys");
    let host = effects(&run)["host"].as_array().unwrap().clone();
    for report in &host[..2] {
        assert_eq!(report["outcome"], json!("thrown"));
        assert_eq!((report["dispatches"].clone(), report["auditEvents"].clone()), (json!(0), json!(0)));
    }
}

// ---- grading ------------------------------------------------------------------

fn with_messaging(suite: &Suite, case: &str, edit: impl Fn(&mut MessagingOptions)) -> Case {
    let mut case = suite.case(case).unwrap().clone();
    edit(case.conditions[0].world.messaging.as_mut().unwrap());
    case
}

#[test]
fn m5_a_host_send_that_misses_its_expectation_fails_the_row() {
    let suite = suite();
    let case = with_messaging(&suite, "messaging-host-send", |m| m.host[0].expect.dispatches = Some(1));
    let run = run_case(&suite, &case, "single-use-send-grant");
    assert_eq!(run.cell.status, CellStatus::Fail);
    assert_eq!(effects(&run)["host"][0]["met"], json!(false));
}

#[test]
fn a_failing_host_control_leaves_the_row_not_exercised() {
    let suite = suite();
    let case = with_messaging(&suite, "messaging-host-send", |m| {
        m.host[3].receiver = Address::agent("agent-dave");
    });
    let run = run_case(&suite, &case, "single-use-send-grant");
    assert_eq!(run.cell.status, CellStatus::NotExercised);
}

#[test]
fn m18_an_effects_expectation_the_ports_do_not_show_fails_the_row() {
    let suite = suite();
    let case = with_messaging(&suite, "messaging-trusted-fields", |m| {
        m.expect_effects.as_mut().unwrap().dispatches = Some(3);
    });
    let run = run_case(&suite, &case, "two-recipients");
    assert_eq!(run.cell.status, CellStatus::Fail);
    assert!(run.cell.declared > suite.script("messaging.trusted-fields").unwrap().attempts.len() as u32);
}

#[test]
fn a_world_without_the_option_snapshots_no_messaging_effects() {
    let suite = suite();
    let run = run_row(&suite, "route-lease-revoked", "lease-closed-between-two-dispatches");
    assert!(run.snapshot.value()["world"].get("messaging").is_none());
}

// ---- inbound turns ------------------------------------------------------------

#[test]
fn m13_an_inbound_turn_is_built_for_the_recipient_or_broken_one_field_at_a_time() {
    let options: MessagingOptions = serde_json::from_value(json!({
        "recipients": [{"address": bob(), "execution": true}],
        "inbound": {"recipient": bob(), "receiver": {"kind": "agent", "agentId": "agent-dave"}}
    }))
    .unwrap();
    let world_options = WorldOptions { messaging: Some(options.clone()), ..WorldOptions::default() };
    let world = World::build(&world_options).unwrap();
    let request = turn_request(&world, &world_options, "inbound", 1);
    assert_eq!(request.agent, Address::agent("agent-bob"));
    assert_eq!(request.context.actor, Address::agent("agent-bob"));
    assert_eq!(request.message.sender, Address::agent("agent-mallory"));
    assert_eq!(request.message.receiver, Address::agent("agent-dave"));
    assert_eq!(first_mismatch(options.inbound.as_ref().unwrap()), Some("receiver_mismatch"));
    let plain = turn_request(&world, &WorldOptions::default(), "plain", 1);
    assert_eq!(built_for(plain.clone(), None), plain);
}
