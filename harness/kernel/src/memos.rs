//! Hashes a kernel may remember across the kernels that share them.

use sharedos_authz::authority::SnapshotHashes;
use sharedos_model::memo::Memo;
use sharedos_model::tool::ToolDefinition;
use std::sync::Arc;

/// How many distinct sets each memo keeps.
const CAPACITY: usize = 32;

/// Hashes remembered by the value they cover: the snapshot hash of a grant
/// set, and the catalogue hash of a listing. A host that builds many
/// kernels over the same fixtures (a conformance run) hands them one
/// through [`crate::kernel::KernelBuilder::hash_memos`], so each distinct
/// set is hashed once; a kernel without one keeps its own.
#[derive(Debug)]
pub struct HashMemos {
    /// Authority snapshot hashes, by sorted grant set.
    pub(crate) authority: SnapshotHashes,
    /// Catalogue hashes, by the listed tools.
    pub(crate) catalog: Memo<Vec<Arc<ToolDefinition>>, String>,
}

impl Default for HashMemos {
    fn default() -> HashMemos {
        HashMemos { authority: Memo::new(CAPACITY), catalog: Memo::new(CAPACITY) }
    }
}
