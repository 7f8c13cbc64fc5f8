//! Every verdict of a bundle graded again from its evidence, with the
//! judge this binary carries, and every cell of the bundled suite
//! accounted for: run cells by an evidence line, declared cells by the
//! cell the suite declares.

use crate::bundle::{EvidenceLine, EVIDENCE_FILE, MANIFEST_FILE, STATEMENT_FILE};
use serde_json::Value;
use sharedos_conformance_metadata::failure::{Failure, Place};
use sharedos_conformance_metadata::repeats::Repeats;
use sharedos_grading::column::columns;
use sharedos_grading::grade::evidence::{grade_cell, GradingRules};
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::input::built_in_column::ADVERSARY_ID;
use sharedos_grading::input::loader::Suite;
use sharedos_grading::output::manifest::{reason_code_coverage, CodeCoverage, Manifest};
use sharedos_grading::plan::shard::Shard;
use sharedos_grading::plan::{locate, plan, Selection};
use sharedos_grading::vocab::progress::{Progress, RunStart};
use sharedos_grading::vocab::{CellKey, CellStatus};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Where each cell of the manifest is.
fn manifest_cells(manifest: &Manifest) -> BTreeMap<CellKey, (String, &Cell)> {
    let mut cells = BTreeMap::new();
    for (r, row) in manifest.rows.iter().enumerate() {
        for (c, cell) in row.cells.iter().enumerate() {
            cells.insert(row.key_of(cell), (format!("/rows/{r}/cells/{c}"), cell));
        }
    }
    cells
}

/// Grades every line again; returns how many were graded.
pub fn check_verdicts(
    manifest: &Manifest,
    suite: &Suite,
    lines: &[EvidenceLine],
    progress: Option<&dyn Progress>,
    failures: &mut Vec<Failure>,
) -> usize {
    let specs = columns(&suite.seats);
    let stated = manifest_cells(manifest);
    let runs = runs_per_cell(lines, progress);
    let mut graded = 0;
    for (index, line) in lines.iter().enumerate() {
        let key = line.key();
        let _shown = progress.map(|progress| Shown::start(progress, &key, line, &runs));
        let place = |pointer: &str| Place::line(EVIDENCE_FILE, index + 1, pointer);
        let spec = specs.iter().find(|s| s.id == line.column);
        let (Ok((_, condition, script)), Some(spec)) = (locate(suite, &key), spec) else {
            failures.push(Failure::ExtraCell { place: place(""), cell: key.trial_name() });
            continue;
        };
        let limits = spec.kind.limits(script, condition).grading;
        let rules = GradingRules {
            column_id: &line.column,
            script,
            expect_turn: condition.expect_turn.as_ref(),
            limits: &limits,
            messaging: condition.world.messaging.as_ref(),
        };
        let Some(again) = grade_cell(&line.grading, rules) else {
            let expected = "a run cell's records (it has none)".to_string();
            failures.push(Failure::Unparsable { place: place("/grading/records"), expected });
            continue;
        };
        graded += 1;
        if let Some(failure) = differ(&again.cell, &line.cell, place("/cell"), &key) {
            failures.push(failure);
        }
        // The manifest shows a repeated cell's first run, with every run's
        // verdict beside it (checked by `check_repeats`).
        if let Some((pointer, cell)) = stated.get(&key).filter(|_| line.repeat.is_none()) {
            let shown = Cell { repeats: None, ..(*cell).clone() };
            if let Some(failure) = differ(&again.cell, &shown, Place::at(MANIFEST_FILE, pointer.clone()), &key) {
                failures.push(failure);
            }
        }
    }
    graded
}

/// The first field in which the stated cell is not the graded one.
fn differ(graded: &Cell, stated: &Cell, mut place: Place, key: &CellKey) -> Option<Failure> {
    if graded == stated {
        return None;
    }
    let (Ok(Value::Object(graded)), Ok(Value::Object(stated))) =
        (serde_json::to_value(graded), serde_json::to_value(stated))
    else {
        return None;
    };
    let fields: BTreeSet<&String> = graded.keys().chain(stated.keys()).collect();
    let field = fields.into_iter().find(|f| graded.get(*f) != stated.get(*f))?;
    let shown = |value: Option<&Value>| value.map_or_else(|| "nothing".to_string(), Value::to_string);
    place.pointer = format!("{}/{field}", place.pointer);
    Some(Failure::Verdict {
        place,
        cell: key.trial_name(),
        expected: shown(graded.get(field)),
        found: shown(stated.get(field)),
    })
}

