//! `merge`: the partial bundles of a sharded certification (`certify
//! --shard I/N`) joined into the one bundle an unsharded `certify` writes.
//! The manifest is assembled from the shards' cells through the path a run
//! takes ([`sharedos_grading::assemble`]), so it and the evidence are the
//! unsharded run's byte for byte; the statement is made anew over them.
//!
//! Every part is checked before anything is joined, as `verify` checks a
//! bundle (digests, hashes, every verdict graded again, its own rows and
//! no others, its repeats, a shard index within its count), then against
//! the others: it states what they state (harness, rules, hashes, column,
//! suite files, shard count). Gaps and overlaps are refused by index.
//! Nothing costs more for a larger stated count: the gap is found and
//! named from the indexes of the parts given.

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
    /// A part does not verify.
    #[error("merge {}: it does not verify: {failure}{}", part.display(), more_failures(*more, part))]
    Damaged {
        /// The part.
        part: PathBuf,
        /// The first thing wrong.
        failure: Box<Failure>,
        /// How many other things are wrong.
        more: usize,
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
    #[error("merge: {} (a gap: the merged bundle would not cover the suite)", missing_shards(missing, *count))]
    Gap {
        /// The missing indexes, as inclusive ranges in order.
        missing: Vec<(u32, u32)>,
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

fn more_failures(more: usize, part: &Path) -> String {
    match more {
        0 => String::new(),
        _ => format!(" (and {more} more: `verify {}` lists them)", part.display()),
    }
}

/// How many ranges of missing shards an error names before it counts the rest.
const RANGES_SHOWN: usize = 8;

/// The missing shards in words, at most [`RANGES_SHOWN`] ranges long.
fn missing_shards(missing: &[(u32, u32)], count: u32) -> String {
    let total: u64 = missing.iter().map(|(low, high)| u64::from(high - low) + 1).sum();
    let mut shown: Vec<String> = Vec::new();
    for (low, high) in missing.iter().take(RANGES_SHOWN) {
        match high - low {
            0 => shown.push(low.to_string()),
            1 => shown.extend([low.to_string(), high.to_string()]),
            _ => shown.push(format!("{low}-{high}")),
        }
    }
    if missing.len() > RANGES_SHOWN {
        shown.push(format!("and {} more ranges", missing.len() - RANGES_SHOWN));
    }
    match shown.as_slice() {
        [one] if total == 1 => format!("shard {one} of {count} is missing"),
        [low, high] if total == 2 => format!("shards {low} and {high} of {count} are missing"),
        _ => format!("{total} of the {count} shards are missing: {}", shown.join(", ")),
    }
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
    // As `verify` would check it: a part whose files were edited and
    // their digests made to match still fails here, named.
    let verification = crate::verify::verify_unpacked(&dir, path, unpacked.is_some())
        .map_err(|e| MergeError::Unreadable { part: path.to_path_buf(), detail: e.detail })?;
    let mut failures = verification.failures.into_iter();
    if let Some(failure) = failures.next() {
        return Err(MergeError::Damaged { part: path.to_path_buf(), failure: Box::new(failure), more: failures.len() });
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

/// Every index from 1 to the count, once each (`parts` sorted by index,
/// each index within the count, as `verify` saw to).
fn check_partition(parts: &[Part]) -> Result<(), MergeError> {
    let count = parts.first().map_or(0, |p| p.shard.count);
    for pair in parts.windows(2) {
        if let [a, b] = pair {
            if a.shard == b.shard {
                return Err(MergeError::Overlap { shard: a.shard, first: a.path.clone(), second: b.path.clone() });
            }
        }
    }
    // The ranges between the indexes given: as many as the parts, never
    // as many as the count a part states.
    let mut missing = Vec::new();
    let mut next = 1u64;
    let after_last = u64::from(count) + 1;
    for index in parts.iter().map(|p| u64::from(p.shard.index)).chain([after_last]) {
        if index > next {
            // Both ends are within 1..=count, which is a u32.
            let end = |i: u64| u32::try_from(i).unwrap_or(count);
            missing.push((end(next), end(index - 1)));
        }
        next = index + 1;
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(MergeError::Gap { missing, count })
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
        // Every run cell is some part's: each part verified as holding
        // its shard's rows, and the shards cover every index.
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

#[cfg(test)]
mod tests {
    use super::missing_shards;

    #[test]
    fn missing_shards_read_as_words_and_stay_short() {
        assert_eq!(missing_shards(&[(3, 3)], 3), "shard 3 of 3 is missing");
        assert_eq!(missing_shards(&[(2, 3)], 3), "shards 2 and 3 of 3 are missing");
        assert_eq!(missing_shards(&[(1, 1), (3, 3)], 3), "shards 1 and 3 of 3 are missing");
        assert_eq!(missing_shards(&[(1, 1), (3, 4)], 4), "3 of the 4 shards are missing: 1, 3, 4");
        let many: Vec<(u32, u32)> = (0..1_000).map(|i| (2 * i + 1, 2 * i + 1)).collect();
        let text = missing_shards(&many, 2_000);
        assert_eq!(text, "1000 of the 2000 shards are missing: 1, 3, 5, 7, 9, 11, 13, 15, and 992 more ranges");
    }
}
