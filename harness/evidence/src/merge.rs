//! `merge`: the partial bundles of a sharded certification (`certify
//! --shard I/N`) joined into the one bundle an unsharded `certify` writes.
//! The manifest is assembled from the shards' cells through the path a run
//! takes ([`sharedos_grading::assemble`]), so it and the evidence are the
//! unsharded run's byte for byte; the statement is made anew over them.
//!
//! Every part is checked before anything is joined: its files match the
//! digests its statement lists, it is a shard, it states what the others
//! state (harness, rules, hashes, column, suite files, shard count), and it
//! holds exactly its own rows. Gaps and overlaps are refused by index.

use crate::bundle::{
    read_regular, BundleFile, EvidenceLine, WriteError, EVIDENCE_FILE, MANIFEST_FILE, STATEMENT_FILE, SUITE_DIR,
};
use crate::dsse::SigningKey;
use crate::seal::{seal, Unwritten};
use crate::statement::{column_cells, runtime_of, summary_of, Claim, Statement};
use sharedos_conformance_metadata::failure::Failure;
use sharedos_conformance_metadata::repeats::Repeats;
use sharedos_grading::assemble::{assemble, AssembleError, Assembly};
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::identity::case_set::case_set_hash;
use sharedos_grading::input::built_in_column::ADVERSARY_ID;
use sharedos_grading::input::loader::{load_suite, Suite};
use sharedos_grading::output::manifest::{evidence_of, manifest_json, CellEvidence};
use sharedos_grading::plan::shard::Shard;
use sharedos_grading::plan::{plan, Selection};
use sharedos_grading::vocab::{CellKey, CellStatus};
use sharedos_model::canonical::CanonicalError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What to merge, and where to write it.
#[derive(Debug, Clone, Copy)]
pub struct MergeRequest<'a> {
    /// The partial bundles, in any order: folders or `.tar` archives.
    pub parts: &'a [PathBuf],
    /// The bundle to write (a folder, or an archive when it ends in `.tar`).
    pub out: &'a Path,
    /// The key to sign the merged statement with, if any.
    pub sign_key: Option<&'a SigningKey>,
}

/// A merged bundle, written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Merged {
    /// The certified column.
    pub column: String,
    /// How many shards were joined.
    pub shards: u32,
    /// The certified column's cells by status.
    pub summary: BTreeMap<String, usize>,
    /// Its cells and their verdicts, in manifest order.
    pub cells: Vec<(CellKey, CellStatus)>,
    /// Files written.
    pub files: usize,
}

