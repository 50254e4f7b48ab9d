//! An array's data and its residency: a host copy (wasm or native memory), a GPU buffer, or
//! both.
//!
//! A dtype's storage is the same words on both sides (one per element, or several elements of
//! a packed dtype to a word; see `dtype::packed`), so copies between them
//! are plain byte copies. A copy is made at most once per direction: once both exist, both stay
//! valid, because array data is immutable. Both count toward active memory while they live, and
//! when memory is short [`drop_redundant_copies`] lets go of copies the other one can re-derive.

use std::cell::RefCell;
use std::rc::Rc;

use crate::error::{Error, Result};
use crate::memory::allocator::{
    GpuBuffer, HostBlock, host_block, note_free_request, record_transfer,
};
use crate::memory::weak_list::WeakList;
use crate::stream::Device;

/// A host copy, shared by the storage and whoever reads it.
pub type HostWords = Rc<HostBlock>;

/// The data of one evaluated array.
#[derive(Debug)]
pub struct Storage {
    len: usize,
    host: RefCell<Option<HostWords>>,
    gpu: RefCell<Option<GpuBuffer>>,
}

impl Drop for Storage {
    /// The array lets go of its copies: the history records the requests, and each block is
    /// freed once nothing else holds it.
    fn drop(&mut self) {
        request_free_host(self.host.get_mut().take());
        request_free_gpu(self.gpu.get_mut().take());
    }
}

fn request_free_host(copy: Option<HostWords>) {
    if let Some(block) = copy {
        note_free_request(block.id, block.size, Device::Cpu);
    }
}

fn request_free_gpu(copy: Option<GpuBuffer>) {
    if let Some(block) = copy {
        note_free_request(block.id, block.size, Device::Gpu);
    }
}

thread_local! {
    /// Storages that have held both copies; some may have lost one since, or be gone.
    static BOTH_COPIES: RefCell<WeakList<Storage>> = const { RefCell::new(WeakList::new()) };
}

impl Storage {
    /// Storage whose only copy is on the host; fails past the memory limit.
    pub fn from_host(words: Vec<u32>) -> Result<Storage> {
        Ok(Storage {
            len: words.len(),
            host: RefCell::new(Some(Rc::new(host_block(words)?))),
            gpu: RefCell::new(None),
        })
    }

    /// Storage of `len` words whose host copy a kernel queued on the CPU pool is computing
    /// (`scheduler::cpu_batch`): it has no copy until [`Storage::set_computed`].
    pub fn computing(len: usize) -> Storage {
        Storage {
            len,
            host: RefCell::new(None),
            gpu: RefCell::new(None),
        }
    }

    /// Gives a [`Storage::computing`] its host copy, the queued kernel's output.
    pub fn set_computed(&self, block: HostBlock) {
        debug_assert_eq!(block.len(), self.len);
        *self.host.borrow_mut() = Some(Rc::new(block));
    }

    /// Storage whose only copy is a GPU buffer holding `len` words.
    pub fn from_gpu(buffer: GpuBuffer, len: usize) -> Storage {
        Storage {
            len,
            host: RefCell::new(None),
            gpu: RefCell::new(Some(buffer)),
        }
    }

    /// Number of storage words (elements, or packed elements' words).
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
    pub fn host_words(&self) -> Option<HostWords> {
        self.host.borrow().clone()
    }

    /// The ids of its copies' blocks, as `memorySnapshot` and the history name them.
    pub fn block_ids(&self) -> Vec<u64> {
        let host = self.host.borrow().as_ref().map(|b| b.id);
        let gpu = self.gpu.borrow().as_ref().map(|b| b.id);
        host.into_iter().chain(gpu).collect()
    }

    /// The GPU copy, if there is one.
    pub fn gpu_buffer(&self) -> Option<GpuBuffer> {
        self.gpu.borrow().clone()
    }

