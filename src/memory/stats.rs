//! The allocator's statistics under PyTorch's names: per metric, a gauge for each of the
//! pools `all`, `large_pool`, `small_pool`, `cpu` and `gpu`, plus event counters.

use crate::memory::policy::Pool;
use crate::stream::Device;

/// One statistic: its current value, the highest it has been since the last peak reset, and
/// the totals added and removed since the last accumulated reset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gauge {
    pub current: u64,
    pub peak: u64,
    pub allocated: u64,
    pub freed: u64,
}

impl Gauge {
    fn add(&mut self, n: u64) {
        self.current += n;
        self.allocated += n;
        self.peak = self.peak.max(self.current);
    }

    fn remove(&mut self, n: u64) {
        self.current -= n;
        self.freed += n;
    }
}

/// The pools a statistic is kept for, in PyTorch's key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    All,
    LargePool,
    SmallPool,
    Cpu,
    Gpu,
}

impl Scope {
    pub const ALL: [Scope; 5] = [
        Scope::All,
        Scope::LargePool,
        Scope::SmallPool,
        Scope::Cpu,
        Scope::Gpu,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scope::All => "all",
            Scope::LargePool => "large_pool",
            Scope::SmallPool => "small_pool",
            Scope::Cpu => "cpu",
            Scope::Gpu => "gpu",
        }
    }

    /// The scope of one device.
    pub fn device(device: Device) -> Scope {
        match device {
            Device::Cpu => Scope::Cpu,
            Device::Gpu => Scope::Gpu,
        }
    }
}

/// One metric's gauges, one per [`Scope`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Metric([Gauge; 5]);

impl Metric {
    pub fn get(&self, scope: Scope) -> Gauge {
        self.0[scope as usize]
    }

    /// The gauges a block of `device` in `pool` counts in.
    fn scopes(device: Device, pool: Pool) -> [Scope; 3] {
        let pool = match pool {
            Pool::Large => Scope::LargePool,
            Pool::Small => Scope::SmallPool,
        };
        [Scope::All, pool, Scope::device(device)]
    }

    fn add(&mut self, device: Device, pool: Pool, n: u64) {
        for scope in Metric::scopes(device, pool) {
            self.0[scope as usize].add(n);
        }
    }

    fn remove(&mut self, device: Device, pool: Pool, n: u64) {
        for scope in Metric::scopes(device, pool) {
            self.0[scope as usize].remove(n);
        }
    }

    fn gauges_mut(&mut self) -> impl Iterator<Item = &mut Gauge> {
        self.0.iter_mut()
    }

    /// The peak of `scope`'s gauge (of every gauge, without one) becomes its current value.
    pub(crate) fn reset_peak(&mut self, scope: Option<Scope>) {
        for (i, gauge) in self.0.iter_mut().enumerate() {
            if scope.is_none_or(|s| s as usize == i) {
                gauge.peak = gauge.current;
            }
        }
    }
}

/// Every statistic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Live blocks (arrays' copies, staging and uniform buffers).
    pub allocation: Metric,
    /// Buffers that exist: live ones and cached ones.
    pub segment: Metric,
    /// Live blocks; the same as `allocation`.
    pub active: Metric,
    /// Free ranges of segments that also hold live blocks: memory the cache cannot release
    /// until those blocks go (PyTorch's "inactive split" blocks).
    pub inactive_split: Metric,
    /// Bytes of those ranges.
    pub inactive_split_bytes: Metric,
    /// Bytes of live blocks, at their rounded sizes.
    pub allocated_bytes: Metric,
    /// Bytes of live and cached buffers.
    pub reserved_bytes: Metric,
    /// Bytes of live blocks; the same as `allocated_bytes`.
    pub active_bytes: Metric,
    /// Bytes that live blocks were asked for, before rounding.
    pub requested_bytes: Metric,
    pub num_alloc_retries: u64,
    pub num_ooms: u64,
    pub num_sync_all_streams: u64,
    /// GPU buffers created (`createBuffer` calls), as torch counts `cudaMalloc` calls. Host
    /// copies are `Vec`s in wasm's heap, not device allocations: they count as `cpu`
    /// segments, not here.
    pub num_device_alloc: u64,
    /// GPU buffers destroyed.
    pub num_device_free: u64,
    pub num_cache_hits: u64,
    pub num_cache_misses: u64,
    pub cpu_to_gpu: u64,
    pub gpu_to_cpu: u64,
}

