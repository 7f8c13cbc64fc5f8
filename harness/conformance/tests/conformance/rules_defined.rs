//! Every rule id the repository cites is defined under `docs/rules/`, every
//! definition there is cited, and no comment or document cites a
//! specification outside the repository. What counts as a citation is
//! written down in `docs/rules/README.md` ("What counts as a citation");
//! this file is its implementation.

use sharedos_grading::vocab::RULES_VERSION;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each family's letter and the file under `docs/rules/` that defines it.
const FAMILIES: [(char, &str); 6] = [
    ('R', "conformance.md"),
    ('E', "envelope.md"),
    ('K', "kernel.md"),
    ('M', "messaging.md"),
    ('D', "drivers.md"),
    ('W', "retryable-examples.md"),
];

/// Tokens that look like rule ids and are not, by the file they are in.
/// (Spelt in pieces, so that this file does not cite them.)
const NOT_RULES: [(&str, &str); 3] = [
    // Rust constants holding sample hashes.
    ("harness/conformance/tests/conformance/markdown.rs", concat!("R", "1")),
    ("harness/conformance/tests/conformance/markdown.rs", concat!("R", "2")),
    // A Python lint code, after `# noqa:`.
    ("harness/process/tests/standins/strays.py", concat!("E", "402")),
];

/// The folders whose comments and documents may not cite an outside
/// specification.
const OWN_FOLDERS: [&str; 5] = ["harness", "cases", "adversaries", "scripts", ".ci"];

