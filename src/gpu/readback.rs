//! Readback: GPU buffers copied into staging buffers by a batch and mapped after its submit,
//! and waiting for the queue. Natively the device is polled; in the browser the `mapAsync` and
//! `onSubmittedWorkDone` promises resolve on the event loop and nothing blocks.

use futures_channel::oneshot;

use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::memory::allocator::GpuBuffer;

/// A readback waiting for its batch's submit.
pub(crate) struct PendingMap {
    pub(crate) staging: GpuBuffer,
    pub(crate) bytes: u64,
    pub(crate) sender: oneshot::Sender<std::result::Result<(), wgpu::BufferAsyncError>>,
    pub(crate) submission: Submission,
}

pub(crate) type MapResult = std::result::Result<(), wgpu::BufferAsyncError>;

/// The submit that carries a readback's copy, once it has happened; native waits poll for it.
pub(crate) type Submission = std::rc::Rc<std::cell::RefCell<Option<wgpu::SubmissionIndex>>>;

/// A GPU buffer's elements on their way to the host.
pub struct Readback {
    staging: Option<GpuBuffer>,
    words: usize,
    done: oneshot::Receiver<MapResult>,
    pub(crate) submission: Submission,
    /// The mapping's outcome, once [`Readback::is_ready`] has seen it.
    outcome: Option<std::result::Result<MapResult, oneshot::Canceled>>,
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
            done,
            submission: Submission::default(),
            outcome: None,
        }
    }

    /// Whether the mapping has finished (or failed), without waiting.
    pub fn is_ready(&mut self) -> bool {
        if self.outcome.is_none() {
            self.outcome = match self.done.try_recv() {
                Ok(Some(result)) => Some(Ok(result)),
                Ok(None) => None,
                Err(canceled) => Some(Err(canceled)),
            };
        }
        self.outcome.is_some()
    }

    /// Waits for the mapping and returns the elements; the staging buffer goes back to the
    /// pool. Its batch must have been submitted.
    pub async fn finish(mut self, gpu: &GpuContext) -> Result<Vec<u32>> {
        let outcome = match self.outcome.take() {
            Some(outcome) => outcome,
            None => {
                let index = self.submission.borrow().clone();
                wait_for_callbacks(gpu, index);
                (&mut self.done).await
            }
        };
        outcome
            .map_err(|_| Error::Device("readback: the device was lost before mapping".into()))?
            .map_err(|e| Error::Device(format!("readback: mapping failed ({e})")))?;
        let Some(staging) = self.staging.take() else {
            return Ok(Vec::new());
        };
        let bytes = (self.words * 4) as u64;
        let words = {
            let view = staging
                .buffer()
                .slice(..bytes)
                .get_mapped_range()
                .map_err(|e| Error::Device(format!("readback: mapped range unavailable ({e})")))?;
            bytemuck::cast_slice(&view).to_vec()
        };
        staging.buffer().unmap();
        Ok(words)
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

/// Resolves once every submitted command buffer has finished.
pub async fn wait_idle(gpu: &GpuContext) -> Result<()> {
    let (sender, receiver) = oneshot::channel();
    gpu.queue.on_submitted_work_done(move || {
        // The receiver is only dropped if the waiting future is, and then no one cares.
        let _ = sender.send(());
    });
    wait_for_callbacks(gpu, None);
    receiver
        .await
        .map_err(|_| Error::Device("synchronize: the device was lost".into()))
}

#[cfg(not(target_arch = "wasm32"))]
fn wait_for_callbacks(gpu: &GpuContext, submission: Option<wgpu::SubmissionIndex>) {
    // Natively nothing else drives the device, so block until the submission (or, without
    // one, all work) is done and its callbacks have run.
    let _ = gpu.device.poll(wgpu::PollType::Wait {
        submission_index: submission,
        timeout: None,
    });
}

#[cfg(target_arch = "wasm32")]
fn wait_for_callbacks(_gpu: &GpuContext, _submission: Option<wgpu::SubmissionIndex>) {
    // The browser's event loop runs the callback once the mapAsync promise resolves.
}
