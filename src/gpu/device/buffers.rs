//! Storage buffers for kernels' outputs and uploads, within the adapter's binding limit.

use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::memory::allocator::{GpuBuffer, Usage, alloc_gpu_apart};

/// A storage block for `words` elements that kernels write and readback copies from. WebGPU
/// cannot bind an empty buffer, so an empty array still gets one word.
pub fn create_storage(gpu: &GpuContext, words: usize) -> Result<GpuBuffer> {
    create_output(gpu, words, &[])
}

/// [`create_storage`] for the output of a dispatch that reads `inputs`: in a buffer none of
/// them lives in, since WebGPU rejects one buffer bound both read-only and writable in a
/// dispatch.
pub fn create_output(gpu: &GpuContext, words: usize, inputs: &[&GpuBuffer]) -> Result<GpuBuffer> {
    let bytes = (words.max(1) as u64) * 4;
    check_binding_size(gpu, bytes)?;
    alloc_gpu_apart(
        &gpu.device,
        gpu.limits().max_buffer_size,
        Usage::Storage,
        bytes,
        inputs,
    )
}

/// A storage block holding `words`, uploaded with `writeBuffer` (the fastest of the upload
/// paths measured in the browser).
pub fn upload_words(gpu: &GpuContext, words: &[u32]) -> Result<GpuBuffer> {
    let buffer = create_storage(gpu, words.len())?;
    if !words.is_empty() {
        gpu.queue.write_buffer(
            buffer.buffer(),
            buffer.offset(),
            bytemuck::cast_slice(words),
        );
    }
    Ok(buffer)
}

fn check_binding_size(gpu: &GpuContext, size: u64) -> Result<()> {
    let max = gpu.limits().max_storage_buffer_binding_size;
    if size > max {
        return Err(Error::MemoryLimit(format!(
            "a buffer of {size} bytes exceeds the adapter's maxStorageBufferBindingSize of {max} bytes"
        )));
    }
    Ok(())
}
