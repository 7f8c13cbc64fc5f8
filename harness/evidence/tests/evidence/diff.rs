//! `diff`: comparability first, in words, then the moved cells, for this
//! harness's manifests and SharedOS's own shapes.

use crate::support::{scratch, suite_root};
use sharedos_conformance::suite::matrix::RunSettings;
use sharedos_conformance::suite::report::run_and_report;
use sharedos_evidence::compare::diff::{diff, Change, Moved};
use sharedos_evidence::compare::read::{read_manifest, Shape};
use sharedos_evidence::compare::render::{human, markdown};
use sharedos_evidence::verdicts::{compare_or_write, Verdicts};
use sharedos_grading::input::loader::load_suite;
use sharedos_grading::plan::{plan, Selection};
use std::path::{Path, PathBuf};

fn sharedos(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/evidence/sharedos").join(name)
}

#[test]
fn the_same_manifest_twice_is_comparable_and_nothing_moved() {
    let committed = suite_root().join("reports/conformance.json");
    let manifest = read_manifest(&committed).unwrap();
    assert_eq!(manifest.shape, Shape::Harness);
    assert_eq!(manifest.cells.len(), 131 * 9, "131 rows, 9 columns");
    let compared = diff(&manifest, &manifest);
    assert!(compared.comparable && compared.moved.is_empty() && compared.cells.is_empty());
    assert!(!compared.regressed());
    assert_eq!(human(&compared), "Comparable, nothing moved.\n");
}

/// ADR 0007: outcomes of two runtimes are never pooled without a word. A
/// column whose runtime changed (another version, here) is named by `diff`
/// and is drift for `check --verdicts`, even with no verdict moved; a
/// manifest written before runtimes were recorded names none.
#[test]
fn a_column_whose_runtime_changed_is_named_by_diff_and_is_drift_for_the_verdicts() {
    let dir = scratch();
    let committed = suite_root().join("reports/conformance.json");
    let text = std::fs::read_to_string(&committed).unwrap();
    let mut bumped: serde_json::Value = serde_json::from_str(&text).unwrap();
    bumped["columns"][0]["runtime"]["version"] = "9.9.9".into();
    let older = dir.path().join("older.json");
    std::fs::write(&older, serde_json::to_string_pretty(&bumped).unwrap()).unwrap();
    let compared = diff(&read_manifest(&older).unwrap(), &read_manifest(&committed).unwrap());
    let runtimes: Vec<&Moved> = compared.moved.iter().filter(|m| matches!(m, Moved::Runtime { .. })).collect();
    assert_eq!(
        runtimes,
        [&Moved::Runtime {
            column: "adversary-embedded".into(),
            before: Some("sharedos-conformance.adversary 9.9.9".into()),
            after: Some("sharedos-conformance.adversary 0.1.0".into()),
        }]
    );
    assert!(compared.cells.is_empty(), "no verdict moved");
    let fresh = Verdicts { manifest_json: &text, markdown: "" };
    let drift = compare_or_write(&older, fresh, false).drift;
    assert_eq!(drift.len(), 1, "{drift:?}");
    assert!(drift[0].starts_with("Column `adversary-embedded` seats another runtime"), "{drift:?}");
    bumped["columns"][0].as_object_mut().unwrap().remove("runtime");
    std::fs::write(&older, serde_json::to_string_pretty(&bumped).unwrap()).unwrap();
    let compared = diff(&read_manifest(&older).unwrap(), &read_manifest(&committed).unwrap());
    assert!(compared.moved.iter().any(|m| matches!(m, Moved::Runtime { before: None, .. })), "{:?}", compared.moved);
}

/// The Adversary column of a copy of the suite, as a manifest file.
fn adversary_manifest(root: &Path, out: &Path) {
    let suite = load_suite(root).unwrap();
    let selection = Selection { columns: vec!["adversary-embedded".into()], ..Selection::default() };
    let planned = plan(&suite, &selection);
    let report =
        run_and_report(&suite, &selection, &planned, RunSettings { jobs: 2, ..RunSettings::default() }).unwrap();
    std::fs::write(out, report.manifest_json).unwrap();
}

