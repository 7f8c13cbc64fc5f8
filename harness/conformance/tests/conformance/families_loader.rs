//! Loading the rule families: the committed drain, retryable and annotate
//! rows, and every refusal of the extended script language, world options
//! and turn expectations (file + JSON pointer, never a panic).

use crate::support;

use support::{committed_suite, scratch_suite, suite_root};

use serde_json::{json, Value};
use sharedos_grading::input::case::Family;
use sharedos_grading::input::error::{LoadError, LoadErrorKind};
use sharedos_grading::input::loader::load_suite;
use sharedos_grading::input::script::{MoveKind, TerminalKind};
use std::path::{Path, PathBuf};

/// A throwaway suite holding one script and one case.
struct Fixture {
    root: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let root = scratch_suite("sharedos-families-loader", name);
        Fixture { root }
    }

    fn refusal(&self, script: &Value, case: &Value) -> LoadError {
        std::fs::write(self.root.join("adversaries/drain.sample.json"), script.to_string()).unwrap();
        std::fs::write(self.root.join("cases/drain-sample.json"), case.to_string()).unwrap();
        match load_suite(&self.root) {
            Ok(_) => panic!("the fixture was expected to be refused"),
            Err(e) => e,
        }
    }

    fn loads(&self, script: &Value, case: &Value) {
        std::fs::write(self.root.join("adversaries/drain.sample.json"), script.to_string()).unwrap();
        std::fs::write(self.root.join("cases/drain-sample.json"), case.to_string()).unwrap();
        load_suite(&self.root).unwrap_or_else(|e| panic!("the fixture must load: {e}"));
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn sample_script() -> Value {
    json!({
        "id": "drain.sample", "kind": "drain", "invariant": "i", "expectedOutcome": "o",
        "attempts": [
            {"id": "transfer", "role": "control", "description": "d", "tool": "ledger.transfer",
             "toolArguments": {"from": "account-a", "to": "account-b", "amount": 40}, "atMs": 114000, "concurrent": true,
             "expect": {"statuses": ["succeeded"]}},
            {"id": "note", "role": "probe", "description": "d", "annotate": {"key": "note", "value": 1}, "expect": {"statuses": ["succeeded"]}},
            {"id": "ping", "role": "probe", "description": "d", "emit": {"type": "adversary.ping"}, "expect": {"statuses": ["succeeded"]}},
            {"id": "look", "role": "probe", "description": "d", "read": "draining", "atMs": 116000, "expect": {"statuses": ["denied"], "reasonCodes": ["turn_draining"]}},
            {"id": "late", "role": "probe", "description": "d", "tool": "files.read", "toolArguments": {"path": ["Workspace", "policy.md"]},
             "afterClose": true, "expect": {"rejection": "host_closed"}}
        ],
        "terminal": {"type": "stall", "until": "draining", "reason": "gives up"}
    })
}

fn sample_case() -> Value {
    json!({
        "id": "drain-sample", "family": "drain", "adversary": "drain.sample",
        "conditions": [{
            "id": "grace", "description": "d",
            "world": {"timeoutMs": 120000, "drainGraceMs": 5000, "ledger": {"transferMs": 3000}, "hostCancelsAtMs": 50000,
                      "auditFailsAt": {"record": "call_decision", "call": 2},
                      "requestClassifies": [{"tool": "ledger.transfer", "readWrite": "read"}]},
            "expectTurn": {"status": "cancelled", "reasonCode": "turn_cancelled", "retryable": null, "endedAtMs": 117000,
                           "annotations": {"note": 1}, "annotationsAbsent": ["afterClose"], "runtimeProvenance": true,
                           "promptHash": null, "escalationAsked": null, "eventCounts": {"tool.completed": 1},
                           "balances": {"account-a": 60}, "quietAfter": true},
            "notApplicableIn": {"model-scripted": "The seat cannot read draining."}
        }]
    })
}

fn with(mut value: Value, pointer: &str, new: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match value.pointer_mut(parent).unwrap() {
        Value::Object(map) => {
            map.insert(key.to_string(), new);
        }
        Value::Array(items) => items[key.parse::<usize>().unwrap()] = new,
        _ => panic!("{pointer}"),
    }
    value
}

fn without(mut value: Value, pointer: &str) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    value.pointer_mut(parent).unwrap().as_object_mut().unwrap().remove(key);
    value
}

