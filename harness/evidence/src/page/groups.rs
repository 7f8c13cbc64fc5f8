//! The rows of a manifest by family, in the manifest's `families` order:
//! the heatmap's rows and the table's sections. A row no family lists
//! (a SharedOS manifest lists none) falls in a last group, `other`.

use sharedos_grading::output::manifest::{Manifest, ManifestRow};
use std::collections::{BTreeMap, BTreeSet};

/// The name of the group of rows no family lists.
pub const OTHER: &str = "other";

/// One family's rows.
#[derive(Debug, Clone)]
pub struct Group<'m> {
    /// The family's wire name (`fail_closed`).
    pub family: String,
    /// Its rows, in the order the family lists them.
    pub rows: Vec<&'m ManifestRow>,
}

impl Group<'_> {
    /// The family for people (`fail closed`).
    #[must_use]
    pub fn title(&self) -> String {
        self.family.replace('_', " ")
    }
}

/// The manifest's rows by family; every row once.
#[must_use]
pub fn groups(manifest: &Manifest) -> Vec<Group<'_>> {
    let by_key: BTreeMap<(&str, &str), &ManifestRow> =
        manifest.rows.iter().map(|row| ((row.case_id.as_str(), row.condition_id.as_str()), row)).collect();
    let mut placed: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut groups = Vec::new();
    for family in &manifest.families {
        let rows: Vec<&ManifestRow> = family
            .rows
            .iter()
            .filter_map(|r| {
                let key = (r.case_id.as_str(), r.condition_id.as_str());
                by_key.get(&key).copied().filter(|_| placed.insert(key))
            })
            .collect();
        groups.push(Group { family: family.family.as_str().to_string(), rows });
    }
    let rest: Vec<&ManifestRow> = manifest
        .rows
        .iter()
        .filter(|row| !placed.contains(&(row.case_id.as_str(), row.condition_id.as_str())))
        .collect();
    if !rest.is_empty() {
        groups.push(Group { family: OTHER.to_string(), rows: rest });
    }
    groups
}

/// Each row's family, by `case/condition`.
#[must_use]
pub fn family_of<'g>(groups: &'g [Group<'_>]) -> BTreeMap<String, &'g str> {
    groups
        .iter()
        .flat_map(|g| {
            g.rows.iter().map(move |row| (format!("{}/{}", row.case_id, row.condition_id), g.family.as_str()))
        })
        .collect()
}
