//! Every closed vocabulary a published schema restates is held equal to the
//! harness's own enum, so the two cannot drift apart again: a value the
//! harness writes that the schema refuses, or one the schema allows that
//! the harness never writes, fails here.

use super::schemas;
use serde_json::{json, Value};
use sharedos_conformance::suite::lifecycle::GoldenState;
use sharedos_conformance_metadata::failure::Failure;
use sharedos_conformance_metadata::family::Family;
use sharedos_conformance_metadata::launch::Clock;
use sharedos_conformance_metadata::move_kind::MoveKind;
use sharedos_conformance_metadata::repeats::Outcome;
use sharedos_conformance_metadata::vendor::Vendor;
use sharedos_conformance_metadata::witness::{Answer, OwnTool};
use sharedos_conformance_metadata::CellStatus;
use sharedos_envelope::events::EventKind;
use sharedos_evidence::compare::diff::{Change, Moved};
use sharedos_evidence::verify::SignatureCheck;
use sharedos_grading::input::baseline::BaselineVerdict;
use sharedos_grading::input::built_in_column::BuiltInColumn;
use sharedos_grading::input::script::terminal::TerminalKind;
use sharedos_grading::input::seat::{McpTransport, SeatKind, SeatModel};
use sharedos_model::audit::Source;
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::record::EndedBy;
use sharedos_model::role::Role;
use sharedos_model::tool::ToolStatus;
use std::collections::BTreeSet;

/// One vocabulary: the schema, the JSON pointer of its `enum`, and the
/// harness's spellings.
struct Held {
    schema: &'static str,
    pointer: &'static str,
    words: Vec<String>,
}

fn held(schema: &'static str, pointer: &'static str, words: impl IntoIterator<Item = impl Into<String>>) -> Held {
    Held { schema, pointer, words: words.into_iter().map(Into::into).collect() }
}

/// The serde spelling of a value that serialises as a string.
fn spelled(value: impl FnOnce() -> Value) -> String {
    value().as_str().unwrap().to_string()
}

/// Enums with no `ALL` of their own, listed here: each match below fails to
/// compile on a new variant, which must then be listed beside it.
fn execution_statuses() -> Vec<&'static str> {
    use ExecutionStatus::*;
    let every = [Succeeded, Denied, Failed, Cancelled, Escalated];
    let _exhaustive = |s: ExecutionStatus| matches!(s, Succeeded | Denied | Failed | Cancelled | Escalated);
    every.map(ExecutionStatus::as_str).to_vec()
}

fn tool_statuses() -> Vec<&'static str> {
    use ToolStatus::*;
    let every = [Succeeded, Denied, Failed];
    let _exhaustive = |s: ToolStatus| matches!(s, Succeeded | Denied | Failed);
    every.map(ToolStatus::as_str).to_vec()
}

fn ended_by() -> Vec<&'static str> {
    let every = [EndedBy::Envelope, EndedBy::Runtime];
    let _exhaustive = |e: EndedBy| matches!(e, EndedBy::Envelope | EndedBy::Runtime);
    every.map(EndedBy::as_str).to_vec()
}

fn roles() -> Vec<String> {
    let every = [Role::Attack, Role::Probe, Role::Control];
    let _exhaustive = |r: Role| matches!(r, Role::Attack | Role::Probe | Role::Control);
    every.iter().map(|r| spelled(|| serde_json::to_value(r).unwrap())).collect()
}

fn terminal_kinds() -> Vec<String> {
    use TerminalKind::*;
    let every = [Escalate, Crash, Complete, Fail, Stall, Malformed, HangUp, ReportFailure];
    let _exhaustive =
        |k: TerminalKind| matches!(k, Escalate | Crash | Complete | Fail | Stall | Malformed | HangUp | ReportFailure);
    every.iter().map(|k| spelled(|| serde_json::to_value(k).unwrap())).collect()
}