fn refused_script(name: &str, script: Value) -> LoadError {
    Fixture::new(name).refusal(&script, &sample_case())
}

fn refused_case(name: &str, case: Value) -> LoadError {
    Fixture::new(name).refusal(&sample_script(), &case)
}

fn at(error: &LoadError, file: &str, pointer: &str) {
    assert_eq!(error.file(), Path::new(file), "{error}");
    assert_eq!(error.pointer(), pointer, "{error}");
}

#[test]
fn the_extended_sample_loads() {
    Fixture::new("sample").loads(&sample_script(), &sample_case());
}

#[test]
fn the_committed_families_load_with_one_script_per_case() {
    let suite = committed_suite();
    let count = |family: Family| suite.cases.iter().filter(|c| c.family == family).count();
    assert_eq!(count(Family::Drain), 11);
    assert_eq!(count(Family::Retryable), 22);
    assert_eq!(count(Family::Annotate), 24);
    for case in suite.cases.iter().filter(|c| matches!(c.family, Family::Drain | Family::Retryable | Family::Annotate))
    {
        let script = suite.script_for(case).unwrap();
        assert_eq!(script.kind.as_str(), case.family.as_str(), "{}", case.id);
        assert!(
            case.conditions.iter().all(|c| c.expect_turn.is_some()),
            "{}: every family row grades its ending",
            case.id
        );
    }
}

