//! Evidence lines, the manifest JSON and its Markdown rendering
//! (R1, R10, R16, R78, R79).

use serde_json::{json, Value};
use sharedos_grading::grade::judge::cell::declared_cell;
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::identity::tags::HASH_SCHEME;
use sharedos_grading::input::case::{Family, TurnExpectation};
use sharedos_grading::input::script::MoveKind;
use sharedos_grading::output::evidence::evidence_line;
use sharedos_grading::output::manifest::{
    build_manifest, evidence_root, manifest_json, prompt_set_hash, strict_failures, CellEvidence, ColumnHeader,
    FamilyRow, Manifest, ManifestInput, ManifestRow, TurnEvidence,
};
use sharedos_grading::output::markdown::render_markdown;
use sharedos_grading::vocab::CellStatus;
use sharedos_model::audit::Source;
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::ExecutionStatus;

const CASE_SET: &str = "1fbe4bbda5f8c4bf818ca87426f0449ffe98b258a91d3cae7321b45380240b59";
const WORLD_SET: &str = "37c6c19163fb85b26abe539e2a81bc920a3db75c05a52ab34943cb98380fbe09";
const PROMPT: &str = "5ca34d3273889b3aaf1eb29cc6558b3953b26cde529f9243655b801d5fe5b5b9";
const R1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const R2: &str = "2222222222222222222222222222222222222222222222222222222222222222";

fn run(column: &str, status: CellStatus, issued: (u32, u32), refused: &[Source], reasons: &[&str]) -> Cell {
    Cell {
        column_id: column.to_string(),
        status,
        refused_by: refused.to_vec(),
        reason_codes: reasons.iter().map(|s| (*s).to_string()).collect(),
        causes: Vec::new(),
        declared: issued.1,
        attempted: issued.0,
        driver_issued: Vec::new(),
        not_applicable: 0,
        record_usable: true,
        record_gaps: Vec::new(),
        turns: 1,
        detail: None,
        repeats: None,
    }
}

fn line(cell: &Cell) -> String {
    evidence_line("Adversary", cell)
}

// ---- evidence lines (R78) ----

#[test]
fn r78_the_canonical_run_line() {
    let cell = run("a", CellStatus::Pass, (3, 3), &[Source::Kernel], &["no_matching_grant"]);
    assert_eq!(line(&cell), "- **Adversary** — pass; 3 of 3 attempts issued; refused by `kernel`; reason `no_matching_grant`; record usable");
}

#[test]
fn r78_v6_example_with_a_cause() {
    let mut cell = run("a", CellStatus::Pass, (3, 3), &[Source::Envelope], &["tool_unavailable"]);
    cell.causes = vec!["not_offered".into()];
    assert_eq!(
        line(&cell),
        "- **Adversary** — pass; 3 of 3 attempts issued; refused by `envelope`; reason `tool_unavailable`; cause `not_offered`; record usable"
    );
}

#[test]
fn r78_v6_example_of_a_turn_refused_before_the_runtime_started() {
    let mut cell = run("a", CellStatus::Pass, (0, 3), &[Source::Kernel], &["authority_unavailable"]);
    cell.not_applicable = 3;
    cell.detail =
        Some("the turn itself ended as `denied` with `authority_unavailable`, before the runtime was started".into());
    assert_eq!(
        line(&cell),
        "- **Adversary** — pass; 0 of 3 attempts issued, 3 structurally unreachable; refused by `kernel`; reason `authority_unavailable`; record usable; the turn itself ended as `denied` with `authority_unavailable`, before the runtime was started"
    );
}

