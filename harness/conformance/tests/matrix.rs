//! Every cell of the conformance matrix as its own test trial, named
//! `case/condition/column`, so `cargo test` and nextest can filter and
//! partition cells. A trial fails on a `fail` or `not_exercised` verdict, or
//! when the cell differs from its golden file (the diff is printed).
//!
//! `SHAREDOS_BLESS=1 cargo test -p sharedos-conformance --test matrix`
//! rewrites the golden files of the trials it runs instead of comparing.

use libtest_mimic::{Arguments, Failed, Trial};
use sharedos_conformance::suite::matrix::run_planned;
use sharedos_grading::input::loader::{load_suite, Suite};
use sharedos_grading::output::golden::{bless, compare, GoldenComparison};
use sharedos_grading::plan::{plan, PlannedCell, Selection};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn blessing() -> bool {
    std::env::var_os("SHAREDOS_BLESS").is_some_and(|v| v == "1")
}

fn cell_trial(suite: Arc<Suite>, planned: PlannedCell) -> Trial {
    let name = planned.key.trial_name();
    Trial::test(name, move || {
        if let Some(declared) = &planned.declared {
            return if declared.status.breaks_build() { Err(Failed::from(format!("{declared:?}"))) } else { Ok(()) };
        }
        let run = run_planned(&suite, &planned).map_err(|e| Failed::from(e.to_string()))?;
        let golden = repository_root().join("golden");
        if blessing() {
            bless(&golden, &run.key, &run.snapshot).map_err(|e| Failed::from(e.to_string()))?;
        }
        if run.cell.status.breaks_build() {
            return Err(Failed::from(format!(
                "the cell is `{}`: {}",
                run.cell.status.as_str(),
                run.cell.detail.clone().unwrap_or_default()
            )));
        }
        match compare(&golden, &run.key, &run.snapshot) {
            GoldenComparison::Same => Ok(()),
            GoldenComparison::Missing { path } => Err(Failed::from(format!(
                "no golden file at {}; run with SHAREDOS_BLESS=1 to create it",
                path.display()
            ))),
            GoldenComparison::Unreadable { path, detail } => {
                Err(Failed::from(format!("{}: the golden file cannot be read ({detail})", path.display())))
            }
            GoldenComparison::Differs { path, diff } => {
                Err(Failed::from(format!("the cell differs from {}:\n{diff}", path.display())))
            }
        }
    })
}

fn main() {
    let arguments = Arguments::from_args();
    let suite = match load_suite(&repository_root()) {
        Ok(suite) => Arc::new(suite),
        Err(error) => {
            eprintln!("failed to load the suite: {error}");
            std::process::exit(3);
        }
    };
    let trials = plan(&suite, &Selection::default())
        .into_iter()
        .map(|planned| cell_trial(Arc::clone(&suite), planned))
        .collect();
    libtest_mimic::run(&arguments, trials).exit();
}