/// Each repeated cell's runs are numbered 1 to K, once each, and the
/// manifest's repeats are the ones its runs' verdicts give; a cell that
/// ran once states none.
pub fn check_repeats(manifest: &Manifest, lines: &[EvidenceLine], failures: &mut Vec<Failure>) {
    let mut runs: BTreeMap<CellKey, Vec<(u32, CellStatus)>> = BTreeMap::new();
    for line in lines {
        runs.entry(line.key()).or_default().push((line.repeat.unwrap_or(1), line.cell.status));
    }
    let stated = manifest_cells(manifest);
    for (key, mut numbered) in runs {
        numbered.sort_by_key(|(number, _)| *number);
        let Some((pointer, cell)) = stated.get(&key) else { continue };
        let place = Place::at(MANIFEST_FILE, format!("{pointer}/repeats"));
        let numbers: Vec<u32> = numbered.iter().map(|(number, _)| *number).collect();
        if !numbers.iter().copied().eq(1..=u32::try_from(numbers.len()).unwrap_or(u32::MAX)) {
            failures.push(Failure::Summary {
                place: Place::file(EVIDENCE_FILE),
                what: format!("the runs of {}", key.trial_name()),
                expected: "runs numbered from 1, once each".to_string(),
                found: format!("runs {numbers:?}"),
            });
            continue;
        }
        let expected = Repeats::of_runs(numbered.iter().map(|(_, s)| *s).collect());
        if cell.repeats != expected {
            let shown = |r: Option<&Repeats>| {
                r.map_or_else(|| "one run".to_string(), |r| format!("{} of {} passed", r.passes, r.runs))
            };
            let (expected, found) = (shown(expected.as_ref()), shown(cell.repeats.as_ref()));
            // Equal counts that still differ differ in a status or a bound.
            let found = if expected == found { format!("{found}, with other statuses or bounds") } else { found };
            failures.push(Failure::Summary {
                place,
                what: format!("the repeats of {}", key.trial_name()),
                expected,
                found,
            });
        }
    }
}

/// Every cell of the suite for the Adversary and the `certified` column
/// (see [`crate::claims::certified_column`]) is there, and nothing else
/// is; declared cells are the ones the suite declares. A partial bundle
/// holds its `shard`'s rows, and only those.
pub fn check_complete(
    certified: &str,
    shard: Option<Shard>,
    manifest: &Manifest,
    suite: &Suite,
    lines: &[EvidenceLine],
    failures: &mut Vec<Failure>,
) {
    let mut ids = vec![ADVERSARY_ID.to_string()];
    if certified != ADVERSARY_ID {
        ids.push(certified.to_string());
    }
    let stated_ids: Vec<String> = manifest.columns.iter().map(|c| c.id.clone()).collect();
    if stated_ids != ids {
        failures.push(Failure::Mismatch {
            place: Place::at(MANIFEST_FILE, "/columns"),
            what: "the Adversary column and the certified one".to_string(),
            expected: ids.join(", "),
            found: stated_ids.join(", "),
        });
    }
    if let Some(shard) = shard.filter(|s| !s.is_valid()) {
        failures.push(Failure::Unparsable {
            place: Place::at(STATEMENT_FILE, "/predicate/shard"),
            expected: format!("a shard I/N with 1 <= I <= N (found {shard})"),
        });
        return;
    }
    let planned = plan(suite, &Selection { columns: ids, shard, ..Selection::default() });
    let stated = manifest_cells(manifest);
    let evidenced: BTreeSet<CellKey> = lines.iter().map(EvidenceLine::key).collect();
    let mut expected_keys = BTreeSet::new();
    for cell in &planned {
        expected_keys.insert(cell.key.clone());
        let name = cell.key.trial_name();
        match (&cell.declared, stated.get(&cell.key)) {
            (_, None) => failures.push(Failure::MissingCell { place: Place::at(MANIFEST_FILE, "/rows"), cell: name }),
            (Some(declared), Some((pointer, found))) => {
                if let Some(failure) = differ(declared, found, Place::at(MANIFEST_FILE, pointer.clone()), &cell.key) {
                    failures.push(failure);
                }
            }
            (None, Some(_)) if !evidenced.contains(&cell.key) => {
                failures.push(Failure::MissingCell { place: Place::file(EVIDENCE_FILE), cell: name });
            }
            (None, Some(_)) => {}
        }
    }
    for (key, (pointer, _)) in &stated {
        if !expected_keys.contains(key) {
            failures
                .push(Failure::ExtraCell { place: Place::at(MANIFEST_FILE, pointer.clone()), cell: key.trial_name() });
        }
    }
    for (index, line) in lines.iter().enumerate() {
        let key = line.key();
        let run = planned.iter().any(|p| p.key == key && p.declared.is_none());
        if !run && locate(suite, &key).is_ok() {
            failures
                .push(Failure::ExtraCell { place: Place::line(EVIDENCE_FILE, index + 1, ""), cell: key.trial_name() });
        }
    }
}

