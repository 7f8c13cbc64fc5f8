//! `--repeat`: a seated column's cells run K times, every run's evidence
//! in the bundle, the repeats checked by `verify`, carried by `merge`, and
//! compared by `diff` with a significance test.

use crate::support::{certify_runs, codes, reseal, scratch, verify_plain};
use serde_json::{json, Value};
use sharedos_conformance_metadata::repeats::Repeats;
use sharedos_evidence::bundle::{EvidenceLine, EVIDENCE_FILE, MANIFEST_FILE};
use sharedos_evidence::compare::diff::{diff, Change};
use sharedos_evidence::compare::read::parse_manifest;
use sharedos_evidence::merge::{merge, MergeError, MergeRequest};
use sharedos_grading::plan::shard::Shard;
use sharedos_grading::vocab::CellStatus;
use std::path::Path;

const SEATED: &str = "process:python-reference";

fn manifest_of(bundle: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(bundle.join(MANIFEST_FILE)).unwrap()).unwrap()
}

fn lines_of(bundle: &Path) -> Vec<EvidenceLine> {
    let text = std::fs::read_to_string(bundle.join(EVIDENCE_FILE)).unwrap();
    text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[test]
fn a_seated_column_certified_three_times_carries_every_run_and_verifies() {
    let dir = scratch();
    let bundle = dir.path().join("bundle");
    certify_runs(&bundle, SEATED, None, 3);
    let verification = verify_plain(&bundle);
    assert!(verification.verified(), "{:?}", codes(&verification));
    let manifest = manifest_of(&bundle);
    let (mut repeated, mut once) = (0, 0);
    for cell in manifest["rows"].as_array().unwrap().iter().flat_map(|row| row["cells"].as_array().unwrap()) {
        let run = cell["turns"].as_u64().unwrap() > 0;
        match (cell["columnId"].as_str().unwrap(), run) {
            (SEATED, true) => {
                repeated += 1;
                assert_eq!(cell["repeats"]["runs"], 3);
                assert_eq!(cell["repeats"]["statuses"][0], cell["status"]);
            }
            // The adversary runs once: one run stands for any number.
            _ => {
                once += 1;
                assert!(cell.get("repeats").is_none(), "{cell}");
            }
        }
    }
    let lines = lines_of(&bundle);
    let adversary_runs = lines.iter().filter(|l| l.column != SEATED).count();
    assert_eq!(lines.len(), adversary_runs + 3 * repeated, "three lines per repeated cell");
    assert!(lines.iter().filter(|l| l.column != SEATED).all(|l| l.repeat.is_none()));
    assert!(repeated > 100 && once > 100, "{repeated} repeated, {once} once");
}

#[test]
fn the_page_of_a_repeated_bundle_opens_each_cells_repeats() {
    use sharedos_evidence::page::{input::load, render, Page};
    let dir = scratch();
    let bundle = dir.path().join("bundle");
    certify_runs(&bundle, SEATED, Some(Shard { index: 1, count: 8 }), 3);
    let loaded = load(&bundle).unwrap();
    let page = Page { manifest: &loaded.manifest, records: loaded.records.as_ref(), golden: None, against: None };
    let html = render(&page);
    let repeated = loaded.manifest.rows.iter().flat_map(|r| &r.cells).filter(|c| c.repeats.is_some()).count();
    assert!(repeated > 5);
    assert_eq!(html.matches("\"repeats\":{\"runs\":3,").count(), repeated, "every repeated cell's data");
}

#[test]
fn verify_refuses_repeats_the_runs_do_not_give() {
    let dir = scratch();
    let bundle = dir.path().join("bundle");
    certify_runs(&bundle, SEATED, None, 3);
    let mut manifest = manifest_of(&bundle);
    let cell = manifest["rows"][0]["cells"][1].clone();
    assert_eq!(cell["repeats"]["passes"], 3, "{cell}");
    manifest["rows"][0]["cells"][1]["repeats"]["passes"] = json!(2);
    std::fs::write(bundle.join(MANIFEST_FILE), serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    reseal(&bundle);
    let verification = verify_plain(&bundle);
    assert_eq!(codes(&verification), ["summary_mismatch"]);
    let failure = &verification.failures[0];
    assert!(failure.to_string().contains("3 of 3 passed"), "{failure}");
    assert_eq!(failure.place().pointer, "/rows/0/cells/1/repeats");
}

#[test]
fn verify_refuses_a_run_dropped_from_the_evidence() {
    let dir = scratch();
    let bundle = dir.path().join("bundle");
    certify_runs(&bundle, SEATED, None, 3);
    let text = std::fs::read_to_string(bundle.join(EVIDENCE_FILE)).unwrap();
    let kept: Vec<&str> = text.lines().filter(|line| !line.contains("\"repeat\":2")).collect();
    assert!(kept.len() < text.lines().count());
    std::fs::write(bundle.join(EVIDENCE_FILE), kept.join("\n") + "\n").unwrap();
    reseal(&bundle);
    let verification = verify_plain(&bundle);
    assert!(codes(&verification).contains(&"summary_mismatch"), "{:?}", codes(&verification));
}

/// The committed manifest with the first cell of `column` in the first
/// row given `repeats`, and `status` as its first run's.
fn with_repeats(statuses: &[CellStatus]) -> Vec<u8> {
    let path = crate::support::suite_root().join("reports/conformance.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let cell = &mut manifest["rows"][0]["cells"][0];
    cell["status"] = json!(statuses[0]);
    cell["repeats"] = serde_json::to_value(Repeats::of(statuses.to_vec())).unwrap();
    serde_json::to_vec(&manifest).unwrap()
}

fn change_between(before: &[CellStatus], after: &[CellStatus]) -> Option<(Change, f64)> {
    let a = parse_manifest(Path::new("a.json"), &with_repeats(before)).unwrap();
    let b = parse_manifest(Path::new("b.json"), &with_repeats(after)).unwrap();
    let compared = diff(&a, &b);
    assert!(compared.cells.len() <= 1);
    compared.cells.first().map(|c| (c.change, c.p_value.unwrap()))
}

#[test]
fn diff_calls_a_repeated_cell_moved_only_when_fishers_test_says_so() {
    use CellStatus::{Fail, Pass};
    // 5 of 5 to 0 of 5: p = 0.0079 < 0.05, a regression; and back, a fix.
    let (change, p) = change_between(&[Pass; 5], &[Fail; 5]).unwrap();
    assert_eq!(change, Change::Regression);
    assert!((p - 0.007_937).abs() < 1e-5, "{p}");
    assert_eq!(change_between(&[Fail; 5], &[Pass; 5]).unwrap().0, Change::Fix);
    // 5 of 5 to 3 of 5, the first run failing: p = 0.44, flaky, never a
    // regression although the shown status moved to `fail`.
    let (change, p) = change_between(&[Pass; 5], &[Fail, Pass, Fail, Pass, Pass]).unwrap();
    assert_eq!(change, Change::Flaky);
    assert!((p - 0.4444).abs() < 1e-4, "{p}");
    // The same rate with another order of runs: still flaky, listed apart.
    assert_eq!(change_between(&[Pass, Fail, Pass], &[Fail, Pass, Pass]).unwrap().0, Change::Flaky);
    // The same runs: nothing moved.
    assert_eq!(change_between(&[Pass; 3], &[Pass; 3]), None);
}

#[test]
fn diff_reads_a_cell_repeated_on_one_side_only_by_what_its_runs_come_to() {
    use CellStatus::{Fail, Pass};
    let mut once: Value = serde_json::from_slice(&with_repeats(&[Pass, Pass])).unwrap();
    once["rows"][0]["cells"][0].as_object_mut().unwrap().remove("repeats");
    let once = parse_manifest(Path::new("once.json"), &serde_json::to_vec(&once).unwrap()).unwrap();
    // Its first run passed as the single run did, with the same codes; its
    // second failed, so the sample is flaky and fails a build: it moved.
    let flaky = parse_manifest(Path::new("flaky.json"), &with_repeats(&[Pass, Fail])).unwrap();
    let changes = |a, b| diff(a, b).cells.iter().map(|c| (c.change, c.p_value)).collect::<Vec<_>>();
    assert_eq!(changes(&once, &flaky), [(Change::Regression, None)]);
    assert_eq!(changes(&flaky, &once), [(Change::Fix, None)]);
    let every = parse_manifest(Path::new("every.json"), &with_repeats(&[Pass, Pass])).unwrap();
    assert_eq!(changes(&once, &every), [], "a single pass and a sample every run of which passed agree");
}

#[test]
fn diff_prints_flaky_cells_apart_with_their_runs_and_p_value() {
    use sharedos_evidence::compare::render::{human, markdown};
    use CellStatus::{Fail, Pass};
    let a = parse_manifest(Path::new("a.json"), &with_repeats(&[Pass; 5])).unwrap();
    let b = parse_manifest(Path::new("b.json"), &with_repeats(&[Fail, Pass, Fail, Pass, Pass])).unwrap();
    let compared = diff(&a, &b);
    assert!(!compared.regressed(), "noise fails nothing");
    let text = human(&compared);
    assert!(text.contains("Flaky, not significant (1)\n"), "{text}");
    assert!(
        text.contains("(5 of 5 runs passed) -> fail [") && text.contains("(3 of 5 runs passed), p = 0.4444\n"),
        "{text}"
    );
    assert!(text.contains("Summary (regressions, fixes, added, removed, other, flaky)\n"), "{text}");
    let table = markdown(&compared);
    assert!(table.contains("| | Regressions | Fixes | Added | Removed | Other | Flaky |"), "{table}");
}

#[test]
fn diff_refuses_repeats_their_statuses_do_not_make() {
    use CellStatus::{Fail, Pass};
    let made = serde_json::to_value(Repeats::of(vec![Pass, Pass, Pass])).unwrap();
    let mut wrong = Vec::new();
    // 10 passes of 3 runs; 0 runs; 0 of 2^32 - 1, which a sum in 32 bits
    // wrapped; an interval outside [0, 1], or reversed; fewer statuses
    // than runs; a first run that is not the cell's status; one run.
    for (key, value) in [
        ("passes", json!(10)),
        ("runs", json!(0)),
        ("runs", json!(u32::MAX)),
        ("interval", json!([-1.5, 2])),
        ("interval", json!([1, 0.4385])),
        ("statuses", json!(["pass", "pass"])),
        ("statuses", json!(["fail", "pass", "pass"])),
    ] {
        let mut repeats = made.clone();
        repeats[key] = value;
        wrong.push(repeats);
    }
    let mut once = serde_json::to_value(Repeats::of(vec![Fail])).unwrap();
    once["statuses"] = json!(["pass"]);
    wrong.push(once);
    let path = crate::support::suite_root().join("reports/conformance.json");
    let committed: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    for repeats in &wrong {
        let mut manifest = committed.clone();
        manifest["rows"][0]["cells"][0]["status"] = json!("pass");
        manifest["rows"][0]["cells"][0]["repeats"] = repeats.clone();
        let error = parse_manifest(Path::new("a.json"), &serde_json::to_vec(&manifest).unwrap()).unwrap_err();
        assert_eq!(error.pointer, "/rows/0/cells/0/repeats", "{repeats}: {error}");
    }
    assert_eq!(wrong.len(), 8);
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    #[test]
    #[ignore = "heavy"]
    fn repeated_shards_merge_into_the_repeated_unsharded_bundle() {
        let dir = scratch();
        let whole = dir.path().join("whole");
        certify_runs(&whole, SEATED, None, 2);
        let parts: Vec<_> = (1..=2)
            .map(|index| {
                let part = dir.path().join(format!("part-{index}"));
                certify_runs(&part, SEATED, Some(Shard { index, count: 2 }), 2);
                part
            })
            .collect();
        let merged = dir.path().join("merged");
        let _ = merge(MergeRequest { parts: &parts, out: &merged, sign_key: None }).unwrap();
        for name in [MANIFEST_FILE, EVIDENCE_FILE] {
            assert!(std::fs::read(whole.join(name)).unwrap() == std::fs::read(merged.join(name)).unwrap(), "{name}");
        }
        // A part run another number of times is refused.
        let once = dir.path().join("once");
        certify_runs(&once, SEATED, Some(Shard { index: 2, count: 2 }), 1);
        let error =
            merge(MergeRequest { parts: &[parts[0].clone(), once], out: &dir.path().join("x"), sign_key: None })
                .unwrap_err();
        assert!(matches!(&error, MergeError::Differs(d) if d.what == "the runs per cell"), "{error}");
    }
}
