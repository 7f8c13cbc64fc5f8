//! What moved between two manifests: first whether their verdicts can be
//! compared at all, in words, then every changed cell, grouped, then a
//! summary per column and family.

use crate::compare::read::{outcome_of, CellAt, ReadCell, ReadManifest, RunCount, Shape, Text};
use crate::compare::significance::{fisher_two_sided, SIGNIFICANCE};
use serde::Serialize;
use sharedos_conformance_metadata::repeats::Outcome;
use sharedos_grading::vocab::CellStatus;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Something that identifies a run and differs between the two.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum Moved {
    /// The hashes were computed differently: equal sets would not hash alike.
    HashScheme {
        /// A's scheme.
        before: String,
        /// B's scheme.
        after: String,
    },
    /// The cases and scripts differ.
    CaseSet {
        /// A's hash.
        before: String,
        /// B's hash.
        after: String,
    },
    /// The worlds differ (or one side states none).
    WorldSet {
        /// A's hash.
        before: Option<String>,
        /// B's hash.
        after: Option<String>,
    },
    /// The grading rules differ.
    Rules {
        /// A's rules, in words.
        before: String,
        /// B's rules, in words.
        after: String,
    },
    /// The harness version differs (known for bundles only).
    HarnessVersion {
        /// A's version.
        before: Option<String>,
        /// B's version.
        after: Option<String>,
    },
    /// What a column's seat was told differs.
    PromptSet {
        /// The column.
        column: String,
        /// A's hash.
        before: Option<String>,
        /// B's hash.
        after: Option<String>,
    },
    /// The runtime in a column's seat differs (another CLI version, recipe
    /// or model): its cells are another runtime's outcomes.
    Runtime {
        /// The column.
        column: String,
        /// A's runtime, in words; `None` when A does not name one.
        before: Option<String>,
        /// B's runtime, in words.
        after: Option<String>,
    },
}

/// How a cell moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// To `fail` or `not_exercised` from anything else (for a cell
    /// repeated on one side only, to what fails a build under the one
    /// rule, `Outcome`, from what does not).
    Regression,
    /// From `fail` or `not_exercised` to anything else (or, as above, from
    /// what fails a build to what does not).
    Fix,
    /// Only in B.
    Added,
    /// Only in A.
    Removed,
    /// Another move: a status between non-failing ones, or the same status
    /// with other refusing layers, reason codes or causes.
    Other,
    /// A repeated cell that passed some runs and failed others, in A or in
    /// B, or whose pass rate moved, without a significant difference
    /// (Fisher's exact test, p >= 0.05): noise, listed apart, never a
    /// regression.
    Flaky,
}

impl Change {
    /// Every kind, in report order.
    pub const ALL: [Change; 6] =
        [Change::Regression, Change::Fix, Change::Added, Change::Removed, Change::Other, Change::Flaky];

    /// Its name in a summary's counts, lower case.
    #[must_use]
    pub fn counted_as(self) -> &'static str {
        match self {
            Change::Regression => "regressions",
            Change::Fix => "fixes",
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Other => "other",
            Change::Flaky => "flaky",
        }
    }

    /// The group's heading.
    #[must_use]
    pub fn heading(self) -> &'static str {
        match self {
            Change::Regression => "Regressions",
            Change::Fix => "Fixes",
            Change::Added => "Added",
            Change::Removed => "Removed",
            Change::Other => "Other moves",
            Change::Flaky => "Flaky, not significant",
        }
    }
}

/// One changed cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CellChange {
    /// How it moved.
    pub change: Change,
    /// The case.
    pub case: String,
    /// The condition.
    pub condition: String,
    /// The column.
    pub column: String,
    /// Its family, when either manifest says.
    pub family: Option<String>,
    /// A's cell.
    pub before: Option<CellView>,
    /// B's cell.
    pub after: Option<CellView>,
    /// For a cell repeated in both: the two-sided p-value of Fisher's exact
    /// test on the two pass rates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
}

/// The compared parts of a cell, as written out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CellView {
    /// Status.
    pub status: CellStatus,
    /// Refusing layers.
    pub refused_by: Vec<String>,
    /// Reason codes.
    pub reason_codes: Vec<String>,
    /// Causes, when the manifest has them.
    pub causes: Option<Vec<String>>,
    /// Passes out of runs, for a repeated cell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunCount>,
}

