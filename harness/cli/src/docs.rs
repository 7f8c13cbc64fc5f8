//! Hand-written documents held to the code: the exit-code table
//! (`docs/reference/exit-codes.md`), the command table of the CLI reference
//! (`docs/reference/cli.md`), the floors and the crates table of
//! `docs/design/architecture.md`, and the README's two set-up commands.
//! Each test names every row missing from the document and every row it
//! has that the code does not, and checks the row count, so an emptied
//! table cannot pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::args::Cli;
use crate::exit::Exit;
use clap::CommandFactory;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

/// The repository root.
pub(crate) const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

pub(crate) fn read(path: &str) -> String {
    let full = format!("{ROOT}/{path}");
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// The cells of a Markdown table row, split on `|` not escaped as `\|`,
/// each trimmed and with `\|` read as `|`.
pub(crate) fn cells(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = line.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '|' => cells.push(std::mem::take(&mut cell).trim().to_string()),
            _ => cell.push(c),
        }
    }
    cells
}

/// The lines of the section a `## ` heading opens, up to the next one.
pub(crate) fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|line| *line != heading);
    assert!(lines.next().is_some(), "no section `{heading}`");
    lines.take_while(|line| !line.starts_with("## ")).collect()
}

/// Fails naming the rows the document lacks and the rows it has that the
/// code does not, then checks the document's row count against the
/// code's.
fn same_rows<K: Ord + Debug, V: PartialEq + Debug>(
    document: &str,
    listed: &BTreeMap<K, V>,
    listed_rows: usize,
    expected: &BTreeMap<K, V>,
) {
    same_entries(document, listed, expected);
    assert_eq!(listed_rows, expected.len(), "{document}: a row is listed twice");
}

/// Fails naming the entries the document lacks and the ones it has that
/// the code does not.
fn same_entries<K: Ord + Debug, V: PartialEq + Debug>(
    document: &str,
    listed: &BTreeMap<K, V>,
    expected: &BTreeMap<K, V>,
) {
    let missing: Vec<_> = expected.iter().filter(|(k, v)| listed.get(k) != Some(v)).collect();
    let extra: Vec<_> = listed.iter().filter(|(k, v)| expected.get(k) != Some(v)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{document} and the code disagree\n  missing from the document: {missing:?}\n  in the document, not in the code: {extra:?}"
    );
    assert!(!expected.is_empty(), "{document}: the code gives no row to compare");
}

/// Every variant of [`Exit`], in declaration order.
const EXITS: [Exit; 10] = [
    Exit::Success,
    Exit::ConformanceFailure,
    Exit::Usage,
    Exit::InvalidInput,
    Exit::NothingSelected,
    Exit::SeatCannotStart,
    Exit::Io,
    Exit::HarnessBug,
    Exit::Interrupted,
    Exit::Terminated,
];

/// The position of a variant in [`EXITS`]. A new variant fails to compile
/// here until it is listed.
fn exit_index(exit: Exit) -> usize {
    match exit {
        Exit::Success => 0,
        Exit::ConformanceFailure => 1,
        Exit::Usage => 2,
        Exit::InvalidInput => 3,
        Exit::NothingSelected => 4,
        Exit::SeatCannotStart => 5,
        Exit::Io => 6,
        Exit::HarnessBug => 7,
        Exit::Interrupted => 8,
        Exit::Terminated => 9,
    }
}

#[test]
fn docs_exit_codes_list_every_code_and_name() {
    for (index, exit) in EXITS.iter().enumerate() {
        assert_eq!(exit_index(*exit), index, "EXITS lists {exit:?} out of place");
    }
    let document = "docs/reference/exit-codes.md";
    let text = read(document);
    let mut rows = 0;
    let mut listed = BTreeMap::new();
    for line in text.lines().filter(|line| line.starts_with('|')) {
        let cells = cells(line);
        let Ok(code) = cells[0].parse::<u8>() else { continue };
        rows += 1;
        listed.insert(code, cells[1].trim_matches('`').to_string());
    }
    let expected: BTreeMap<u8, String> = EXITS.iter().map(|exit| (exit.code(), format!("{exit:?}"))).collect();
    assert_eq!(expected.len(), EXITS.len(), "two variants share a code");
    same_rows(document, &listed, rows, &expected);
}

