//! The default policy: PyTorch's splitting of cached buffers, MLX's rule for whole ones, and
//! reserved memory held near the peak of live memory.

use super::{Pool, Reuse};

/// Storage requests take the smallest free range that holds them, carved out of a cached
/// buffer (requests under 1 MiB from buffers of 2 MiB, larger ones from any large buffer whose
/// remainder stays at least 1 MiB); freed ranges merge with free neighbours. A buffer that is
/// not split (a readback's staging buffer) is reused whole if it is smaller than both twice
/// the request and the request plus two rounding units, as MLX reuses its buffers. Reserved
/// GPU memory is kept within twice the peak of live GPU bytes.
pub struct BestFit;

impl Reuse for BestFit {
    fn name(&self) -> &'static str {
        "best-fit"
    }

    fn fits(&self, size: u64, request: u64, pool: Pool) -> bool {
        size >= request && size < (2 * request).min(request + 2 * pool.rounding())
    }

    fn splits(&self) -> bool {
        true
    }

    fn reserve_bound(&self, peak_live: u64) -> Option<u64> {
        Some(peak_live.saturating_mul(2))
    }
}
