//! Validation and internal errors that the GPU reports after the fact, and device loss.
//!
//! WebGPU reports an invalid command asynchronously, and a command buffer with one runs not at
//! all, so a readback of its output would return whatever the buffer held: a silent wrong
//! answer. Every submit therefore runs inside a validation error scope whose report is kept
//! here, and the scheduler checks the reports ([`GpuErrors::check`]) before an evaluation or a
//! read resolves, so the error reaches the callers whose work it may have spoiled as a
//! `DeviceError`. A batch carries the work of every call in flight, so each call fails if any
//! error was reported between its start and its end.
//! Errors outside any scope go to the device's uncaptured-error handler, which records them
//! instead of logging to the console (the browser) or panicking (wgpu natively). Once an error
//! is found, no GPU buffer handed out before it is read again: which ones the rejected work
//! should have written is not known (`memory::block::distrust_blocks_before`).
//!
//! When the device is lost, every later call fails with a `DeviceError` that says so, and
//! every GPU buffer is distrusted: arrays with a host copy stay readable; the page gets a new
//! device from `initRuntime()` (`js/runtime.rs`).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

type Report = Pin<Box<dyn Future<Output = Option<wgpu::Error>>>>;

#[cfg(feature = "test-hooks")]
thread_local! {
    /// Test hook: whether the next submit carries an invalid command.
    static SPOIL_NEXT: Cell<bool> = const { Cell::new(false) };
}

/// Test hook: the next submitted batch also carries a copy past the end of a buffer, which the
/// GPU rejects, so the whole batch does not run. Only with the `test-hooks` feature.
#[cfg(feature = "test-hooks")]
pub fn spoil_next_submit_for_tests() {
    SPOIL_NEXT.with(|s| s.set(true));
}

/// Records the invalid copy of `spoil_next_submit_for_tests` when it was asked for; nothing
/// without the `test-hooks` feature.
#[cfg(not(feature = "test-hooks"))]
pub(crate) fn maybe_spoil(_: &wgpu::Device, _: &mut wgpu::CommandEncoder) {}

#[cfg(feature = "test-hooks")]
pub(crate) fn maybe_spoil(device: &wgpu::Device, encoder: &mut wgpu::CommandEncoder) {
    if !SPOIL_NEXT.with(|s| s.replace(false)) {
        return;
    }
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("tandem test: spoiled batch"),
        size: 4,
        usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let other = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("tandem test: spoiled batch"),
        size: 4,
        usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(&buffer, 0, &other, 0, 8);
}

/// The device's error reports not yet checked.
pub struct GpuErrors {
    pending: RefCell<Vec<Report>>,
    uncaptured: Arc<Mutex<Vec<String>>>,
    /// Why the device was lost, once it has been.
    lost: Arc<Mutex<Option<String>>>,
    /// Errors found so far, and the latest one's text.
    failures: Cell<u64>,
    latest: RefCell<String>,
}

impl std::fmt::Debug for GpuErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuErrors")
            .field("pending", &self.pending.borrow().len())
            .finish()
    }
}

impl GpuErrors {
    /// Takes over `device`'s uncaptured errors and its loss.
    pub fn new(device: &wgpu::Device) -> GpuErrors {
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let sink = uncaptured.clone();
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            if let Ok(mut errors) = sink.lock() {
                errors.push(error.to_string());
            }
        }));
        let lost = Arc::new(Mutex::new(None));
        let why = lost.clone();
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut lost) = why.lock() {
                lost.get_or_insert(format!("{reason:?}: {message}"));
            }
        });
        GpuErrors {
            pending: RefCell::new(Vec::new()),
            uncaptured,
            lost,
            failures: Cell::new(0),
            latest: RefCell::new(String::new()),
        }
    }

    /// Runs `f` (a submit) inside a validation and an internal-error scope, keeping their
    /// reports for [`GpuErrors::check`].
    pub fn watch<R>(&self, device: &wgpu::Device, f: impl FnOnce() -> R) -> R {
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
        let result = f();
        // Scopes pop in reverse order of their pushes.
        let internal = internal.pop();
        let validation = validation.pop();
        let mut pending = self.pending.borrow_mut();
        pending.push(Box::pin(internal));
        pending.push(Box::pin(validation));
        result
    }

    /// How many errors have been found: a call notes it when it starts and passes it to
    /// [`GpuErrors::check`] when it ends.
    pub fn failures(&self) -> u64 {
        self.failures.get()
    }

    /// Waits for every report so far, and fails if an error was found after `since` (a value
    /// of [`GpuErrors::failures`]), in a report or outside any scope.
    pub async fn check(&self, since: u64) -> Result<()> {
        self.collect().await;
        if let Some(why) = self.lost_reason() {
            return Err(lost_error(&why));
        }
        if self.failures.get() == since {
            return Ok(());
        }
        Err(Error::Device(format!(
            "the GPU rejected work submitted while this call ran, so its results are not \
             returned: {}",
            self.latest.borrow()
        )))
    }

    /// Waits for every report so far and records the errors among them and those that
    /// happened outside any scope.
    pub async fn collect(&self) {
        let reports: Vec<Report> = self.pending.borrow_mut().drain(..).collect();
        for report in reports {
            if let Some(error) = report.await {
                self.record(error.to_string());
            }
        }
        let uncaptured: Vec<String> = match self.uncaptured.lock() {
            Ok(mut errors) => errors.drain(..).collect(),
            Err(_) => Vec::new(),
        };
        uncaptured.into_iter().for_each(|e| self.record(e));
        if self.lost_reason().is_some() {
            // Nothing the lost device holds can be read or used again.
            crate::memory::allocator::distrust_gpu_blocks();
        }
    }

    /// Why the device was lost, if it was.
    pub fn lost_reason(&self) -> Option<String> {
        self.lost.lock().ok().and_then(|lost| lost.clone())
    }

    fn record(&self, error: String) {
        // Natively, `TANDEM_DEBUG_GPU_ERRORS=1` prints each error (a shader's compile error
        // names the line) where a test sees only that its data was lost.
        #[cfg(not(target_arch = "wasm32"))]
        if std::env::var_os("TANDEM_DEBUG_GPU_ERRORS").is_some() {
            eprintln!("tandem: GPU error: {error}");
        }
        self.failures.set(self.failures.get() + 1);
        *self.latest.borrow_mut() = error;
        crate::memory::allocator::distrust_gpu_blocks();
    }
}

/// The error of every call that needs a lost device.
pub fn lost_error(why: &str) -> Error {
    Error::Device(format!(
        "the GPU device was lost ({why}); arrays with a host copy stay readable, and \
         initRuntime() gets a new device"
    ))
}