/// The names, after their two-digit number, of the specification files the
/// rules were first read from.
const SPEC_FILE_STEMS: [&str; 12] = [
    "messaging-drivers",
    "vendor-streams",
    "field-and-style",
    "rule-families",
    "runtime-protocol",
    "vendor-lab",
    "conformance",
    "envelope",
    "messaging",
    "evidence",
    "kernel",
    "design",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir`, as paths relative to the repository root with
/// `/` separators, sorted; build output, dependencies and `.git` skipped.
fn files_under(root: &Path, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![if dir == "." { root.to_path_buf() } else { root.join(dir) }];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if !matches!(name.as_str(), "target" | "node_modules" | ".git") {
                    pending.push(path);
                }
            } else if kind.is_file() {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// Whether rule ids are used in `rel`: sources, Markdown, and the case and
/// adversary files; never `docs/rules/`, where they are defined.
fn may_cite(rel: &str) -> bool {
    if rel.starts_with("docs/rules/") {
        return false;
    }
    let ext = rel.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    matches!(ext, "rs" | "py" | "sh" | "js" | "mjs" | "toml" | "md")
        || rel == ".ci/run"
        || (ext == "json" && (rel.starts_with("cases/") || rel.starts_with("adversaries/")))
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The rule id spelt by `letter` and `digits` (leading zeros dropped).
fn rule(letter: char, digits: &str) -> Option<(char, u32)> {
    Some((letter.to_ascii_uppercase(), digits.parse().ok()?))
}

fn name(id: (char, u32)) -> String {
    format!("{}{}", id.0, id.1)
}

/// The id token starting at `at`, and where it ends: a family letter and
/// one to three digits, with no word character on either side.
fn token_at(chars: &[char], at: usize) -> Option<((char, u32), usize)> {
    let letter = *chars.get(at)?;
    if !"REKMDW".contains(letter) || (at > 0 && is_word(chars[at - 1])) {
        return None;
    }
    let end = (at + 1..chars.len()).find(|&i| !chars[i].is_ascii_digit()).unwrap_or(chars.len());
    let digits: String = chars[at + 1..end].iter().collect();
    if !(1..=3).contains(&digits.len()) || chars.get(end).is_some_and(|&c| is_word(c)) {
        return None;
    }
    Some((rule(letter, &digits)?, end))
}

/// The ids a line cites by tokens, and by ranges of two tokens of one family
/// joined by an en or em dash.
fn tokens(line: &str) -> Vec<(char, u32)> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let Some((first, end)) = token_at(&chars, at) else {
            at += 1;
            continue;
        };
        let mut next = end;
        while chars.get(next) == Some(&' ') {
            next += 1;
        }
        let mut last = None;
        if matches!(chars.get(next), Some('–' | '—')) {
            next += 1;
            while chars.get(next) == Some(&' ') {
                next += 1;
            }
            last = token_at(&chars, next);
        }
        match last {
            Some((to, after)) if to.0 == first.0 && to.1 > first.1 => {
                out.extend((first.1..=to.1).map(|n| (first.0, n)));
                at = after;
            }
            Some((to, after)) => {
                out.extend([first, to]);
                at = after;
            }
            None => {
                out.push(first);
                at = end;
            }
        }
    }
    out
}

/// The ids Rust identifiers cite by their names, as test names do: an
/// identifier starting with lower-case ids, each followed by `_`, and going
/// on with a letter or digit cites each of those ids.
fn test_names(line: &str) -> Vec<(char, u32)> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        if at > 0 && is_word(chars[at - 1]) {
            at += 1;
            continue;
        }
        let mut ids = Vec::new();
        let mut ends = Vec::new();
        let mut i = at;
        while let Some(&letter) = chars.get(i) {
            if !"rekmdw".contains(letter) {
                break;
            }
            let end = (i + 1..chars.len()).find(|&j| !chars[j].is_ascii_digit()).unwrap_or(chars.len());
            if !(1..=3).contains(&(end - i - 1)) || chars.get(end) != Some(&'_') {
                break;
            }
            let digits: String = chars[i + 1..end].iter().collect();
            let Some(id) = rule(letter, &digits) else { break };
            ids.push(id);
            ends.push(end + 1);
            i = end + 1;
        }
        let goes_on = |j: usize| chars.get(j).is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if !ids.is_empty() && !goes_on(i) {
            // The last prefix may be the start of the rest of the name.
            ids.pop();
            ends.pop();
        }
        match ends.last() {
            Some(&end) if goes_on(end) => {
                out.append(&mut ids);
                at = end;
            }
            _ => at += 1,
        }
    }
    out
}

/// Every citation in the repository: the id, and where it is cited.
fn citations(root: &Path) -> Vec<((char, u32), String)> {
    let mut out = Vec::new();
    for rel in files_under(root, ".").into_iter().filter(|rel| may_cite(rel)) {
        let Ok(text) = std::fs::read_to_string(root.join(&rel)) else { continue };
        for (n, line) in text.lines().enumerate() {
            let mut ids = tokens(line);
            ids.retain(|id| !NOT_RULES.iter().any(|&(file, token)| file == rel && token == name(*id)));
            if rel.ends_with(".rs") {
                ids.extend(test_names(line));
            }
            out.extend(ids.into_iter().map(|id| (id, format!("{rel}:{}", n + 1))));
        }
    }
    out
}

/// Every `### <ID>` heading under `docs/rules/`, with the file it is in.
fn definitions(root: &Path) -> Vec<((char, u32), String)> {
    let mut out = Vec::new();
    for rel in files_under(root, "docs/rules").into_iter().filter(|rel| rel.ends_with(".md")) {
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        for heading in text.lines().filter_map(|l| l.strip_prefix("### ")) {
            let heading = heading.trim();
            let chars: Vec<char> = heading.chars().collect();
            if let Some((id, end)) = token_at(&chars, 0) {
                if end == chars.len() && name(id) == heading {
                    out.push((id, rel.clone()));
                }
            }
        }
    }
    out
}

#[test]
fn every_cited_rule_id_is_defined_and_every_definition_is_cited() {
    let root = root();
    let cited = citations(&root);
    let defined = definitions(&root);
    let mut first_citation: BTreeMap<(char, u32), &str> = BTreeMap::new();
    for (id, at) in &cited {
        first_citation.entry(*id).or_insert(at);
    }
    let mut problems = Vec::new();
    let mut seen: BTreeMap<(char, u32), &str> = BTreeMap::new();
    for (id, file) in &defined {
        if let Some(other) = seen.insert(*id, file) {
            problems.push(format!("{} is defined twice, in {other} and {file}", name(*id)));
        }
        let home = FAMILIES.iter().find(|(letter, _)| *letter == id.0).map(|(_, f)| format!("docs/rules/{f}"));
        if home.as_deref() != Some(file.as_str()) {
            problems.push(format!("{} is defined in {file}, not in its family's file", name(*id)));
        }
    }
    for (id, at) in &first_citation {
        if !seen.contains_key(id) {
            problems.push(format!("{} is cited but not defined (cited at {at})", name(*id)));
        }
    }
    for (id, file) in &seen {
        if !first_citation.contains_key(id) {
            problems.push(format!("{} is defined in {file} but cited nowhere", name(*id)));
        }
    }
    assert!(problems.is_empty(), "{} problem(s):\n{}", problems.len(), problems.join("\n"));
    assert!(cited.len() > 100, "only {} citations found: the walk missed the repository", cited.len());
    assert!(
        seen.len() >= first_citation.len(),
        "{} definitions for {} distinct cited ids",
        seen.len(),
        first_citation.len()
    );
}

/// `text` with every `#` removed: the examples below are written with a `#`
/// inside each id, so that this file does not cite them.
fn example(text: &str) -> String {
    text.replace('#', "")
}

#[test]
fn the_citation_rule_reads_tokens_ranges_and_test_names() {
    let ids = |v: Vec<(char, u32)>| v.into_iter().map(name).collect::<Vec<_>>().join(" ");
    let cites = |text: &str| ids(tokens(&example(text)));
    let names = |text: &str| ids(test_names(&example(text)));
    assert_eq!(cites("W#1 is not W#12, nor 0xD#1, E#2E, R#2D#2 or E#1234"), example("W#1 W#12"));
    assert_eq!(cites("(E#1–E#4, K#6 – K#9; D#30—D#31)"), example("E#1 E#2 E#3 E#4 K#6 K#7 K#8 K#9 D#30 D#31"));
    assert_eq!(cites("W#01 and M#1-M#3, E#4–E#1"), example("W#1 M#1 M#3 E#4 E#1"));
    assert_eq!(names("fn w#6_w#7_w#20_e#81_a_runtime_claim() {}"), example("W#6 W#7 W#20 E#81"));
    assert_eq!(names("fn e#1_d#2_(x) r#39_a d#1_2x"), example("E#1 R#39 D#1"));
    assert_eq!(names("fn a_r#39_b() e#2e_x x86_64 record_e#2e r#1234_x"), "");
}

/// Where `line` cites a specification outside the repository, if it does.
fn outside_citation(line: &str) -> Option<&'static str> {
    // (Spelt in pieces, so that this file does not match itself.)
    if line.contains(concat!("..", "/shared")) || line.contains(concat!("shared", "/spec")) {
        return Some("a path to the outside specification");
    }
    let chars: Vec<char> = line.chars().collect();
    for at in 0..chars.len().saturating_sub(3) {
        let numbered = chars[at].is_ascii_digit() && chars[at + 1].is_ascii_digit() && chars[at + 2] == '-';
        if !numbered || (at > 0 && chars[at - 1].is_ascii_alphanumeric()) {
            continue;
        }
        let rest: String = chars[at + 3..].iter().collect();
        for stem in SPEC_FILE_STEMS {
            if rest.strip_prefix(stem).is_some_and(|after| !after.starts_with(|c: char| c.is_ascii_alphanumeric())) {
                return Some("a specification file name");
            }
        }
    }
    let outside_standard = line.contains("JSON-RPC")
        || line.match_indices("RFC ").any(|(i, _)| line[i + 4..].starts_with(|c: char| c.is_ascii_digit()));
    let section = line
        .match_indices('§')
        .any(|(i, s)| line[i + s.len()..].trim_start().starts_with(|c: char| c.is_ascii_digit()));
    (section && !outside_standard).then_some("a section of the outside specification")
}

