//! The committed process seat: the Python reference runtime, seated over
//! `sharedos-runtime/1`, grades every row exactly as the embedded adversary
//! does (70-runtime-protocol §6).

use crate::support::{committed_suite, suite_root};
use serde_json::Value;

const SEAT: &str = "process:python-reference";
const ADVERSARY: &str = "adversary-embedded";

/// A manifest cell with the column named out.
fn graded(cell: &Value) -> Value {
    let mut cell = cell.clone();
    cell.as_object_mut().unwrap().remove("columnId");
    cell
}

#[test]
fn the_committed_suite_seats_the_python_reference_runtime() {
    let suite = committed_suite();
    let columns: Vec<&str> = suite.seats.iter().map(|s| s.column_id.as_str()).collect();
    assert_eq!(columns, [SEAT]);
}

#[test]
fn every_row_of_the_python_column_grades_as_the_adversary_column() {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(suite_root().join("reports/conformance.json")).unwrap()).unwrap();
    let rows = manifest["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 111);
    for row in rows {
        let cells = row["cells"].as_array().unwrap();
        let cell = |column: &str| cells.iter().find(|c| c["columnId"] == column).unwrap_or_else(|| panic!("{column}"));
        let name = format!("{}/{}", row["caseId"], row["conditionId"]);
        assert_eq!(graded(cell(SEAT)), graded(cell(ADVERSARY)), "{name}");
    }
}

#[test]
fn every_snapshot_of_the_python_column_differs_from_the_adversary_only_in_column_and_runtime() {
    let golden = suite_root().join("golden");
    let mut compared = 0;
    for case in std::fs::read_dir(&golden).unwrap() {
        let case = case.unwrap().path();
        for file in std::fs::read_dir(&case).unwrap() {
            let file = file.unwrap().path();
            let name = file.file_name().unwrap().to_str().unwrap().to_string();
            let Some(condition) = name.strip_suffix(".adversary-embedded.json") else { continue };
            let seat = case.join(format!("{condition}.process.python-reference.json"));
            let adversary = std::fs::read_to_string(&file)
                .unwrap()
                .replace(ADVERSARY, "COLUMN")
                .replace("sharedos-conformance.adversary", "RUNTIME");
            let seated = std::fs::read_to_string(&seat)
                .unwrap_or_else(|e| panic!("{}: {e}", seat.display()))
                .replace(SEAT, "COLUMN")
                .replace("sharedos-reference.python", "RUNTIME");
            assert_eq!(seated, adversary, "{}", seat.display());
            compared += 1;
        }
    }
    assert_eq!(compared, 109, "every run cell of the adversary column has its seated twin");
}
