//! An array's data and its residency: a host copy (wasm or native memory), a GPU buffer, or
//! both.
//!
//! Every dtype is stored as one 4-byte word per element on both sides, so copies between them
//! are plain byte copies. A copy is made at most once per direction: once both exist, both stay
//! valid, because array data is immutable. Both count toward active memory while they live, and
//! when memory is short [`drop_redundant_copies`] lets go of copies the other one can re-derive.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::encoder::{buffer_bytes, read_buffer, upload_words};
use crate::memory::stats::{record_alloc, record_free, record_transfer};
use crate::stream::Device;

/// The data of one evaluated array.
#[derive(Debug)]
pub struct Storage {
    len: usize,
    host: RefCell<Option<Rc<Vec<u32>>>>,
    gpu: RefCell<Option<wgpu::Buffer>>,
}

thread_local! {
    /// Storages that have held both copies; some may have lost one since, or be gone.
    static BOTH_COPIES: RefCell<Vec<Weak<Storage>>> = const { RefCell::new(Vec::new()) };
}

impl Storage {
    /// Storage whose only copy is on the host.
    pub fn from_host(words: Vec<u32>) -> Storage {
        let storage = Storage {
            len: words.len(),
            host: RefCell::new(Some(Rc::new(words))),
            gpu: RefCell::new(None),
        };
        record_alloc(Device::Cpu, storage.bytes(Device::Cpu));
        storage
    }

    /// Storage whose only copy is a GPU buffer holding `len` words.
    pub fn from_gpu(buffer: wgpu::Buffer, len: usize) -> Storage {
        let storage = Storage {
            len,
            host: RefCell::new(None),
            gpu: RefCell::new(Some(buffer)),
        };
        record_alloc(Device::Gpu, storage.bytes(Device::Gpu));
        storage
    }

    /// Number of elements (4-byte words).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes a copy on `device` takes. A GPU buffer is never empty, so it takes at least a
    /// word.
    pub fn bytes(&self, device: Device) -> u64 {
        match device {
            Device::Cpu => (self.len * 4) as u64,
            Device::Gpu => buffer_bytes(self.len),
        }
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

    /// The GPU copy, if there is one.
    pub fn gpu_buffer(&self) -> Option<wgpu::Buffer> {
        self.gpu.borrow().clone()
    }

    /// The GPU copy, uploading the host copy first if there is none.
    pub fn ensure_gpu(self: &Rc<Self>, gpu: &GpuContext) -> Result<wgpu::Buffer> {
        if let Some(buffer) = self.gpu_buffer() {
            return Ok(buffer);
        }
        let host = self.host_words().expect("storage has a host or a GPU copy");
        let buffer = upload_words(gpu, &host)?;
        record_transfer(Device::Gpu, self.bytes(Device::Cpu));
        record_alloc(Device::Gpu, self.bytes(Device::Gpu));
        *self.gpu.borrow_mut() = Some(buffer.clone());
        self.note_both_copies();
        Ok(buffer)
    }

    /// The host copy, reading the GPU copy back first if there is none. Work that writes the
    /// buffer must already be submitted.
    pub async fn ensure_host(self: &Rc<Self>, gpu: Option<&GpuContext>) -> Result<Rc<Vec<u32>>> {
        if let Some(host) = self.host_words() {
            return Ok(host);
        }
        let buffer = self.gpu_buffer().expect("storage has a host or a GPU copy");
        let gpu = gpu.expect("a GPU copy implies a GPU context");
        let words = read_buffer(gpu, &buffer, self.len).await?;
        Ok(self.set_host(words))
    }

    /// Stores the host copy that a readback of the GPU copy produced, unless one appeared
    /// meanwhile (then the readback is discarded: the copies are equal).
    pub fn set_host(self: &Rc<Self>, words: Vec<u32>) -> Rc<Vec<u32>> {
        if let Some(host) = self.host_words() {
            return host;
        }
        debug_assert_eq!(words.len(), self.len);
        record_transfer(Device::Cpu, self.bytes(Device::Cpu));
        record_alloc(Device::Cpu, self.bytes(Device::Cpu));
        let words = Rc::new(words);
        *self.host.borrow_mut() = Some(words.clone());
        self.note_both_copies();
        words
    }

    /// Drops the copy on `device` if the other copy exists, and returns the bytes freed.
    /// A GPU copy must not be referenced by unsubmitted work.
    pub fn drop_copy(&self, device: Device) -> u64 {
        if !(self.on_host() && self.on_gpu()) {
            return 0;
        }
        match device {
            Device::Cpu => drop(self.host.borrow_mut().take()),
            Device::Gpu => drop(self.gpu.borrow_mut().take()),
        }
        let bytes = self.bytes(device);
        record_free(device, bytes);
        bytes
    }

    fn note_both_copies(self: &Rc<Self>) {
        BOTH_COPIES.with(|list| list.borrow_mut().push(Rc::downgrade(self)));
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if self.on_host() {
            record_free(Device::Cpu, self.bytes(Device::Cpu));
        }
        if self.on_gpu() {
            record_free(Device::Gpu, self.bytes(Device::Gpu));
        }
    }
}

/// Drops the copy on `device` of every live array that also has a copy on the other device,
/// and returns the bytes freed. The other copy re-derives it if an op needs it there again.
/// Recorded GPU work must be submitted first.
pub fn drop_redundant_copies(device: Device) -> u64 {
    let candidates = BOTH_COPIES.with(|list| std::mem::take(&mut *list.borrow_mut()));
    candidates
        .iter()
        .filter_map(Weak::upgrade)
        .map(|storage| storage.drop_copy(device))
        .sum()
}
