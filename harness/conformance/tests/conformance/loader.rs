//! Loading the suite: the committed data, every way a file is refused, and
//! the case-set identity.

use crate::support;

use support::{committed_suite, scratch_suite, suite_root};

use serde_json::{json, Value};
use sharedos_conformance_metadata::witness::OwnTool;
use sharedos_grading::identity::case_set::{
    case_set_hash, case_set_identity, HASHED_ATTEMPT_FIELDS, HASHED_CASE_FIELDS, HASHED_CONDITION_FIELDS,
    HASHED_SCRIPT_FIELDS,
};
use sharedos_grading::input::case::Family;
use sharedos_grading::input::error::{LoadError, LoadErrorKind};
use sharedos_grading::input::loader::{load_suite, Suite};
use sharedos_grading::input::script::MoveKind;
use sharedos_world::options::WorldOptions;
use sharedos_world::vocabulary::{known_grants, known_tools};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A throwaway suite folder holding one valid script and one valid case.
struct Fixture {
    root: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let root = scratch_suite("sharedos-conformance-loader", name);
        let fixture = Fixture { root };
        fixture.write("adversaries/kernel.sample.json", &sample_script());
        fixture.write("cases/sample.json", &sample_case());
        fixture
    }

    fn write(&self, rel: &str, value: &Value) {
        self.write_text(rel, &serde_json::to_string_pretty(value).unwrap());
    }

    fn write_text(&self, rel: &str, text: &str) {
        std::fs::write(self.root.join(rel), text).unwrap();
    }

    fn load(&self) -> Result<Suite, LoadError> {
        load_suite(&self.root)
    }

    fn refusal(&self) -> LoadError {
        match self.load() {
            Ok(_) => panic!("the fixture was expected to be refused"),
            Err(e) => e,
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn sample_script() -> Value {
    json!({
        "$schema": "./adversary.schema.json",
        "id": "kernel.sample",
        "kind": "read_to_mutation",
        "invariant": "Use read authority for a mutation",
        "expectedOutcome": "Deny and audit",
        "description": "A small script for loader tests.",
        "attempts": [
            {"id": "read-the-target", "role": "control", "description": "Reads.", "tool": "files.read",
             "toolArguments": {"path": "Workspace/policy.md"}, "expect": {"statuses": ["succeeded"]}},
            {"id": "mutate-the-target", "role": "attack", "description": "Writes.", "tool": "files.replace",
             "toolArguments": {"path": "Workspace/policy.md", "content": "conformance"},
             "expect": {"statuses": ["denied"], "reasonCodes": ["no_matching_grant"]}}
        ]
    })
}

fn sample_case() -> Value {
    json!({
        "$schema": "./case.schema.json",
        "id": "sample",
        "family": "matrix",
        "adversary": "kernel.sample",
        "description": "A small case for loader tests.",
        "conditions": [
            {"id": "baseline", "description": "Nothing armed.", "world": {}},
            {"id": "revoked", "description": "Read grant revoked.", "world": {"revoked": ["grant-read"]}}
        ]
    })
}

/// Sets the value at `pointer` (creating the last key of an object).
fn set(value: &mut Value, pointer: &str, new: Value) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match value.pointer_mut(parent).unwrap() {
        Value::Object(map) => {
            map.insert(key.to_string(), new);
        }
        Value::Array(items) => items[key.parse::<usize>().unwrap()] = new,
        _ => panic!("no container at {parent}"),
    }
}

fn script_with(pointer: &str, new: Value) -> Value {
    let mut script = sample_script();
    set(&mut script, pointer, new);
    script
}

fn case_with(pointer: &str, new: Value) -> Value {
    let mut case = sample_case();
    set(&mut case, pointer, new);
    case
}

fn assert_refused(error: &LoadError, file: &str, pointer: &str) {
    assert_eq!(error.file(), Path::new(file), "{error}");
    assert_eq!(error.pointer(), pointer, "{error}");
    assert!(!error.expected().is_empty(), "{error}");
}

// ---- the committed suite --------------------------------------------------

/// The committed suite's matrix family: SharedOS's own rows.
fn matrix_suite() -> Suite {
    committed_suite().select(|c| c.family == Family::Matrix)
}

#[test]
fn the_committed_matrix_loads_31_cases_34_conditions_31_scripts() {
    let suite = matrix_suite();
    assert_eq!(suite.cases.len(), 31);
    assert_eq!(suite.condition_count(), 34);
    assert_eq!(suite.scripts.len(), 31);
    let all = committed_suite();
    let ids: Vec<&str> = all.cases.iter().map(|c| c.id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "cases are sorted by id");
}

#[test]
fn r80_one_matrix_case_per_move_kind_with_unique_kinds() {
    let suite = matrix_suite();
    let kinds: BTreeSet<MoveKind> = suite.cases.iter().map(|c| suite.script_for(c).unwrap().kind).collect();
    assert_eq!(kinds.len(), 31);
    assert_eq!(kinds, MoveKind::matrix().iter().copied().collect());
}

#[test]
fn every_data_file_id_matches_its_file_name() {
    for dir in ["adversaries", "cases"] {
        let mut seen = 0;
        for entry in std::fs::read_dir(suite_root().join(dir)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if !name.ends_with(".json") || name.ends_with(".schema.json") {
                continue;
            }
            let text = std::fs::read_to_string(suite_root().join(dir).join(&name)).unwrap();
            let value: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(value["id"].as_str(), name.strip_suffix(".json"), "{dir}/{name}");
            seen += 1;
        }
        assert!(seen >= 31, "{dir}");
    }
}

#[test]
fn r32_revoked_mid_turn_runs_two_turns_and_expired_mid_turn_one() {
    let suite = matrix_suite();
    for script in suite.scripts.values() {
        let expected = if script.kind == MoveKind::RevokedMidTurn { 2 } else { 1 };
        assert_eq!(script.turn_count(), expected, "{}", script.id);
    }
}

#[test]
fn turn_expectations_and_declared_steps_sit_where_the_matrix_puts_them() {
    let suite = matrix_suite();
    let turn = |case: &str, condition: &str| {
        let c = suite.case(case).unwrap().condition(condition).unwrap();
        c.expect_turn.as_ref().map(|e| (e.status.as_str(), e.reason_code.clone().unwrap_or_default()))
    };
    assert_eq!(
        turn("authority-unavailable", "outage-at-turn-boundary"),
        Some(("denied", "authority_unavailable".into()))
    );
    assert_eq!(
        turn("audit-unavailable", "outage-after-the-first-operation"),
        Some(("failed", "audit_unavailable".into()))
    );
    assert_eq!(turn("escalation", "baseline"), Some(("escalated", "escalation_requested".into())));
    assert_eq!(turn("escalation-refused", "escalation-withheld"), Some(("failed", "tool_unavailable".into())));
    assert_eq!(turn("runtime-crashed", "baseline"), Some(("failed", "runtime_failed".into())));
    let with_turn = suite.cases.iter().flat_map(|c| &c.conditions).filter(|c| c.expect_turn.is_some()).count();
    assert_eq!(with_turn, 5);
    let budget = suite.case("budget-exceeded").unwrap();
    assert!(budget.condition("tool-call-ceiling").unwrap().requires_declared_steps.is_none());
    assert!(budget.condition("step-ceiling").unwrap().requires_declared_steps.is_some());
    let not_implemented: Vec<&str> =
        suite.cases.iter().filter(|c| c.not_implemented.is_some()).map(|c| c.id.as_str()).collect();
    assert_eq!(not_implemented, ["replay-freshness", "typed-governed-views"]);
}

#[test]
fn json_schemas_list_the_same_vocabularies_as_the_loader() {
    let read = |rel: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(suite_root().join(rel)).unwrap()).unwrap()
    };
    let strings =
        |v: &Value| -> Vec<String> { v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect() };
    let adversary = read("adversaries/adversary.schema.json");
    let kinds: Vec<&str> = MoveKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(strings(&adversary["properties"]["kind"]["enum"]), kinds);
    // The loader takes the world's tools and a vendor CLI's own (`cli.*`).
    let mut tools = known_tools();
    tools.extend(OwnTool::ALL.map(OwnTool::name));
    assert_eq!(strings(&adversary["$defs"]["attempt"]["properties"]["tool"]["enum"]), tools);
    let case = read("cases/case.schema.json");
    let options: Vec<&String> = case["$defs"]["world"]["properties"].as_object().unwrap().keys().collect();
    let mut keys: Vec<&str> = WorldOptions::KEYS.to_vec();
    keys.sort_unstable();
    assert_eq!(options, keys);
    assert_eq!(strings(&case["$defs"]["grantId"]["enum"]), known_grants());
}

