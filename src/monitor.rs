//! The nvidia-smi view of the device: the fields of `nvidia-smi --query-gpu`, their CSV text in
//! nvidia-smi's layout, and the busy time that `utilization.gpu` and `utilization.memory` are
//! measured from.
//!
//! **How busy time is measured.** Each submit is recorded with the time it was submitted and,
//! from the queue's `onSubmittedWorkDone`, the time its work finished. A queue runs its
//! submits in order, so a submit's work ran from the later of its submit and the previous
//! submit's end until its own end; `utilization.gpu` is the part of the sample period those
//! spans cover. Readbacks are spans from the submit of their copy to the mapping's callback
//! and make up `utilization.memory`. A span still open at sampling time counts until then: the
//! queue is not empty. Where the adapter has `timestamp-query`, and for a minute after each
//! sample ([`Monitor::watch`]), each submit is also timed by two GPU timestamps
//! (`gpu::device::submit_stamps`), and a span then counts that GPU time from its start rather than
//! until the done report, which waits for the event loop.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::clock::now_ms;
use crate::error::{Error, Result};

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

/// A field of `nvidia-smi --query-gpu`, by its name there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Timestamp,
    Name,
    DriverVersion,
    PciBusId,
    Pstate,
    PcieLinkGenMax,
    PcieLinkGenCurrent,
    TemperatureGpu,
    UtilizationGpu,
    UtilizationMemory,
    MemoryTotal,
    MemoryUsed,
    MemoryFree,
}

/// Every field, in the order `smi()` lists them.
pub const FIELDS: [Field; 13] = [
    Field::Timestamp,
    Field::Name,
    Field::DriverVersion,
    Field::PciBusId,
    Field::Pstate,
    Field::PcieLinkGenMax,
    Field::PcieLinkGenCurrent,
    Field::TemperatureGpu,
    Field::UtilizationGpu,
    Field::UtilizationMemory,
    Field::MemoryTotal,
    Field::MemoryUsed,
    Field::MemoryFree,
];

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::Timestamp => "timestamp",
            Field::Name => "name",
            Field::DriverVersion => "driver_version",
            Field::PciBusId => "pci.bus_id",
            Field::Pstate => "pstate",
            Field::PcieLinkGenMax => "pcie.link.gen.max",
            Field::PcieLinkGenCurrent => "pcie.link.gen.current",
            Field::TemperatureGpu => "temperature.gpu",
            Field::UtilizationGpu => "utilization.gpu",
            Field::UtilizationMemory => "utilization.memory",
            Field::MemoryTotal => "memory.total",
            Field::MemoryUsed => "memory.used",
            Field::MemoryFree => "memory.free",
        }
    }

    /// The unit nvidia-smi prints after the value and in the header, if any.
    pub fn unit(self) -> Option<&'static str> {
        match self {
            Field::UtilizationGpu | Field::UtilizationMemory => Some("%"),
            Field::MemoryTotal | Field::MemoryUsed | Field::MemoryFree => Some("MiB"),
            _ => None,
        }
    }

    /// The field of this name, as `--query-gpu` spells it.
    pub fn parse(name: &str) -> Option<Field> {
        FIELDS.into_iter().find(|f| f.name() == name)
    }
}

/// A field's value: text, a whole number in the field's unit, or `[N/A]`.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Number(u64),
    NotAvailable,
}

/// What one sample knows, gathered by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// `"YYYY/MM/DD HH:MM:SS.mmm"`, local time.
    pub timestamp: String,
    pub name: String,
    /// The driver's version, where the platform reports it.
    pub driver_version: Option<String>,
    /// Busy fractions over the sample period; `None` without a GPU.
    pub utilization_gpu: Option<f64>,
    pub utilization_memory: Option<f64>,
    pub total_bytes: u64,
    /// Reserved bytes on the GPU (live and cached), as a driver sees them used.
    pub used_bytes: u64,
}

const MIB: u64 = 1 << 20;

impl Sample {
    pub fn value(&self, field: Field) -> Value {
        let percent = |f: Option<f64>| {
            f.map_or(Value::NotAvailable, |f| {
                Value::Number((f * 100.0).round() as u64)
            })
        };
        match field {
            Field::Timestamp => Value::Text(self.timestamp.clone()),
            Field::Name => Value::Text(self.name.clone()),
            Field::DriverVersion => self
                .driver_version
                .clone()
                .map_or(Value::NotAvailable, Value::Text),
            Field::PciBusId
            | Field::Pstate
            | Field::PcieLinkGenMax
            | Field::PcieLinkGenCurrent
            | Field::TemperatureGpu => Value::NotAvailable,
            Field::UtilizationGpu => percent(self.utilization_gpu),
            Field::UtilizationMemory => percent(self.utilization_memory),
            Field::MemoryTotal => Value::Number(self.total_bytes / MIB),
            Field::MemoryUsed => Value::Number(self.used_bytes.div_ceil(MIB)),
            Field::MemoryFree => {
                Value::Number(self.total_bytes.saturating_sub(self.used_bytes) / MIB)
            }
        }
    }
}