/// Every answer but a call carries its kind alone.
fn answer_kinds() -> Vec<String> {
    use Answer::*;
    let every = [Final, Failure, HangUp, Stall, CutShort, Side, Unauthorized, NotFound, Unreadable];
    let _exhaustive = |a: &Answer| match a {
        Call { .. } | TooLarge { .. } => false,
        Final | Failure | HangUp | Stall | CutShort | Side | Unauthorized | NotFound | Unreadable => true,
    };
    every.iter().map(|a| spelled(|| serde_json::to_value(a).unwrap()["kind"].clone())).collect()
}

fn golden_states() -> Vec<&'static str> {
    let text = String::new;
    let every = [
        GoldenState::Same,
        GoldenState::Blessed,
        GoldenState::Missing(text()),
        GoldenState::Differs(text()),
        GoldenState::Unwritable(text()),
        GoldenState::RealClock,
    ];
    let _exhaustive = |g: &GoldenState| match g {
        GoldenState::Same | GoldenState::Blessed | GoldenState::RealClock => (),
        GoldenState::Missing(_) | GoldenState::Differs(_) | GoldenState::Unwritable(_) => (),
    };
    // A declared cell has no golden file: the JSON Lines reporter says `none`.
    every.iter().map(GoldenState::as_str).chain(["none"]).collect()
}

fn baseline_verdicts() -> Vec<&'static str> {
    let every = [
        BaselineVerdict::Unlisted,
        BaselineVerdict::KnownFailure { reason: "" },
        BaselineVerdict::Stale { reason: "" },
    ];
    every.iter().filter_map(|v| v.listed().map(|(word, _)| word)).collect()
}

fn failure_codes() -> Vec<&'static str> {
    Failure::CODES.to_vec()
}

fn moved_kinds() -> Vec<String> {
    let (before, after) = (String::new, String::new);
    let every = [
        Moved::HashScheme { before: before(), after: after() },
        Moved::CaseSet { before: before(), after: after() },
        Moved::WorldSet { before: None, after: None },
        Moved::Rules { before: before(), after: after() },
        Moved::HarnessVersion { before: None, after: None },
        Moved::PromptSet { column: String::new(), before: None, after: None },
        Moved::Runtime { column: String::new(), before: None, after: None },
    ];
    let _exhaustive = |m: &Moved| match m {
        Moved::HashScheme { .. } | Moved::CaseSet { .. } | Moved::WorldSet { .. } => (),
        Moved::Rules { .. } | Moved::HarnessVersion { .. } | Moved::PromptSet { .. } | Moved::Runtime { .. } => (),
    };
    every.iter().map(|m| spelled(|| serde_json::to_value(m).unwrap()["what"].clone())).collect()
}

fn statuses() -> Vec<&'static str> {
    CellStatus::ALL.map(CellStatus::as_str).to_vec()
}

