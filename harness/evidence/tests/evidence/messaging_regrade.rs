//! A messaging row is graded again from what its run observed (M1, M18),
//! like every other row: an observation edited and resealed moves the
//! verdict `verify` computes, and the stated one no longer matches.

use crate::support::{copy_of_bundle, read_lines, reseal, scratch, suite_root, verify_plain, write_lines};
use serde_json::Value;
use sharedos_evidence::bundle::EVIDENCE_FILE;
use sharedos_grading::input::case::Condition;
use sharedos_grading::input::loader::{load_suite, Suite};
use sharedos_grading::plan::locate;
use sharedos_grading::vocab::CellKey;
use std::path::Path;

fn condition_of<'s>(suite: &'s Suite, line: &Value) -> &'s Condition {
    let key = CellKey {
        case: line["case"].as_str().unwrap().to_string(),
        condition: line["condition"].as_str().unwrap().to_string(),
        column: line["column"].as_str().unwrap().to_string(),
    };
    locate(suite, &key).unwrap().1
}

/// Every verdict mismatch `verify` names in `bundle`, place first (each
/// names the first field, in key order, where the cell graded again
/// differs from the stated one).
fn verdict_mismatches(bundle: &Path) -> Vec<String> {
    let verification = verify_plain(bundle);
    verification
        .failures
        .iter()
        .filter(|f| f.code() == "verdict_mismatch")
        .map(|f| format!("{} | {f}", f.place()))
        .collect()
}

/// Edits the first passing line `pick` accepts, reseals, and returns the
/// verdict mismatches named on that line.
fn edit_first(pick: impl Fn(&Condition, &Value) -> bool, edit: impl FnOnce(&mut Value)) -> Vec<String> {
    let suite = load_suite(&suite_root()).unwrap();
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    let mut lines = read_lines(&bundle);
    let index = lines
        .iter()
        .position(|l| l["cell"]["status"] == "pass" && pick(condition_of(&suite, l), l))
        .expect("a passing messaging cell of that kind");
    edit(&mut lines[index]);
    write_lines(&bundle, &lines);
    reseal(&bundle);
    let prefix = format!("{EVIDENCE_FILE}:{} ", index + 1);
    verdict_mismatches(&bundle).into_iter().filter(|p| p.starts_with(&prefix)).collect()
}

#[test]
fn every_messaging_cell_keeps_its_observation_and_no_other_does() {
    let suite = load_suite(&suite_root()).unwrap();
    let lines = read_lines(crate::support::bundle());
    let armed = lines.iter().filter(|l| condition_of(&suite, l).world.messaging.is_some()).count();
    let observed = lines.iter().filter(|l| l["grading"].get("messaging").is_some()).count();
    assert!(armed >= 20, "only {armed} messaging cells in the bundle");
    assert_eq!(observed, armed);
    for line in lines.iter().filter(|l| l["grading"].get("messaging").is_some()) {
        assert!(condition_of(&suite, line).world.messaging.is_some(), "{}", line["condition"]);
    }
}

#[test]
fn m1_a_host_send_observation_edited_is_graded_again() {
    let places = edit_first(
        |condition, _| condition.world.messaging.as_ref().is_some_and(|m| !m.host.is_empty()),
        |line| {
            let send = &mut line["grading"]["messaging"]["hostSends"][0];
            let flipped = if send["outcome"] == "accepted" { "denied" } else { "accepted" };
            send["outcome"] = Value::from(flipped);
        },
    );
    assert_eq!(places.len(), 1, "{places:?}");
    assert!(places[0].contains(" /cell/") && places[0].contains("attempt `host."), "{places:?}");
}

#[test]
fn m18_an_envelope_edited_off_its_turns_purpose_is_graded_again() {
    let places = edit_first(
        |condition, line| {
            let trusted = condition.world.messaging.as_ref().and_then(|m| m.expect_effects.as_ref());
            let dispatched =
                line["grading"]["messaging"]["ports"]["dispatches"].as_array().is_some_and(|d| !d.is_empty());
            trusted.is_some_and(|e| e.trusted_fields) && dispatched
        },
        |line| {
            for dispatch in line["grading"]["messaging"]["ports"]["dispatches"].as_array_mut().unwrap() {
                dispatch["envelope"]["purpose"] = Value::from("a purpose no turn had");
            }
        },
    );
    assert_eq!(places.len(), 1, "{places:?}");
}

#[test]
fn a_messaging_observation_removed_fails_the_operations_it_held() {
    let places = edit_first(
        |condition, _| condition.world.messaging.as_ref().is_some_and(|m| !m.host.is_empty()),
        |line| {
            line["grading"].as_object_mut().unwrap().remove("messaging");
        },
    );
    assert_eq!(places.len(), 1, "{places:?}");
    assert!(places[0].contains(" /cell/"), "{places:?}");
}