// ---- refusals ---------------------------------------------------------------

#[test]
fn a_valid_fixture_loads_and_skips_schema_and_other_files() {
    let fixture = Fixture::new("valid");
    fixture.write_text("cases/case.schema.json", "this is not even JSON");
    fixture.write_text("cases/README.md", "notes");
    let suite = fixture.load().unwrap();
    assert_eq!(suite.cases.len(), 1);
    assert_eq!(suite.condition_count(), 2);
    assert_eq!(suite.scripts.len(), 1);
    assert_eq!(suite.scripts["kernel.sample"].schema.as_deref(), Some("./adversary.schema.json"));
}

#[test]
fn invalid_json_is_refused_with_its_location() {
    let fixture = Fixture::new("invalid-json");
    fixture.write_text("cases/sample.json", "{\"id\": \"sample\",\n  \"family\": }");
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::InvalidJson, "{error}");
    assert_eq!(error.file(), Path::new("cases/sample.json"));
    assert!(error.expected().contains("line 2"), "{error}");
}

#[test]
fn trailing_content_after_the_document_is_refused() {
    let fixture = Fixture::new("trailing");
    let text = format!("{} {{}}", serde_json::to_string(&sample_case()).unwrap());
    fixture.write_text("cases/sample.json", &text);
    assert!(fixture.refusal().kind == LoadErrorKind::InvalidJson);
}