    /// The GPU copy, made by `upload` from the host copy if there is none (the GPU device
    /// passes its upload: storage knows memory, not devices).
    pub fn ensure_gpu(
        self: &Rc<Self>,
        upload: impl FnOnce(&[u32]) -> Result<GpuBuffer>,
    ) -> Result<GpuBuffer> {
        if let Some(buffer) = self.gpu_buffer() {
            if !buffer.is_lost() {
                return Ok(buffer);
            }
            // An upload into a buffer the GPU failed to create: upload again.
            drop(self.gpu.borrow_mut().take());
        }
        // Only an upload's buffer can be lost while its storage lives: work that computes a
        // storage is discarded, and its node made lazy, before a lost buffer is visible.
        let host = self.host_words().ok_or_else(lost_without_host_copy)?;
        let buffer = upload(&host)?;
        record_transfer(Device::Gpu, (self.len * 4) as u64);
        *self.gpu.borrow_mut() = Some(buffer.clone());
        self.note_both_copies();
        Ok(buffer)
    }

    /// Stores the host copy that a readback of the GPU copy produced, unless one appeared
    /// meanwhile (then the readback is discarded: the copies are equal).
    pub fn set_host(self: &Rc<Self>, words: Vec<u32>) -> Result<HostWords> {
        if let Some(host) = self.host_words() {
            return Ok(host);
        }
        debug_assert_eq!(words.len(), self.len);
        let block = Rc::new(host_block(words)?);
        record_transfer(Device::Cpu, (self.len * 4) as u64);
        *self.host.borrow_mut() = Some(block.clone());
        self.note_both_copies();
        Ok(block)
    }

    /// Drops the copy on `device` if the other copy exists, and returns whether it did. The
    /// copy's memory is freed once nothing else (a reader, a pending batch) holds it.
    pub fn drop_copy(&self, device: Device) -> bool {
        if !(self.on_host() && self.on_gpu()) {
            return false;
        }
        match device {
            Device::Cpu => {
                let host = self.host.borrow_mut().take();
                request_free_host(host);
            }
            Device::Gpu => {
                let gpu = self.gpu.borrow_mut().take();
                request_free_gpu(gpu);
            }
        }
        true
    }

    /// Notes a storage that holds both copies. A page that never runs short of memory never
    /// drains the list, so it lets go of the gone ones each time it doubles: a weak handle
    /// keeps its storage's allocation, and the list must not grow with every array ever moved.
    fn note_both_copies(self: &Rc<Self>) {
        BOTH_COPIES.with(|list| list.borrow_mut().push(self));
    }
}

/// Drops the copy on `device` of every live array that also has a copy on the other device,
/// and returns how many it dropped. The other copy re-derives it if an op needs it there
/// again.
pub fn drop_redundant_copies(device: Device) -> usize {
    let candidates = BOTH_COPIES.with(|list| list.borrow_mut().take_live());
    candidates
        .iter()
        .filter(|storage| storage.drop_copy(device))
        .count()
}

/// A GPU copy that cannot be read (the GPU failed to create its buffer, or rejected work that
/// may have written it) and no host copy to fall back on.
pub(crate) fn lost_without_host_copy() -> Error {
    Error::Device(
        "an array's GPU data was lost (the GPU failed to create its buffer or rejected work \
         that wrote it) and it has no host copy; compute it again"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    /// Arrays that gain a second copy and go: the list of such storages keeps the live ones,
    /// not every one ever noted. Natively only: it needs a GPU runtime.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn the_storages_with_both_copies_that_are_gone_are_let_go_of() {
        use crate::graph::primitive::{BinaryOp, UnaryOp};
        use crate::{Array, Runtime, RuntimeOptions, ops, stream::Device};
        let options = RuntimeOptions {
            require_gpu: true,
            default_device: Some(Device::Gpu),
            ..Default::default()
        };
        let runtime = pollster::block_on(Runtime::new(options)).expect("a Vulkan adapter");
        let kept = Array::from_f32(&[1.0], &[1]).unwrap();
        for i in 0..1000 {
            let x = Array::from_f32(&[i as f32], &[1]).unwrap();
            let y = ops::binary(BinaryOp::Add, &x, &kept, Device::Gpu).unwrap();
            let y = ops::unary(UnaryOp::Neg, &y, Device::Gpu).unwrap();
            pollster::block_on(runtime.read_words(&y)).unwrap();
        }
        let noted = super::BOTH_COPIES.with(|list| list.borrow().len());
        assert!(noted < 200, "{noted} storages noted for 1,000 gone");
    }
}