#[test]
fn docs_cli_reference_lists_every_command_and_option() {
    let document = "docs/reference/cli.md";
    let text = read(document);
    let mut rows = 0;
    let mut listed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in section(&text, "## Commands").into_iter().filter(|line| line.starts_with("| `")) {
        let cells = cells(line);
        let command = cells[0].trim_matches('`').to_string();
        let options = match cells[1].strip_prefix("the same as `") {
            Some(other) => listed.get(other.trim_end_matches('`')).cloned().expect("`the same as` an earlier row"),
            None => cells[1]
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .filter(|word| word.starts_with("--"))
                .map(str::to_string)
                .collect(),
        };
        rows += 1;
        listed.insert(command, options);
    }
    let cli = Cli::command();
    let mut expected = BTreeMap::new();
    for command in cli.get_subcommands().filter(|command| command.get_name() != "help") {
        let options: BTreeSet<String> = command
            .get_arguments()
            .filter_map(|arg| arg.get_long())
            .filter(|long| !matches!(*long, "help" | "version"))
            .map(|long| format!("--{long}"))
            .collect();
        // A positional argument is named in the row by its value name.
        let row = section(&text, "## Commands")
            .into_iter()
            .find(|line| line.starts_with(&format!("| `{}` |", command.get_name())))
            .map(cells);
        for arg in command.get_arguments().filter(|arg| arg.is_positional()) {
            let name = arg
                .get_value_names()
                .and_then(|names| names.first())
                .map_or_else(|| arg.get_id().as_str().to_uppercase(), ToString::to_string);
            if let Some(row) = &row {
                assert!(
                    row[1].contains(&name),
                    "{document}: `{}` does not name its argument {name}",
                    command.get_name()
                );
            }
        }
        expected.insert(command.get_name().to_string(), options);
    }
    // Commands first, then each option as a (command, option) entry, so a
    // failure names the very option that is missing or extra.
    let names = |table: &BTreeMap<String, BTreeSet<String>>| -> BTreeMap<String, ()> {
        table.keys().map(|command| (command.clone(), ())).collect()
    };
    same_rows(document, &names(&listed), rows, &names(&expected));
    let pairs = |table: &BTreeMap<String, BTreeSet<String>>| -> BTreeMap<(String, String), ()> {
        table
            .iter()
            .flat_map(|(command, options)| options.iter().map(move |option| ((command.clone(), option.clone()), ())))
            .collect()
    };
    same_entries(document, &pairs(&listed), &pairs(&expected));
}

/// The crates of the workspace, by folder name (`harness/<name>`).
fn members() -> BTreeSet<String> {
    let manifest = read("Cargo.toml");
    let members = manifest.split("members = [").nth(1).and_then(|rest| rest.split(']').next()).expect("members");
    members
        .split(',')
        .map(|member| member.trim().trim_matches('"'))
        .filter(|member| !member.is_empty())
        .map(|member| member.trim_start_matches("harness/").to_string())
        .collect()
}