#[test]
fn an_unknown_key_is_refused_at_its_pointer() {
    let fixture = Fixture::new("unknown-key");
    fixture.write("adversaries/kernel.sample.json", &script_with("/attempts/1/expect/reasonCode", json!("x")));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::UnknownKey, "{error}");
    assert_refused(&error, "adversaries/kernel.sample.json", "/attempts/1/expect/reasonCode");
}

#[test]
fn a_repeated_key_is_refused() {
    let fixture = Fixture::new("duplicate-key");
    fixture.write_text(
        "cases/sample.json",
        &serde_json::to_string(&sample_case()).unwrap().replacen("{\"$schema\"", "{\"id\":\"sample\",\"$schema\"", 1),
    );
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::DuplicateKey, "{error}");
}

#[test]
fn a_missing_key_is_refused() {
    let fixture = Fixture::new("missing-key");
    let mut case = sample_case();
    case["conditions"][0].as_object_mut().unwrap().remove("world");
    fixture.write("cases/sample.json", &case);
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::MissingKey, "{error}");
    assert_refused(&error, "cases/sample.json", "/conditions/0");
    assert!(error.expected().contains("world"), "{error}");
}

#[test]
fn a_wrong_type_is_refused_at_its_pointer() {
    let fixture = Fixture::new("wrong-type");
    fixture.write("adversaries/kernel.sample.json", &script_with("/attempts/0/turn", json!("first")));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::WrongType, "{error}");
    assert_refused(&error, "adversaries/kernel.sample.json", "/attempts/0/turn");
}

