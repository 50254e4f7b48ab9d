//! An array's data: a host copy (wasm or native memory), a GPU buffer, or both.
//!
//! Every dtype is stored as one 4-byte word per element on both sides, so copies between them
//! are plain byte copies. A copy is made at most once per direction: once both exist, both stay
//! valid, because array data is immutable.

use std::cell::RefCell;
use std::rc::Rc;

use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::encoder::{read_buffer, upload_words};

/// The data of one evaluated array.
#[derive(Debug)]
pub struct Storage {
    len: usize,
    host: RefCell<Option<Rc<Vec<u32>>>>,
    gpu: RefCell<Option<wgpu::Buffer>>,
}

impl Storage {
    /// Storage whose only copy is on the host.
    pub fn from_host(words: Vec<u32>) -> Storage {
        Storage {
            len: words.len(),
            host: RefCell::new(Some(Rc::new(words))),
            gpu: RefCell::new(None),
        }
    }

    /// Storage whose only copy is a GPU buffer holding `len` words.
    pub fn from_gpu(buffer: wgpu::Buffer, len: usize) -> Storage {
        Storage {
            len,
            host: RefCell::new(None),
            gpu: RefCell::new(Some(buffer)),
        }
    }

    /// Number of elements (4-byte words).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a host copy exists.
    pub fn on_host(&self) -> bool {
        self.host.borrow().is_some()
    }

    /// Whether a GPU copy exists.
    pub fn on_gpu(&self) -> bool {
        self.gpu.borrow().is_some()
    }

    /// The host copy, if there is one.
    pub fn host_words(&self) -> Option<Rc<Vec<u32>>> {
        self.host.borrow().clone()
    }

    /// The GPU copy, uploading the host copy first if there is none.
    pub fn ensure_gpu(&self, gpu: &GpuContext) -> Result<wgpu::Buffer> {
        if let Some(buffer) = self.gpu.borrow().as_ref() {
            return Ok(buffer.clone());
        }
        let host = self
            .host
            .borrow()
            .clone()
            .expect("storage has a host or a GPU copy");
        let buffer = upload_words(gpu, &host)?;
        *self.gpu.borrow_mut() = Some(buffer.clone());
        Ok(buffer)
    }

    /// The host copy, reading the GPU copy back first if there is none. Work that writes the
    /// buffer must already be submitted.
    pub async fn ensure_host(&self, gpu: Option<&GpuContext>) -> Result<Rc<Vec<u32>>> {
        if let Some(host) = self.host.borrow().as_ref() {
            return Ok(host.clone());
        }
        let buffer = self
            .gpu
            .borrow()
            .clone()
            .expect("storage has a host or a GPU copy");
        let gpu = gpu.expect("a GPU copy implies a GPU context");
        let words = Rc::new(read_buffer(gpu, &buffer, self.len).await?);
        *self.host.borrow_mut() = Some(words.clone());
        Ok(words)
    }
}