fn owned(texts: &[Text]) -> Vec<String> {
    texts.iter().map(ToString::to_string).collect()
}

impl CellView {
    /// What the cell comes to under the one rule (`Outcome`).
    pub fn outcome(&self) -> Outcome {
        outcome_of(self.status, self.runs)
    }
}

impl From<&ReadCell> for CellView {
    fn from(cell: &ReadCell) -> CellView {
        CellView {
            status: cell.status,
            refused_by: owned(&cell.refused_by),
            reason_codes: owned(&cell.reason_codes),
            causes: cell.causes.as_deref().map(owned),
            runs: cell.runs,
        }
    }
}

/// Two manifests compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[must_use]
pub struct Diff {
    /// Whether verdicts are comparable: same hash scheme, case set, world
    /// set and rules.
    pub comparable: bool,
    /// What moved.
    pub moved: Vec<Moved>,
    /// What each move means, in words, in the order of `moved`.
    pub meaning: Vec<String>,
    /// Columns only B has: their cells are not listed one by one.
    pub columns_added: Vec<String>,
    /// Columns only A has.
    pub columns_removed: Vec<String>,
    /// Every changed cell, grouped by change, then by cell.
    pub cells: Vec<CellChange>,
    /// Counts per column, then per change.
    pub by_column: BTreeMap<String, BTreeMap<Change, usize>>,
    /// Counts per family, then per change.
    pub by_family: BTreeMap<String, BTreeMap<Change, usize>>,
}

impl Diff {
    /// Whether any cell regressed.
    #[must_use]
    pub fn regressed(&self) -> bool {
        self.cells.iter().any(|c| c.change == Change::Regression)
    }
}

fn rules_of(manifest: &ReadManifest) -> String {
    match (&manifest.shape, &manifest.rules_version) {
        (Shape::Harness, Some(rules)) => {
            format!("this harness's rules version {rules} (adopting SharedOS judge {})", manifest.judge_version)
        }
        _ => format!("SharedOS judge version {}", manifest.judge_version),
    }
}

/// Compares `before` (A) with `after` (B).
pub fn diff(before: &ReadManifest, after: &ReadManifest) -> Diff {
    let moved = moves(before, after);
    let comparable = !moved.iter().any(|m| {
        matches!(m, Moved::HashScheme { .. } | Moved::CaseSet { .. } | Moved::WorldSet { .. } | Moved::Rules { .. })
    });
    let meaning = moved.iter().map(meaning_of).collect();
    let (ids_before, ids_after) = (column_ids(before), column_ids(after));
    let columns_added: Vec<String> = ids_after.difference(&ids_before).map(|id| (*id).to_string()).collect();
    let columns_removed: Vec<String> = ids_before.difference(&ids_after).map(|id| (*id).to_string()).collect();
    let shared: BTreeSet<&str> = ids_before.intersection(&ids_after).copied().collect();
    let cells = changed_cells(before, after, &shared);
    let mut by_column: BTreeMap<String, BTreeMap<Change, usize>> = BTreeMap::new();
    let mut by_family: BTreeMap<String, BTreeMap<Change, usize>> = BTreeMap::new();
    for cell in &cells {
        *by_column.entry(cell.column.clone()).or_default().entry(cell.change).or_default() += 1;
        let family = cell.family.clone().unwrap_or_else(|| "unknown".to_string());
        *by_family.entry(family).or_default().entry(cell.change).or_default() += 1;
    }
    Diff { comparable, moved, meaning, columns_added, columns_removed, cells, by_column, by_family }
}

fn column_ids(manifest: &ReadManifest) -> BTreeSet<&str> {
    manifest.columns.iter().map(|column| column.id.as_str()).collect()
}

fn prompt_sets(manifest: &ReadManifest) -> BTreeMap<&str, Option<&String>> {
    manifest.columns.iter().map(|column| (column.id.as_str(), column.prompt_set_hash.as_ref())).collect()
}

fn runtimes(manifest: &ReadManifest) -> BTreeMap<&str, Option<String>> {
    manifest.columns.iter().map(|column| (column.id.as_str(), column.runtime.as_ref().map(|r| r.describe()))).collect()
}

