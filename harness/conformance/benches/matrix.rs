//! Cost of the whole adversary matrix (plan, run on one worker, report) and
//! of assembling one turn's execution record from an already executed turn.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use sharedos_conformance::golden::CellKey;
use sharedos_conformance::loader::{load_suite, Suite};
use sharedos_conformance::record::assemble::assemble_record;
use sharedos_conformance::run::cell::{assembly_input, run_cell, Identity, RecordContext};
use sharedos_conformance::run::matrix::{locate, plan, run_all, Selection};
use sharedos_conformance::run::report::build_report;
use sharedos_conformance::run::turns::{run_adversary_turns, ExecutedTurn};
use sharedos_conformance::world::World;
use sharedos_model::audit::AuditEvent;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

const CASE: &str = "forged-grant";
const CONDITION: &str = "baseline";
const COLUMN: &str = "adversary-embedded";

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn suite() -> Suite {
    load_suite(&repository_root()).expect("the suite loads")
}

fn whole_matrix(c: &mut Criterion, suite: &Suite) {
    let selection = Selection::default();
    let mut group = c.benchmark_group("matrix");
    group.sample_size(10);
    group.bench_function("adversary_matrix", |b| {
        b.iter(|| {
            let planned = plan(suite, &selection);
            let results = run_all(suite, &planned, 1);
            black_box(build_report(suite, &selection, results).expect("the report builds"))
        });
    });
    group.finish();
}

/// One executed turn and the audit trail its record is assembled from,
/// captured after running the cell's turns once.
struct RecordInputs {
    turn: ExecutedTurn,
    audit: Vec<AuditEvent>,
    identity: Identity,
}

fn cell_key() -> CellKey {
    CellKey { case: CASE.into(), condition: CONDITION.into(), column: COLUMN.into() }
}

fn record_inputs(suite: &Suite) -> RecordInputs {
    let (case, condition, script) = locate(suite, &cell_key()).expect("the cell exists");
    let script = Rc::new(script.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("the runtime starts");
    let (turn, audit, identity) = runtime.block_on(async {
        let world = World::build(&condition.world).expect("the world builds");
        let identity = Identity::new(case, &script, condition, &world).expect("identity hashes");
        let turns = run_adversary_turns(&world, &condition.world, &script, &cell_key()).await.expect("the turns run");
        (turns.into_iter().next().expect("one turn ran"), world.fixtures.audit.events(), identity)
    });
    RecordInputs { turn, audit, identity }
}

fn record_assembly(c: &mut Criterion, suite: &Suite) {
    let inputs = record_inputs(suite);
    let (case, condition, _) = locate(suite, &cell_key()).expect("the cell exists");
    let cx = RecordContext { case, condition, column_id: COLUMN, identity: inputs.identity.clone(), multi_turn: false };
    let input = assembly_input(&inputs.turn, &inputs.audit, &cx).expect("the input builds");
    c.bench_function("record/assemble_one_turn", |b| {
        b.iter(|| black_box(assemble_record(input.clone()).expect("the record assembles")));
    });
}

fn one_cell(c: &mut Criterion, suite: &Suite) {
    let (case, condition, script) = locate(suite, &cell_key()).expect("the cell exists");
    let script = Rc::new(script.clone());
    c.bench_function("cell/forged-grant_baseline", |b| {
        b.iter(|| black_box(run_cell(case, condition, &script, COLUMN).expect("the cell runs")));
    });
}

fn matrix(c: &mut Criterion) {
    let suite = suite();
    whole_matrix(c, &suite);
    record_assembly(c, &suite);
    one_cell(c, &suite);
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = matrix
}
criterion_main!(benches);