/// Every dependency a crate's manifest names under `[dependencies]`,
/// from the workspace or not.
fn dependencies(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .skip_while(|line| line.trim() != "[dependencies]")
        .skip(1)
        .take_while(|line| !line.starts_with('['))
        .filter_map(|line| line.split(['=', '.', ' ']).next())
        .filter(|name| !name.is_empty() && !name.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Each workspace member's folder under `harness/`, by its package name.
pub(crate) fn folders_by_package() -> BTreeMap<String, String> {
    members()
        .into_iter()
        .map(|folder| {
            let manifest = read(&format!("harness/{folder}/Cargo.toml"));
            let name = manifest
                .lines()
                .find_map(|line| line.strip_prefix("name = \""))
                .map(|name| name.trim_end_matches('"').to_string())
                .expect("a package name");
            (name, folder)
        })
        .collect()
}

#[test]
fn docs_architecture_floors_hold_every_crate_and_point_down() {
    let document = "docs/design/architecture.md";
    let text = read(document);
    let mut floors: BTreeMap<String, u32> = BTreeMap::new();
    let mut rows = 0;
    for line in text.lines().filter_map(|line| line.strip_prefix("floor ")) {
        let (number, crates) = line.trim_start().split_once(' ').expect("floor N  crates");
        let number: u32 = number.parse().expect("a floor's number");
        for name in crates.split('·').map(str::trim) {
            rows += 1;
            floors.insert(name.to_string(), number);
        }
    }
    let members = members();
    // The test helpers are a dev-dependency only, on no floor.
    let expected: BTreeMap<String, ()> =
        members.iter().filter(|name| *name != "testkit").map(|name| (name.clone(), ())).collect();
    let listed: BTreeMap<String, ()> = floors.keys().map(|name| (name.clone(), ())).collect();
    same_rows(document, &listed, rows, &expected);

    let folders = folders_by_package();
    let mut upward = Vec::new();
    // The test helpers may depend on anything: no crate depends on them.
    for folder in members.iter().filter(|folder| *folder != "testkit") {
        for dependency in dependencies(&read(&format!("harness/{folder}/Cargo.toml"))) {
            let Some(target) = folders.get(&dependency) else { continue };
            let below = match (floors.get(folder), floors.get(target)) {
                (Some(own), Some(theirs)) => theirs < own,
                _ => false,
            };
            if !below {
                upward.push(format!("{folder} -> {target}"));
            }
        }
    }
    assert!(upward.is_empty(), "{document}: dependencies that do not point to a lower floor: {upward:?}");
}

#[test]
fn docs_the_verifier_builds_without_the_runtime_machinery() {
    // What `verify` and `diff` need, and what runs runtimes: the process
    // seats, the MCP server (rmcp, hyper), the drivers, the scripted model.
    let machinery =
        ["sharedos-process", "sharedos-mcp", "sharedos-drivers", "sharedos-scripted-model", "sharedos-conformance"];
    let external = ["rmcp", "hyper", "hyper-util"];
    let reached = reached_from("sharedos-evidence");
    assert!(reached.contains("sharedos-grading") && reached.contains("ed25519-dalek"), "{reached:?}");
    let pulled: Vec<&String> =
        reached.iter().filter(|name| machinery.contains(&name.as_str()) || external.contains(&name.as_str())).collect();
    assert!(pulled.is_empty(), "the verifier pulls in {pulled:?}");
    let readme = read("README.md");
    assert!(readme.contains("cargo tree -p sharedos-evidence"), "README shows the verifier's tree");
}

#[test]
fn docs_the_metadata_crate_needs_only_the_record_types() {
    // Other tools read manifests and evidence lines on this crate alone:
    // of the harness it reaches only the record's vocabulary, and no I/O.
    let reached = reached_from("sharedos-conformance-metadata");
    let harness: Vec<&String> = reached.iter().filter(|name| name.starts_with("sharedos-")).collect();
    assert_eq!(harness, ["sharedos-conformance-metadata", "sharedos-model"], "{reached:?}");
    assert!(!reached.contains("tokio"), "{reached:?}");
    assert!(read("README.md").contains("cargo tree -p sharedos-conformance-metadata"), "README shows its tree");
}

/// Every package `root` depends on for a build, following the harness's
/// own crates' `[dependencies]` (an outside crate's are not read).
fn reached_from(root: &str) -> std::collections::BTreeSet<String> {
    let folders = folders_by_package();
    let mut reached = std::collections::BTreeSet::new();
    let mut pending = vec![root.to_string()];
    while let Some(name) = pending.pop() {
        if !reached.insert(name.clone()) {
            continue;
        }
        if let Some(folder) = folders.get(&name) {
            pending.extend(dependencies(&read(&format!("harness/{folder}/Cargo.toml"))));
        }
    }
    reached
}

#[test]
fn docs_architecture_crates_table_names_every_crate() {
    let document = "docs/design/architecture.md";
    let text = read(document);
    let mut rows = 0;
    let mut listed = BTreeMap::new();
    for line in text.lines().filter(|line| line.starts_with("| `harness/")) {
        rows += 1;
        let folder = cells(line)[0].trim_matches('`').trim_start_matches("harness/").to_string();
        listed.insert(folder, ());
    }
    let mut expected: BTreeMap<String, ()> = members().into_iter().map(|folder| (folder, ())).collect();
    // Not a crate: the committed seat files and reference runtimes.
    expected.insert("seats".to_string(), ());
    same_rows(document, &listed, rows, &expected);
}

#[test]
fn docs_readme_gives_exactly_the_two_setup_commands_ci_runs() {
    let readme = read("README.md");
    let block: Vec<&str> = section(&readme, "## Set-up on a fresh machine")
        .into_iter()
        .skip_while(|line| *line != "```sh")
        .skip(1)
        .take_while(|line| *line != "```")
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .collect();
    assert_eq!(
        block,
        ["cargo run --release --locked -p sharedos-conformance-cli -- run", "cargo test --workspace --locked"],
        "README.md: the set-up commands"
    );
    let ci = read(".ci/run");
    // .ci/run times each of its steps: `step COMMAND`.
    let runs = |line: &str| line.strip_prefix("step ").unwrap_or(line) == block[1];
    assert!(ci.lines().any(runs), ".ci/run does not run the README's test command");
}