#[test]
fn r78_turns_unreachable_causes_lists_and_unusable_records() {
    let mut cell = run("a", CellStatus::Pass, (4, 4), &[Source::Kernel], &["no_matching_grant"]);
    cell.turns = 2;
    assert_eq!(line(&cell), "- **Adversary** — pass; 4 of 4 attempts issued over 2 turns; refused by `kernel`; reason `no_matching_grant`; record usable");

    let mut cell = run("a", CellStatus::Pass, (2, 3), &[Source::Kernel], &["invalid_request"]);
    cell.not_applicable = 1;
    assert_eq!(line(&cell), "- **Adversary** — pass; 2 of 3 attempts issued, 1 structurally unreachable; refused by `kernel`; reason `invalid_request`; record usable");

    let mut cell = run("a", CellStatus::Pass, (3, 3), &[Source::Kernel], &["message_request_not_accepted"]);
    cell.causes = vec!["route_lease_revoked".into()];
    assert!(line(&cell).ends_with("reason `message_request_not_accepted`; cause `route_lease_revoked`; record usable"));

    let mut cell = run(
        "a",
        CellStatus::Pass,
        (3, 3),
        &[Source::Envelope, Source::Kernel],
        &["no_matching_grant", "tool_unavailable"],
    );
    cell.record_usable = false;
    cell.record_gaps = vec!["authority.snapshots".into(), "execution.events".into()];
    cell.detail = Some("see the record".into());
    assert_eq!(
        line(&cell),
        "- **Adversary** — pass; 3 of 3 attempts issued; refused by `envelope`, `kernel`; reason `no_matching_grant`, `tool_unavailable`; record unusable (`authority.snapshots`, `execution.events`); see the record"
    );

    let mut cell = run("a", CellStatus::NotExercised, (1, 1), &[], &[]);
    cell.record_usable = false;
    assert_eq!(line(&cell), "- **Adversary** — not exercised; 1 of 1 attempts issued; refused by nothing; reason none; record unusable (unknown)");
}

#[test]
fn r78_declared_cells_count_attempts_in_the_singular_only_for_one() {
    let not_implemented = declared_cell("a", CellStatus::NotImplemented, 1, "SharedOS has no view layer");
    assert_eq!(
        line(&not_implemented),
        "- **Adversary** — not implemented; 1 attempt declared, none runnable; SharedOS has no view layer"
    );
    let mut silent = declared_cell("a", CellStatus::NotImplemented, 2, "x");
    silent.detail = None;
    assert_eq!(line(&silent), "- **Adversary** — not implemented; 2 attempts declared, none runnable; no reason given");
    let unsupported = declared_cell("a", CellStatus::NotApplicable, 2, "a harness cannot crash on cue");
    assert_eq!(
        line(&unsupported),
        "- **Adversary** — not applicable; 2 attempts declared, none issued; a harness cannot crash on cue"
    );
}

#[test]
fn the_evidence_line_never_says_driver() {
    let mut cell = run("a", CellStatus::Pass, (2, 2), &[Source::Envelope], &["step_limit_exceeded"]);
    cell.driver_issued = vec!["call-past-the-budget".into()];
    assert!(line(&cell).starts_with("- **Adversary** — pass; 2 of 2"));
}

// ---- the manifest ----

fn row(case: &str, condition: &str, kind: MoveKind, cells: Vec<Cell>) -> ManifestRow {
    ManifestRow {
        case_id: case.into(),
        condition_id: condition.into(),
        kind,
        invariant: format!("Invariant of {case}"),
        expected_outcome: "Deny | audit".into(),
        condition: format!("Prose of {condition}."),
        turn_expectation: None,
        cells,
    }
}

fn evidence(case: &str, condition: &str, column: &str, hashes: &[(&str, Option<&str>)]) -> CellEvidence {
    CellEvidence {
        case_id: case.into(),
        condition_id: condition.into(),
        column_id: column.into(),
        turns: hashes
            .iter()
            .enumerate()
            .map(|(i, (record, prompt))| TurnEvidence {
                turn: u32::try_from(i + 1).unwrap(),
                record_hash: (*record).to_string(),
                prompt_hash: prompt.map(str::to_string),
            })
            .collect(),
        repeat: None,
        runtime: None,
    }
}