fn moves(a: &ReadManifest, b: &ReadManifest) -> Vec<Moved> {
    let mut moved = Vec::new();
    if a.hash_scheme != b.hash_scheme {
        moved.push(Moved::HashScheme { before: a.hash_scheme.clone(), after: b.hash_scheme.clone() });
    }
    if a.case_set_hash != b.case_set_hash {
        moved.push(Moved::CaseSet { before: a.case_set_hash.clone(), after: b.case_set_hash.clone() });
    }
    if a.world_set_hash != b.world_set_hash || a.world_set_hash.is_none() {
        moved.push(Moved::WorldSet { before: a.world_set_hash.clone(), after: b.world_set_hash.clone() });
    }
    let (rules_a, rules_b) = (rules_of(a), rules_of(b));
    if rules_a != rules_b {
        moved.push(Moved::Rules { before: rules_a, after: rules_b });
    }
    if a.harness_version != b.harness_version {
        moved.push(Moved::HarnessVersion { before: a.harness_version.clone(), after: b.harness_version.clone() });
    }
    let (pa, pb) = (prompt_sets(a), prompt_sets(b));
    for (column, before) in &pa {
        if let Some(after) = pb.get(column).filter(|after| *after != before) {
            moved.push(Moved::PromptSet {
                column: (*column).to_string(),
                before: before.cloned(),
                after: after.cloned(),
            });
        }
    }
    let (ra, rb) = (runtimes(a), runtimes(b));
    for (column, before) in ra {
        if let Some(after) = rb.get(column).filter(|after| **after != before) {
            moved.push(Moved::Runtime { column: column.to_string(), before, after: after.clone() });
        }
    }
    moved
}

fn shown(hash: Option<&String>) -> String {
    hash.map_or_else(|| "none".to_string(), |h| format!("`{}`", &h[..h.len().min(12)]))
}

fn meaning_of(moved: &Moved) -> String {
    match moved {
        Moved::HashScheme { before, after } => format!(
            "The hashes were computed differently (A: `{before}`, B: `{after}`). SharedOS hashes JSON with keys \
             sorted by JavaScript's localeCompare; this harness hashes tagged RFC 8785 canonical JSON. Equal \
             cases and worlds hash differently under the two, so no hash of A can be compared with one of B, \
             and the verdicts are not comparable."
        ),
        Moved::CaseSet { before, after } => format!(
            "The case set moved ({} → {}): the rows ask different questions, so verdicts are not comparable \
             (cells of unchanged cases may still be read side by side, with care).",
            shown(Some(before)),
            shown(Some(after))
        ),
        Moved::WorldSet { before, after } if before.is_none() || after.is_none() => {
            "A manifest states no world-set hash (SharedOS judge versions before 3 had none), so the worlds \
             cannot be shown to be the same; verdicts are not comparable."
                .to_string()
        }
        Moved::WorldSet { before, after } => format!(
            "The world set moved ({} → {}): the same cases ran against different worlds, so verdicts are not \
             comparable.",
            shown(before.as_ref()),
            shown(after.as_ref())
        ),
        Moved::Rules { before, after } => format!(
            "The grading rules moved ({before} → {after}): the same evidence may grade differently, so verdicts \
             are not comparable."
        ),
        Moved::HarnessVersion { before, after } => format!(
            "The harness version moved ({} → {}); that alone does not make verdicts incomparable.",
            before.as_deref().unwrap_or("not stated"),
            after.as_deref().unwrap_or("not stated")
        ),
        Moved::PromptSet { column, before, after } => format!(
            "Column `{column}` was told different things ({} → {}): its seat's choices are not comparable, \
             though its verdicts are when nothing above moved.",
            shown(before.as_ref()),
            shown(after.as_ref())
        ),
        Moved::Runtime { column, before, after } => format!(
            "Column `{column}` seats another runtime (A: {}; B: {}): its cells are read side by side, but they \
             are the outcomes of two runtimes, never one.",
            before.as_deref().unwrap_or("not named"),
            after.as_deref().unwrap_or("not named")
        ),
    }
}

