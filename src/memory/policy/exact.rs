//! Reuse of same-sized buffers only.

use super::{Pool, Reuse};

/// Only a cached buffer of exactly the request's rounded size: no slack, but a mix of sizes
/// finds fewer buffers to reuse.
pub struct Exact;

impl Reuse for Exact {
    fn name(&self) -> &'static str {
        "exact"
    }

    fn fits(&self, size: u64, request: u64, _pool: Pool) -> bool {
        size == request
    }
}
