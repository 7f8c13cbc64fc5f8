//! The threat table of `docs/maintainers/testing.md` held to the code:
//! every subcommand has a row, every argument that takes a path or a
//! count has a row of its command, every row's attack class is one the
//! section defines, and every test a row names exists where its path
//! says. A failure names every missing and extra row.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::args::Cli;
use crate::docs::{cells, folders_by_package, read, section, ROOT};
use clap::CommandFactory;
use sharedos_grading::plan::shard::Shard;
use std::any::TypeId;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const DOCUMENT: &str = "docs/maintainers/testing.md";
const HEADING: &str = "## Threat table";

/// One row of the table, its cells as written.
struct Row {
    index: usize,
    command: String,
    input: String,
    class: String,
    tests: String,
}

/// The attack classes the section defines (`- \`name\`: what it is`), and
/// the table's rows.
fn threat_table() -> (BTreeSet<String>, Vec<Row>) {
    let text = read(DOCUMENT);
    let lines = section(&text, HEADING);
    let classes = lines
        .iter()
        .filter_map(|line| line.strip_prefix("- `"))
        .filter_map(|rest| rest.split_once("`: ").map(|(name, _)| name.to_string()))
        .collect();
    let rows = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.starts_with('|'))
        // The header and the line under it.
        .skip(2)
        .enumerate()
        .map(|(index, (_, text))| {
            let cells = cells(text);
            assert_eq!(cells.len(), 4, "{DOCUMENT}, {HEADING}: row {} has not four cells: {text}", index + 1);
            let [command, input, class, tests] = <[String; 4]>::try_from(cells).unwrap();
            Row { index: index + 1, command, input, class, tests }
        })
        .collect();
    (classes, rows)
}

/// The code spans a cell starts with, separated by `, ` (as in
/// `` `run`, `check` ``); an empty list when it starts with prose.
fn leading_spans(cell: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut rest = cell.trim();
    while let Some(after) = rest.strip_prefix('`') {
        let Some((span, tail)) = after.split_once('`') else { break };
        spans.push(span.to_string());
        match tail.strip_prefix(", ") {
            Some(next) if next.starts_with('`') => rest = next,
            _ => break,
        }
    }
    spans
}

/// Whether an argument takes a path or a count.
fn takes_a_path_or_a_count(arg: &clap::Arg) -> bool {
    let parsed = arg.get_value_parser().type_id();
    [TypeId::of::<PathBuf>(), TypeId::of::<u32>(), TypeId::of::<usize>(), TypeId::of::<u64>(), TypeId::of::<Shard>()]
        .into_iter()
        .any(|kind| parsed == kind)
}

/// An argument as clap spells it in usage: `--long VALUE` or `VALUE`.
fn spelled(arg: &clap::Arg) -> String {
    let value = arg
        .get_value_names()
        .and_then(|names| names.first())
        .map_or_else(|| arg.get_id().as_str().to_uppercase(), ToString::to_string);
    match arg.get_long() {
        Some(long) => format!("--{long} {value}"),
        None => value,
    }
}

/// Every subcommand, and the path and count arguments of each, spelled.
fn commands() -> BTreeMap<String, BTreeSet<String>> {
    Cli::command()
        .get_subcommands()
        .filter(|command| command.get_name() != "help")
        .map(|command| {
            let arguments = command.get_arguments().filter(|arg| takes_a_path_or_a_count(arg)).map(spelled).collect();
            (command.get_name().to_string(), arguments)
        })
        .collect()
}

/// Every function a test may name, by module path: `cli::outputs` for
/// `harness/cli/tests/cli/outputs.rs`, `sharedos_evidence::compare::significance`
/// for `harness/evidence/src/compare/significance.rs`.
fn functions_by_module() -> BTreeMap<String, BTreeSet<String>> {
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (package, folder) in folders_by_package() {
        let crate_root = Path::new(ROOT).join("harness").join(&folder);
        let mut files = Vec::new();
        rust_files(&crate_root.join("src"), &mut files);
        rust_files(&crate_root.join("tests"), &mut files);
        for file in files {
            let relative = file.strip_prefix(&crate_root).unwrap().with_extension("");
            let mut parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
            match parts.first().map(String::as_str) {
                // `src/a/b.rs` is `crate::a::b`.
                Some("src") => parts[0] = package.replace('-', "_"),
                // `tests/bin/a.rs` is `bin::a`, `tests/bin.rs` is `bin`.
                _ => drop(parts.remove(0)),
            }
            if matches!(parts.last().map(String::as_str), Some("lib" | "main" | "mod")) && parts.len() > 1 {
                parts.pop();
            }
            let text = std::fs::read_to_string(&file).unwrap();
            found.entry(parts.join("::")).or_default().extend(function_names(&text));
        }
    }
    found
}

fn rust_files(folder: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            into.push(path);
        }
    }
}

/// The name of every `fn name(` or `fn name<` in `text`.
fn function_names(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split("fn ").skip(1).filter_map(|rest| {
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        let after = rest[name.len()..].chars().next();
        (!name.is_empty() && matches!(after, Some('(' | '<'))).then_some(name)
    })
}