#[test]
fn out_of_bounds_values_are_refused_at_their_pointer() {
    let cases: [(&str, Value); 6] = [
        ("/attempts/0/turn", json!(9)),
        ("/attempts/0/turn", json!(-1)),
        ("/attempts", json!([])),
        ("/attempts/1/expect/statuses", json!([])),
        ("/invariant", json!("   ")),
        ("/id", json!("Kernel Sample")),
    ];
    for (i, (pointer, value)) in cases.into_iter().enumerate() {
        let fixture = Fixture::new(&format!("bounds-{i}"));
        fixture.write("adversaries/kernel.sample.json", &script_with(pointer, value));
        let error = fixture.refusal();
        assert!(error.kind == LoadErrorKind::OutOfBounds, "{pointer}: {error}");
        assert_refused(&error, "adversaries/kernel.sample.json", pointer);
    }
}

#[test]
fn world_option_values_out_of_bounds_are_refused() {
    let fixture = Fixture::new("world-bounds");
    fixture.write("cases/sample.json", &case_with("/conditions/1/world/maxSteps", json!(0)));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::OutOfBounds, "{error}");
    assert_refused(&error, "cases/sample.json", "/conditions/1/world/maxSteps");
}

#[test]
fn an_unknown_world_option_is_refused_and_reads_well() {
    let fixture = Fixture::new("unknown-option");
    fixture.write("cases/sample.json", &case_with("/conditions/0/world/bogus", json!(true)));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::UnknownWorldOption, "{error}");
    assert_refused(&error, "cases/sample.json", "/conditions/0/world/bogus");
    let text = error.to_string();
    assert!(
        text.starts_with("cases/sample.json: at /conditions/0/world/bogus: expected a known world option"),
        "{text}"
    );
    assert!(text.contains("revokedAfterTurn"), "{text}");
}

#[test]
fn an_unknown_move_kind_is_refused() {
    let fixture = Fixture::new("unknown-kind");
    fixture.write("adversaries/kernel.sample.json", &script_with("/kind", json!("read_to_write")));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::UnknownMoveKind, "{error}");
    assert_refused(&error, "adversaries/kernel.sample.json", "/kind");
}

#[test]
fn an_unknown_role_or_status_is_an_unknown_value() {
    let fixture = Fixture::new("unknown-value");
    fixture.write("adversaries/kernel.sample.json", &script_with("/attempts/1/expect/statuses/0", json!("refused")));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::UnknownValue, "{error}");
    assert_refused(&error, "adversaries/kernel.sample.json", "/attempts/1/expect/statuses/0");
}

#[test]
fn an_unknown_tool_is_refused() {
    let fixture = Fixture::new("unknown-tool");
    fixture.write("adversaries/kernel.sample.json", &script_with("/attempts/1/tool", json!("files.shred")));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::UnknownTool, "{error}");
    assert_refused(&error, "adversaries/kernel.sample.json", "/attempts/1/tool");
}

#[test]
fn an_unknown_grant_in_a_world_option_is_refused() {
    let fixture = Fixture::new("unknown-grant");
    fixture.write(
        "cases/sample.json",
        &case_with(
            "/conditions/1/world/revokedAfterTurn",
            json!({"turn": 1, "grantIds": ["grant-read", "grant-admin"]}),
        ),
    );
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::UnknownGrant, "{error}");
    assert_refused(&error, "cases/sample.json", "/conditions/1/world/revokedAfterTurn/grantIds/1");
}

#[test]
fn an_attempt_must_name_a_tool_or_an_inspection() {
    let fixture = Fixture::new("no-target");
    let mut script = sample_script();
    script["attempts"][0].as_object_mut().unwrap().remove("tool");
    fixture.write("adversaries/kernel.sample.json", &script);
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::InvalidAttempt, "{error}");
    assert_refused(&error, "adversaries/kernel.sample.json", "/attempts/0");

    fixture.write("adversaries/kernel.sample.json", &script_with("/attempts/0/inspect", json!("grant_material")));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::InvalidAttempt, "{error}");
    assert_refused(&error, "adversaries/kernel.sample.json", "/attempts/0/inspect");
}

