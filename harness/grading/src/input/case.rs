//! Cases: which script a row runs, in which family, under which conditions.
//!
//! A case shares one script across its conditions; two conditions exist only
//! when the script and the expected answer are the same and only the world
//! differs.

pub mod expect_turn;

pub use expect_turn::TurnExpectation;
pub use sharedos_conformance_metadata::family::Family;

use crate::input::built_in_column::{column_ids, BuiltInColumn};
use crate::input::error::{LoadError, Site};
use crate::input::script::MAX_TEXT;
use serde::{Deserialize, Serialize};
use sharedos_world::options::WorldOptions;
use std::collections::BTreeMap;

/// Most conditions one case declares.
pub const MAX_CONDITIONS: usize = 16;

/// One world a case runs in: one matrix row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Condition {
    /// Unique within the case.
    pub id: String,
    /// Prose (not hashed).
    pub description: String,
    /// The fault injection armed before the turn.
    pub world: WorldOptions,
    /// How the turn must end, when the row is graded on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_turn: Option<TurnExpectation>,
    /// Why the guarantee holds only while SharedOS owns the loop; columns
    /// that do not declare their steps report the row out of scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_declared_steps: Option<String>,
    /// Columns that structurally cannot express this row, each with the
    /// reason its cell is declared `not_applicable` (keyed by column id).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_applicable_in: BTreeMap<String, String>,
}

/// A case file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Case {
    /// Editor hint pointing at the JSON Schema; ignored.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Case id; equals the file name without `.json`.
    pub id: String,
    /// The rule family.
    pub family: Family,
    /// The id of the adversary script the case runs.
    pub adversary: String,
    /// Prose (not hashed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Why the row is declared but never run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_implemented: Option<String>,
    /// The worlds it runs in (at least one).
    pub conditions: Vec<Condition>,
}

impl Case {
    /// The condition with this id.
    #[must_use]
    pub fn condition(&self, id: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.id == id)
    }

    /// Checks every bound the serde shape cannot express.
    pub(crate) fn check(&self, site: &Site<'_>) -> Result<(), LoadError> {
        site.child("id").id(&self.id)?;
        site.child("adversary").id(&self.adversary)?;
        if let Some(text) = &self.description {
            site.child("description").text(text, MAX_TEXT)?;
        }
        if let Some(text) = &self.not_implemented {
            site.child("notImplemented").text(text, MAX_TEXT)?;
        }
        let conditions = site.child("conditions");
        conditions.length(self.conditions.len(), 1, MAX_CONDITIONS, "conditions")?;
        for (i, condition) in self.conditions.iter().enumerate() {
            let at = conditions.index(i);
            condition.check(&at)?;
            if self.conditions[..i].iter().any(|c| c.id == condition.id) {
                return Err(at.child("id").duplicate_entry(format!(
                    "a condition id not used before in this case (`{}` repeats)",
                    condition.id
                )));
            }
        }
        Ok(())
    }
}

impl Condition {
    fn check(&self, site: &Site<'_>) -> Result<(), LoadError> {
        site.child("id").id(&self.id)?;
        site.child("description").text(&self.description, MAX_TEXT)?;
        crate::input::world_options::check(&self.world, &site.child("world"))?;
        if let Some(expectation) = &self.expect_turn {
            expect_turn::check(expectation, &site.child("expectTurn"))?;
        }
        if let Some(text) = &self.requires_declared_steps {
            site.child("requiresDeclaredSteps").text(text, MAX_TEXT)?;
        }
        let columns = site.child("notApplicableIn");
        for (column, reason) in &self.not_applicable_in {
            let at = columns.child(column);
            if BuiltInColumn::from_id(column).is_none() {
                let known = column_ids(&[]).join(", ");
                return Err(at.unknown_value(format!("the id of a built-in column (one of {known}), not `{column}`")));
            }
            at.text(reason, MAX_TEXT)?;
        }
        Ok(())
    }

    /// Why `column_id` cannot express this row, when the condition declares it.
    #[must_use]
    pub fn not_applicable_reason(&self, column_id: &str) -> Option<&str> {
        self.not_applicable_in.get(column_id).map(String::as_str)
    }
}
