//! What the conformance tests share: the committed suite and one
//! Adversary-column cell run from it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use sharedos_conformance::suite::cell::CellRun;
use sharedos_conformance::suite::matrix::{run_all, run_planned, RunSettings};
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::input::loader::{load_suite, Suite};
use sharedos_grading::plan::{plan, PlannedCell, Selection};
use sharedos_grading::vocab::CellKey;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The repository root, which holds `cases/`, `adversaries/` and `golden/`.
pub fn suite_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The committed suite.
pub fn committed_suite() -> Suite {
    load_suite(&suite_root()).unwrap_or_else(|e| panic!("the committed suite must load: {e}"))
}

/// An empty throwaway suite folder (`adversaries/` and `cases/`) for one
/// test, under the system's temporary directory.
pub fn scratch_suite(prefix: &str, name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("adversaries")).unwrap();
    std::fs::create_dir_all(root.join("cases")).unwrap();
    root
}

/// One cell of the Adversary column, run.
pub fn adversary_run(suite: &Suite, case: &str, condition: &str) -> CellRun {
    column_run(suite, case, condition, "adversary-embedded")
}

/// One cell of a built-in column, run.
pub fn column_run(suite: &Suite, case: &str, condition: &str, column: &str) -> CellRun {
    let key = CellKey { case: case.into(), condition: condition.into(), column: column.into() };
    run_planned(suite, &PlannedCell { key, declared: None }).expect("the cell runs")
}

/// Every graded cell `selection` picks from the committed suite, declared
/// or run: column -> `case/condition` -> cell.
pub fn cells_by_column(selection: &Selection) -> BTreeMap<String, BTreeMap<String, Cell>> {
    let suite = committed_suite();
    let mut by_column: BTreeMap<String, BTreeMap<String, Cell>> = BTreeMap::new();
    for (planned, result) in
        run_all(&suite, &plan(&suite, selection), RunSettings { jobs: 2, ..RunSettings::default() })
    {
        let cell = match (planned.declared, result) {
            (Some(cell), _) => cell,
            (None, Some(run)) => run.expect("the cell runs").cell,
            (None, None) => unreachable!("an undeclared cell is run"),
        };
        let row = format!("{}/{}", planned.key.case, planned.key.condition);
        by_column.entry(planned.key.column).or_default().insert(row, cell);
    }
    by_column
}
