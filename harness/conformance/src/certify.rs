//! `certify`: one column over the whole canonical suite, beside the
//! Adversary column, written as a bundle (see [`sharedos_evidence::bundle`]).

use crate::suite::event::{repeat_totals, RepeatTotals};
use crate::suite::matrix::RunSettings;
use crate::suite::report::{run_and_report, Report, ReportError};
use serde_json::Value;
use sharedos_conformance_metadata::repeats::Outcome;
use sharedos_evidence::bundle::{BundleFile, EvidenceLine, WriteError, EVIDENCE_FILE, MANIFEST_FILE, SUITE_DIR};
use sharedos_evidence::dsse::SigningKey;
use sharedos_evidence::environment::Environment;
use sharedos_evidence::seal::{seal, Unwritten};
use sharedos_evidence::statement::{column_cells, runtime_of, summary_of, Claim};
use sharedos_grading::column::columns;
use sharedos_grading::input::built_in_column::ADVERSARY_ID;
use sharedos_grading::input::error::LoadError;
use sharedos_grading::input::loader::{suite_documents, Suite};
use sharedos_grading::input::seat::SEATS_DIR;
use sharedos_grading::plan::shard::Shard;
use sharedos_grading::plan::{plan, Selection};
use sharedos_grading::vocab::progress::Progress;
use sharedos_grading::vocab::{CellKey, CellStatus};
use sharedos_model::canonical::{canonical_string, CanonicalError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What to certify, and where to write it.
#[derive(Debug, Clone, Copy)]
pub struct CertifyRequest<'a> {
    /// The suite, with any extra seat added.
    pub suite: &'a Suite,
    /// The folder it was loaded from: its documents and its seats' files
    /// (when their paths are relative) are read from there.
    pub root: &'a Path,
    /// The column to certify.
    pub column_id: &'a str,
    /// Worker threads.
    pub jobs: usize,
    /// The key to sign the statement with, if any.
    pub sign_key: Option<&'a SigningKey>,
    /// The bundle to write: a folder, or an archive when it ends in `.tar`.
    pub out: &'a Path,
    /// Only this part of the rows: a partial bundle, for `merge`.
    pub shard: Option<Shard>,
    /// Runs of each cell of a column that does not run once (`--repeat`).
    pub repeat: u32,
    /// Told of each run of a cell as it starts and ends.
    pub progress: Option<&'a dyn Progress>,
}

/// A written bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Certified {
    /// The certified column's cells by status.
    pub summary: BTreeMap<String, usize>,
    /// Its cells, in manifest order: each one's verdict (its first run's)
    /// and what its runs come to under the one rule (`Cell::outcome`),
    /// which decides the exit code.
    pub cells: Vec<(CellKey, CellStatus, Outcome)>,
    /// Its repeated cells, counted, when it ran more than once.
    pub repeated: Option<RepeatTotals>,
    /// Files written.
    pub files: usize,
}

