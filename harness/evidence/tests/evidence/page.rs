//! The matrix as one page (`report --html`): every cell on it, nothing
//! fetched from outside, text escaped, the same bytes twice, and a moved
//! cell shown against another run.

use crate::support::{bundle, scratch, suite_root};
use serde_json::Value;
use sharedos_evidence::page::golden::{read_golden, view, GoldenView};
use sharedos_evidence::page::input::{against, load};
use sharedos_evidence::page::{render, Against, Page};
use sharedos_grading::output::manifest::{manifest_json, Manifest};
use sharedos_grading::vocab::CellStatus;
use std::path::{Path, PathBuf};

fn committed() -> PathBuf {
    suite_root().join("reports/conformance.json")
}

fn committed_manifest() -> Manifest {
    load(&committed()).unwrap().manifest
}

/// The page of `manifest` with the committed golden files.
fn page_of(manifest: &Manifest) -> String {
    let golden = read_golden(&suite_root(), manifest);
    render(&Page { manifest, records: None, golden: golden.as_ref(), against: None })
}

/// The data the page's script reads, parsed back.
fn data_of(page: &str) -> Value {
    let start = r#"<script type="application/json" id="data">"#;
    let from = page.find(start).unwrap() + start.len();
    let to = from + page[from..].find("</script>").unwrap();
    serde_json::from_str(&page[from..to]).unwrap()
}

fn keys(manifest: &Manifest) -> Vec<String> {
    manifest.rows.iter().flat_map(|row| row.cells.iter().map(|cell| row.key_of(cell).trial_name())).collect()
}

#[test]
fn the_page_of_the_committed_manifest_shows_every_cell_once() {
    let manifest = committed_manifest();
    let page = page_of(&manifest);
    let data = data_of(&page);
    let keys = keys(&manifest);
    assert_eq!(keys.len(), 131 * 9);
    for key in &keys {
        assert_eq!(page.matches(&format!("data-cell=\"{key}\"")).count(), 1, "{key} in the table");
        assert!(data["cells"][key].is_object(), "{key} in the data");
    }
    assert_eq!(page.matches("data-cell=").count(), keys.len(), "no other cell in the table");
    assert_eq!(data["cells"].as_object().unwrap().len(), keys.len(), "no other cell in the data");
    let squares = manifest.families.len() * manifest.columns.len();
    assert_eq!(page.matches("data-square ").count(), squares, "one square per family and column");
    // Every run cell matches its golden file; every declared one has none.
    let golden = read_golden(&suite_root(), &manifest).unwrap();
    for row in &manifest.rows {
        for cell in &row.cells {
            let shown = view(Some(&golden), &row.key_of(cell), cell);
            match shown {
                GoldenView::Matches { .. } => assert!(!cell.is_declared()),
                GoldenView::Missing { declared: true, .. } => assert!(cell.is_declared()),
                other => panic!("{}: {other:?}", row.key_of(cell).trial_name()),
            }
        }
    }
    assert_eq!(data["records"], "as the golden file records it");
}

/// ADR 0007: the page names each column's runtime, as the manifest does.
#[test]
fn the_page_names_each_columns_runtime() {
    let manifest = committed_manifest();
    let page = page_of(&manifest);
    for column in &manifest.columns {
        let runtime = column.runtime.as_ref().expect("every committed column names its runtime");
        let shown = format!("<small class=\"runtime\">{}</small>", runtime.describe());
        assert_eq!(page.matches(&shown).count(), 1, "{} shows {shown}", column.id);
    }
}

#[test]
fn the_page_needs_nothing_from_outside() {
    let page = page_of(&committed_manifest());
    for outside in ["http://", "https://", "src=", "<link", "@import", "url(", "//cdn"] {
        assert!(!page.contains(outside), "the page holds `{outside}`");
    }
    assert!(page.contains("default-src 'none'"), "a policy forbids every fetch");
    assert_eq!(page.matches("<script").count(), 2, "the data and the script, both inline");
}

#[test]
fn text_from_the_manifest_is_escaped_in_markup_and_in_the_data() {
    let mut manifest = committed_manifest();
    let hostile = "</script><script>alert(1)</script><!-- & \"quoted\"";
    manifest.rows[0].cells[0].detail = Some(hostile.to_string());
    manifest.columns[0].label = "<img src=x onerror=alert(1)>".to_string();
    manifest.rows[0].invariant = "</SCRIPT><b>bold</b>".to_string();
    let page = page_of(&manifest);
    assert_eq!(page.matches("</script>").count(), 2, "only the page's own two script elements close");
    assert!(!page.to_lowercase().contains("</script><"), "no text closes a script element");
    assert!(!page.contains("<img"), "a label is escaped in markup");
    assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(!page.contains("<!-- &"), "no comment is opened in the data");
    let data = data_of(&page);
    let key = manifest.rows[0].key_of(&manifest.rows[0].cells[0]).trial_name();
    assert_eq!(data["cells"][&key]["detail"], hostile, "the data means the same once parsed");
    let row = format!("{}/{}", manifest.rows[0].case_id, manifest.rows[0].condition_id);
    assert_eq!(data["rows"][&row]["invariant"], "</SCRIPT><b>bold</b>");
    assert_eq!(data["columns"][0]["label"], "<img src=x onerror=alert(1)>");
}