/// The manifest's reason-code coverage is the one its own cells give:
/// a coverage edited to hide an unexercised code is caught here.
pub fn check_coverage(manifest: &Manifest, failures: &mut Vec<Failure>) {
    let expected = reason_code_coverage(&manifest.columns, &manifest.rows);
    let what = "the reason-code coverage of the manifest's cells";
    let index =
        (0..expected.len().max(manifest.reason_codes.len())).find(|&i| expected.get(i) != manifest.reason_codes.get(i));
    let Some(i) = index else { return };
    let shown = |entry: Option<&CodeCoverage>| match entry {
        None => "no entry".to_string(),
        Some(c) if c.rows.is_empty() => match &c.unreachable {
            Some(_) => format!("`{}` declared unreachable", c.code),
            None => format!("`{}` in no row", c.code),
        },
        Some(c) => format!("`{}` in rows {} and columns {}", c.code, c.rows.len(), c.columns.len()),
    };
    failures.push(Failure::Summary {
        place: Place::at(MANIFEST_FILE, format!("/reasonCodes/{i}")),
        what: what.to_string(),
        expected: shown(expected.get(i)),
        found: shown(manifest.reason_codes.get(i)),
    });
}

/// How long grading one cell again may be expected to take.
const REGRADE_EXPECTED: Duration = Duration::from_secs(5);

/// Each cell's number of runs, when someone watches (and the work told
/// them): each column's cells in the order they come, and every line.
fn runs_per_cell(lines: &[EvidenceLine], progress: Option<&dyn Progress>) -> BTreeMap<CellKey, u32> {
    let Some(progress) = progress else { return BTreeMap::new() };
    let mut runs: BTreeMap<CellKey, u32> = BTreeMap::new();
    let mut columns: Vec<(String, u64)> = Vec::new();
    for line in lines {
        let count = runs.entry(line.key()).or_default();
        *count += 1;
        if *count > 1 {
            continue;
        }
        match columns.iter_mut().find(|(id, _)| *id == line.column) {
            Some((_, cells)) => *cells += 1,
            None => columns.push((line.column.clone(), 1)),
        }
    }
    progress.begin(&columns, u64::try_from(lines.len()).unwrap_or(u64::MAX));
    runs
}

/// One line being graded again, shown to whoever watches until dropped.
struct Shown<'a> {
    progress: &'a dyn Progress,
    key: CellKey,
    run: u32,
    status: CellStatus,
}

impl<'a> Shown<'a> {
    fn start(progress: &'a dyn Progress, key: &CellKey, line: &EvidenceLine, runs: &BTreeMap<CellKey, u32>) -> Self {
        let run = line.repeat.unwrap_or(1);
        let of = runs.get(key).copied().unwrap_or(1);
        progress.started(RunStart { key, run, runs: of, expected: REGRADE_EXPECTED });
        Shown { progress, key: key.clone(), run, status: line.cell.status }
    }
}

impl Drop for Shown<'_> {
    fn drop(&mut self) {
        self.progress.finished(&self.key, self.run, self.status);
    }
}