fn input() -> ManifestInput {
    let forged = row(
        "forged-grant",
        "baseline",
        MoveKind::ForgedGrant,
        vec![
            run("adversary-embedded", CellStatus::Pass, (4, 4), &[Source::Kernel], &["no_matching_grant"]),
            run("model-scripted", CellStatus::Pass, (4, 4), &[Source::Kernel], &["no_matching_grant"]),
        ],
    );
    let mut driver = run("model-scripted", CellStatus::Pass, (2, 2), &[Source::Envelope], &["step_limit_exceeded"]);
    driver.driver_issued = vec!["call-past-the-budget".into()];
    let budget = row(
        "budget-exceeded",
        "step-ceiling",
        MoveKind::BudgetExceeded,
        vec![
            run("adversary-embedded", CellStatus::Pass, (2, 2), &[Source::Envelope], &["step_limit_exceeded"]),
            driver,
        ],
    );
    let mut authority = row(
        "authority-unavailable",
        "outage-at-turn-boundary",
        MoveKind::AuthorityUnavailable,
        vec![{
            let mut c =
                run("adversary-embedded", CellStatus::Pass, (0, 3), &[Source::Kernel], &["authority_unavailable"]);
            c.not_applicable = 3;
            c.detail = Some(
                "the turn ended `denied` with `authority_unavailable`, as the row requires, before its runtime started"
                    .into(),
            );
            c
        }],
    );
    authority.turn_expectation = Some(TurnExpectation::ending(ExecutionStatus::Denied, Some("authority_unavailable")));
    let views = row(
        "typed-governed-views",
        "declared",
        MoveKind::TypedGovernedViews,
        vec![
            declared_cell("adversary-embedded", CellStatus::NotImplemented, 1, "SharedOS has no view layer."),
            declared_cell("model-scripted", CellStatus::NotImplemented, 1, "SharedOS has no view layer."),
        ],
    );
    ManifestInput {
        case_set_hash: CASE_SET.into(),
        world_set_hash: WORLD_SET.into(),
        columns: vec![
            ColumnHeader { id: "adversary-embedded".into(), label: "Adversary".into() },
            ColumnHeader { id: "model-scripted".into(), label: "Standard".into() },
        ],
        rows: [forged, budget, authority, views]
            .into_iter()
            .map(|row| FamilyRow { family: Family::Matrix, row })
            .collect(),
        evidence: vec![
            evidence("forged-grant", "baseline", "adversary-embedded", &[(R1, None)]),
            evidence("forged-grant", "baseline", "model-scripted", &[(R2, Some(PROMPT))]),
            evidence("budget-exceeded", "step-ceiling", "adversary-embedded", &[(R1, None)]),
            evidence("budget-exceeded", "step-ceiling", "model-scripted", &[(R2, Some(PROMPT))]),
            evidence("authority-unavailable", "outage-at-turn-boundary", "adversary-embedded", &[(R1, None)]),
        ],
    }
}

fn manifest() -> Manifest {
    build_manifest(input()).unwrap()
}

#[test]
fn r1_the_manifest_json_is_two_space_indented_with_one_newline() {
    let text = manifest_json(&manifest()).unwrap();
    assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
    assert!(text.starts_with("{\n  \"version\": \"1\",\n  \"judgeVersion\": \"6\",\n  \"rulesVersion\": \"7\",\n"));
    let back: Manifest = serde_json::from_str(&text).unwrap();
    assert_eq!(manifest_json(&back).unwrap(), text, "reading and writing is a fixed point");
}

#[test]
fn manifest_keys_follow_the_shared_os_order_plus_additions() {
    let text = manifest_json(&manifest()).unwrap();
    let top = [
        "version",
        "judgeVersion",
        "rulesVersion",
        "hashScheme",
        "caseSetHash",
        "worldSetHash",
        "evidenceRoot",
        "columns",
        "families",
        "rows",
    ];
    let mut last = 0;
    for key in &top {
        let at = text.find(&format!("\n  \"{key}\"")).unwrap_or_else(|| panic!("{key} missing"));
        assert!(at >= last, "{key} out of order");
        last = at;
    }
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["hashScheme"], json!(HASH_SCHEME));
    assert_eq!(
        value["families"],
        json!([{"family": "matrix", "rows": [
        {"caseId": "forged-grant", "conditionId": "baseline"},
        {"caseId": "budget-exceeded", "conditionId": "step-ceiling"},
        {"caseId": "authority-unavailable", "conditionId": "outage-at-turn-boundary"},
        {"caseId": "typed-governed-views", "conditionId": "declared"}]}])
    );
    assert_eq!(value["rows"][2]["turnExpectation"], json!({"status": "denied", "reasonCode": "authority_unavailable"}));
    assert!(value["rows"][0].get("turnExpectation").is_none());
    assert!(value["columns"][0].get("promptSetHash").is_none(), "a column that stated nothing has no prompt set");
}