#[test]
fn a_changed_case_moves_the_case_set_and_names_its_cells() {
    let dir = scratch();
    let root = dir.path().join("suite");
    for folder in ["cases", "adversaries"] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
        for entry in std::fs::read_dir(suite_root().join(folder)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), root.join(folder).join(entry.file_name())).unwrap();
        }
    }
    let (before, after) = (dir.path().join("before.json"), dir.path().join("after.json"));
    adversary_manifest(&root, &before);
    // The forged-grant attack now expects a code the kernel never gives.
    let script = root.join("adversaries/kernel.forged-grant.json");
    let text = std::fs::read_to_string(&script).unwrap();
    let expected = "\"reasonCodes\": [\"no_matching_grant\"]";
    assert_eq!(text.matches(expected).count(), 1, "the script names the code it expects once");
    std::fs::write(&script, text.replace(expected, "\"reasonCodes\": [\"grant_smuggled\"]")).unwrap();
    adversary_manifest(&root, &after);
    let compared = diff(&read_manifest(&before).unwrap(), &read_manifest(&after).unwrap());
    assert!(!compared.comparable);
    assert!(matches!(compared.moved.as_slice(), [Moved::CaseSet { .. }]), "{:?}", compared.moved);
    let names: Vec<String> = compared.cells.iter().map(|c| format!("{:?} {}/{}", c.change, c.case, c.column)).collect();
    assert_eq!(names, ["Regression forged-grant/adversary-embedded"]);
    let text = human(&compared);
    assert!(text.contains("The case set moved"), "{text}");
    assert!(text.contains("Regressions (1)\n  forged-grant/baseline/adversary-embedded: pass"), "{text}");
    assert!(compared.regressed());
    let comment = markdown(&compared);
    assert!(comment.contains("| `forged-grant/baseline/adversary-embedded` |"), "{comment}");
}

#[test]
fn sharedos_judge_versions_four_and_five_are_not_comparable_and_say_why() {
    let (v4, v5) =
        (read_manifest(&sharedos("judge-v4.json")).unwrap(), read_manifest(&sharedos("judge-v5.json")).unwrap());
    assert_eq!((v4.shape, v5.shape), (Shape::SharedOs, Shape::SharedOs));
    let compared = diff(&v4, &v5);
    assert!(!compared.comparable);
    assert_eq!(compared.moved.len(), 1, "only the rules moved: {:?}", compared.moved);
    assert!(
        compared.meaning[0].contains("SharedOS judge version 4 → SharedOS judge version 5"),
        "{:?}",
        compared.meaning
    );
    assert_eq!(compared.cells.len(), 1);
    assert_eq!(compared.cells[0].change, Change::Regression);
    assert_eq!(compared.cells[0].case, "escalation-refused");
}

#[test]
fn a_sharedos_manifest_beside_ours_says_the_hashes_cannot_be_compared() {
    let ours = read_manifest(&suite_root().join("reports/conformance.json")).unwrap();
    let theirs = read_manifest(&sharedos("judge-v6.json")).unwrap();
    let compared = diff(&theirs, &ours);
    assert!(!compared.comparable);
    assert!(matches!(compared.moved.first(), Some(Moved::HashScheme { .. })), "{:?}", compared.moved);
    assert!(compared.meaning[0].contains("localeCompare"), "{}", compared.meaning[0]);
}

#[test]
fn a_judge_two_manifest_has_no_world_set_and_is_read_without_causes_or_turns() {
    let v2 = read_manifest(&sharedos("judge-v2.json")).unwrap();
    assert_eq!(v2.world_set_hash, None);
    assert!(v2.cells.values().all(|c| c.causes.is_none()));
    let compared = diff(&v2, &v2);
    assert!(!compared.comparable);
    assert!(compared.meaning[0].contains("no world-set hash"), "{:?}", compared.meaning);
    assert!(compared.cells.is_empty());
}

/// A name, an edit of a valid manifest, and the pointer it is refused at.
type Edit = (&'static str, fn(&mut serde_json::Value), &'static str);