impl Stats {
    /// A new segment of `size` bytes was created: a GPU buffer, or a host copy.
    pub(crate) fn segment_alloc(&mut self, device: Device, pool: Pool, size: u64) {
        self.segment.add(device, pool, 1);
        self.reserved_bytes.add(device, pool, size);
        if device == Device::Gpu {
            self.num_device_alloc += 1;
        }
    }

    /// A segment of `size` bytes was destroyed.
    pub(crate) fn segment_free(&mut self, device: Device, pool: Pool, size: u64) {
        self.segment.remove(device, pool, 1);
        self.reserved_bytes.remove(device, pool, size);
        if device == Device::Gpu {
            self.num_device_free += 1;
        }
    }

    /// A buffer of `size` bytes went live for a request of `requested` bytes.
    pub(crate) fn activate(&mut self, device: Device, pool: Pool, size: u64, requested: u64) {
        self.allocation.add(device, pool, 1);
        self.active.add(device, pool, 1);
        self.allocated_bytes.add(device, pool, size);
        self.active_bytes.add(device, pool, size);
        self.requested_bytes.add(device, pool, requested);
    }

    /// A live buffer was let go (to the cache, or to be destroyed).
    pub(crate) fn deactivate(&mut self, device: Device, pool: Pool, size: u64, requested: u64) {
        self.allocation.remove(device, pool, 1);
        self.active.remove(device, pool, 1);
        self.allocated_bytes.remove(device, pool, size);
        self.active_bytes.remove(device, pool, size);
        self.requested_bytes.remove(device, pool, requested);
    }

    /// A segment's inactive split ranges went from `before` to `after`, each `(count,
    /// bytes)`.
    pub(crate) fn inactive_split_change(
        &mut self,
        device: Device,
        pool: Pool,
        before: (u64, u64),
        after: (u64, u64),
    ) {
        let change = |metric: &mut Metric, from: u64, to: u64| {
            if to > from {
                metric.add(device, pool, to - from);
            } else if from > to {
                metric.remove(device, pool, from - to);
            }
        };
        change(&mut self.inactive_split, before.0, after.0);
        change(&mut self.inactive_split_bytes, before.1, after.1);
    }

    /// `bytes` were copied to `to` from the other device.
    pub(crate) fn transfer(&mut self, to: Device, bytes: u64) {
        match to {
            Device::Gpu => self.cpu_to_gpu += bytes,
            Device::Cpu => self.gpu_to_cpu += bytes,
        }
    }

    fn metrics_mut(&mut self) -> [&mut Metric; 9] {
        [
            &mut self.allocation,
            &mut self.segment,
            &mut self.active,
            &mut self.inactive_split,
            &mut self.inactive_split_bytes,
            &mut self.allocated_bytes,
            &mut self.reserved_bytes,
            &mut self.active_bytes,
            &mut self.requested_bytes,
        ]
    }

    /// Every peak becomes its current value (PyTorch's `reset_peak_memory_stats`).
    pub(crate) fn reset_peaks(&mut self) {
        for metric in self.metrics_mut() {
            for gauge in metric.gauges_mut() {
                gauge.peak = gauge.current;
            }
        }
    }

    /// Totals and event counters start again from zero (PyTorch's
    /// `reset_accumulated_memory_stats`); current values and peaks stay.
    pub(crate) fn reset_accumulated(&mut self) {
        for metric in self.metrics_mut() {
            for gauge in metric.gauges_mut() {
                gauge.allocated = 0;
                gauge.freed = 0;
            }
        }
        self.num_alloc_retries = 0;
        self.num_ooms = 0;
        self.num_sync_all_streams = 0;
        self.num_device_alloc = 0;
        self.num_device_free = 0;
        self.num_cache_hits = 0;
        self.num_cache_misses = 0;
        self.cpu_to_gpu = 0;
        self.gpu_to_cpu = 0;
    }

