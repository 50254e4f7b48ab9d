//! Profiles of evaluation: when each CPU node ran, when each GPU batch was submitted and
//! finished, and, where the adapter has `timestamp-query`, how long the GPU spent on each
//! dispatch.
//!
//! CPU times and submit times come from one clock (`performance.now()` in the browser). GPU
//! timestamps come from the GPU's own clock, whose origin is unknown, so only their
//! differences are used: a batch's GPU span cannot start before its submit, so
//! `submit + gpu span` is a lower bound on when the batch ended.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::observe::clock::now_ms;
use crate::observe::transfers::{self, Transfer};
use crate::stream::Stream;

/// A batch's resolved timestamps on their way back from the device that recorded them: the
/// words, and nanoseconds per tick. The device makes it; the profile only awaits it, so that
/// observing never reaches into a device.
pub type TimestampRead = Pin<Box<dyn Future<Output = crate::Result<(Vec<u32>, f64)>>>>;

/// When a batch finished, as `f64` bits (`NaN` until then), set by the device's completion
/// callback; natively that callback may run on another thread.
pub type DoneAt = Arc<AtomicU64>;

/// A completion time not yet known.
pub fn not_done() -> DoneAt {
    Arc::new(AtomicU64::new(f64::NAN.to_bits()))
}

/// Notes now as the completion time.
pub fn mark_done(done: &DoneAt) {
    done.store(now_ms().to_bits(), Ordering::Relaxed);
}

/// One CPU node that ran.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuSpan {
    pub op: &'static str,
    pub shape: Vec<usize>,
    pub stream: Stream,
    pub start_ms: f64,
    pub end_ms: f64,
}

/// One dispatch of a GPU batch: its kernel, and the op and output shape of the node that
/// recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    pub kernel: String,
    pub op: &'static str,
    pub shape: Vec<usize>,
}

/// One submitted GPU batch.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuBatch {
    /// When it was submitted.
    pub submit_ms: f64,
    /// When the queue reported it done: an upper bound on its end, as the report waits for
    /// the event loop.
    pub done_ms: f64,
    /// Each dispatch, in order.
    pub dispatches: Vec<Dispatch>,
    /// GPU time of each dispatch from timestamps, when the adapter has `timestamp-query`.
    pub dispatch_ms: Option<Vec<f64>>,
    /// GPU time from the first dispatch's start to the last one's end, from timestamps.
    pub gpu_span_ms: Option<f64>,
}

/// What a profile recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub cpu: Vec<CpuSpan>,
    pub gpu: Vec<GpuBatch>,
    pub transfers: Vec<Transfer>,
}

/// A batch whose timestamps and completion time are still on their way.
struct PendingBatch {
    batch: GpuBatch,
    done: DoneAt,
    timestamps: Option<TimestampRead>,
}

/// The recorder. It records only between [`Profiler::start`] and [`Profiler::finish`].
#[derive(Default)]
pub struct Profiler {
    active: Cell<bool>,
    cpu: RefCell<Vec<CpuSpan>>,
    gpu: RefCell<Vec<PendingBatch>>,
}

impl std::fmt::Debug for Profiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiler")
            .field("active", &self.active.get())
            .finish_non_exhaustive()
    }
}

impl Profiler {
    /// Starts recording, dropping anything recorded before.
    pub fn start(&self) {
        self.cpu.borrow_mut().clear();
        self.gpu.borrow_mut().clear();
        self.active.set(true);
        transfers::start();
    }

    /// Stops recording for a while (the runtime's own measurements); returns whether it was
    /// recording, for [`Profiler::resume`].
    pub fn pause(&self) -> bool {
        transfers::set_logging(false);
        self.active.replace(false)
    }

    /// Records again if it was recording before [`Profiler::pause`].
    pub fn resume(&self, was_active: bool) {
        if was_active {
            self.active.set(true);
            transfers::set_logging(true);
        }
    }

    /// Whether it is recording.
    pub fn is_active(&self) -> bool {
        self.active.get()
    }