/// The fields of a `--query-gpu` list such as `"name,memory.used"`; an unknown one is a
/// `ValueError` that says so, as nvidia-smi does.
pub fn parse_query(query: &str) -> Result<Vec<Field>> {
    let fields: Vec<&str> = query.split(',').map(str::trim).collect();
    fields
        .iter()
        .map(|name| {
            Field::parse(name).ok_or_else(|| {
                let known: Vec<&str> = FIELDS.iter().map(|f| f.name()).collect();
                Error::Value(format!(
                    "smi: field \"{name}\" is not a valid field to query; the fields are {}",
                    known.join(", ")
                ))
            })
        })
        .collect()
}

/// nvidia-smi's `--format`: `csv`, optionally with `noheader` and `nounits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub header: bool,
    pub units: bool,
}

impl Format {
    /// `"csv"`, `"csv,noheader"`, `"csv,nounits"` or `"csv,noheader,nounits"` (in any order
    /// after `csv`).
    pub fn parse(text: &str) -> Result<Format> {
        let mut parts = text.split(',').map(str::trim);
        let mut format = Format {
            header: true,
            units: true,
        };
        if parts.next() != Some("csv") {
            return Err(bad_format(text));
        }
        for part in parts {
            match part {
                "noheader" => format.header = false,
                "nounits" => format.units = false,
                _ => return Err(bad_format(text)),
            }
        }
        Ok(format)
    }
}

fn bad_format(text: &str) -> Error {
    Error::Value(format!(
        "smi: format must be \"csv\", \"csv,noheader\", \"csv,nounits\" or \"csv,noheader,nounits\", got \"{text}\""
    ))
}

/// The text nvidia-smi prints for `fields` of `sample` in `format`: a header line (the field
/// names, with units in brackets even under `nounits`, as nvidia-smi does) and a value line,
/// columns joined by `", "`, each line ending in a newline.
pub fn csv(fields: &[Field], sample: &Sample, format: Format) -> String {
    let mut text = String::new();
    if format.header {
        let names: Vec<String> = fields
            .iter()
            .map(|f| match f.unit() {
                Some(unit) => format!("{} [{unit}]", f.name()),
                None => f.name().to_string(),
            })
            .collect();
        text.push_str(&names.join(", "));
        text.push('\n');
    }
    let values: Vec<String> = fields
        .iter()
        .map(|&f| match (sample.value(f), f.unit()) {
            (Value::Text(t), _) => t,
            (Value::Number(n), Some(unit)) if format.units => format!("{n} {unit}"),
            (Value::Number(n), _) => n.to_string(),
            (Value::NotAvailable, _) => "[N/A]".to_string(),
        })
        .collect();
    text.push_str(&values.join(", "));
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Sample {
        Sample {
            timestamp: "2026/11/25 10:00:00.123".into(),
            name: "SwiftShader Device (Subzero)".into(),
            driver_version: None,
            utilization_gpu: Some(0.374),
            utilization_memory: Some(0.0),
            total_bytes: 4096 * MIB,
            used_bytes: 3 * MIB + 1,
        }
    }

    #[test]
    fn csv_matches_nvidia_smis_layout_in_every_format() {
        let fields = parse_query("name,memory.used,memory.total,utilization.gpu,pstate").unwrap();
        let s = sample();
        let full = csv(&fields, &s, Format::parse("csv").unwrap());
        assert_eq!(
            full,
            "name, memory.used [MiB], memory.total [MiB], utilization.gpu [%], pstate\n\
             SwiftShader Device (Subzero), 4 MiB, 4096 MiB, 37 %, [N/A]\n"
        );
        let bare = csv(&fields, &s, Format::parse("csv,noheader,nounits").unwrap());
        assert_eq!(bare, "SwiftShader Device (Subzero), 4, 4096, 37, [N/A]\n");
        let nounits = csv(&fields, &s, Format::parse("csv, nounits").unwrap());
        assert!(nounits.starts_with("name, memory.used [MiB],"));
        assert!(nounits.ends_with("\nSwiftShader Device (Subzero), 4, 4096, 37, [N/A]\n"));
        assert!(parse_query("name,gpu.power").is_err());
        assert!(Format::parse("json").is_err());
        assert!(Format::parse("csv,noheaders").is_err());
    }

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
