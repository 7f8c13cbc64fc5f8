//! The page's frame: escaping, the document around the sections (inline
//! style, the data element, inline script, a policy that forbids every
//! fetch), and the header.

use crate::page::status;
use sharedos_grading::output::manifest::Manifest;
use sharedos_grading::vocab::CellStatus;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The page's style sheet.
const STYLE: &str = include_str!("page.css");
/// The page's script.
const SCRIPT: &str = include_str!("page.js");

/// Nothing is fetched: no script, style, image, font or connection comes
/// from anywhere but the page itself.
const POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// `text` safe in element content and in a quoted attribute value.
#[must_use]
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// JSON text safe inside a `<script>` element: every `<` is written as
/// the JSON escape `\u003c`, so no string in it can close the element or
/// open a comment; the JSON means the same.
#[must_use]
pub fn escape_script_json(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// The mark in every page's head by which `report --html` knows a page
/// it may write over from a file of somebody else's.
pub const GENERATOR: &str = "<meta name=\"generator\" content=\"sharedos-conformance\">";

/// The whole document around `body`, with `data` (JSON) embedded.
#[must_use]
pub fn document(body: &str, data: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n{GENERATOR}\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">\n\
         <title>SharedOS conformance matrix</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n{body}</main>\n\
         <aside id=\"drilldown\" hidden tabindex=\"-1\" aria-labelledby=\"dd-title\">\n\
         <div class=\"dd-head\"><h2 id=\"dd-title\">Cell</h2>\
         <button type=\"button\" id=\"dd-close\" aria-label=\"Close the drill-down\">\u{d7}</button></div>\n\
         <div id=\"dd-body\"></div>\n</aside>\n\
         <script type=\"application/json\" id=\"data\">{}</script>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        escape_script_json(data)
    )
}

/// The first characters of a hash, the whole of it on hover.
fn short_hash(hash: &str) -> String {
    let short: String = hash.chars().take(12).collect();
    format!("<code title=\"{}\">{}</code>", escape_html(hash), escape_html(&short))
}

fn fact(out: &mut String, name: &str, value: &str) {
    let _ = write!(out, "<div><dt>{name}</dt><dd>{value}</dd></div>");
}

fn facts(manifest: &Manifest) -> String {
    let mut out = String::from("<dl class=\"facts\">");
    let rules = manifest.rules_version.as_deref().unwrap_or("not stated");
    fact(&mut out, "Rules version", &escape_html(rules));
    fact(&mut out, "Judge version", &escape_html(&manifest.judge_version));
    fact(&mut out, "Case set", &short_hash(&manifest.case_set_hash));
    fact(&mut out, "World set", &short_hash(&manifest.world_set_hash));
    if let Some(root) = &manifest.evidence_root {
        fact(&mut out, "Evidence root", &short_hash(root));
    }
    if let Some(scheme) = &manifest.hash_scheme {
        fact(&mut out, "Hash scheme", &format!("<code>{}</code>", escape_html(scheme)));
    }
    out.push_str("</dl>\n");
    out
}

fn totals(manifest: &Manifest) -> String {
    let mut counts: BTreeMap<CellStatus, usize> = BTreeMap::new();
    for cell in manifest.rows.iter().flat_map(|r| &r.cells) {
        *counts.entry(cell.status).or_default() += 1;
    }
    let mut out = String::from("<ul class=\"totals\" aria-label=\"Cells by status\">");
    for status in status::WORST_FIRST {
        let Some(n) = counts.get(&status) else { continue };
        let _ = write!(
            out,
            "<li class=\"chip {}\"><span aria-hidden=\"true\">{}</span> {} <b>{n}</b></li>",
            status::class(status),
            status::glyph(status),
            status.label()
        );
    }
    out.push_str("</ul>\n");
    out
}

fn columns(manifest: &Manifest) -> String {
    let names: Vec<String> = manifest
        .columns
        .iter()
        .map(|c| {
            // The runtime the column's records name (ADR 0007): another CLI
            // version or recipe is another harness.
            let runtime = c.runtime.as_ref().map_or_else(String::new, |runtime| {
                format!(" <small class=\"runtime\">{}</small>", escape_html(&runtime.describe()))
            });
            format!("<li>{} <code>{}</code>{runtime}</li>", escape_html(&c.label), escape_html(&c.id))
        })
        .collect();
    format!("<ul class=\"columns\" aria-label=\"Columns\">{}</ul>\n", names.concat())
}

/// The header: what the manifest is, and its totals.
#[must_use]
pub fn header(manifest: &Manifest) -> String {
    let cells: usize = manifest.rows.iter().map(|r| r.cells.len()).sum();
    format!(
        "<header class=\"top\">\n<div class=\"title\"><h1>SharedOS conformance matrix</h1>\
         <p class=\"sub\">{} rows \u{d7} {} columns \u{b7} {cells} cells</p></div>\n{}{}{}</header>\n",
        manifest.rows.len(),
        manifest.columns.len(),
        facts(manifest),
        totals(manifest),
        columns(manifest)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_script_text_are_escaped() {
        assert_eq!(escape_html("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
        assert_eq!(escape_script_json("\"</script><!--\""), "\"\\u003c/script>\\u003c!--\"");
    }
}