    /// Records a CPU node of output `shape` that ran from `start_ms` until now.
    pub fn record_cpu(&self, op: &'static str, shape: &[usize], stream: Stream, start_ms: f64) {
        if self.is_active() {
            let end_ms = now_ms();
            self.cpu.borrow_mut().push(CpuSpan {
                op,
                shape: shape.to_vec(),
                stream,
                start_ms,
                end_ms,
            });
        }
    }

    /// Records a batch submitted at `submit_ms`, which sets `done` when it finishes;
    /// `timestamps` reads back its two timestamps per dispatch.
    pub fn record_submit(
        &self,
        submit_ms: f64,
        dispatches: Vec<Dispatch>,
        done: DoneAt,
        timestamps: Option<TimestampRead>,
    ) {
        if !self.is_active() {
            return;
        }
        self.gpu.borrow_mut().push(PendingBatch {
            batch: GpuBatch {
                submit_ms,
                done_ms: f64::NAN,
                dispatches,
                dispatch_ms: None,
                gpu_span_ms: None,
            },
            done,
            timestamps,
        });
    }

    /// Stops recording; [`Profiler::finish`] reports once the recorded work has finished.
    pub fn stop(&self) {
        self.active.set(false);
    }

    /// The report of what was recorded until [`Profiler::stop`], which the caller has called
    /// before waiting for every submitted batch to finish, so that each completion time is
    /// known.
    pub async fn finish(&self) -> crate::Result<Report> {
        debug_assert!(!self.is_active(), "finish before stop");
        let transfers = transfers::finish();
        let cpu = std::mem::take(&mut *self.cpu.borrow_mut());
        let pending = std::mem::take(&mut *self.gpu.borrow_mut());
        let mut batches = Vec::with_capacity(pending.len());
        for mut p in pending {
            p.batch.done_ms = f64::from_bits(p.done.load(Ordering::Relaxed));
            if let Some(read) = p.timestamps {
                let (words, period) = read.await?;
                apply_timestamps(&mut p.batch, &words, period);
            }
            batches.push(p.batch);
        }
        Ok(Report {
            cpu,
            gpu: batches,
            transfers,
        })
    }
}

/// Fills in a batch's GPU times from its resolved timestamps: a begin and an end tick per
/// dispatch, each a little-endian u64 in two words, `period` nanoseconds per tick.
fn apply_timestamps(batch: &mut GpuBatch, words: &[u32], period: f64) {
    let ticks: Vec<u64> = words
        .chunks_exact(2)
        .map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32))
        .collect();
    let ms = |from: u64, to: u64| to.saturating_sub(from) as f64 * period / 1e6;
    let pairs: Vec<(u64, u64)> = ticks.chunks_exact(2).map(|t| (t[0], t[1])).collect();
    batch.dispatch_ms = Some(pairs.iter().map(|&(b, e)| ms(b, e)).collect());
    if let (Some(first), Some(last)) = (pairs.first(), pairs.last()) {
        batch.gpu_span_ms = Some(ms(first.0, last.1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_become_dispatch_times_and_a_span() {
        let mut batch = GpuBatch {
            submit_ms: 0.0,
            done_ms: 0.0,
            dispatches: ["a", "b"]
                .map(|kernel| Dispatch {
                    kernel: kernel.into(),
                    op: "exp",
                    shape: vec![4],
                })
                .to_vec(),
            dispatch_ms: None,
            gpu_span_ms: None,
        };
        // Ticks 1_000_000..3_000_000 and 4_000_000..(1<<32)+4_000_000, 1 ns per tick.
        let big = (1u64 << 32) + 4_000_000;
        let words = [1_000_000, 0, 3_000_000, 0, 4_000_000, 0, big as u32, 1];
        apply_timestamps(&mut batch, &words, 1.0);
        let high = (1u64 << 32) as f64 / 1e6;
        assert_eq!(batch.dispatch_ms, Some(vec![2.0, high]));
        assert_eq!(batch.gpu_span_ms, Some(high + 3.0));
    }
}
