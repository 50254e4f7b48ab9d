//! Readback: GPU buffers copied into staging buffers by a batch and mapped after its submit,
//! and waiting for the queue. Natively the device is polled; in the browser the `mapAsync` and
//! `onSubmittedWorkDone` promises resolve on the event loop and nothing blocks.
//!
//! A readback's mapping can be awaited by any number of readers ([`Readback::mapped`]); it is
//! taken once, synchronously, by [`Readback::take_words`] after it has resolved, so a host
//! copy is only ever made from a finished mapping.

use std::ops::Range;

use futures_channel::oneshot;
use futures_util::FutureExt;
use futures_util::future::Shared;

use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::memory::allocator::GpuBuffer;

/// How a mapping ended: `Err` carries the mapping error's text.
pub(crate) type MapResult = std::result::Result<(), String>;

/// A readback waiting for its batch's submit.
pub(crate) struct PendingMap {
    pub(crate) staging: GpuBuffer,
    pub(crate) bytes: u64,
    pub(crate) sender: oneshot::Sender<MapResult>,
    pub(crate) submission: Submission,
}

/// The submit that carries a readback's copy, once it has happened; native waits poll for it.
pub(crate) type Submission = std::rc::Rc<std::cell::RefCell<Option<wgpu::SubmissionIndex>>>;

/// The mapping's outcome; `Canceled` when the work that was to map it was discarded.
type Outcome = std::result::Result<MapResult, oneshot::Canceled>;

/// A GPU buffer's elements on their way to the host.
pub struct Readback {
    staging: Option<GpuBuffer>,
    words: usize,
    done: Shared<oneshot::Receiver<MapResult>>,
    pub(crate) submission: Submission,
}

impl Readback {
    pub(crate) fn new(
        staging: Option<GpuBuffer>,
        words: usize,
        done: oneshot::Receiver<MapResult>,
    ) -> Self {
        Readback {
            staging,
            words,
            done: done.shared(),
            submission: Submission::default(),
        }
    }

    /// Whether the mapping has finished, failed or been discarded, without waiting.
    pub fn is_ready(&self) -> bool {
        self.done.peek().is_some()
    }

    /// A future that resolves once the mapping has (any reader may hold one). Its batch must
    /// have been submitted by the time it is first polled, or it resolves only if that batch
    /// is discarded.
    pub fn mapped(&self, gpu: &GpuContext) -> impl std::future::Future<Output = ()> + use<> {
        let done = self.done.clone();
        let submission = self.submission.clone();
        let device = gpu.device.clone();
        async move {
            if done.peek().is_none() {
                yield_now().await;
                let index = submission.borrow().clone();
                wait_for_callbacks(&device, index);
            }
            done.await.ok();
        }
    }

    /// The elements of a mapping that has resolved ([`Readback::is_ready`]); the staging
    /// buffer is unmapped and goes back to the cache. `Ok(None)` when the work that was to
    /// map it was discarded.
    pub fn take_words(mut self) -> Result<Option<Vec<u32>>> {
        let outcome: Outcome =
            self.done.peek().cloned().ok_or_else(|| {
                Error::Device("readback: taken before its mapping resolved".into())
            })?;
        let Ok(mapping) = outcome else {
            return Ok(None);
        };
        mapping.map_err(|e| Error::Device(format!("readback: mapping failed ({e})")))?;
        let Some(staging) = self.staging.take() else {
            return Ok(Some(Vec::new()));
        };
        let bytes = (self.words * 4) as u64;
        let start = staging.offset();
        let words = mapped_words(staging.buffer(), start..start + bytes)
            .map_err(|e| Error::Device(format!("readback: mapped range unavailable ({e})")))?;
        Ok(Some(words))
    }

    /// Waits for the mapping and returns the elements. Its batch must have been submitted.
    pub async fn finish(self, gpu: &GpuContext) -> Result<Vec<u32>> {
        self.mapped(gpu).await;
        self.take_words()?
            .ok_or_else(|| Error::Device("readback: the device was lost before mapping".into()))
    }
}

impl Drop for Readback {
    /// A readback dropped before it finished may leave its staging buffer mapped or about to
    /// be, so the buffer must not be reused.
    fn drop(&mut self) {
        if let Some(staging) = &self.staging {
            staging.discard();
        }
    }
}

/// Maps `range` of `buffer` for reading and gives `done` the outcome. Every readback of the
/// runtime maps through here: arrays' data, profile and monitor timestamps, the exp probe.
pub(crate) fn map_read(
    buffer: &wgpu::Buffer,
    range: Range<u64>,
    done: impl FnOnce(MapResult) + wgpu::WasmNotSend + 'static,
) {
    buffer
        .slice(range)
        .map_async(wgpu::MapMode::Read, move |result| {
            done(result.map_err(|e| e.to_string()))
        });
}

/// The elements of `range` of a buffer that [`map_read`] mapped; the buffer is unmapped
/// either way, so it can be mapped again.
pub(crate) fn mapped_words<T: bytemuck::Pod>(
    buffer: &wgpu::Buffer,
    range: Range<u64>,
) -> std::result::Result<Vec<T>, String> {
    let words = buffer
        .slice(range)
        .get_mapped_range()
        .map(|view| bytemuck::pod_collect_to_vec(&view))
        .map_err(|e| e.to_string());
    buffer.unmap();
    words
}

/// The elements of `range` of `buffer`, which `submission` wrote: one read outside any batch
/// (start-up's probe), mapped and waited for here.
pub(crate) async fn read_once<T: bytemuck::Pod>(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    range: Range<u64>,
    submission: wgpu::SubmissionIndex,
) -> std::result::Result<Vec<T>, String> {
    let (sender, receiver) = oneshot::channel();
    map_read(buffer, range.clone(), move |result| {
        let _ = sender.send(result);
    });
    wait_for_callbacks(device, Some(submission));
    receiver
        .await
        .map_err(|_| "the mapping was dropped".to_string())??;
    mapped_words(buffer, range)
}

/// Resolves once every submitted command buffer has finished.
pub async fn wait_idle(gpu: &GpuContext) -> Result<()> {
    let (sender, receiver) = oneshot::channel();
    gpu.queue.on_submitted_work_done(move || {
        // The receiver is only dropped if the waiting future is, and then no one cares.
        let _ = sender.send(());
    });
    yield_now().await;
    wait_for_callbacks(&gpu.device, None);
    receiver
        .await
        .map_err(|_| Error::Device("synchronize: the device was lost".into()))
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn wait_for_callbacks(device: &wgpu::Device, submission: Option<wgpu::SubmissionIndex>) {
    // Natively nothing else drives the device, so block until the submission (or, without
    // one, all work) is done and its callbacks have run. A submission the GPU rejected never
    // completes, and waiting for it fails: then wait for all work instead, which also runs
    // the callbacks of mappings requested after it.
    let waited = device.poll(wgpu::PollType::Wait {
        submission_index: submission.clone(),
        timeout: None,
    });
    if waited.is_err() && submission.is_some() {
        let _ = device.poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: None,
        });
    }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn wait_for_callbacks(
    _device: &wgpu::Device,
    _submission: Option<wgpu::SubmissionIndex>,
) {
    // The browser's event loop runs the callback once the mapAsync promise resolves.
}

/// Natively, returns to the executor once before blocking on the device, so that calls in
/// flight interleave at every GPU wait as they do in the browser, where each wait is a
/// promise. In the browser the wait itself yields.
async fn yield_now() {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if yielded {
                return std::task::Poll::Ready(());
            }
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        })
        .await;
    }
}