#[test]
fn a_manifest_of_no_known_shape_is_refused_with_its_pointer() {
    let dir = scratch();
    let base: serde_json::Value = serde_json::from_slice(&std::fs::read(sharedos("judge-v4.json")).unwrap()).unwrap();
    let edits: [Edit; 6] = [
        ("unknown-key", |m| m["shape"] = "new".into(), "/shape"),
        ("status", |m| m["rows"][0]["cells"][1]["status"] = "great".into(), "/rows/0/cells/1/status"),
        ("hash", |m| m["caseSetHash"] = "ABC".into(), "/caseSetHash"),
        ("judge", |m| m["judgeVersion"] = "9".into(), "/judgeVersion"),
        ("column", |m| m["rows"][1]["cells"][0]["columnId"] = "nobody".into(), "/rows/1/cells/0/columnId"),
        ("twice", |m| m["rows"][1] = m["rows"][0].clone(), "/rows/1/cells/0"),
    ];
    for (name, edit, pointer) in edits {
        let mut manifest = base.clone();
        edit(&mut manifest);
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, manifest.to_string()).unwrap();
        let error = read_manifest(&path).unwrap_err();
        assert_eq!(error.pointer, pointer, "{name}: {error}");
    }
}

/// A generated cell: its column, status and reason codes.
type GenCell = (String, &'static str, Vec<&'static str>);

