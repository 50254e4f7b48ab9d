//! The device's one timestamp query set, where the adapter has `timestamp-query`, and its two
//! users:
//! - **profiles**: a profiled batch gives each dispatch its own pass, timed by a begin and an
//!   end query among the first `2 * PROFILED_DISPATCHES`; the batch resolves them into a
//!   buffer of its own and reads it back with its other readbacks;
//! - **the monitor's submit spans** (`utilization.gpu`): two queries per slot after those. An
//!   empty pass at the head and another at the tail of a submit write them; they are resolved
//!   and read back once the submit has run. A few slots rotate; a submit that finds none free
//!   (its readbacks still in flight) goes untimed, and the monitor falls back to its
//!   submit-to-done span for it.
//!
//! Batches share the queries safely: each writes and resolves its queries inside its own
//! command buffer, and the queue runs command buffers in order, so a later batch writes a
//! query only after an earlier batch has resolved it.
//!
//! The submit slots' buffers (about 2 KiB, for the device's life) are the monitor's
//! instrumentation and are not counted in the allocator's statistics.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::gpu::device::params::PARAM_SLOTS;
use crate::gpu::device::readback::{map_read, mapped_words};

/// Dispatches of one batch that a profile times; the rest of a longer batch go untimed.
pub const PROFILED_DISPATCHES: usize = PARAM_SLOTS;
/// Submits that can be timed at once.
const SLOTS: u64 = 8;
/// `resolveQuerySet` writes at offsets that are multiples of 256.
const RESOLVE_STRIDE: u64 = 256;
/// Two 64-bit timestamps.
const STAMP_BYTES: u64 = 16;
/// The first query of the submit slots.
const SUBMIT_BASE: u32 = 2 * PROFILED_DISPATCHES as u32;

/// The query set, with the resolve and staging buffers of the submit slots.
#[derive(Debug)]
pub struct Timestamps {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: Vec<wgpu::Buffer>,
    /// Set while a submit slot is free.
    free: Vec<Arc<AtomicBool>>,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
}

impl Timestamps {
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Timestamps {
        let buffer = |size, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("tandem submit stamps"),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        let staging = (0..SLOTS)
            .map(|_| {
                buffer(
                    STAMP_BYTES,
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                )
            })
            .collect();
        Timestamps {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("tandem timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: SUBMIT_BASE + 2 * SLOTS as u32,
            }),
            resolve: buffer(
                SLOTS * RESOLVE_STRIDE,
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            staging,
            free: (0..SLOTS)
                .map(|_| Arc::new(AtomicBool::new(true)))
                .collect(),
            period_ns: f64::from(queue.get_timestamp_period()),
        }
    }

    /// The set whose first `2 * PROFILED_DISPATCHES` queries profiles use.
    pub fn query_set(&self) -> &wgpu::QuerySet {
        &self.queries
    }

    /// Milliseconds per timestamp tick.
    pub fn period_ms(&self) -> f64 {
        self.period_ns / 1e6
    }

    /// Claims a free submit slot and records its start timestamp at the head of `encoder`.
    pub fn begin_submit(&self, encoder: &mut wgpu::CommandEncoder) -> Option<usize> {
        let slot = self
            .free
            .iter()
            .position(|f| f.swap(false, Ordering::AcqRel))?;
        self.stamp(encoder, SUBMIT_BASE + 2 * slot as u32);
        Some(slot)
    }

    /// Records the end timestamp and the copy of both to the slot's staging buffer.
    pub fn end_submit(&self, encoder: &mut wgpu::CommandEncoder, slot: usize) {
        let first = SUBMIT_BASE + 2 * slot as u32;
        self.stamp(encoder, first + 1);
        let offset = slot as u64 * RESOLVE_STRIDE;
        encoder.resolve_query_set(&self.queries, first..first + 2, &self.resolve, offset);
        encoder.copy_buffer_to_buffer(&self.resolve, offset, &self.staging[slot], 0, STAMP_BYTES);
    }

    /// After the submit: reads the slot and gives `report` the GPU time between the two
    /// timestamps, in milliseconds; then frees the slot.
    pub fn read_submit(&self, slot: usize, report: impl FnOnce(f64) + Send + 'static) {
        let buffer = self.staging[slot].clone();
        let free = self.free[slot].clone();
        let period_ms = self.period_ms();
        map_read(&self.staging[slot], 0..STAMP_BYTES, move |mapped| {
            if mapped.is_ok()
                && let Ok(ticks) = mapped_words::<u64>(&buffer, 0..STAMP_BYTES)
                && let [start, end] = ticks[..]
            {
                report(end.saturating_sub(start) as f64 * period_ms);
            }
            free.store(true, Ordering::Release);
        });
    }

    /// Frees a submit slot whose batch was discarded unsubmitted.
    pub fn release_submit(&self, slot: usize) {
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