/// Whether `text` names rule `id` as a whole token (`W1` is not `W12`).
fn names(text: &str, id: &str) -> bool {
    text.match_indices(id).any(|(at, _)| !text[at + id.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

#[test]
fn every_worked_example_w1_to_w22_is_a_case_named_in_its_description() {
    let suite = committed_suite();
    let prose: Vec<String> = suite.cases.iter().map(|c| c.description.clone().unwrap_or_default()).collect();
    for n in 1..=22 {
        let id = format!("W{n}");
        assert!(prose.iter().any(|p| names(p, &id)), "no case names {id}");
    }
    for id in [
        "E45", "E46", "E47", "E48", "E49", "E50", "E52", "E53", "E55", "E60", "E62", "E71", "E84", "E85", "E86", "E88",
        "E89", "E90", "E91", "E92", "E93", "E94", "E95",
    ] {
        assert!(prose.iter().any(|p| names(p, id)), "no case names {id}");
    }
}

#[test]
fn the_schemas_list_the_new_vocabularies() {
    let read = |rel: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(suite_root().join(rel)).unwrap()).unwrap()
    };
    let strings =
        |v: &Value| -> Vec<String> { v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect() };
    let adversary = read("adversaries/adversary.schema.json");
    let kinds = [
        TerminalKind::Escalate,
        TerminalKind::Crash,
        TerminalKind::Complete,
        TerminalKind::Fail,
        TerminalKind::Stall,
        TerminalKind::Malformed,
        TerminalKind::HangUp,
        TerminalKind::ReportFailure,
    ];
    let kinds: Vec<String> =
        kinds.iter().map(|k| serde_json::to_value(k).unwrap().as_str().unwrap().to_string()).collect();
    assert_eq!(strings(&adversary["properties"]["terminal"]["properties"]["type"]["enum"]), kinds);
    let case = read("cases/case.schema.json");
    let families: Vec<&str> = Family::ALL.iter().map(|f| f.as_str()).collect();
    assert_eq!(strings(&case["properties"]["family"]["enum"]), families);
    assert!(MoveKind::ALL.contains(&MoveKind::Drain) && !MoveKind::matrix().contains(&MoveKind::Drain));
}

// ---- steps -----------------------------------------------------------------

const SCRIPT: &str = "adversaries/drain.sample.json";
const CASE: &str = "cases/drain-sample.json";

#[test]
fn a_step_naming_two_actions_is_refused_at_the_second() {
    let error = refused_script("two-actions", with(sample_script(), "/attempts/1/read", json!("draining")));
    assert!(error.kind == LoadErrorKind::InvalidAttempt, "{error}");
    at(&error, SCRIPT, "/attempts/1/read");
}

#[test]
fn timing_flags_are_refused_where_they_mean_nothing() {
    let cases = [
        ("concurrent-annotate", "/attempts/1/concurrent", json!(true), "/attempts/1/concurrent"),
        ("late-and-timed", "/attempts/4/atMs", json!(10), "/attempts/4/afterClose"),
        ("late-and-concurrent", "/attempts/4/concurrent", json!(true), "/attempts/4/afterClose"),
        ("arguments-on-a-read", "/attempts/3/toolArguments", json!({"x": 1}), "/attempts/3/toolArguments"),
        ("over-budget-annotate", "/attempts/1/overBudget", json!(true), "/attempts/1/overBudget"),
    ];
    for (name, pointer, value, refused_at) in cases {
        let error = refused_script(name, with(sample_script(), pointer, value));
        assert!(error.kind == LoadErrorKind::InvalidAttempt, "{name}: {error}");
        at(&error, SCRIPT, refused_at);
    }
    let late_inspection = json!({"id": "walk", "role": "probe", "description": "d", "inspect": "grant_material", "afterClose": true, "expect": {"statuses": ["denied"]}});
    let error = refused_script("late-inspection", with(sample_script(), "/attempts/1", late_inspection));
    at(&error, SCRIPT, "/attempts/1/afterClose");
}

#[test]
fn an_instant_past_the_longest_turn_is_out_of_bounds() {
    let error = refused_script("late-instant", with(sample_script(), "/attempts/0/atMs", json!(600_001)));
    assert!(error.kind == LoadErrorKind::OutOfBounds, "{error}");
    at(&error, SCRIPT, "/attempts/0/atMs");
    let error = refused_script("negative-instant", with(sample_script(), "/attempts/0/atMs", json!(-1)));
    assert!(error.kind == LoadErrorKind::OutOfBounds, "{error}");
    at(&error, SCRIPT, "/attempts/0/atMs");
}

#[test]
fn a_rejection_excludes_statuses_and_belongs_to_calls() {
    let both = json!({"rejection": "interrupted", "statuses": ["failed"]});
    let error = refused_script("rejection-and-status", with(sample_script(), "/attempts/0/expect", both));
    assert!(error.kind == LoadErrorKind::InvalidAttempt, "{error}");
    at(&error, SCRIPT, "/attempts/0/expect/rejection");
    let error = refused_script(
        "rejected-note",
        with(sample_script(), "/attempts/1/expect", json!({"rejection": "host_closed"})),
    );
    at(&error, SCRIPT, "/attempts/1/expect/rejection");
    let boundary = json!({"statuses": ["succeeded"], "refusedBy": "envelope"});
    let error = refused_script("boundary-on-a-note", with(sample_script(), "/attempts/1/expect", boundary));
    at(&error, SCRIPT, "/attempts/1/expect/refusedBy");
    let error = refused_script("no-statuses", with(sample_script(), "/attempts/1/expect", json!({})));
    assert!(error.kind == LoadErrorKind::OutOfBounds, "{error}");
    at(&error, SCRIPT, "/attempts/1/expect/statuses");
    let error = refused_script(
        "unknown-rejection",
        with(sample_script(), "/attempts/0/expect", json!({"rejection": "vanished"})),
    );
    assert!(error.kind == LoadErrorKind::UnknownValue, "{error}");
    at(&error, SCRIPT, "/attempts/0/expect/rejection");
}

#[test]
fn an_unknown_key_in_a_step_action_is_refused() {
    let error = refused_script("annotate-extra", with(sample_script(), "/attempts/1/annotate/when", json!(1)));
    assert!(error.kind == LoadErrorKind::UnknownKey, "{error}");
    at(&error, SCRIPT, "/attempts/1/annotate/when");
    let error = refused_script("read-unknown", with(sample_script(), "/attempts/3/read", json!("deadline")));
    assert!(error.kind == LoadErrorKind::UnknownValue, "{error}");
}

// ---- endings -----------------------------------------------------------------

#[test]
fn each_ending_needs_its_own_fields_and_refuses_the_others() {
    let cases = [
        ("fail-without-error", json!({"type": "fail"}), "/terminal/error"),
        ("crash-without-reason", json!({"type": "crash"}), "/terminal/reason"),
        ("complete-with-reason", json!({"type": "complete", "reason": "r"}), "/terminal/reason"),
        ("stall-with-output", json!({"type": "stall", "output": 1}), "/terminal/output"),
        ("crash-until-draining", json!({"type": "crash", "reason": "r", "until": "draining"}), "/terminal/until"),
        ("stall-until-without-reason", json!({"type": "stall", "until": "draining"}), "/terminal/reason"),
        ("metadata-on-crash", json!({"type": "crash", "reason": "r", "metadata": {}}), "/terminal/metadata"),
        ("report-key", json!({"type": "complete", "metadata": {"conformance": 1}}), "/terminal/metadata/conformance"),
        (
            "bad-error-code",
            json!({"type": "fail", "error": {"code": "Bad Code", "message": "m"}}),
            "/terminal/error/code",
        ),
        ("blank-message", json!({"type": "fail", "error": {"code": "c", "message": " "}}), "/terminal/error/message"),
        (
            "parsing-outcome",
            json!({"type": "malformed", "outcome": {"type": "complete", "output": 1}}),
            "/terminal/outcome",
        ),
        ("late-ending", json!({"type": "complete", "atMs": 600_001}), "/terminal/atMs"),
    ];
    for (name, terminal, pointer) in cases {
        let error = refused_script(name, with(sample_script(), "/terminal", terminal));
        at(&error, SCRIPT, pointer);
    }
    let error = refused_script("unknown-ending", with(sample_script(), "/terminal", json!({"type": "vanish"})));
    assert!(error.kind == LoadErrorKind::UnknownValue, "{error}");
    at(&error, SCRIPT, "/terminal/type");
}

// ---- world options ----------------------------------------------------------------

const WORLD: &str = "/conditions/0/world";

#[test]
fn envelope_world_options_are_bounded() {
    let cases = [
        ("zero-timeout", "timeoutMs", json!(0)),
        ("long-timeout", "timeoutMs", json!(600_001)),
        ("late-cancel", "hostCancelsAtMs", json!(600_001)),
    ];
    for (name, key, value) in cases {
        let error = refused_case(name, with(sample_case(), &format!("{WORLD}/{key}"), value));
        assert!(error.kind == LoadErrorKind::OutOfBounds, "{name}: {error}");
        at(&error, CASE, &format!("{WORLD}/{key}"));
    }
    let error = refused_case("slow-ledger", with(sample_case(), &format!("{WORLD}/ledger/transferMs"), json!(600_001)));
    at(&error, CASE, &format!("{WORLD}/ledger/transferMs"));
    let error = refused_case("ledger-key", with(sample_case(), &format!("{WORLD}/ledger/accounts"), json!(3)));
    assert!(error.kind == LoadErrorKind::UnknownKey, "{error}");
}

#[test]
fn options_that_cannot_be_armed_together_are_refused() {
    let both = with(sample_case(), &format!("{WORLD}/hostSignalAborted"), json!(true));
    let error = refused_case("cancel-twice", both);
    at(&error, CASE, &format!("{WORLD}/hostCancelsAtMs"));
    let two_faults = with(sample_case(), &format!("{WORLD}/auditFailsAfterOperations"), json!(1));
    let error = refused_case("two-audit-faults", two_faults);
    at(&error, CASE, &format!("{WORLD}/auditFailsAt"));
}

#[test]
fn an_audit_write_is_chosen_with_exactly_the_fields_it_needs() {
    let listing_with_call = json!({"record": "catalogue_listing", "call": 1});
    let error = refused_case("listing-call", with(sample_case(), &format!("{WORLD}/auditFailsAt"), listing_with_call));
    at(&error, CASE, &format!("{WORLD}/auditFailsAt/call"));
    let decision_without_call = json!({"record": "call_decision"});
    let error =
        refused_case("decision-no-call", with(sample_case(), &format!("{WORLD}/auditFailsAt"), decision_without_call));
    at(&error, CASE, &format!("{WORLD}/auditFailsAt/call"));
    let error = refused_case(
        "unknown-record",
        with(sample_case(), &format!("{WORLD}/auditFailsAt"), json!({"record": "turn_end"})),
    );
    assert!(error.kind == LoadErrorKind::UnknownValue, "{error}");
}

#[test]
fn a_request_classification_names_a_known_tool_once() {
    let unknown = json!([{"tool": "ledger.mint", "readWrite": "read"}]);
    let error = refused_case("unknown-tool", with(sample_case(), &format!("{WORLD}/requestClassifies"), unknown));
    assert!(error.kind == LoadErrorKind::UnknownTool, "{error}");
    at(&error, CASE, &format!("{WORLD}/requestClassifies/0/tool"));
    let twice =
        json!([{"tool": "ledger.transfer", "readWrite": "read"}, {"tool": "ledger.transfer", "readWrite": "write"}]);
    let error = refused_case("twice", with(sample_case(), &format!("{WORLD}/requestClassifies"), twice));
    assert!(error.kind == LoadErrorKind::DuplicateEntry, "{error}");
    at(&error, CASE, &format!("{WORLD}/requestClassifies/1/tool"));
}

#[test]
fn an_unknown_world_option_is_still_refused() {
    let error = refused_case("misspelt", with(sample_case(), &format!("{WORLD}/timeOutMs"), json!(1)));
    assert!(error.kind == LoadErrorKind::UnknownWorldOption, "{error}");
    at(&error, CASE, &format!("{WORLD}/timeOutMs"));
}

// ---- turn expectations and declarations ---------------------------------------------

const TURN: &str = "/conditions/0/expectTurn";

#[test]
fn turn_expectation_values_are_checked_at_their_pointer() {
    let cases = [
        ("late-end", "endedAtMs", json!(600_001), format!("{TURN}/endedAtMs")),
        ("provenance-as-annotation", "annotations", json!({"runtime": {}}), format!("{TURN}/annotations/runtime")),
        ("short-hash", "promptHash", json!("abc"), format!("{TURN}/promptHash")),
        ("repeated-absent", "annotationsAbsent", json!(["a", "a"]), format!("{TURN}/annotationsAbsent/1")),
        ("unknown-event", "eventCounts", json!({"tool.finished": 1}), format!("{TURN}/eventCounts/tool.finished")),
        (
            "blank-asked",
            "escalationAsked",
            json!({"tool": "sharedos.escalate", "reason": " "}),
            format!("{TURN}/escalationAsked/reason"),
        ),
    ];
    for (name, key, value, pointer) in cases {
        let error = refused_case(name, with(sample_case(), &format!("{TURN}/{key}"), value));
        at(&error, CASE, &pointer);
    }
    let error = refused_case("maybe", with(sample_case(), &format!("{TURN}/retryable"), json!("maybe")));
    assert!(error.kind == LoadErrorKind::WrongType, "{error}");
    at(&error, CASE, &format!("{TURN}/retryable"));
    let error = refused_case("unknown-expectation", with(sample_case(), &format!("{TURN}/finishedBy"), json!("x")));
    assert!(error.kind == LoadErrorKind::UnknownKey, "{error}");
    let error = refused_case("no-status", without(sample_case(), &format!("{TURN}/status")));
    assert!(error.kind == LoadErrorKind::MissingKey, "{error}");
}

#[test]
fn a_not_applicable_declaration_names_a_column_id_and_gives_a_reason() {
    // Not a built-in column's id: outside the closed vocabulary of columns.
    let bad_id = json!({"Model Scripted": "reason"});
    let error = refused_case("bad-column", with(sample_case(), "/conditions/0/notApplicableIn", bad_id));
    assert!(error.kind == LoadErrorKind::UnknownValue, "{error}");
    at(&error, CASE, "/conditions/0/notApplicableIn/Model Scripted");
    let blank = json!({"model-scripted": ""});
    let error = refused_case("blank-reason", with(sample_case(), "/conditions/0/notApplicableIn", blank));
    at(&error, CASE, "/conditions/0/notApplicableIn/model-scripted");
}

#[test]
fn an_unknown_family_is_refused() {
    let error = refused_case("family", with(sample_case(), "/family", json!("latency")));
    assert!(error.kind == LoadErrorKind::UnknownValue, "{error}");
    at(&error, CASE, "/family");
}
