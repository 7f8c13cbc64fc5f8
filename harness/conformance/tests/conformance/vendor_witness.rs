//! The scripted model as a witness of a real CLI (the pinned Codex, the
//! fastest to start): one log per turn, one exchange per request, the
//! row's calls asked in order under the names the CLI offered, each
//! returned once, then the final text; the log kept in the cell's grading
//! evidence, as a bundle carries it.

use crate::support::{committed_suite, suite_root};
use sharedos_conformance::suite::matrix::{run_all, RunSettings};
use sharedos_conformance_metadata::witness::Answer;
use sharedos_grading::input::loader::load_seat;
use sharedos_grading::plan::PlannedCell;
use sharedos_grading::vocab::CellKey;

#[test]
fn the_scripted_model_witnesses_every_request_of_the_pinned_codex_and_what_it_returned() {
    let cli = suite_root().join("vendors/node_modules/.bin/codex");
    if !cli.is_file() {
        assert!(std::env::var_os("CI").is_none(), "scripts/vendors.sh installs the pinned CLIs on CI");
        eprintln!("skipped: {} is not installed (run scripts/vendors.sh)", cli.display());
        return;
    }
    let mut suite = committed_suite();
    suite.add_seat(load_seat(&suite_root().join("harness/seats/vendors/codex.json")).unwrap()).unwrap();
    let key = CellKey {
        case: "bounded-grant".into(),
        condition: "single-use-write-grant".into(),
        column: "mcp:codex".into(),
    };
    let settings = RunSettings { jobs: 1, keep_grading: true, ..RunSettings::default() };
    let mut results = run_all(&suite, &[PlannedCell { key, declared: None }], settings);
    assert_eq!(results.len(), 1);
    let run = results.remove(0).1.expect("a run cell").expect("the cell runs");
    assert_eq!(run.cell.status.as_str(), "pass", "{:?}", run.cell.detail);
    let witness = run.grading.expect("kept for grading").witness;
    assert_eq!(witness.len(), 1, "one log per turn");
    let log = &witness[0];
    assert_eq!(log.api, "openai-responses");
    let calls = usize::try_from(run.cell.attempted).unwrap();
    assert!(calls >= 2, "the row makes calls");
    assert_eq!(log.exchanges.len(), calls + 1, "one request per call, then the one answered with the final text");
    for (index, exchange) in log.exchanges.iter().enumerate() {
        assert_eq!((exchange.method.as_str(), exchange.path.as_str()), ("POST", "/v1/responses"));
        if index < calls {
            let Answer::Call { index: asked, name, offered, .. } = &exchange.answer else {
                panic!("request {index} was answered {:?}", exchange.answer);
            };
            assert_eq!(*asked, index);
            assert!(*offered && name.starts_with("mcp__sharedos/"), "{name} as Codex offers it");
        } else {
            assert_eq!(exchange.answer, Answer::Final);
        }
        // Each call's result is witnessed in the request after it.
        let returned: Vec<usize> = exchange.returned.iter().map(|r| r.index).collect();
        assert_eq!(returned, if index == 0 { vec![] } else { vec![index - 1] });
    }
}
