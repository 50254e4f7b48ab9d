//! No reuse at all.

use super::{Pool, Reuse};

/// Every freed buffer is destroyed and every request creates one: the least memory held, the
/// most device allocations.
pub struct NoCache;

impl Reuse for NoCache {
    fn name(&self) -> &'static str {
        "none"
    }

    fn caches(&self) -> bool {
        false
    }

    fn fits(&self, _size: u64, _request: u64, _pool: Pool) -> bool {
        false
    }
}