/// A generated row: its case and cells.
type GenRow = (String, Vec<GenCell>);

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A manifest of this harness's shape over `columns` (id, prompt-set hash
/// digit) and `rows`, each row in family `matrix` when `families`, written
/// as text directly: building a large one as a `Value` first is slow.
fn manifest_text(columns: &[(String, char)], rows: &[GenRow], families: bool) -> String {
    use std::fmt::Write;
    let mut out = format!(
        r#"{{"version":"1","judgeVersion":"6","rulesVersion":"7","hashScheme":"sha256-tagged-jcs/v1","caseSetHash":"{}","worldSetHash":"{}","evidenceRoot":"{}","reasonCodes":[],"columns":["#,
        "c".repeat(64),
        "d".repeat(64),
        "e".repeat(64)
    );
    let declared: Vec<String> = columns
        .iter()
        .map(|(id, hash)| {
            format!(r#"{{"id":{},"label":"L","promptSetHash":"{}"}}"#, quoted(id), hash.to_string().repeat(64))
        })
        .collect();
    out.push_str(&declared.join(","));
    let grouped: Vec<String> =
        rows.iter().map(|(case, _)| format!(r#"{{"caseId":{},"conditionId":"baseline"}}"#, quoted(case))).collect();
    if families {
        let _ = write!(out, r#"],"families":[{{"family":"matrix","rows":[{}]}}],"rows":["#, grouped.join(","));
    } else {
        out.push_str(r#"],"families":[],"rows":["#);
    }
    for (r, (case, cells)) in rows.iter().enumerate() {
        let _ = write!(
            out,
            r#"{}{{"caseId":{},"conditionId":"baseline","kind":"tool","invariant":"Refuse","expectedOutcome":"Refused","condition":"None.","turnExpectation":null,"cells":["#,
            if r == 0 { "" } else { "," },
            quoted(case)
        );
        for (c, (column, status, codes)) in cells.iter().enumerate() {
            let codes: Vec<String> = codes.iter().map(|code| quoted(code)).collect();
            let _ = write!(
                out,
                r#"{}{{"columnId":{},"status":"{status}","refusedBy":[],"reasonCodes":[{}],"causes":[],"declared":1,"attempted":1,"driverIssued":[],"notApplicable":0,"recordUsable":true,"recordGaps":[],"turns":1,"detail":"as the row requires"}}"#,
                if c == 0 { "" } else { "," },
                quoted(column),
                codes.join(",")
            );
        }
        out.push_str("]}");
    }
    out.push_str("]}");
    out
}

fn parsed(text: &str) -> sharedos_evidence::compare::read::ReadManifest {
    sharedos_evidence::compare::read::parse_manifest(Path::new("m.json"), text.as_bytes()).unwrap()
}

/// The same manifest with its columns, rows and each row's cells in the
/// opposite order.
fn reversed_text(columns: &[(String, char)], rows: &[GenRow], families: bool) -> String {
    let columns: Vec<(String, char)> = columns.iter().rev().cloned().collect();
    let rows: Vec<GenRow> =
        rows.iter().rev().map(|(case, cells)| (case.clone(), cells.iter().rev().cloned().collect())).collect();
    manifest_text(&columns, &rows, families)
}

fn column_id(index: usize) -> String {
    format!("col-{index:05}")
}

#[test]
fn a_column_declared_twice_among_many_is_refused_at_the_second() {
    let mut columns: Vec<(String, char)> = (0..20_000).map(|i| (column_id(i), 'a')).collect();
    columns.push((column_id(7), 'a'));
    let text = manifest_text(&columns, &[], false);
    let error = sharedos_evidence::compare::read::parse_manifest(Path::new("m.json"), text.as_bytes()).unwrap_err();
    assert_eq!((error.pointer.as_str(), error.expected.as_str()), ("/columns/20000/id", "each column once"));
}

/// The row and cell fields `diff` does not compare are not kept, but are
/// still refused when they are not strings, in serde's own words.
#[test]
fn a_field_diff_does_not_keep_is_still_checked_as_a_string() {
    let columns = vec![("col-0".to_string(), 'a')];
    let rows: Vec<GenRow> = vec![("case".into(), vec![("col-0".into(), "pass", vec![])])];
    let base: serde_json::Value = serde_json::from_str(&manifest_text(&columns, &rows, false)).unwrap();
    let edits: [Edit; 3] = [
        ("kind", |m| m["rows"][0]["kind"] = 5.into(), "/rows/0/kind"),
        ("detail", |m| m["rows"][0]["cells"][0]["detail"] = 5.into(), "/rows/0/cells/0/detail"),
        ("gap", |m| m["rows"][0]["cells"][0]["recordGaps"] = serde_json::json!([true]), "/rows/0/cells/0/recordGaps/0"),
    ];
    for (name, edit, pointer) in edits {
        let mut manifest = base.clone();
        edit(&mut manifest);
        let text = manifest.to_string();
        let error = sharedos_evidence::compare::read::parse_manifest(Path::new("m.json"), text.as_bytes()).unwrap_err();
        assert_eq!(error.pointer, pointer, "{name}: {error}");
        assert!(error.expected.contains(", expected a string at line 1 column"), "{name}: {error}");
    }
}

/// Issue: a line break in an id split a row of the human table in two.
/// Every id, code and column name is printed escaped, one row a line.
#[test]
fn control_characters_in_ids_stay_escaped_on_one_line() {
    let hostile = "forged\n\u{1b}[2K\rComparable\t\u{202e}\u{2028}\u{2029}";
    let columns = vec![("col-0".to_string(), 'a')];
    let a: Vec<GenRow> = vec![("plain".into(), vec![("col-0".into(), "pass", vec![])])];
    let mut b_columns = columns.clone();
    b_columns.push(("new\ncolumn".to_string(), 'a'));
    let b: Vec<GenRow> = vec![
        ("plain".into(), vec![("col-0".into(), "fail", vec!["code\u{1b}[1A"])]),
        (hostile.into(), vec![("col-0".into(), "pass", vec![])]),
    ];
    let compared = diff(&parsed(&manifest_text(&columns, &a, true)), &parsed(&manifest_text(&b_columns, &b, true)));
    let text = human(&compared);
    let expected = "Comparable; 2 cells moved.\n  - Columns only in B: new\\u000acolumn.\n\nRegressions (1)\n  \
                    plain/baseline/col-0: pass -> fail [code\\u001b[1A]\n\nAdded (1)\n  \
                    forged\\u000a\\u001b[2K\\u000dComparable\\u0009\\u202e\\u2028\\u2029/baseline/col-0: absent -> pass\n\n\
                    Summary (regressions, fixes, added, removed, other)\n  column col-0: 1, 0, 1, 0, 0\n  family \
                    matrix: 1, 0, 1, 0, 0\n";
    assert_eq!(text, expected);
    let comment = markdown(&compared);
    assert!(
        comment.contains(
            "\n| `forged\\u000a\\u001b[2K\\u000dComparable\\u0009\\u202e\\u2028\\u2029/baseline/col-0` | absent | pass |\n"
        ),
        "{comment}"
    );
    for shown in [&text, &comment] {
        let unsafe_char = |c: char| (c.is_control() && c != '\n') || matches!(c, '\u{202e}' | '\u{2028}' | '\u{2029}');
        assert!(!shown.chars().any(unsafe_char), "{shown}");
    }
}

/// Rows are gathered as they are read, but a problem is still the first
/// in document order, whichever key comes first, and a document serde
/// cannot read is refused for that before anything else.
#[test]
fn the_first_problem_is_refused_whatever_the_order_of_the_keys() {
    let columns = vec![("col-0".to_string(), 'a')];
    let cell = |column: &str| (column.to_string(), "pass", vec![]);
    let refused = |rows: Vec<GenRow>, rows_first: bool, edit: fn(&mut serde_json::Value)| {
        let mut manifest: serde_json::Value = serde_json::from_str(&manifest_text(&columns, &rows, false)).unwrap();
        edit(&mut manifest);
        let mut text = manifest.to_string();
        if rows_first {
            // The same document with `rows` before `columns`.
            let rows = manifest["rows"].to_string();
            manifest.as_object_mut().unwrap().remove("rows");
            text = format!("{{\"rows\":{rows},{}", &manifest.to_string()[1..]);
        }
        let error = sharedos_evidence::compare::read::parse_manifest(Path::new("m.json"), text.as_bytes()).unwrap_err();
        (error.pointer, error.expected)
    };
    let twice_then_undeclared =
        vec![("a".into(), vec![cell("col-0"), cell("col-0")]), ("b".into(), vec![cell("col-0"), cell("nobody")])];
    let undeclared_then_twice = vec![("a".into(), vec![cell("nobody"), cell("col-0"), cell("col-0")])];
    for rows_first in [false, true] {
        let (pointer, _) = refused(twice_then_undeclared.clone(), rows_first, |_| {});
        assert_eq!(pointer, "/rows/0/cells/1", "rows first: {rows_first}");
        let (pointer, _) = refused(undeclared_then_twice.clone(), rows_first, |_| {});
        assert_eq!(pointer, "/rows/0/cells/0/columnId", "rows first: {rows_first}");
        let (pointer, expected) =
            refused(undeclared_then_twice.clone(), rows_first, |m| m["rows"][0]["kind"] = 1.into());
        assert_eq!(pointer, "/rows/0/kind", "rows first: {rows_first}: {expected}");
        let (pointer, _) = refused(undeclared_then_twice.clone(), rows_first, |m| m["version"] = "2".into());
        assert_eq!(pointer, "/version", "rows first: {rows_first}");
    }
}

/// A document cut short inside a value `diff` does not compare is still
/// refused at the deepest pointer serde reached, as it always was.
#[test]
fn a_manifest_cut_short_is_refused_at_the_pointer_it_stops() {
    let text = std::fs::read_to_string(suite_root().join("reports/conformance.json")).unwrap();
    let cuts = [
        ("\"reasonCodes\": [\n    {\n      \"code\": \"all", "/reasonCodes/0/code"),
        ("\"turnExpectation\": {\n        \"status\": \"canc", "/rows/0/turnExpectation/status"),
    ];
    for (cut, pointer) in cuts {
        let at = text.find(cut).unwrap() + cut.len();
        let read = sharedos_evidence::compare::read::parse_manifest(Path::new("m.json"), &text.as_bytes()[..at]);
        let error = read.unwrap_err();
        assert_eq!(error.pointer, pointer, "{error}");
        assert!(error.expected.contains("EOF while parsing a string"), "{error}");
    }
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    /// Twenty thousand columns, one moved in each way in the middle: they
    /// diff to exactly what moved, whatever the order either side lists them
    /// in.
    #[test]
    #[ignore = "heavy"]
    fn many_columns_diff_to_exactly_what_moved_whatever_their_order() {
        const COLUMNS: usize = 20_000;
        let ids_a: Vec<(String, char)> = (0..COLUMNS).map(|i| (column_id(i), 'a')).collect();
        let mut ids_b: Vec<(String, char)> = ids_a.iter().filter(|(id, _)| *id != column_id(10_000)).cloned().collect();
        ids_b.push(("col-new".to_string(), 'a'));
        ids_b[5_000].1 = 'b';
        let rows = |ids: &[(String, char)], failing: &str| -> Vec<GenRow> {
            let cells = |r: usize| {
                let status = |id: &String| if r == 1 && id == failing { "fail" } else { "pass" };
                ids.iter().map(|(id, _)| (id.clone(), status(id), vec![])).collect()
            };
            (0..2).map(|r| (format!("case-{r}"), cells(r))).collect()
        };
        let (rows_a, rows_b) = (rows(&ids_a, ""), rows(&ids_b, &column_id(12_345)));
        let (read_a, read_b) =
            (parsed(&manifest_text(&ids_a, &rows_a, false)), parsed(&manifest_text(&ids_b, &rows_b, false)));
        assert_eq!(read_a.cells.len(), 2 * COLUMNS);
        let compared = diff(&read_a, &read_b);
        assert_eq!(
            human(&compared),
            "Comparable; 1 cells moved.\n  - Column `col-05000` was told different things (`aaaaaaaaaaaa` → \
             `bbbbbbbbbbbb`): its seat's choices are not comparable, though its verdicts are when nothing above \
             moved.\n  - Columns only in B: col-new.\n  - Columns only in A: col-10000.\n\nRegressions (1)\n  \
             case-1/baseline/col-12345: pass -> fail\n\nSummary (regressions, fixes, added, removed, other)\n  column \
             col-12345: 1, 0, 0, 0, 0\n  family unknown: 1, 0, 0, 0, 0\n"
        );
        let (reversed_a, reversed_b) =
            (parsed(&reversed_text(&ids_a, &rows_a, false)), parsed(&reversed_text(&ids_b, &rows_b, false)));
        assert_eq!(diff(&reversed_a, &reversed_b), compared);
    }

    /// Twenty thousand rows, a cell moved in each way in the middle: the diff
    /// names exactly those cells, in order, whatever the order of either side.
    #[test]
    #[ignore = "heavy"]
    fn many_rows_diff_to_exactly_what_moved_whatever_their_order() {
        const ROWS: usize = 20_000;
        let columns: Vec<(String, char)> = vec![("col-0".into(), 'a'), ("col-1".into(), 'a')];
        let row = |r: usize, statuses: [&'static str; 2], codes: Vec<&'static str>| -> GenRow {
            let present = (0..2).filter(|c| statuses[*c] != "absent");
            (format!("case-{r:05}"), present.map(|c| (format!("col-{c}"), statuses[c], codes.clone())).collect())
        };
        let rows_a: Vec<GenRow> =
            (0..ROWS).map(|r| row(r, if r == 15_000 { ["fail", "pass"] } else { ["pass", "pass"] }, vec![])).collect();
        let mut rows_b: Vec<GenRow> = (0..ROWS)
            .map(|r| match r {
                7_777 => row(r, ["absent", "pass"], vec![]),
                10_000 => row(r, ["pass", "not_exercised"], vec![]),
                12_000 => row(r, ["pass", "pass"], vec!["turn_cancelled"]),
                _ => row(r, ["pass", "pass"], vec![]),
            })
            .collect();
        rows_b.push(row(ROWS, ["pass", "pass"], vec![]));
        let read_a = parsed(&manifest_text(&columns, &rows_a, true));
        let compared = diff(&read_a, &parsed(&manifest_text(&columns, &rows_b, true)));
        let expected = "Comparable; 7 cells moved.\n\nRegressions (1)\n  case-10000/baseline/col-1: pass -> \
                        not_exercised\n\nFixes (1)\n  case-15000/baseline/col-0: fail -> pass\n\nAdded (2)\n  \
                        case-20000/baseline/col-0: absent -> pass\n  case-20000/baseline/col-1: absent -> pass\n\n\
                        Removed (1)\n  case-07777/baseline/col-0: pass -> absent\n\nOther moves (2)\n  \
                        case-12000/baseline/col-0: pass -> pass [turn_cancelled]\n  case-12000/baseline/col-1: pass \
                        -> pass [turn_cancelled]\n\nSummary (regressions, fixes, added, removed, other)\n  column col-0: \
                        0, 1, 1, 1, 1\n  column col-1: 1, 0, 1, 0, 1\n  family matrix: 1, 1, 2, 1, 2\n";
        assert_eq!(human(&compared), expected);
        let reversed_a = parsed(&reversed_text(&columns, &rows_a, true));
        assert_eq!(diff(&reversed_a, &parsed(&reversed_text(&columns, &rows_b, true))), compared);
        assert_eq!(human(&diff(&read_a, &reversed_a)), "Comparable, nothing moved.\n");
    }
}
