//! GPU timestamps around each submit, for the monitor's `utilization.gpu`: an empty compute
//! pass writes a timestamp when the submit's work begins and another when it ends, and the
//! two are resolved and read back once the submit has run. A few slots rotate; a submit that
//! finds none free (its readbacks still in flight) goes untimed, and the monitor falls back
//! to its submit-to-done span for it.
//!
//! These buffers (about 2 KiB, for the device's life) are the monitor's instrumentation and
//! are not counted in the allocator's statistics.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Submits that can be timed at once.
const SLOTS: u64 = 8;
/// `resolveQuerySet` writes at offsets that are multiples of 256.
const RESOLVE_STRIDE: u64 = 256;
/// Two 64-bit timestamps.
const STAMP_BYTES: u64 = 16;

/// The query set and buffers of the slots.
#[derive(Debug)]
pub struct SubmitStamps {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: Vec<wgpu::Buffer>,
    /// Set while a slot is free.
    free: Vec<Arc<AtomicBool>>,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
}

impl SubmitStamps {
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> SubmitStamps {
        let staging = (0..SLOTS)
            .map(|_| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("tandem submit stamps"),
                    size: STAMP_BYTES,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        SubmitStamps {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("tandem submit stamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * SLOTS as u32,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("tandem submit stamps"),
                size: SLOTS * RESOLVE_STRIDE,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            staging,
            free: (0..SLOTS)
                .map(|_| Arc::new(AtomicBool::new(true)))
                .collect(),
            period_ns: f64::from(queue.get_timestamp_period()),
        }
    }

    /// Claims a free slot and records the start timestamp at the head of `encoder`.
    pub fn begin(&self, encoder: &mut wgpu::CommandEncoder) -> Option<usize> {
        let slot = self
            .free
            .iter()
            .position(|f| f.swap(false, Ordering::AcqRel))?;
        self.stamp(encoder, 2 * slot as u32);
        Some(slot)
    }

    /// Records the end timestamp and the copy of both to the slot's staging buffer.
    pub fn end(&self, encoder: &mut wgpu::CommandEncoder, slot: usize) {
        let first = 2 * slot as u32;
        self.stamp(encoder, first + 1);
        let offset = slot as u64 * RESOLVE_STRIDE;
        encoder.resolve_query_set(&self.queries, first..first + 2, &self.resolve, offset);
        encoder.copy_buffer_to_buffer(&self.resolve, offset, &self.staging[slot], 0, STAMP_BYTES);
    }

    /// After the submit: reads the slot and gives `report` the GPU time between the two
    /// timestamps, in milliseconds; then frees the slot.
    pub fn read(&self, slot: usize, report: impl FnOnce(f64) + Send + 'static) {
        let buffer = self.staging[slot].clone();
        let free = self.free[slot].clone();
        let period_ns = self.period_ns;
        self.staging[slot]
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |result| {
                if result.is_ok() {
                    let ticks: Vec<u64> = match buffer.slice(..).get_mapped_range() {
                        Ok(view) => view
                            .chunks_exact(8)
                            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                            .collect(),
                        Err(_) => Vec::new(),
                    };
                    buffer.unmap();
                    if let [start, end] = ticks[..] {
                        report(end.saturating_sub(start) as f64 * period_ns / 1e6);
                    }
                }
                free.store(true, Ordering::Release);
            });
    }

    /// Frees a slot whose batch was discarded unsubmitted.
    pub fn release(&self, slot: usize) {
        self.free[slot].store(true, Ordering::Release);
    }

    /// An empty compute pass that writes timestamp `index` as it begins.
    fn stamp(&self, encoder: &mut wgpu::CommandEncoder, index: u32) {
        encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("tandem submit stamp"),
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &self.queries,
                beginning_of_pass_write_index: Some(index),
                end_of_pass_write_index: None,
            }),
        });
    }
}
