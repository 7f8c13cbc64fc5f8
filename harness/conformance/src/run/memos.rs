//! What one worker remembers between the rows it runs.

use sharedos_kernel::memos::HashMemos;
use sharedos_model::canonical::{canonical_bytes, CanonicalError};
use sharedos_model::memo::Memo;
use sharedos_model::tool::ToolDefinition;
use std::rc::Rc;
use std::sync::Arc;

/// How many distinct tool lists the memo keeps.
const CAPACITY: usize = 32;

/// Hashes and canonical bytes remembered by the value they cover, shared
/// by the rows one worker runs: most worlds list the same catalogue and
/// resolve the same grants, so each is written and hashed once per worker.
/// Every answer is the one its value gives, so results do not depend on
/// which rows a worker ran before.
#[derive(Debug)]
pub struct RunMemos {
    /// Handed to the kernel of every world these rows build.
    pub kernel: Rc<HashMemos>,
    /// Canonical bytes of a world's requested tools.
    tools: Memo<Vec<ToolDefinition>, Arc<[u8]>>,
}

impl Default for RunMemos {
    fn default() -> RunMemos {
        RunMemos { kernel: Rc::default(), tools: Memo::new(CAPACITY) }
    }
}

impl RunMemos {
    /// The canonical bytes of `tools`.
    ///
    /// # Errors
    /// When the tools have no canonical form (they always have).
    pub fn tool_bytes(&self, tools: &[ToolDefinition]) -> Result<Arc<[u8]>, CanonicalError> {
        self.tools.get_or_compute(
            |known| known.as_slice() == tools,
            || tools.to_vec(),
            || canonical_bytes(tools).map(Arc::from),
        )
    }
}