#[test]
fn r18_a_repeated_attempt_id_is_refused() {
    let fixture = Fixture::new("duplicate-attempt");
    fixture.write("adversaries/kernel.sample.json", &script_with("/attempts/1/id", json!("read-the-target")));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::DuplicateEntry, "{error}");
    assert_refused(&error, "adversaries/kernel.sample.json", "/attempts/1/id");
}

#[test]
fn a_repeated_condition_id_is_refused() {
    let fixture = Fixture::new("duplicate-condition");
    fixture.write("cases/sample.json", &case_with("/conditions/1/id", json!("baseline")));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::DuplicateEntry, "{error}");
    assert_refused(&error, "cases/sample.json", "/conditions/1/id");
}

#[test]
fn r18_a_script_id_declared_by_two_files_is_refused() {
    let fixture = Fixture::new("duplicate-script");
    fixture.write("adversaries/kernel.sample2.json", &sample_script());
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::DuplicateId, "{error}");
    assert_refused(&error, "adversaries/kernel.sample2.json", "/id");
    assert!(error.expected().contains("adversaries/kernel.sample.json"), "{error}");
}

#[test]
fn a_case_id_declared_by_two_files_is_refused() {
    let fixture = Fixture::new("duplicate-case");
    fixture.write("cases/sample2.json", &sample_case());
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::DuplicateId, "{error}");
    assert_refused(&error, "cases/sample2.json", "/id");
}

#[test]
fn a_case_naming_a_missing_adversary_is_refused() {
    let fixture = Fixture::new("dangling");
    fixture.write("cases/sample.json", &case_with("/adversary", json!("kernel.absent")));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::DanglingAdversary, "{error}");
    assert_refused(&error, "cases/sample.json", "/adversary");
}

#[test]
fn an_id_that_differs_from_its_file_name_is_refused() {
    let fixture = Fixture::new("mismatch");
    fixture.write("cases/other.json", &case_with("/id", json!("another")));
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::IdMismatch, "{error}");
    assert_refused(&error, "cases/other.json", "/id");
}

#[test]
fn a_missing_folder_is_unreadable() {
    let fixture = Fixture::new("no-cases");
    std::fs::remove_dir_all(fixture.root.join("cases")).unwrap();
    let error = fixture.refusal();
    assert!(error.kind == LoadErrorKind::Unreadable, "{error}");
    assert_eq!(error.file(), Path::new("cases"));
}

#[test]
fn the_first_bad_file_in_name_order_is_the_one_reported() {
    let fixture = Fixture::new("order");
    fixture.write("cases/b.json", &case_with("/id", json!("b")).clone());
    let mut broken = sample_case();
    broken["id"] = json!("a");
    broken["conditions"][0]["world"]["bogus"] = json!(1);
    fixture.write("cases/a.json", &broken);
    fixture.write_text("cases/c.json", "{");
    assert_refused(&fixture.refusal(), "cases/a.json", "/conditions/0/world/bogus");
}

// ---- case-set identity ----------------------------------------------------------

fn hash_of(fixture: &Fixture) -> String {
    case_set_hash(&fixture.load().unwrap()).unwrap()
}

#[test]
fn r6_rewording_every_description_leaves_the_case_set_hash_unchanged() {
    let fixture = Fixture::new("reword");
    let before = hash_of(&fixture);
    let mut script = sample_script();
    script["description"] = json!("Entirely different words.");
    script["attempts"][0]["description"] = json!("Another way to say it.");
    script.as_object_mut().unwrap().remove("$schema");
    let mut case = sample_case();
    case["description"] = json!("New prose.");
    case["conditions"][1]["description"] = json!("The read grant is gone.");
    case["$schema"] = json!("../elsewhere/case.schema.json");
    fixture.write("adversaries/kernel.sample.json", &script);
    fixture.write("cases/sample.json", &case);
    assert_eq!(hash_of(&fixture), before);
}

