//! Size classes, rounding, and the reuse policies that decide whether a cached buffer serves a
//! request.

/// Requests under this many bytes go to the small pool.
pub const SMALL_POOL_LIMIT: u64 = 1 << 20;
/// Small-pool sizes are rounded up to a multiple of this (WebGPU's largest common alignment).
pub const SMALL_ROUNDING: u64 = 256;
/// Large-pool sizes are rounded up to a multiple of this.
pub const LARGE_ROUNDING: u64 = 64 << 10;

/// The two size classes, as PyTorch names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pool {
    Small,
    Large,
}

impl Pool {
    /// The pool of a request of `bytes`.
    pub fn of(bytes: u64) -> Pool {
        if bytes < SMALL_POOL_LIMIT {
            Pool::Small
        } else {
            Pool::Large
        }
    }

    /// The granularity sizes in this pool are rounded to.
    pub fn rounding(self) -> u64 {
        match self {
            Pool::Small => SMALL_ROUNDING,
            Pool::Large => LARGE_ROUNDING,
        }
    }

    /// PyTorch's key name: `small_pool` or `large_pool`.
    pub fn name(self) -> &'static str {
        match self {
            Pool::Small => "small_pool",
            Pool::Large => "large_pool",
        }
    }
}

/// The size a request of `bytes` is given: at least one rounding unit, rounded up to the
/// granularity of the request's pool (which the block keeps, whatever its rounded size).
///
/// ```
/// use tandem::memory::policy::rounded;
/// assert_eq!(rounded(1), 256);
/// assert_eq!(rounded(4 << 20), 4 << 20);
/// assert_eq!(rounded((1 << 20) + 1), (1 << 20) + (64 << 10));
/// ```
pub fn rounded(bytes: u64) -> u64 {
    let unit = Pool::of(bytes).rounding();
    bytes.max(1).div_ceil(unit) * unit
}

/// The allocator's rule for reusing freed buffers (`changeCurrentAllocator`): torch_npu's
/// pluggable allocator, reduced to the rules a page can use safely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// The default: PyTorch's splitting of cached buffers, MLX's rule for whole ones, and
    /// reserved memory held near the peak of live memory. Storage requests take the smallest
    /// free range that holds them, carved out of a cached buffer (requests under 1 MiB from
    /// buffers of 2 MiB, larger ones from any large buffer whose remainder stays at least
    /// 1 MiB); freed ranges merge with free neighbours. A buffer that is not split (a
    /// readback's staging buffer) is reused whole if it is smaller than both twice the request
    /// and the request plus two rounding units, as MLX reuses its buffers. Reserved GPU memory
    /// is kept within twice the peak of live GPU bytes.
    BestFit,
    /// Only a cached buffer of exactly the request's rounded size: no slack, but a mix of
    /// sizes finds fewer buffers to reuse.
    Exact,
    /// No reuse: every freed buffer is destroyed and every request creates one; the least
    /// memory held, the most device allocations.
    NoCache,
}

/// Every policy, the default first.
pub const POLICIES: [Policy; 3] = [Policy::BestFit, Policy::Exact, Policy::NoCache];

impl Policy {
    /// The policy of this name, such as `"best-fit"`.
    pub fn parse(name: &str) -> Option<Policy> {
        POLICIES.into_iter().find(|p| p.name() == name)
    }

    /// Every policy's name, quoted and joined for an error message.
    pub fn names() -> String {
        let quoted: Vec<String> = POLICIES
            .iter()
            .map(|p| format!("\"{}\"", p.name()))
            .collect();
        quoted.join(", ")
    }

    /// The name `changeCurrentAllocator` takes.
    pub fn name(self) -> &'static str {
        match self {
            Policy::BestFit => "best-fit",
            Policy::Exact => "exact",
            Policy::NoCache => "none",
        }
    }

    /// Whether freed buffers are kept at all; without a cache they are destroyed.
    pub fn caches(self) -> bool {
        self != Policy::NoCache
    }

    /// Whether a cached buffer of `size` bytes may serve, whole, a request whose rounded size
    /// is `request`, both of `pool`. Of the buffers that fit, the allocator takes the
    /// smallest. Asked of buffers that are not split: all of them under a policy that does
    /// not split, and readback staging buffers under every policy.
    pub fn fits(self, size: u64, request: u64, pool: Pool) -> bool {
        match self {
            Policy::BestFit => {
                size >= request && size < (2 * request).min(request + 2 * pool.rounding())
            }
            Policy::Exact => size == request,
            Policy::NoCache => false,
        }
    }

    /// Whether storage requests are carved out of larger buffers, any free range that holds
    /// them serving, as PyTorch's caching allocator splits its segments.
    pub fn splits(self) -> bool {
        self == Policy::BestFit
    }

    /// The most GPU bytes to keep reserved (live plus cached) when the peak of live GPU bytes
    /// is `peak_live`: before a new buffer is made, cached buffers are destroyed, least
    /// recently used first, until it fits. `None` leaves the cache to the cache limit alone.
    pub fn reserve_bound(self, peak_live: u64) -> Option<u64> {
        (self == Policy::BestFit).then(|| peak_live.saturating_mul(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_to_their_pools_granularity() {
        assert_eq!(Pool::of(SMALL_POOL_LIMIT - 1), Pool::Small);
        assert_eq!(Pool::of(SMALL_POOL_LIMIT), Pool::Large);
        assert_eq!(rounded(0), 256, "even an empty request takes a unit");
        assert_eq!(rounded(257), 512);
        assert_eq!(rounded(SMALL_POOL_LIMIT - 1), SMALL_POOL_LIMIT);
    }

    #[test]
    fn best_fit_reuses_within_two_units_and_under_twice_the_request() {
        let fits = |size, request| Policy::BestFit.fits(size, request, Pool::of(request));
        assert!(fits(1024, 1024));
        assert!(fits(1280, 1024), "one unit over");
        assert!(!fits(1536, 1024), "two units over");
        assert!(!fits(512, 256), "twice the request");
        assert!(!fits(768, 1024), "too small");
        let mib = 1 << 20;
        assert!(fits(4 * mib + LARGE_ROUNDING, 4 * mib));
        assert!(!fits(4 * mib + 2 * LARGE_ROUNDING, 4 * mib));
    }

    #[test]
    fn exact_and_none_policies() {
        assert!(Policy::Exact.fits(1024, 1024, Pool::Small));
        assert!(!Policy::Exact.fits(1280, 1024, Pool::Small));
        assert!(!Policy::NoCache.fits(1024, 1024, Pool::Small));
        assert!(Policy::BestFit.splits() && !Policy::Exact.splits() && !Policy::NoCache.splits());
        assert_eq!(Policy::BestFit.reserve_bound(100), Some(200));
        assert_eq!(Policy::Exact.reserve_bound(100), None);
        assert_eq!(Policy::parse("best-fit"), Some(Policy::BestFit));
        assert_eq!(Policy::parse("lru"), None);
    }
}