/// Every vocabulary held here.
fn vocabularies() -> Vec<Held> {
    let mut tools_of_cli: Vec<&str> = OwnTool::ALL.map(OwnTool::name).to_vec();
    tools_of_cli.sort_unstable();
    vec![
        held("manifest.schema.json", "/$defs/status/enum", statuses()),
        held("manifest.schema.json", "/$defs/source/enum", Source::ALL.map(Source::as_str)),
        held("manifest.schema.json", "/$defs/family/enum", Family::ALL.map(Family::as_str)),
        held("manifest.schema.json", "/$defs/moveKind/enum", MoveKind::ALL.iter().map(|k| k.as_str())),
        held("manifest.schema.json", "/$defs/knownReasonCode/enum", ReasonCode::ALL.iter().map(|c| c.as_str())),
        held("manifest.schema.json", "/$defs/expectTurn/properties/status/enum", execution_statuses()),
        held(
            "manifest.schema.json",
            "/$defs/expectTurn/properties/eventCounts/propertyNames/enum",
            EventKind::ALL.map(EventKind::as_str),
        ),
        held("statement.schema.json", "/properties/predicate/properties/summary/propertyNames/enum", statuses()),
        held("evidence-line.schema.json", "/$defs/executionStatus/enum", execution_statuses()),
        held("evidence-line.schema.json", "/$defs/endedBy/enum", ended_by()),
        held("evidence-line.schema.json", "/$defs/role/enum", roles()),
        held("evidence-line.schema.json", "/$defs/toolStatus/enum", tool_statuses()),
        held("evidence-line.schema.json", "/$defs/answerKind/enum", answer_kinds()),
        held("run-event.schema.json", "/$defs/golden/enum", golden_states()),
        held("run-event.schema.json", "/$defs/outcome/enum", Outcome::ALL.map(Outcome::as_str)),
        held("run-event.schema.json", "/$defs/baselineVerdict/enum", baseline_verdicts()),
        held("verify-output.schema.json", "/$defs/signature/enum", SignatureCheck::ALL.map(SignatureCheck::as_str)),
        held("verify-output.schema.json", "/$defs/failureCode/enum", failure_codes()),
        held("diff-output.schema.json", "/$defs/change/enum", Change::ALL.iter().map(|c| spelled(|| json!(c)))),
        held("case.schema.json", "/properties/family/enum", Family::ALL.map(Family::as_str)),
        held(
            "case.schema.json",
            "/$defs/condition/properties/notApplicableIn/propertyNames/enum",
            BuiltInColumn::ALL.map(BuiltInColumn::id),
        ),
        held("case.schema.json", "/$defs/expectTurn/properties/status/enum", execution_statuses()),
        held(
            "case.schema.json",
            "/$defs/expectTurn/properties/eventCounts/propertyNames/enum",
            EventKind::ALL.map(EventKind::as_str),
        ),
        held("case.schema.json", "/$defs/hostSend/properties/role/enum", roles()),
        held("case.schema.json", "/$defs/hostRequest/properties/role/enum", roles()),
        held(
            "case.schema.json",
            "/$defs/hostRequest/properties/expect/properties/statuses/items/enum",
            tool_statuses(),
        ),
        held("adversary.schema.json", "/properties/kind/enum", MoveKind::ALL.iter().map(|k| k.as_str())),
        held("adversary.schema.json", "/properties/terminal/properties/type/enum", terminal_kinds()),
        held("adversary.schema.json", "/$defs/attempt/properties/role/enum", roles()),
        held(
            "adversary.schema.json",
            "/$defs/attempt/properties/expect/properties/statuses/items/enum",
            tool_statuses(),
        ),
        held("seat.schema.json", "/properties/vendor/enum", Vendor::ALL.map(Vendor::id)),
    ]
}

/// The moved kinds are the `what` of each `oneOf` branch, not one `enum`.
#[test]
fn the_diff_schema_names_every_kind_of_move() {
    let branches = schemas()["diff-output.schema.json"]["$defs"]["moved"]["oneOf"].as_array().unwrap();
    let named: Vec<String> =
        branches.iter().map(|b| b["properties"]["what"]["const"].as_str().unwrap().to_string()).collect();
    assert_eq!(named, moved_kinds());
}

/// A schema's words, as a set: order in a schema is for people.
fn words_at(schema: &str, pointer: &str) -> BTreeSet<String> {
    let value = schemas()[schema].pointer(pointer).unwrap_or_else(|| panic!("{schema}: nothing at {pointer}"));
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

#[test]
fn every_vocabulary_a_schema_restates_is_the_harness_enum() {
    let mut wrong = Vec::new();
    for Held { schema, pointer, words } in vocabularies() {
        let stated = words_at(schema, pointer);
        let harness: BTreeSet<String> = words.into_iter().collect();
        let missing: Vec<&String> = harness.difference(&stated).collect();
        let extra: Vec<&String> = stated.difference(&harness).collect();
        if !missing.is_empty() || !extra.is_empty() {
            wrong.push(format!("{schema}#{pointer}: missing {missing:?}, never written {extra:?}"));
        }
    }
    assert!(wrong.is_empty(), "schemas and enums disagree:\n  {}", wrong.join("\n  "));
}

/// The two schemas of the protocol are held by the process crate's tests
/// (`cargo test -p sharedos-process --test process schemas`).
const PROTOCOL: [&str; 2] = ["harness-message.schema.json", "runtime-message.schema.json"];

/// Every `enum` below `value`, as JSON pointers.
fn enum_pointers(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                if key == "enum" {
                    found.push(here);
                } else {
                    enum_pointers(inner, &here, found);
                }
            }
        }
        Value::Array(items) => {
            items.iter().enumerate().for_each(|(i, v)| enum_pointers(v, &format!("{at}/{i}"), found))
        }
        _ => {}
    }
}