/// Why a bundle could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CertifyError {
    /// The column is not one of the suite's.
    #[error("certify `{column}`: no such column{hint}", column = .0, hint = seat_hint(.0))]
    UnknownColumn(String),
    /// A suite file could not be read again to be bundled.
    #[error("read {}: {source}", path.display())]
    Read {
        /// Which.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The suite's folders could not be listed.
    #[error(transparent)]
    Suite(#[from] LoadError),
    /// A cell could not be run (a harness bug).
    #[error(transparent)]
    Run(#[from] ReportError),
    /// A value could not be written as canonical JSON (a harness bug).
    #[error(transparent)]
    Canonical(#[from] CanonicalError),
    /// The bundle could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// What to add when an unknown column is a seat's: its seat file, which
/// alone brings the column into the suite.
fn seat_hint(column: &str) -> String {
    match column.split_once(':') {
        Some(("process" | "mcp", name)) => {
            format!("; a seat's column comes with its seat file: add `--seat FILE` for the seat named `{name}`")
        }
        _ => String::new(),
    }
}

/// Runs the certification and writes its bundle: [`prepare`], then
/// [`Unwritten::write`].
///
/// # Errors
/// See [`CertifyError`]; nothing is written at `out` on error.
pub fn certify(request: CertifyRequest<'_>) -> Result<Certified, CertifyError> {
    Ok(prepare(request)?.write()?)
}

/// The cells a certification of `column_id` runs: the Adversary's and the
/// column's, over the whole suite or `shard` of it.
#[must_use]
pub fn certified_selection(column_id: &str, shard: Option<Shard>) -> Selection {
    let mut columns = vec![ADVERSARY_ID.to_string()];
    if column_id != ADVERSARY_ID {
        columns.push(column_id.to_string());
    }
    Selection { columns, shard, ..Selection::default() }
}

/// A certification made in memory, not yet written.
pub type Prepared = Unwritten<Certified>;

/// Runs the certification and makes its bundle in memory (see
/// [`Unwritten`]).
///
/// # Errors
/// See [`CertifyError`]; nothing is written.
pub fn prepare(request: CertifyRequest<'_>) -> Result<Prepared, CertifyError> {
    let column = columns(&request.suite.seats)
        .into_iter()
        .find(|c| c.id == request.column_id)
        .ok_or_else(|| CertifyError::UnknownColumn(request.column_id.to_string()))?;
    if request.out.exists() {
        return Err(WriteError::Exists(request.out.to_path_buf()).into());
    }
    // Every file the bundle carries is read before the matrix runs: one
    // that cannot be read fails in a moment, not after the whole run.
    let suite = suite_files(&request, &column.id)?;
    let selection = certified_selection(&column.id, request.shard);
    let planned = plan(request.suite, &selection);
    let settings = RunSettings {
        jobs: request.jobs,
        golden: None,
        keep_grading: true,
        repeat: request.repeat,
        progress: request.progress,
    };
    let report = run_and_report(request.suite, &selection, &planned, settings)?;
    let mut files = vec![
        BundleFile { name: MANIFEST_FILE.to_string(), bytes: report.manifest_json.clone().into_bytes() },
        BundleFile { name: EVIDENCE_FILE.to_string(), bytes: evidence_lines(&report)?.into_bytes() },
    ];
    files.extend(suite);
    let summary = summary_of(&column_cells(&report.manifest, &column.id));
    let claim = Claim {
        manifest: &report.manifest,
        column_id: &column.id,
        label: &column.label,
        runtime: column_runtime(&report, &column.id),
        environment: Environment::current(),
        shard: request.shard,
        repeat: (request.repeat > 1).then_some(request.repeat),
    };
    let files = seal(files, claim, request.sign_key).map_err(|e| CanonicalError(e.to_string()))?;
    let cells_of_column = report.manifest.rows.iter().flat_map(|row| &row.cells).filter(|c| c.column_id == column.id);
    let repeated = repeat_totals(cells_of_column).remove(&column.id);
    let cells = report
        .manifest
        .rows
        .iter()
        .flat_map(|row| row.cells.iter().map(move |cell| (row, cell)))
        .filter(|(_, cell)| cell.column_id == column.id)
        .map(|(row, cell)| (row.key_of(cell), cell.status, cell.outcome()))
        .collect();
    let certified = Certified { summary, cells, repeated, files: files.len() };
    Ok(Unwritten::new(files, request.out, certified))
}

/// Every run cell's evidence, one canonical line each, in the manifest's
/// order (rows as declared, columns in order), a repeated cell's later
/// runs after its first: the order the prompt-set hashes are computed in.
fn evidence_lines(report: &Report) -> Result<String, CanonicalError> {
    let mut text = String::new();
    for run in &report.cells {
        for (cell, evidence, grading) in run.runs() {
            let Some(grading) = grading.cloned() else {
                return Err(CanonicalError(format!("cell {} kept no grading evidence", run.key.trial_name())));
            };
            let line = EvidenceLine {
                case: run.key.case.clone(),
                condition: run.key.condition.clone(),
                column: run.key.column.clone(),
                cell: cell.clone(),
                record_hashes: evidence.turns.iter().map(|t| t.record_hash.clone()).collect(),
                grading,
                repeat: evidence.repeat,
            };
            text.push_str(&canonical_string(&line)?);
            text.push('\n');
        }
    }
    Ok(text)
}

/// The suite's documents, and the certified seat's file. A committed
/// seat's path is relative to the suite's root, as the suite was loaded;
/// an absolute one (a seat file named on the command line) stays as it is.
fn suite_files(request: &CertifyRequest<'_>, column_id: &str) -> Result<Vec<BundleFile>, CertifyError> {
    let read = |path: PathBuf| std::fs::read(&path).map_err(|source| CertifyError::Read { path, source });
    let mut files = Vec::new();
    for relative in suite_documents(request.root)? {
        let parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let bytes = read(request.root.join(&relative))?;
        files.push(BundleFile { name: format!("{SUITE_DIR}/{}", parts.join("/")), bytes });
    }
    if let Some(seat) = request.suite.seats.iter().find(|s| s.column_id == column_id) {
        let name = seat.file.file_name().map_or_else(|| "seat.json".into(), |n| n.to_string_lossy().into_owned());
        files.push(BundleFile {
            name: format!("{SUITE_DIR}/{SEATS_DIR}/{name}"),
            bytes: read(request.root.join(&seat.file))?,
        });
    }
    Ok(files)
}

/// The runtime as the certified column's first record names it.
fn column_runtime(report: &Report, column_id: &str) -> Value {
    let record = report
        .cells
        .iter()
        .filter(|run| run.key.column == column_id)
        .find_map(|run| run.grading.as_ref().and_then(|g| g.records.first()));
    runtime_of(record)
}