#[test]
fn spelling_out_defaults_leaves_the_case_set_hash_unchanged() {
    let fixture = Fixture::new("defaults");
    let before = hash_of(&fixture);
    let mut script = sample_script();
    script["attempts"][0]["turn"] = json!(1);
    script["attempts"][0]["overBudget"] = json!(false);
    fixture.write("adversaries/kernel.sample.json", &script);
    fixture.write("cases/sample.json", &case_with("/conditions/0/world/bounded", json!(false)));
    assert_eq!(hash_of(&fixture), before);
}

#[test]
fn r6_changing_an_attempts_tool_moves_the_case_set_hash() {
    let fixture = Fixture::new("retool");
    let before = hash_of(&fixture);
    fixture.write("adversaries/kernel.sample.json", &script_with("/attempts/1/tool", json!("files.append")));
    assert_ne!(hash_of(&fixture), before);
}

#[test]
fn r5_every_hashed_field_moves_the_case_set_hash() {
    let script_edits: [(&str, Value); 9] = [
        ("/invariant", json!("Another invariant")),
        ("/expectedOutcome", json!("Another outcome")),
        ("/attempts/0/toolArguments", json!({"path": "Workspace/scratch/draft.md"})),
        ("/attempts/0/turn", json!(2)),
        ("/attempts/1/expect/reasonCodes", json!(["grant_exhausted"])),
        ("/attempts/1/unreachable", json!("No runtime can.")),
        ("/attempts/1/stepBehind", json!(true)),
        ("/attempts/1/traceId", json!("trace-elsewhere")),
        ("/terminal", json!({"type": "crash", "reason": "Stops."})),
    ];
    let case_edits: [(&str, Value); 4] = [
        ("/notImplemented", json!("Not built.")),
        ("/conditions/1/world/revoked", json!(["grant-root-files"])),
        ("/conditions/0/expectTurn", json!({"status": "failed"})),
        ("/conditions/0/requiresDeclaredSteps", json!("Only with declared steps.")),
    ];
    let fixture = Fixture::new("every-field");
    let before = hash_of(&fixture);
    for (pointer, value) in script_edits {
        fixture.write("adversaries/kernel.sample.json", &script_with(pointer, value));
        assert_ne!(hash_of(&fixture), before, "{pointer}");
    }
    fixture.write("adversaries/kernel.sample.json", &sample_script());
    for (pointer, value) in case_edits {
        fixture.write("cases/sample.json", &case_with(pointer, value));
        assert_ne!(hash_of(&fixture), before, "{pointer}");
    }
}

#[test]
fn r5_the_identity_holds_only_the_listed_fields() {
    let suite = committed_suite();
    let identity = case_set_identity(&suite.cases, &suite.scripts).unwrap();
    let keys_within = |value: &Value, allowed: &[&str]| {
        for key in value.as_object().unwrap().keys() {
            assert!(allowed.contains(&key.as_str()), "{key} is not a hashed field");
        }
    };
    for script in identity["scripts"].as_array().unwrap() {
        keys_within(script, HASHED_SCRIPT_FIELDS);
        script["attempts"].as_array().unwrap().iter().for_each(|a| keys_within(a, HASHED_ATTEMPT_FIELDS));
    }
    for case in identity["cases"].as_array().unwrap() {
        keys_within(case, HASHED_CASE_FIELDS);
        case["conditions"].as_array().unwrap().iter().for_each(|c| keys_within(c, HASHED_CONDITION_FIELDS));
    }
    assert!(!identity.to_string().contains("description"));
    assert_eq!(identity["scripts"].as_array().unwrap().len(), suite.scripts.len());
}

#[test]
fn a_subset_of_cases_has_a_different_case_set_hash() {
    let suite = committed_suite();
    let all = case_set_hash(&suite).unwrap();
    let subset = suite.select(|c| c.id != "forged-grant");
    assert_eq!(subset.cases.len(), suite.cases.len() - 1);
    assert_eq!(subset.scripts.len(), suite.scripts.len() - 1);
    assert_ne!(case_set_hash(&subset).unwrap(), all);
    assert_eq!(case_set_hash(&committed_suite()).unwrap(), all, "stable across loads");
}