/// A new `enum` in a published output schema must be held above: the
/// schemas under `harness/metadata/schemas/` describe what the harness
/// writes, so every closed word there is one of its enums.
#[test]
fn every_enum_of_a_published_output_schema_is_held() {
    let listed: BTreeSet<(String, String)> =
        vocabularies().into_iter().map(|h| (h.schema.to_string(), h.pointer.to_string())).collect();
    let published = super::root().join("harness/metadata/schemas");
    let mut unheld = Vec::new();
    for (name, path) in super::schema_files() {
        if !path.starts_with(&published) || PROTOCOL.contains(&name.as_str()) {
            continue;
        }
        let mut found = Vec::new();
        enum_pointers(&schemas()[&name], "", &mut found);
        unheld.extend(
            found.into_iter().filter(|p| !listed.contains(&(name.clone(), p.clone()))).map(|p| format!("{name}#{p}")),
        );
    }
    assert!(unheld.is_empty(), "enums no test holds: {unheld:?}");
}

/// The manifest states a row's turn expectation as the case declares it:
/// one definition, held equal in both schemas.
#[test]
fn the_manifest_and_the_case_schema_state_a_turn_expectation_alike() {
    let (manifest, case) = (&schemas()["manifest.schema.json"], &schemas()["case.schema.json"]);
    assert_eq!(manifest["$defs"]["expectTurn"], case["$defs"]["expectTurn"]);
    assert_eq!(manifest["$defs"]["reasonCode"], case["$defs"]["reasonCode"]);
}

/// The adversary schema's tools are the world's and a CLI's own; the
/// world's are held by the conformance crate's loader tests
/// (`json_schemas_list_the_same_vocabularies_as_the_loader`).
#[test]
fn the_adversary_schema_names_a_clis_own_tools() {
    let stated = words_at("adversary.schema.json", "/$defs/attempt/properties/tool/enum");
    let own: BTreeSet<String> = OwnTool::ALL.iter().map(|t| t.name().to_string()).collect();
    assert!(own.is_subset(&stated), "{own:?} not all in {stated:?}");
}

/// Seat words the loader reads but never writes: each parses as the
/// loader's type, and each type has as many words as the schema.
#[test]
fn every_seat_word_is_one_the_loader_reads() {
    let parses = |pointer: &str, parse: &dyn Fn(Value) -> bool, variants: usize| {
        let stated = words_at("seat.schema.json", pointer);
        assert!(stated.iter().all(|w| parse(json!(w))), "{pointer}: {stated:?}");
        assert_eq!(stated.len(), variants, "{pointer}: {stated:?}");
    };
    let kind = |k: SeatKind| matches!(k, SeatKind::Scripted | SeatKind::Prompted | SeatKind::Mcp);
    parses("/properties/kind/enum", &|v| serde_json::from_value::<SeatKind>(v).is_ok_and(kind), 3);
    let clock = |c: Clock| matches!(c, Clock::Virtual | Clock::Real);
    parses("/properties/clock/enum", &|v| serde_json::from_value::<Clock>(v).is_ok_and(clock), 2);
    let transport = |t: McpTransport| matches!(t, McpTransport::Http | McpTransport::Stdio);
    parses("/properties/transport/enum", &|v| serde_json::from_value::<McpTransport>(v).is_ok_and(transport), 2);
    let model = |m: SeatModel| matches!(m, SeatModel::Vendor | SeatModel::Scripted);
    parses("/properties/model/enum", &|v| serde_json::from_value::<SeatModel>(v).is_ok_and(model), 2);
}
