//! MLX's reuse rule, the default.

use super::{Pool, Reuse};

/// The smallest cached buffer at least as big as the request and smaller than both twice the
/// request and the request plus two rounding units: reuse without wasting more than a bounded
/// slack per block.
pub struct BestFit;

impl Reuse for BestFit {
    fn name(&self) -> &'static str {
        "best-fit"
    }

    fn fits(&self, size: u64, request: u64, pool: Pool) -> bool {
        size >= request && size < (2 * request).min(request + 2 * pool.rounding())
    }
}