    /// Every statistic as PyTorch's flat `memory_stats()` keys, sorted by key.
    pub fn flat(&self) -> Vec<(String, u64)> {
        let metrics = [
            ("active", &self.active),
            ("active_bytes", &self.active_bytes),
            ("allocated_bytes", &self.allocated_bytes),
            ("allocation", &self.allocation),
            ("inactive_split", &self.inactive_split),
            ("inactive_split_bytes", &self.inactive_split_bytes),
            ("requested_bytes", &self.requested_bytes),
            ("reserved_bytes", &self.reserved_bytes),
            ("segment", &self.segment),
        ];
        let mut keys = Vec::new();
        for (name, metric) in metrics {
            for scope in Scope::ALL {
                let gauge = metric.get(scope);
                for (field, value) in [
                    ("allocated", gauge.allocated),
                    ("current", gauge.current),
                    ("freed", gauge.freed),
                    ("peak", gauge.peak),
                ] {
                    keys.push((format!("{name}.{}.{field}", scope.name()), value));
                }
            }
        }
        keys.extend([
            ("num_alloc_retries".to_string(), self.num_alloc_retries),
            ("num_cache_hits".to_string(), self.num_cache_hits),
            ("num_cache_misses".to_string(), self.num_cache_misses),
            ("num_device_alloc".to_string(), self.num_device_alloc),
            ("num_device_free".to_string(), self.num_device_free),
            ("num_ooms".to_string(), self.num_ooms),
            (
                "num_sync_all_streams".to_string(),
                self.num_sync_all_streams,
            ),
            ("transfer_bytes.cpu_to_gpu".to_string(), self.cpu_to_gpu),
            ("transfer_bytes.gpu_to_cpu".to_string(), self.gpu_to_cpu),
        ]);
        keys.sort();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_counts_in_all_its_pool_and_its_device() {
        let mut s = Stats::default();
        s.segment_alloc(Device::Gpu, Pool::Large, 4 << 20);
        s.activate(Device::Gpu, Pool::Large, 4 << 20, 4_000_000);
        s.segment_alloc(Device::Cpu, Pool::Small, 256);
        s.activate(Device::Cpu, Pool::Small, 256, 100);
        let bytes = |scope| s.active_bytes.get(scope).current;
        assert_eq!(bytes(Scope::All), (4 << 20) + 256);
        assert_eq!(bytes(Scope::LargePool), 4 << 20);
        assert_eq!(bytes(Scope::SmallPool), 256);
        assert_eq!(bytes(Scope::Gpu), 4 << 20);
        assert_eq!(bytes(Scope::Cpu), 256);
        assert_eq!(s.requested_bytes.get(Scope::All).current, 4_000_100);
        s.deactivate(Device::Gpu, Pool::Large, 4 << 20, 4_000_000);
        assert_eq!(s.active_bytes.get(Scope::All).current, 256);
        assert_eq!(s.active_bytes.get(Scope::All).peak, (4 << 20) + 256);
        assert_eq!(
            s.reserved_bytes.get(Scope::All).current,
            (4 << 20) + 256,
            "still cached"
        );
    }

    #[test]
    fn inactive_split_changes_add_and_remove() {
        let mut s = Stats::default();
        s.inactive_split_change(Device::Gpu, Pool::Small, (0, 0), (2, 1024));
        s.inactive_split_change(Device::Gpu, Pool::Small, (2, 1024), (1, 256));
        let g = s.inactive_split_bytes.get(Scope::SmallPool);
        assert_eq!(
            (g.current, g.peak, g.allocated, g.freed),
            (256, 1024, 1024, 768)
        );
        assert_eq!(s.inactive_split.get(Scope::Gpu).current, 1);
    }

    #[test]
    fn resets_keep_current_values() {
        let mut s = Stats::default();
        s.segment_alloc(Device::Cpu, Pool::Small, 512);
        s.activate(Device::Cpu, Pool::Small, 512, 512);
        s.deactivate(Device::Cpu, Pool::Small, 512, 512);
        s.activate(Device::Cpu, Pool::Small, 512, 512);
        s.reset_peaks();
        s.reset_accumulated();
        let g = s.active_bytes.get(Scope::All);
        assert_eq!((g.current, g.peak, g.allocated, g.freed), (512, 512, 0, 0));
        assert_eq!(s.num_device_alloc, 0);
    }

    #[test]
    fn flat_keys_are_sorted_and_complete() {
        let keys = Stats::default().flat();
        assert_eq!(keys.len(), 9 * 5 * 4 + 9);
        assert!(keys.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(
            keys.iter()
                .any(|(k, _)| k == "reserved_bytes.small_pool.peak")
        );
    }
}
