//! `report --html`: the matrix as one self-contained page, arguments wired
//! to `sharedos_evidence::page`.

use crate::args::ReportArgs;
use crate::exit::Exit;
use crate::interrupt::Interrupt;
use crate::outputs::{check, Input, Kind, Output};
use sharedos_evidence::page::golden::read_golden;
use sharedos_evidence::page::input::{against, load};
use sharedos_evidence::page::{render, Against, Page};
use sharedos_grading::output::atomic::write_atomically;

/// The manifest `report` shows without an INPUT, below `--root`.
const DEFAULT_INPUT: &str = "reports/conformance.json";

pub fn report(args: &ReportArgs, interrupt: &Interrupt) -> Exit {
    let input = args.input.clone().unwrap_or_else(|| args.root.join(DEFAULT_INPUT));
    let golden_folder = args.root.join("golden");
    let mut inputs =
        vec![Input { what: "INPUT", path: &input }, Input { what: "the golden folder", path: &golden_folder }];
    if let Some(other) = &args.against {
        inputs.push(Input { what: "--against", path: other });
    }
    if let Err(refusal) = check(&[Output { flag: "--html", path: &args.html, kind: Kind::Page }], &inputs) {
        tell!("error: failed to {refusal}");
        return Exit::Usage;
    }
    let loaded = match load(&input) {
        Ok(loaded) => loaded,
        Err(error) => {
            tell!("error: failed to {error}");
            return Exit::InvalidInput;
        }
    };
    let golden = read_golden(&args.root, &loaded.manifest);
    let moved = match args.against.as_deref().map(|other| against(&input, other)).transpose() {
        Ok(moved) => moved,
        Err(error) => {
            tell!("error: failed to read {error}");
            return Exit::InvalidInput;
        }
    };
    let name = args.against.as_ref().map(|other| other.display().to_string());
    let page = Page {
        manifest: &loaded.manifest,
        records: loaded.records.as_ref(),
        golden: golden.as_ref(),
        against: moved.as_ref().zip(name.as_deref()).map(|(diff, name)| Against { name, diff }),
    };
    let html = render(&page);
    // Only the writing waits for a signal's clean-up.
    let _writing = interrupt.writing();
    if let Err(error) = write_atomically(&args.html, html.as_bytes()) {
        tell!("error: failed to {error}");
        return Exit::Io;
    }
    let cells: usize = loaded.manifest.rows.iter().map(|row| row.cells.len()).sum();
    let moved = moved.map(|diff| format!(", {} moved against {}", diff.cells.len(), name.unwrap_or_default()));
    say!("wrote {} ({} bytes, {cells} cells{})", args.html.display(), html.len(), moved.unwrap_or_default());
    Exit::Success
}
