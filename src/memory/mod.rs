//! Memory: the allocator that every buffer comes from, its reuse policy, and its statistics.
//!
//! The allocator lives in a thread-local, because arrays made from data exist before any
//! runtime does, and because each JS realm (the page, each worker) has its own module
//! instance: one realm, one allocator. Native tests run each test on its own thread, so each
//! sees only its own bytes.

pub mod allocator;
pub mod block;
pub mod device_errors;
mod heap;
pub mod history;
pub mod policy;
pub mod stats;
pub mod summary;
pub mod weak_list;

pub use allocator::{
    GpuBuffer, HostBlock, Usage, cache_bytes, cache_limit, clear_cache, memory_limit,
    reset_accumulated_stats, reset_peak_stats, set_cache_limit, set_memory_limit, snapshot, stats,
};
pub use heap::{segment, segments};
pub use policy::{Policy, Pool};
pub use stats::{Gauge, Scope, Stats};