/// What is wrong with a row's Test cell: a test that does not exist where
/// it says, a script that is not there, or no test at all.
fn unknown_tests(tests: &str, functions: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let named = leading_spans(tests);
    if named.is_empty() {
        return vec![format!("no test named, but `{tests}`")];
    }
    named
        .into_iter()
        .filter(|test| {
            if test.contains('/') {
                return !Path::new(ROOT).join(test).is_file();
            }
            let Some((module, name)) = test.rsplit_once("::") else { return true };
            // A unit test in a file's `mod tests`, or a heavy stage's test in
            // its `mod heavy`, is named by its file's module and that one.
            let module = module.strip_suffix("::tests").or_else(|| module.strip_suffix("::heavy")).unwrap_or(module);
            !functions.get(module).is_some_and(|names| names.contains(name))
        })
        .map(|test| format!("no test `{test}`"))
        .collect()
}

/// A row's subcommands, or, for a service, the crate folder it names.
enum Subject {
    Commands(Vec<String>),
    Service(String),
}

fn subject(cell: &str, known: &BTreeMap<String, BTreeSet<String>>) -> Option<Subject> {
    let spans = leading_spans(cell);
    if !spans.is_empty() && spans.iter().all(|span| known.contains_key(span)) {
        return Some(Subject::Commands(spans));
    }
    // A service names the folder of its crate, as `` (`harness/mcp`) ``.
    let folder = cell.split('`').skip(1).step_by(2).find(|span| span.starts_with("harness/"))?;
    Path::new(ROOT).join(folder).is_dir().then(|| Subject::Service(folder.to_string()))
}

#[test]
fn docs_threat_table_covers_every_command_and_every_path_or_count() {
    let (classes, rows) = threat_table();
    let commands = commands();
    let functions = functions_by_module();
    let mut covered: BTreeSet<(String, String)> = BTreeSet::new();
    let mut services = BTreeSet::new();
    let mut extra = Vec::new();
    for row in &rows {
        let inputs = leading_spans(&row.input);
        let mut wrong = Vec::new();
        match subject(&row.command, &commands) {
            Some(Subject::Commands(names)) => {
                for name in names {
                    covered.insert((name.clone(), String::new()));
                    for input in &inputs {
                        let takes = commands[&name].contains(input);
                        // A flag the command does not have is a stale row.
                        if input.starts_with("--") && !takes && !input_is_a_flag_of(&name, input) {
                            wrong.push(format!("`{name}` has no {input}"));
                        }
                        if takes {
                            covered.insert((name.clone(), input.clone()));
                        }
                    }
                }
            }
            Some(Subject::Service(folder)) => drop(services.insert(folder)),
            None => wrong.push("neither a command nor a service's folder".to_string()),
        }
        if !classes.contains(&row.class) {
            wrong.push(format!("no attack class `{}`", row.class));
        }
        wrong.extend(unknown_tests(&row.tests, &functions));
        if !wrong.is_empty() {
            extra.push(format!("row {} ({} | {}): {}", row.index, row.command, row.input, wrong.join("; ")));
        }
    }
    let expected: BTreeSet<(String, String)> = commands
        .iter()
        .flat_map(|(name, inputs)| {
            std::iter::once((name.clone(), String::new()))
                .chain(inputs.iter().map(|input| (name.clone(), input.clone())))
        })
        .collect();
    let missing: Vec<String> = expected
        .difference(&covered)
        .map(|(name, input)| if input.is_empty() { format!("`{name}`") } else { format!("`{name}` `{input}`") })
        .collect();
    let unused: Vec<&String> = classes.iter().filter(|class| !rows.iter().any(|row| &row.class == *class)).collect();
    assert!(
        missing.is_empty() && extra.is_empty() && unused.is_empty(),
        "{DOCUMENT}, {HEADING}, and the code disagree\n  rows missing: {missing:?}\n  rows wrong: {extra:#?}\n  classes no row uses: {unused:?}"
    );
    // Counts, so an emptied or truncated table cannot pass.
    assert_eq!(covered.len(), expected.len(), "{DOCUMENT}: covered {covered:?}");
    assert!(expected.len() > commands.len() * 2, "the code gives too few arguments to compare: {commands:?}");
    assert!(rows.len() >= expected.len(), "{} rows for {} commands and arguments", rows.len(), expected.len());
    assert!(classes.len() >= 10, "{DOCUMENT}: {} attack classes defined", classes.len());
    assert!(services.len() >= 3, "{DOCUMENT}: services named {services:?}");
}

/// Whether `input` is a flag of `command` that takes neither a path nor a
/// count (such a row is allowed, though none is required).
fn input_is_a_flag_of(command: &str, input: &str) -> bool {
    let cli = Cli::command();
    let Some(found) = cli.find_subcommand(command) else { return false };
    let known = found
        .get_arguments()
        .any(|arg| spelled(arg) == input || arg.get_long().is_some_and(|long| input == format!("--{long}")));
    known
}
