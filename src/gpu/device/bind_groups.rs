//! Bind groups, made once per set of buffers and then reused.
//!
//! Every kernel binds a chunk of the parameter ring at binding 0 (at a dynamic offset, so the
//! slot is not part of the group) and its blocks after it, so a group is named by its blocks'
//! places: buffer, offset and size. Chains
//! of ops reuse the same cached buffers over and over, so most dispatches find their group here
//! instead of crossing into the browser to create one.

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;

use crate::gpu::device::params::PARAM_SLOT;
use crate::memory::allocator::GpuBuffer;

/// The most buffers a kernel binds after the parameter block: a fused kernel's six inputs and
/// its output (`primitive::GPU_FUSED_BUFFERS`).
pub const MAX_BUFFERS: usize = 7;

/// Groups kept before the cache starts over. A group of a buffer that was destroyed is never
/// asked for again (serials are not reused), so the bound is what frees them.
const CAPACITY: usize = 4096;

/// The parameter chunk's serial, then each buffer's serial and its block's offset and bound
/// size (blocks share buffers), unused places 0 (no buffer has serial 0).
type Key = [(u64, u64, u64); MAX_BUFFERS + 1];

#[derive(Debug, Default)]
pub struct BindGroupCache {
    groups: RefCell<HashMap<Key, wgpu::BindGroup>>,
}

impl BindGroupCache {
    /// Calls `use_group` with the group that binds `params` (a chunk of the ring) at 0 and
    /// `buffers` at 1, 2, …, creating it on first use.
    pub fn with_group<T>(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        params: &GpuBuffer,
        buffers: &[&GpuBuffer],
        use_group: impl FnOnce(&wgpu::BindGroup) -> T,
    ) -> T {
        let key = key_of(params, buffers);
        if let Some(group) = self.groups.borrow().get(&key) {
            return use_group(group);
        }
        let group = create(device, layout, params, buffers);
        let result = use_group(&group);
        let mut groups = self.groups.borrow_mut();
        if groups.len() >= CAPACITY {
            groups.clear();
        }
        groups.insert(key, group);
        result
    }

    /// Groups cached now.
    pub fn len(&self) -> usize {
        self.groups.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.borrow().is_empty()
    }
}

fn key_of(params: &GpuBuffer, buffers: &[&GpuBuffer]) -> Key {
    assert!(
        buffers.len() <= MAX_BUFFERS,
        "a kernel binds at most {MAX_BUFFERS} buffers"
    );
    let place = |b: &GpuBuffer| {
        let binding = b.binding();
        let size = binding.size.map_or(0, std::num::NonZeroU64::get);
        (b.serial(), binding.offset, size)
    };
    std::array::from_fn(|i| match i {
        0 => place(params),
        _ => buffers.get(i - 1).map_or((0, 0, 0), |b| place(b)),
    })
}

fn create(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    params: &GpuBuffer,
    buffers: &[&GpuBuffer],
) -> wgpu::BindGroup {
    let mut entries = vec![wgpu::BindGroupEntry {
        binding: 0,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: params.buffer(),
            offset: params.offset(),
            size: std::num::NonZeroU64::new(PARAM_SLOT),
        }),
    }];
    entries.extend(
        buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32 + 1,
                resource: wgpu::BindingResource::Buffer(b.binding()),
            }),
    );
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("tandem kernel"),
        layout,
        entries: &entries,
    })
}