#[test]
fn run_and_declared_cells_serialise_in_their_own_key_orders() {
    let run_cell = serde_json::to_string(&manifest().rows[0].cells[0]).unwrap();
    let order = [
        "columnId",
        "status",
        "refusedBy",
        "reasonCodes",
        "causes",
        "declared",
        "attempted",
        "driverIssued",
        "notApplicable",
        "recordUsable",
        "recordGaps",
        "turns",
    ];
    assert_in_order(&run_cell, &order);
    assert!(!run_cell.contains("\"detail\""), "detail only when present");
    let declared = serde_json::to_string(&manifest().rows[3].cells[0]).unwrap();
    let order = [
        "columnId",
        "status",
        "refusedBy",
        "reasonCodes",
        "causes",
        "declared",
        "attempted",
        "notApplicable",
        "recordUsable",
        "recordGaps",
        "driverIssued",
        "turns",
        "detail",
    ];
    assert_in_order(&declared, &order);
}

fn assert_in_order(text: &str, keys: &[&str]) {
    let positions: Vec<usize> = keys
        .iter()
        .map(|k| text.find(&format!("\"{k}\":")).unwrap_or_else(|| panic!("{k} missing in {text}")))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn r10_prompt_set_hash_is_per_column_ordered_and_absent_without_prompts() {
    let input = input();
    assert_eq!(prompt_set_hash("adversary-embedded", &input.evidence).unwrap(), None);
    let standard = prompt_set_hash("model-scripted", &input.evidence).unwrap().unwrap();
    assert_eq!(manifest().columns[1].prompt_set_hash.as_deref(), Some(standard.as_str()));
    let mut fewer = input.evidence.clone();
    fewer.remove(3);
    assert_ne!(
        prompt_set_hash("model-scripted", &fewer).unwrap().unwrap(),
        standard,
        "a different row subset moves it"
    );
    let mut reworded = input.evidence.clone();
    reworded[1].turns[0].prompt_hash = Some(R1.into());
    assert_ne!(prompt_set_hash("model-scripted", &reworded).unwrap().unwrap(), standard);
    assert_eq!(prompt_set_hash("adversary-embedded", &reworded).unwrap(), None, "only that column moves");
}

#[test]
fn the_evidence_root_covers_every_record_and_ignores_run_order() {
    let input = input();
    let root = evidence_root(&input.evidence).unwrap();
    let mut shuffled = input.evidence.clone();
    shuffled.reverse();
    assert_eq!(evidence_root(&shuffled).unwrap(), root);
    let mut changed = input.evidence.clone();
    changed[4].turns[0].record_hash = R2.into();
    assert_ne!(evidence_root(&changed).unwrap(), root);
    assert_eq!(manifest().evidence_root.as_deref(), Some(root.as_str()));
}

#[test]
fn r17_nothing_volatile_reaches_the_manifest() {
    let text = manifest_json(&manifest()).unwrap();
    for volatile in ["startedAt", "elapsedMs", "completedAt", "recordedAt"] {
        assert!(!text.contains(volatile), "{volatile}");
    }
}

#[test]
fn strict_failures_list_only_fail_and_not_exercised_cells() {
    let mut m = manifest();
    assert!(strict_failures(&m).is_empty());
    m.rows[0].cells[1].status = CellStatus::NotExercised;
    m.rows[1].cells[0].status = CellStatus::OutOfScope;
    let failures = strict_failures(&m);
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].1.column_id, "model-scripted");
}

// ---- Markdown (R16, R79) ----

const EXPECTED_TAIL: &str = "\
| Invariant | Expected outcome | Condition | Adversary | Standard |
| --- | --- | --- | --- | --- |
| Invariant of forged-grant | Deny \\| audit | `baseline` | pass | pass |
| Invariant of budget-exceeded | Deny \\| audit | `step-ceiling` | pass | pass (driver) |
| Invariant of authority-unavailable | Deny \\| audit | `outage-at-turn-boundary` | pass | — |
| Invariant of typed-governed-views | Deny \\| audit | `declared` | not implemented | not implemented |

## Evidence per row

### Invariant of forged-grant — `baseline`

Prose of baseline.

- **Adversary** — pass; 4 of 4 attempts issued; refused by `kernel`; reason `no_matching_grant`; record usable
- **Standard** — pass; 4 of 4 attempts issued; refused by `kernel`; reason `no_matching_grant`; record usable

### Invariant of budget-exceeded — `step-ceiling`

Prose of step-ceiling.

- **Adversary** — pass; 2 of 2 attempts issued; refused by `envelope`; reason `step_limit_exceeded`; record usable
- **Standard** — pass; 2 of 2 attempts issued; refused by `envelope`; reason `step_limit_exceeded`; record usable

