//! The world-set hash (R7): per case and condition, the hash of the world
//! that condition materialises, so it moves with a world's arming, grants
//! and tools, and the report computes the same value from its run cells as
//! from worlds built afresh.

use crate::support;

use sharedos_conformance::suite::matrix::{run_all, RunSettings};
use sharedos_conformance::suite::report::build_report;
use sharedos_grading::identity::case_set::case_set_hash;
use sharedos_grading::identity::sets::world_set_hash;
use sharedos_grading::input::loader::Suite;
use sharedos_grading::plan::{plan, Selection};
use support::committed_suite;

/// The world-set hash of the cases `selection` keeps, as the report takes them.
fn world_set(suite: &Suite, selection: &Selection) -> String {
    world_set_hash(suite.cases.iter().filter(|c| selection.keeps_case(c))).unwrap()
}

fn only(cases: &[&str]) -> Selection {
    Selection { cases: cases.iter().map(|c| (*c).to_string()).collect(), ..Selection::default() }
}

#[test]
fn r7_the_report_hashes_the_world_set_of_its_run_cells_as_built_worlds_do() {
    let suite = committed_suite();
    let selection = only(&["forged-grant", "bounded-grant"]);
    let planned = plan(&suite, &selection);
    let report =
        build_report(&suite, &selection, run_all(&suite, &planned, RunSettings { jobs: 1, ..RunSettings::default() }))
            .unwrap();
    assert_eq!(report.manifest.world_set_hash, world_set(&suite, &selection));
}

#[test]
fn r7_rearming_one_condition_moves_the_world_set_hash() {
    let suite = committed_suite();
    let selection = only(&["forged-grant"]);
    let before = world_set(&suite, &selection);
    let mut edited = suite.clone();
    let case = edited.cases.iter_mut().find(|c| c.id == "forged-grant").unwrap();
    case.conditions[0].world.revoked = Some(vec!["grant-read".into()]);
    assert_ne!(world_set(&edited, &selection), before);
}

#[test]
fn r7_the_world_set_hash_covers_exactly_the_selected_cases() {
    let suite = committed_suite();
    let one = world_set(&suite, &only(&["forged-grant"]));
    let two = world_set(&suite, &only(&["forged-grant", "bounded-grant"]));
    assert_ne!(one, two);
    assert_eq!(one, world_set(&suite, &only(&["forged-grant"])), "stable across computations");
}

#[test]
fn r7_rewording_prose_moves_neither_set_hash() {
    let suite = committed_suite();
    let selection = Selection::default();
    let (before, case_set) = (world_set(&suite, &selection), case_set_hash(&suite).unwrap());
    let mut reworded = suite.clone();
    for case in &mut reworded.cases {
        for condition in &mut case.conditions {
            condition.description = format!("{} (reworded)", condition.description);
        }
    }
    assert_eq!(world_set(&reworded, &selection), before);
    assert_eq!(case_set_hash(&reworded).unwrap(), case_set);
}