#[test]
fn r39_an_expectation_needs_a_listed_status_and_for_a_refusal_a_listed_code() {
    use sharedos_grading::input::script::Expectation;
    use sharedos_model::tool::ToolStatus;
    let pinned: Expectation =
        serde_json::from_value(json!({"statuses": ["denied", "succeeded"], "reasonCodes": ["no_matching_grant"]}))
            .unwrap();
    assert!(pinned.accepts(ToolStatus::Denied, Some("no_matching_grant")));
    assert!(!pinned.accepts(ToolStatus::Denied, Some("tool_unavailable")));
    assert!(!pinned.accepts(ToolStatus::Denied, None));
    assert!(pinned.accepts(ToolStatus::Succeeded, None), "a success carries no code to check");
    assert!(!pinned.accepts(ToolStatus::Failed, Some("no_matching_grant")));
    let open: Expectation = serde_json::from_value(json!({"statuses": ["denied"]})).unwrap();
    assert!(open.accepts(ToolStatus::Denied, None));
}

#[test]
fn not_applicable_in_names_only_built_in_columns() {
    let fixture = Fixture::new("not-applicable-in");
    fixture.write("adversaries/kernel.sample.json", &sample_script());
    let reason = json!({"model-scripted": "the loop cannot make this call"});
    fixture.write("cases/sample.json", &case_with("/conditions/0/notApplicableIn", reason));
    assert!(fixture.load().is_ok());
    let typo = json!({"model-scriptd": "the loop cannot make this call"});
    fixture.write("cases/sample.json", &case_with("/conditions/0/notApplicableIn", typo));
    let error = fixture.refusal();
    assert_eq!(error.kind, LoadErrorKind::UnknownValue, "{error}");
    assert_refused(&error, "cases/sample.json", "/conditions/0/notApplicableIn/model-scriptd");
    assert!(error.expected().contains("model-scripted"), "{error}");
}

#[test]
fn a_vocabulary_field_of_another_json_type_is_a_type_error_not_invalid_json() {
    let fixture = Fixture::new("vocabulary-type");
    fixture.write("adversaries/kernel.sample.json", &script_with("/attempts/0/role", json!(5)));
    fixture.write("cases/sample.json", &sample_case());
    let error = fixture.refusal();
    assert_eq!(error.kind, LoadErrorKind::WrongType, "{error}");
    assert_refused(&error, "adversaries/kernel.sample.json", "/attempts/0/role");
    assert!(error.expected().contains("found a number"), "{error}");
}

#[test]
fn a_byte_order_mark_is_named() {
    let fixture = Fixture::new("bom");
    fixture.write("adversaries/kernel.sample.json", &sample_script());
    fixture.write_text("cases/sample.json", &format!("\u{feff}{}", sample_case()));
    let error = fixture.refusal();
    assert_eq!(error.kind, LoadErrorKind::InvalidJson, "{error}");
    assert!(error.expected().contains("byte-order mark"), "{error}");
}

#[test]
fn a_world_now_whose_instants_could_leave_rfc_3339_is_refused_at_load() {
    let fixture = Fixture::new("now-range");
    fixture.write("adversaries/kernel.sample.json", &sample_script());
    let cases =
        [("2026-05-01T12:00:00.000Z", true), ("0000-01-01T00:00:00.000Z", false), ("9999-12-31T23:59:59.999Z", false)];
    for (now, accepted) in cases {
        fixture.write("cases/sample.json", &case_with("/conditions/0/world/now", json!(now)));
        match fixture.load() {
            Ok(_) => assert!(accepted, "{now} was accepted"),
            Err(error) => {
                assert!(!accepted, "{now}: {error}");
                assert_refused(&error, "cases/sample.json", "/conditions/0/world/now");
                assert_eq!(error.kind, LoadErrorKind::OutOfBounds);
            }
        }
    }
}