#[test]
fn the_same_inputs_give_the_same_bytes() {
    let first = page_of(&committed_manifest());
    let second = page_of(&committed_manifest());
    assert!(first == second, "two renders differ");
}

/// The committed manifest with one run cell's status moved to `fail`,
/// written to `dir`; returns its path and the cell's key.
fn with_a_failed_cell(dir: &Path) -> (PathBuf, String, Manifest) {
    let mut manifest = committed_manifest();
    let (row, cell) = manifest
        .rows
        .iter_mut()
        .find_map(|row| {
            let index = row.cells.iter().position(|c| c.status == CellStatus::Pass && !c.is_declared())?;
            Some((row, index))
        })
        .unwrap();
    row.cells[cell].status = CellStatus::Fail;
    let key = row.key_of(&row.cells[cell]).trial_name();
    let path = dir.join("moved.json");
    std::fs::write(&path, manifest_json(&manifest).unwrap()).unwrap();
    (path, key, manifest)
}

#[test]
fn the_diff_view_lists_a_cell_whose_status_moved() {
    let dir = scratch();
    let (moved, key, manifest) = with_a_failed_cell(dir.path());
    let diff = against(&moved, &committed()).unwrap();
    assert!(diff.comparable);
    assert_eq!(diff.cells.len(), 1, "{:?}", diff.cells);
    let golden = read_golden(&suite_root(), &manifest);
    let page = render(&Page {
        manifest: &manifest,
        records: None,
        golden: golden.as_ref(),
        against: Some(Against { name: "reports/conformance.json", diff: &diff }),
    });
    assert!(page.contains("id=\"against\""), "the diff view is there");
    assert!(page.contains("Comparable; 1 cells moved."), "it says whether the runs compare");
    let listed = format!("<tr class=\"ch-regression\"><td><button type=\"button\" class=\"goto\" data-goto=\"{key}\">");
    assert!(page.contains(&listed), "the moved cell is listed as a regression");
    assert!(page.contains(&format!("class=\"c s-fail moved\" data-cell=\"{key}\"")), "the table marks it");
    assert!(page.contains("\u{394} 1</span>"), "its heatmap square marks it");
    let data = data_of(&page);
    let cell = &data["cells"][&key];
    assert_eq!(cell["moved"]["change"], "regression");
    assert_eq!(
        (&cell["moved"]["before"]["status"], &cell["moved"]["after"]["status"]),
        (&"pass".into(), &"fail".into())
    );
    assert_eq!(cell["golden"]["state"], "differs", "its golden file holds `pass`");
    assert_eq!(cell["golden"]["fields"][0]["field"], "status");
    assert_eq!(cell["golden"]["fields"][0]["golden"], "\"pass\"");
    assert_eq!(data["against"], "reports/conformance.json");
    // Without --against, no diff view.
    assert!(!page_of(&manifest).contains("id=\"against\""));
}

#[test]
fn a_bundle_page_summarises_each_turn_from_its_records() {
    let loaded = load(bundle()).unwrap();
    let records = loaded.records.as_ref().unwrap();
    let run_cells = loaded.manifest.rows.iter().flat_map(|r| &r.cells).filter(|c| !c.is_declared()).count();
    assert_eq!(records.len(), run_cells, "one summary per run cell");
    let page = render(&Page { manifest: &loaded.manifest, records: Some(records), golden: None, against: None });
    let data = data_of(&page);
    assert_eq!(data["records"], "as the bundle's execution records hold it");
    let row = &loaded.manifest.rows[0];
    let run = row.cells.iter().find(|c| !c.is_declared()).unwrap();
    let shown = &data["cells"][row.key_of(run).trial_name()];
    assert_eq!(shown["records"].as_array().unwrap().len(), run.turns as usize);
    assert!(shown["records"][0]["toolCalls"].is_u64(), "{shown}");
    assert_eq!(shown["golden"]["state"], "no_folder");
}

#[test]
fn an_input_that_is_not_a_manifest_is_refused_with_its_path() {
    let dir = scratch();
    let path = dir.path().join("not.json");
    std::fs::write(&path, "{\"version\": \"1\"}").unwrap();
    let error = load(&path).unwrap_err();
    assert_eq!(error.path, path);
    assert!(error.to_string().contains("expected a conformance manifest"), "{error}");
    let missing = load(&dir.path().join("absent.json")).unwrap_err();
    assert!(missing.to_string().starts_with("read "), "{missing}");
}