#[test]
fn nothing_cites_the_outside_specification() {
    let root = root();
    let mut problems = Vec::new();
    let mut read = 0;
    for rel in OWN_FOLDERS.iter().flat_map(|dir| files_under(&root, dir)) {
        let Ok(text) = std::fs::read_to_string(root.join(&rel)) else { continue };
        read += 1;
        for (n, line) in text.lines().enumerate() {
            if let Some(what) = outside_citation(line) {
                problems.push(format!("{rel}:{}: {what}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(read > 100, "only {read} files read");
    assert!(problems.is_empty(), "cite the rule id or its file under docs/rules/ instead:\n{}", problems.join("\n"));
    // The examples are written with `#` for the section sign and `%` inside
    // each file name, so that this file does not match itself.
    let spelt = |text: &str| text.replace('#', "\u{a7}").replace('%', "");
    assert!(outside_citation(&spelt("(`2%0-envelope.md` #4.3)")).is_some());
    assert!(outside_citation(&spelt("in the order of 3%0-kernel #2")).is_some());
    assert!(outside_citation(&spelt("see 4%0-messaging-drivers for the codecs")).is_some());
    assert!(outside_citation(&spelt("# 2.11 steps 3–6")).is_some());
    assert!(outside_citation(&spelt("a path through ..%/shared")).is_some());
    assert!(outside_citation(&spelt("RFC 7235 #2.1: the scheme is case-insensitive")).is_none());
    assert!(outside_citation(&spelt("JSON-RPC 2.0 #5 requires it")).is_none());
    assert!(outside_citation(&spelt("retryable-w17-envelope-refused-write, 64-bit, #-sign")).is_none());
}

/// The anchors GitHub gives the headings of a Markdown text.
fn anchors(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.trim_start_matches('#').strip_prefix(' ').filter(|_| l.starts_with('#')))
        .map(|heading| {
            heading
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect::<String>()
        })
        .collect()
}

#[test]
fn every_link_under_docs_rules_resolves_inside_the_repository() {
    let root = root();
    let dir = root.join("docs/rules");
    let mut problems = Vec::new();
    let mut links = 0;
    for rel in files_under(&root, "docs/rules") {
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        for (n, line) in text.lines().enumerate() {
            for (i, _) in line.match_indices("](") {
                let Some(len) = line[i + 2..].find(')') else { continue };
                let target = &line[i + 2..i + 2 + len];
                links += 1;
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                if target.contains("://") || target.starts_with("mailto:") {
                    problems.push(format!("{rel}:{}: {target} leaves the repository", n + 1));
                    continue;
                }
                let file = if path.is_empty() { root.join(&rel) } else { dir.join(path) };
                if !file.exists() {
                    problems.push(format!("{rel}:{}: {target} does not exist", n + 1));
                } else if !anchor.is_empty() && (path.is_empty() || path.ends_with(".md")) {
                    let text = std::fs::read_to_string(&file).unwrap_or_default();
                    if !anchors(&text).contains(anchor) {
                        problems.push(format!("{rel}:{}: {target} names no heading", n + 1));
                    }
                }
            }
        }
    }
    assert!(links > 100, "only {links} links found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_version_history_ends_at_rules_version() {
    let text = std::fs::read_to_string(root().join("docs/rules/versions.md")).unwrap();
    let versions: Vec<u32> =
        text.lines().filter_map(|l| l.strip_prefix("| ")?.split_once(" |")?.0.trim().parse().ok()).collect();
    let expected: Vec<u32> = (1..=versions.len() as u32).collect();
    assert_eq!(versions, expected, "one row per version, in order");
    assert_eq!(versions.last().map(u32::to_string).as_deref(), Some(RULES_VERSION));
}