/// How a cell repeated in both runs moved: significantly (a regression or
/// a fix, by the pass rate's direction), as noise, or not at all by its
/// pass rate (`None`: then its fields decide).
fn repeated_change(a: RunCount, b: RunCount, p: f64) -> Option<Change> {
    let (rate_a, rate_b) = (u64::from(a.passes) * u64::from(b.runs), u64::from(b.passes) * u64::from(a.runs));
    if p < SIGNIFICANCE {
        return Some(if rate_b < rate_a { Change::Regression } else { Change::Fix });
    }
    (a.is_flaky() || b.is_flaky() || rate_a != rate_b).then_some(Change::Flaky)
}

/// For a cell repeated in both runs: the two-sided p-value of Fisher's
/// exact test on the two pass rates.
fn p_value_of(before: Option<&ReadCell>, after: Option<&ReadCell>) -> Option<f64> {
    let (a, b) = before.and_then(|a| a.runs).zip(after.and_then(|b| b.runs))?;
    Some(fisher_two_sided(a.passes, a.runs, b.passes, b.runs))
}

fn change_of(before: Option<&ReadCell>, after: Option<&ReadCell>, p_value: Option<f64>) -> Option<Change> {
    match (before, after) {
        (None, None) => None,
        (None, Some(_)) => Some(Change::Added),
        (Some(_), None) => Some(Change::Removed),
        (Some(a), Some(b)) => {
            if let Some(change) = a.runs.zip(b.runs).zip(p_value).and_then(|((x, y), p)| repeated_change(x, y, p)) {
                return Some(change);
            }
            let causes_differ = matches!((&a.causes, &b.causes), (Some(x), Some(y)) if x != y);
            // A cell repeated on one side only is read by what its runs
            // come to, as the exit code reads it: a single pass against a
            // flaky sample moved, whatever the sample's first run was.
            let (outcome_a, outcome_b) = (a.outcome(), b.outcome());
            let same = a.status == b.status
                && outcome_a == outcome_b
                && a.refused_by == b.refused_by
                && a.reason_codes == b.reason_codes
                && !causes_differ;
            match (outcome_a.breaks_build(), outcome_b.breaks_build()) {
                _ if same => None,
                (false, true) => Some(Change::Regression),
                (true, false) => Some(Change::Fix),
                _ => Some(Change::Other),
            }
        }
    }
}

/// Both maps' entries in key order, each key once, with its value on
/// each side: one pass over both, as a merge.
fn paired<'m, K: Ord, V>(
    a: &'m BTreeMap<K, V>,
    b: &'m BTreeMap<K, V>,
) -> impl Iterator<Item = (&'m K, Option<&'m V>, Option<&'m V>)> {
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    std::iter::from_fn(move || {
        let order = match (a.peek(), b.peek()) {
            (None, None) => return None,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((x, _)), Some((y, _))) => x.cmp(y),
        };
        match order {
            Ordering::Less => a.next().map(|(key, value)| (key, Some(value), None)),
            Ordering::Greater => b.next().map(|(key, value)| (key, None, Some(value))),
            Ordering::Equal => a.next().zip(b.next()).map(|((key, x), (_, y))| (key, Some(x), Some(y))),
        }
    })
}

/// The cells of the columns both have that moved.
fn changed_cells(a: &ReadManifest, b: &ReadManifest, shared: &BTreeSet<&str>) -> Vec<CellChange> {
    let mut cells = Vec::new();
    for (key, before, after) in paired(&a.cells, &b.cells) {
        if !shared.contains(&*key.2) {
            continue;
        }
        let p_value = p_value_of(before, after);
        let Some(change) = change_of(before, after, p_value) else { continue };
        cells.push(cell_change(a, b, key, (change, p_value), before, after));
    }
    // The merge yields cells by (case, condition, column); a stable sort
    // by change alone keeps that order within each group.
    cells.sort_by_key(|cell| cell.change);
    cells
}

fn cell_change(
    a: &ReadManifest,
    b: &ReadManifest,
    key: &CellAt,
    (change, p_value): (Change, Option<f64>),
    before: Option<&ReadCell>,
    after: Option<&ReadCell>,
) -> CellChange {
    let row = (Text::clone(&key.0), Text::clone(&key.1));
    let family = b.families.get(&row).or_else(|| a.families.get(&row)).map(|f| f.as_str().to_string());
    CellChange {
        change,
        case: key.0.to_string(),
        condition: key.1.to_string(),
        column: key.2.to_string(),
        family,
        before: before.map(CellView::from),
        after: after.map(CellView::from),
        p_value,
    }
}