/// Why shards could not be merged. Each names the part at fault.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No part was named.
    #[error("merge: name the partial bundles to join")]
    NoParts,
    /// A part is not a readable bundle.
    #[error("read the bundle {}: {detail}", part.display())]
    Unreadable {
        /// The part.
        part: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// A part's files do not match its statement.
    #[error("merge {}: the bundle is damaged: {failure}", part.display())]
    Damaged {
        /// The part.
        part: PathBuf,
        /// The first thing wrong.
        failure: Box<Failure>,
    },
    /// A part is a whole bundle, not a shard.
    #[error("merge {}: it is a whole bundle, not a shard (certify it with --shard I/N)", part.display())]
    NotAShard {
        /// The part.
        part: PathBuf,
    },
    /// A part states something the first part does not.
    #[error(transparent)]
    Differs(Box<Disagreement>),
    /// Shards of the count are missing.
    #[error(
        "merge: shard {} of {count} is missing (a gap: the merged bundle would not cover the suite)",
        list(missing)
    )]
    Gap {
        /// The missing indexes.
        missing: Vec<u32>,
        /// The shard count.
        count: u32,
    },
    /// Two parts are the same shard.
    #[error("merge: {} and {} are both shard {shard} (an overlap)", first.display(), second.display())]
    Overlap {
        /// The shard.
        shard: Shard,
        /// One part.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// A part's cells are not its shard's.
    #[error("merge {}: shard {shard} {problem} cell {cell}", part.display())]
    Misplaced {
        /// The part.
        part: PathBuf,
        /// Its shard.
        shard: Shard,
        /// `holds the foreign` or `lacks the`.
        problem: &'static str,
        /// `case/condition/column`.
        cell: String,
    },
    /// The manifest could not be assembled.
    #[error(transparent)]
    Assemble(#[from] AssembleError),
    /// A value could not be written as JSON (a harness bug).
    #[error(transparent)]
    Canonical(#[from] CanonicalError),
    /// The merged bundle could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// What a part states that the first part does not.
#[derive(Debug, thiserror::Error)]
#[error("merge {}: shard {shard} states {what} {found}, but {} (shard {first_shard}) states {expected}", part.display(), first.display())]
pub struct Disagreement {
    /// The part.
    pub part: PathBuf,
    /// Its shard.
    pub shard: Shard,
    /// What differs.
    pub what: String,
    /// The first part's value.
    pub expected: String,
    /// This part's value.
    pub found: String,
    /// The first part.
    pub first: PathBuf,
    /// Its shard.
    pub first_shard: Shard,
}

fn list(indexes: &[u32]) -> String {
    indexes.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// One part, read and checked on its own.
struct Part {
    path: PathBuf,
    dir: PathBuf,
    statement: Statement,
    shard: Shard,
    /// Each evidence line, parsed, with its text as written.
    lines: Vec<(EvidenceLine, String)>,
    /// Kept alive while the part is read: an archive's unpacked folder.
    _unpacked: Option<tempfile::TempDir>,
}

/// Merges the parts and writes the merged bundle: [`prepare`], then
/// [`Unwritten::write`].
///
/// # Errors
/// See [`MergeError`]; nothing is written at `out` on error.
pub fn merge(request: MergeRequest<'_>) -> Result<Merged, MergeError> {
    Ok(prepare(request)?.write()?)
}

/// A merged bundle made in memory, not yet written.
pub type Prepared = Unwritten<Merged>;

/// Reads and checks the parts and makes the merged bundle in memory.
///
/// # Errors
/// See [`MergeError`]; nothing is written.
pub fn prepare(request: MergeRequest<'_>) -> Result<Prepared, MergeError> {
    if request.out.symlink_metadata().is_ok() {
        return Err(WriteError::Exists(request.out.to_path_buf()).into());
    }
    let mut parts = request.parts.iter().map(|p| read_part(p)).collect::<Result<Vec<Part>, MergeError>>()?;
    let first = parts.first().ok_or(MergeError::NoParts)?;
    for part in &parts {
        check_same(first, part)?;
    }
    parts.sort_by_key(|p| p.shard.index);
    check_partition(&parts)?;
    let first = parts.first().ok_or(MergeError::NoParts)?;
    let suite = load_suite(&first.dir.join(SUITE_DIR))
        .map_err(|e| MergeError::Unreadable { part: first.path.clone(), detail: e.to_string() })?;
    let column_id = first.statement.predicate.column.id.clone();
    let columns = if column_id == ADVERSARY_ID {
        vec![column_id.clone()]
    } else {
        vec![ADVERSARY_ID.to_string(), column_id.clone()]
    };
    for part in &parts {
        check_rows(&suite, &columns, part)?;
    }
    let (files, cells) = merged_files(&parts, &suite, columns, request.sign_key)?;
    let merged = Merged {
        column: column_id,
        shards: u32::try_from(parts.len()).unwrap_or(u32::MAX),
        summary: summary_of(&cells),
        cells,
        files: files.len(),
    };
    Ok(Unwritten::new(files, request.out, merged))
}

/// Reads one part: its statement, its files checked against their
/// digests, and its evidence lines.
fn read_part(path: &Path) -> Result<Part, MergeError> {
    let unreadable = |detail: String| MergeError::Unreadable { part: path.to_path_buf(), detail };
    let unpacked = if crate::archive::is_archive(path) && path.is_file() {
        Some(crate::archive::unpack(path).map_err(|e| unreadable(e.detail))?)
    } else {
        None
    };
    let dir = unpacked.as_ref().map_or_else(|| path.to_path_buf(), |u| u.path().to_path_buf());
    let bytes = read_regular(&dir.join(STATEMENT_FILE)).map_err(|e| unreadable(format!("{STATEMENT_FILE}: {e}")))?;
    let statement: Statement = serde_json::from_slice(&bytes)
        .map_err(|e| unreadable(format!("{STATEMENT_FILE}: expected an in-toto Statement v1 ({e})")))?;
    let mut failures = Vec::new();
    crate::verify::check_subjects(&dir, &statement, &mut failures).map_err(|e| unreadable(e.to_string()))?;
    if let Some(failure) = failures.into_iter().next() {
        return Err(MergeError::Damaged { part: path.to_path_buf(), failure: Box::new(failure) });
    }
    let shard = statement.predicate.shard.ok_or_else(|| MergeError::NotAShard { part: path.to_path_buf() })?;
    let text = read_regular(&dir.join(EVIDENCE_FILE))
        .map_err(|e| e.to_string())
        .and_then(|b| String::from_utf8(b).map_err(|e| e.to_string()))
        .map_err(|e| unreadable(format!("{EVIDENCE_FILE}: {e}")))?;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let parsed: EvidenceLine = serde_json::from_str(line)
            .map_err(|e| unreadable(format!("{EVIDENCE_FILE} line {}: one cell's evidence ({e})", index + 1)))?;
        lines.push((parsed, line.to_string()));
    }
    Ok(Part { path: path.to_path_buf(), dir, statement, shard, lines, _unpacked: unpacked })
}

/// Everything `part` states that must be the same in every part: what
/// ran, under which rules, over which suite, split how.
fn check_same(first: &Part, part: &Part) -> Result<(), MergeError> {
    let facts = |p: &Part| {
        let c = &p.statement.predicate;
        vec![
            ("the harness", format!("{} {}", c.harness.name, c.harness.version)),
            ("the rules version", c.rules_version.clone()),
            ("the judge version", c.judge_version.clone()),
            ("the hash scheme", c.hash_scheme.clone()),
            ("the case-set hash", c.case_set_hash.clone()),
            ("the world-set hash", c.world_set_hash.clone()),
            ("the certified column", format!("{} ({})", c.column.id, c.column.label)),
            ("the shard count", p.shard.count.to_string()),
            ("the runs per cell", c.repeat.unwrap_or(1).to_string()),
        ]
    };
    let differs = |what: String, expected: String, found: String| {
        MergeError::Differs(Box::new(Disagreement {
            part: part.path.clone(),
            shard: part.shard,
            what,
            expected,
            found,
            first: first.path.clone(),
            first_shard: first.shard,
        }))
    };
    for ((what, expected), (_, found)) in facts(first).into_iter().zip(facts(part)) {
        if expected != found {
            return Err(differs(what.to_string(), expected, found));
        }
    }
    // The suite and the seat as bundled, file by file: a seat file that
    // differs is another runtime, whatever its column is called.
    let suite_files = |p: &Part| -> BTreeMap<String, String> {
        let prefix = format!("{SUITE_DIR}/");
        let listed = p.statement.subject.iter().filter(|s| s.name.starts_with(&prefix));
        listed.map(|s| (s.name.clone(), s.sha256().unwrap_or_default().to_string())).collect()
    };
    let (ours, theirs) = (suite_files(first), suite_files(part));
    let names: std::collections::BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    for name in names {
        let (expected, found) = (ours.get(name), theirs.get(name));
        if expected != found {
            let shown = |d: Option<&String>| d.map_or_else(|| "no such file".to_string(), |d| format!("sha256 {d}"));
            return Err(differs(format!("the suite file {name} as"), shown(expected), shown(found)));
        }
    }
    Ok(())
}

/// Every index from 1 to the count, once each.
fn check_partition(parts: &[Part]) -> Result<(), MergeError> {
    let count = parts.first().map_or(0, |p| p.shard.count);
    for pair in parts.windows(2) {
        if let [a, b] = pair {
            if a.shard == b.shard {
                return Err(MergeError::Overlap { shard: a.shard, first: a.path.clone(), second: b.path.clone() });
            }
        }
    }
    let missing: Vec<u32> = (1..=count).filter(|i| !parts.iter().any(|p| p.shard.index == *i)).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(MergeError::Gap { missing, count })
    }
}

/// The part holds the run cells of its shard's rows, and no other.
fn check_rows(suite: &Suite, columns: &[String], part: &Part) -> Result<(), MergeError> {
    let selection = Selection { columns: columns.to_vec(), shard: Some(part.shard), ..Selection::default() };
    let expected: Vec<CellKey> =
        plan(suite, &selection).into_iter().filter(|p| p.declared.is_none()).map(|p| p.key).collect();
    let held: std::collections::BTreeSet<CellKey> = part.lines.iter().map(|(line, _)| line.key()).collect();
    let misplaced = |problem, cell: &CellKey| MergeError::Misplaced {
        part: part.path.clone(),
        shard: part.shard,
        problem,
        cell: cell.trial_name(),
    };
    if let Some(foreign) = held.iter().find(|key| !expected.contains(key)) {
        return Err(misplaced("holds the foreign", foreign));
    }
    match expected.iter().find(|key| !held.contains(*key)) {
        Some(lacking) => Err(misplaced("lacks the", lacking)),
        None => Ok(()),
    }
}

/// A column's cells and their verdicts, in manifest order.
type ColumnCells = Vec<(CellKey, CellStatus)>;

/// The merged bundle's files (manifest, evidence, the suite as the first
/// part bundled it, and a statement over them), and the certified
/// column's cells with their verdicts.
fn merged_files(
    parts: &[Part],
    suite: &Suite,
    columns: Vec<String>,
    key: Option<&SigningKey>,
) -> Result<(Vec<BundleFile>, ColumnCells), MergeError> {
    // Each run cell's lines: its first run's, then a repeated cell's later
    // runs in order.
    let mut lines: BTreeMap<CellKey, Vec<&(EvidenceLine, String)>> = BTreeMap::new();
    for entry in parts.iter().flat_map(|p| &p.lines) {
        lines.entry(entry.0.key()).or_default().push(entry);
    }
    for runs in lines.values_mut() {
        runs.sort_by_key(|(line, _)| line.repeat);
    }
    let selection = Selection { columns, ..Selection::default() };
    let mut cells = Vec::new();
    let mut evidence = Vec::new();
    let mut evidence_text = String::new();
    let mut world_hashes = BTreeMap::new();
    let first = parts.first().ok_or(MergeError::NoParts)?;
    let certified = &first.statement.predicate.column;
    // Who ran the column: its first record in plan order, as `certify` takes it.
    let mut runtime = None;
    for planned in plan(suite, &selection) {
        if let Some(declared) = planned.declared {
            cells.push((planned.key, declared));
            continue;
        }
        // Every run cell is some part's: `check_rows` saw to it.
        let Some(runs) = lines.get(&planned.key) else { continue };
        for (line, text) in runs {
            evidence.push(CellEvidence { repeat: line.repeat, ..evidence_of(&planned.key, &line.grading.records)? });
            evidence_text.push_str(text);
            evidence_text.push('\n');
        }
        let Some((line, _)) = runs.first() else { continue };
        if let Some(record) = line.grading.records.first() {
            world_hashes.insert((line.case.as_str(), line.condition.as_str()), record.experiment.world_hash.as_str());
            if runtime.is_none() && line.column == certified.id {
                runtime = Some(record);
            }
        }
        let repeats = Repeats::of_runs(runs.iter().map(|(line, _)| line.cell.status).collect());
        cells.push((planned.key, Cell { repeats, ..line.cell.clone() }));
    }
    let case_set_hash = case_set_hash(suite)?;
    let manifest = assemble(Assembly { suite, selection: &selection, case_set_hash, cells, evidence, world_hashes })?;
    let mut files = vec![
        BundleFile { name: MANIFEST_FILE.to_string(), bytes: manifest_json(&manifest)?.into_bytes() },
        BundleFile { name: EVIDENCE_FILE.to_string(), bytes: evidence_text.into_bytes() },
    ];
    files.extend(suite_files(first)?);
    let claim = Claim {
        manifest: &manifest,
        column_id: &certified.id,
        label: &certified.label,
        runtime: runtime_of(runtime),
        // Where shard 1 ran: the shards' statements agree on everything
        // graded, and a merge runs nothing of its own.
        environment: first.statement.predicate.environment.clone(),
        shard: None,
        repeat: first.statement.predicate.repeat,
    };
    let cells = column_cells(&manifest, &certified.id);
    Ok((seal(files, claim, key).map_err(|e| CanonicalError(e.to_string()))?, cells))
}

/// The suite's files as the first part bundled them (every part bundled
/// the same ones: `check_same` compared their digests).
fn suite_files(first: &Part) -> Result<Vec<BundleFile>, MergeError> {
    let prefix = format!("{SUITE_DIR}/");
    let mut files = Vec::new();
    for subject in first.statement.subject.iter().filter(|s| s.name.starts_with(&prefix)) {
        let bytes = read_regular(&first.dir.join(&subject.name)).map_err(|e| MergeError::Unreadable {
            part: first.path.clone(),
            detail: format!("{}: {e}", subject.name),
        })?;
        files.push(BundleFile { name: subject.name.clone(), bytes });
    }
    Ok(files)
}
