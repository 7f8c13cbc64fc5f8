//! `diff`: comparability first, in words, then the moved cells, for this
//! harness's manifests and SharedOS's own shapes.

use crate::support::{scratch, suite_root};
use sharedos_conformance::input::loader::load_suite;
use sharedos_conformance::output::report::run_and_report;
use sharedos_conformance::run::matrix::{plan, RunSettings, Selection};
use sharedos_evidence::compare::diff::{diff, Change, Moved};
use sharedos_evidence::compare::read::{read_manifest, Shape};
use sharedos_evidence::compare::render::{human, markdown};
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
