//! The busy time of a device, which `utilization.gpu` and `utilization.memory` of the
//! nvidia-smi view (`observe::smi`) are measured from.
//!
//! **How busy time is measured.** Each submit is recorded with the time it was submitted and,
//! from the queue's `onSubmittedWorkDone`, the time its work finished. A queue runs its
//! submits in order, so a submit's work ran from the later of its submit and the previous
//! submit's end until its own end; `utilization.gpu` is the part of the sample period those
//! spans cover. Readbacks are spans from the submit of their copy to the mapping's callback
//! and make up `utilization.memory`. A span still open at sampling time counts until then: the
//! queue is not empty. Where the adapter has `timestamp-query`, and for a minute after each
//! sample ([`Monitor::watch`]), each submit is also timed by two GPU timestamps
//! (`gpu::device::timestamps`), and a span then counts that GPU time from its start rather than
//! until the done report, which waits for the event loop.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::observe::clock::now_ms;

/// Spans older than this are dropped: the longest sample period a page can ask for.
pub const MAX_PERIOD_MS: f64 = 60_000.0;
/// Spans kept at most, whatever their age.
const MAX_SPANS: usize = 65_536;

/// One span of work: its start bound, once reported its end, and its GPU time when
/// timestamps measured it.
#[derive(Debug, Clone, Copy)]
struct Span {
    id: u64,
    start_ms: f64,
    end_ms: Option<f64>,
    gpu_ms: Option<f64>,
}

/// Reports the end of one span (cheap to clone; `Send`, for wgpu's callbacks).
#[derive(Debug, Clone)]
pub struct SpanEnd {
    spans: Arc<Mutex<VecDeque<Span>>>,
    id: u64,
}

impl SpanEnd {
    /// The work finished now.
    pub fn done(&self) {
        self.update(|span| span.end_ms = Some(now_ms()));
    }

    /// Its GPU timestamps measured `ms` of work.
    pub fn gpu_time(&self, ms: f64) {
        self.update(|span| span.gpu_ms = Some(ms));
    }

    fn update(&self, f: impl FnOnce(&mut Span)) {
        let mut spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(span) = spans.iter_mut().rev().find(|s| s.id == self.id) {
            f(span);
        }
    }
}

/// Spans of work on one queue, in submit order. Cheap to clone; callbacks fill in the ends,
/// natively on wgpu's polling thread.
#[derive(Debug, Clone, Default)]
pub struct Activity {
    spans: Arc<Mutex<VecDeque<Span>>>,
    next_id: Arc<std::sync::atomic::AtomicU64>,
}

impl Activity {
    /// Records work submitted now; report its end through the returned handle.
    pub fn begin(&self) -> SpanEnd {
        self.begin_at(now_ms())
    }

    fn begin_at(&self, start_ms: f64) -> SpanEnd {
        let mut spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        prune(&mut spans, start_ms);
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        spans.push_back(Span {
            id,
            start_ms,
            end_ms: None,
            gpu_ms: None,
        });
        SpanEnd {
            spans: self.spans.clone(),
            id,
        }
    }

    /// How many of the kept spans GPU timestamps measured.
    pub fn timed_spans(&self) -> usize {
        let spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        spans.iter().filter(|s| s.gpu_ms.is_some()).count()
    }

    /// The fraction of `[now - period_ms, now]` during which work ran, from 0 to 1.
    pub fn busy_fraction(&self, period_ms: f64) -> f64 {
        self.busy_fraction_at(now_ms(), period_ms)
    }

    fn busy_fraction_at(&self, now: f64, period_ms: f64) -> f64 {
        let from = now - period_ms;
        let spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        let mut busy = 0.0;
        // Work runs in submit order: one starts when it was submitted and the one before ended.
        let mut previous_end = f64::NEG_INFINITY;
        for span in spans.iter() {
            let start = span.start_ms.max(previous_end);
            // Timestamps give the work's own length; the done report comes a task later.
            let reported = span.end_ms.unwrap_or(now);
            let end = match span.gpu_ms {
                Some(ms) => (start + ms).min(reported),
                None => reported,
            };
            let end = end.max(start).min(now);
            busy += (end.min(now) - start.max(from)).max(0.0);
            previous_end = end;
        }
        (busy / period_ms).clamp(0.0, 1.0)
    }
}

/// Drops finished spans that ended before the longest period, and the oldest past the bound.
fn prune(spans: &mut VecDeque<Span>, now: f64) {
    while spans
        .front()
        .is_some_and(|s| s.end_ms.is_some_and(|end| end < now - MAX_PERIOD_MS))
    {
        spans.pop_front();
    }
    while spans.len() >= MAX_SPANS {
        spans.pop_front();
    }
}

/// The GPU's two activities.
#[derive(Debug, Clone, Default)]
pub struct Monitor {
    /// Submitted work, from submit to `onSubmittedWorkDone`.
    pub gpu: Activity,
    /// Readbacks, from the submit of their copy to the mapping's callback.
    pub transfers: Activity,
    /// Until when (ms) a page is sampling: see [`Monitor::watch`].
    watched_until_ms: std::cell::Cell<f64>,
}

impl Monitor {
    /// A page sampled the monitor: time submits by GPU timestamps for the longest sample
    /// period from now. Timestamps cost a resolve and a mapped readback per submit (45% of
    /// a native test of 100,000 tiny evaluations), which pages that never sample should not
    /// pay; until the first sample, utilization comes from submit-to-done spans alone.
    pub fn watch(&self) {
        self.watched_until_ms.set(now_ms() + MAX_PERIOD_MS);
    }

    /// Whether submits should be timed by GPU timestamps now.
    pub fn is_watched(&self) -> bool {
        now_ms() < self.watched_until_ms.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_time_follows_the_queue_order_and_open_spans_count_until_now() {
        let activity = Activity::default();
        // Two submits 0 and 10 ms; the first ends at 40, the second at 50: busy 0..50.
        let first = activity.begin_at(0.0);
        let second = activity.begin_at(10.0);
        first.update(|s| s.end_ms = Some(40.0));
        second.update(|s| s.end_ms = Some(50.0));
        assert!((activity.busy_fraction_at(100.0, 100.0) - 0.5).abs() < 1e-9);
        // Only the last 60 ms: 40..50 of it was busy.
        assert!((activity.busy_fraction_at(100.0, 60.0) - 10.0 / 60.0).abs() < 1e-9);
        // An open span counts until now.
        let open = activity.begin_at(90.0);
        assert!((activity.busy_fraction_at(100.0, 20.0) - 0.5).abs() < 1e-9);
        // Idle later on.
        open.update(|s| s.end_ms = Some(100.0));
        assert_eq!(activity.busy_fraction_at(1000.0, 500.0), 0.0);
        // Timestamps that measured 2 ms of the 10 ms span count 2 ms.
        open.gpu_time(2.0);
        assert!((activity.busy_fraction_at(100.0, 20.0) - 0.1).abs() < 1e-9);
    }
}