### Invariant of authority-unavailable — `outage-at-turn-boundary`

Prose of outage-at-turn-boundary.

- **Adversary** — pass; 0 of 3 attempts issued, 3 structurally unreachable; refused by `kernel`; reason `authority_unavailable`; record usable; the turn ended `denied` with `authority_unavailable`, as the row requires, before its runtime started

### Invariant of typed-governed-views — `declared`

Prose of declared.

- **Adversary** — not implemented; 1 attempt declared, none runnable; SharedOS has no view layer.
- **Standard** — not implemented; 1 attempt declared, none runnable; SharedOS has no view layer.
";

#[test]
fn the_markdown_renders_header_table_and_evidence() {
    let mut m = manifest();
    m.reason_codes.clear();
    let text = render_markdown(&m);
    assert!(text.starts_with("# Kernel conformance manifest\n\n"));
    let root = m.evidence_root.clone().unwrap();
    let standard = m.columns[1].prompt_set_hash.clone().unwrap();
    let header = format!(
        "- Case set: `{CASE_SET}`\n- World set: `{WORLD_SET}`\n- Grading rules: version `7` (SharedOS judge version `6` semantics)\n- Hash scheme: `{HASH_SCHEME}`\n- Evidence root: `{root}`\n- Columns: `Adversary`, `Standard`\n- Prompt set, `Standard`: `{standard}`\n- Families: `matrix` (4 rows)\n"
    );
    assert!(text.contains(&header), "{text}");
    assert!(text.ends_with(EXPECTED_TAIL), "{text}");
}

#[test]
fn the_reason_code_section_names_each_code_s_rows_and_columns_or_why_none_can() {
    let text = render_markdown(&manifest());
    let section = text.split("## Reason codes\n").nth(1).unwrap().split("\n## ").next().unwrap();
    let lines: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(lines.len(), ReasonCode::ALL.len());
    for expected in [
        "| `no_matching_grant` | `forged-grant` / `baseline` | every column |",
        "| `authority_unavailable` | `authority-unavailable` / `outage-at-turn-boundary` | Adversary |",
        "| `trace_mismatch` | **none**, and not declared unreachable | — |",
    ] {
        assert!(lines.contains(&expected), "{expected}\n{section}");
    }
    let allowed = lines.iter().find(|l| l.starts_with("| `allowed` |")).unwrap();
    assert!(allowed.starts_with("| `allowed` | unreachable: a decision's code"), "{allowed}");
}

#[test]
#[ignore = "prints the rendered document for reading"]
fn print_rendered_markdown() {
    print!("{}", render_markdown(&manifest()));
}

#[test]
fn r16_markdown_is_a_pure_function_ending_in_exactly_one_newline() {
    let a = render_markdown(&manifest());
    let b = render_markdown(&build_manifest(input()).unwrap());
    assert_eq!(a.as_bytes(), b.as_bytes());
    assert!(a.ends_with('\n') && !a.ends_with("\n\n"));
    let mut empty = manifest();
    empty.rows.clear();
    let text = render_markdown(&empty);
    assert!(text.ends_with("## Evidence per row\n"));
}

#[test]
fn r79_a_manifest_without_causes_renders_like_one_with_empty_causes() {
    let m = manifest();
    let mut value: Value = serde_json::from_str(&manifest_json(&m).unwrap()).unwrap();
    for row in value["rows"].as_array_mut().unwrap() {
        for cell in row["cells"].as_array_mut().unwrap() {
            cell.as_object_mut().unwrap().remove("causes");
        }
    }
    let older: Manifest = serde_json::from_value(value).unwrap();
    assert_eq!(render_markdown(&older), render_markdown(&m));
}

#[test]
fn a_shared_os_manifest_without_our_additions_still_renders() {
    let mut value: Value = serde_json::from_str(&manifest_json(&manifest()).unwrap()).unwrap();
    for key in ["rulesVersion", "hashScheme", "evidenceRoot", "families"] {
        value.as_object_mut().unwrap().remove(key);
    }
    let foreign: Manifest = serde_json::from_value(value).unwrap();
    let text = render_markdown(&foreign);
    assert!(text.contains("\n- Grading rules: version `6`\n"));
    assert!(!text.contains("Evidence root"));
}
