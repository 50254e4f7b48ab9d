//! Counters of array storage bytes per device and of bytes moved between devices.

use std::cell::RefCell;

use crate::stream::Device;

/// One PyTorch-style statistic: its current value, the highest it has been since the last
/// reset, and the totals added and removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gauge {
    pub current: u64,
    pub peak: u64,
    pub allocated: u64,
    pub freed: u64,
}

impl Gauge {
    fn add(&mut self, bytes: u64) {
        self.current += bytes;
        self.allocated += bytes;
        self.peak = self.peak.max(self.current);
    }

    fn remove(&mut self, bytes: u64) {
        self.current -= bytes;
        self.freed += bytes;
    }
}

/// Live array storage, per device and in all, and bytes transferred each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Host (wasm) and GPU copies together; its peak is the peak of the sum.
    pub all: Gauge,
    pub cpu: Gauge,
    pub gpu: Gauge,
    pub cpu_to_gpu: u64,
    pub gpu_to_cpu: u64,
}

impl Stats {
    /// The gauge of one device.
    pub fn device(&self, device: Device) -> &Gauge {
        match device {
            Device::Cpu => &self.cpu,
            Device::Gpu => &self.gpu,
        }
    }

    fn device_mut(&mut self, device: Device) -> &mut Gauge {
        match device {
            Device::Cpu => &mut self.cpu,
            Device::Gpu => &mut self.gpu,
        }
    }
}

thread_local! {
    static STATS: RefCell<Stats> = RefCell::new(Stats::default());
}

/// The figures so far.
pub fn stats() -> Stats {
    STATS.with(|s| *s.borrow())
}

/// A copy of `bytes` came to exist on `device`.
pub(crate) fn record_alloc(device: Device, bytes: u64) {
    STATS.with(|s| {
        let mut s = s.borrow_mut();
        s.all.add(bytes);
        s.device_mut(device).add(bytes);
    });
}

/// A copy of `bytes` on `device` was let go.
pub(crate) fn record_free(device: Device, bytes: u64) {
    STATS.with(|s| {
        let mut s = s.borrow_mut();
        s.all.remove(bytes);
        s.device_mut(device).remove(bytes);
    });
}

/// `bytes` were copied to `to` from the other device.
pub(crate) fn record_transfer(to: Device, bytes: u64) {
    STATS.with(|s| {
        let mut s = s.borrow_mut();
        match to {
            Device::Gpu => s.cpu_to_gpu += bytes,
            Device::Cpu => s.gpu_to_cpu += bytes,
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_of_all_is_the_peak_of_the_sum() {
        record_alloc(Device::Cpu, 100);
        record_free(Device::Cpu, 100);
        record_alloc(Device::Gpu, 60);
        let s = stats();
        assert_eq!(s.all.peak, 100, "never more than 100 bytes lived at once");
        assert_eq!(s.cpu.peak + s.gpu.peak, 160);
        assert_eq!(
            (s.all.allocated, s.all.freed, s.all.current),
            (160, 100, 60)
        );
    }
}
