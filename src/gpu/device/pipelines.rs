//! Compute pipelines, made once per kernel and specialization and then reused. Creating a
//! pipeline costs milliseconds (much more for big kernels), so nothing on a hot path makes one.
//!
//! Every kernel binds the same way: binding 0 is its parameter block (a uniform read at a
//! dynamic offset into the shared parameter ring, see `encoder.rs`), bindings 1..=n are its
//! read-only inputs and binding n + 1 is its output. So one explicit layout per input count
//! serves every kernel.

use rustc_hash::FxHashMap as HashMap;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use crate::dtype::DType;

/// What a pipeline is specialized on. Hashing it costs a few words, where a formatted string
/// cost an allocation per dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelKey {
    /// The kernel's family and entry point, e.g. `"unary"` or `"reduce_rows"`.
    pub kernel: &'static str,
    /// The op it computes, or `""`.
    pub op: &'static str,
    pub dtypes: [Option<DType>; 4],
    /// Anything else the source is specialized on (operand kinds, a tile shape), packed.
    pub variant: u32,
    /// A generated program's number (fused kernels: one per distinct source), or 0. Numbers
    /// are never given out twice, so a pipeline found by one was made from its source.
    pub program: u64,
    /// The number of the list of operand accesses (`vectorized` kernels), or 0; never given
    /// out twice either.
    pub accesses: u64,
    /// The axes a strided elementwise kernel's index arithmetic is unrolled for
    /// (`gpu/elementwise.rs`), or 0. Not in its name: it is the same kernel.
    pub axes: u8,
}

impl KernelKey {
    pub fn new(kernel: &'static str, op: &'static str, dtypes: &[DType]) -> KernelKey {
        KernelKey {
            kernel,
            op,
            dtypes: std::array::from_fn(|i| dtypes.get(i).copied()),
            variant: 0,
            program: 0,
            accesses: 0,
            axes: 0,
        }
    }

    pub fn variant(self, variant: u32) -> KernelKey {
        KernelKey { variant, ..self }
    }

    /// Whether its source depends on a number the runtime gives out (a generated program or
    /// a list of accesses): such pipelines are bounded (see [`NUMBERED_BOUND`]).
    pub fn is_numbered(&self) -> bool {
        self.program != 0 || self.accesses != 0
    }
}

impl fmt::Display for KernelKey {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.kernel)?;
        if !self.op.is_empty() {
            write!(f, ":{}", self.op)?;
        }
        for dtype in self.dtypes.iter().flatten() {
            write!(f, ":{}", dtype.name())?;
        }
        if self.program != 0 {
            write!(f, ":p{}", self.program)?;
        }
        if self.accesses != 0 {
            write!(f, ":a{}", self.accesses)?;
        }
        if self.variant != 0 {
            write!(f, ":v{}", self.variant)?;
        }
        Ok(())
    }
}

/// A compiled pipeline with the layout its bind groups use and its name for profiles.
#[derive(Debug)]
pub struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub name: Rc<str>,
}

/// The index arithmetic every kernel shares, put before each kernel's source.
const INDEX: &str = include_str!("../wgsl/index.wgsl");

/// A kernel's source as it is compiled: the shared index arithmetic, then the kernel.
pub fn with_index(kernel: &str) -> String {
    format!("{INDEX}\n{kernel}")
}

/// The most pipelines of numbered sources kept (generated programs, lists of operand
/// accesses): a page that compiles new functions without end must not keep a pipeline for
/// each. The least recently used goes first. Every other kernel is one of a fixed set (op,
/// dtypes, variant), so those need no bound.
pub const NUMBERED_BOUND: usize = 512;

#[derive(Debug)]
struct Entry {
    kernel: Rc<Kernel>,
    /// When it was last asked for, on [`PipelineCache`]'s clock.
    used: Cell<u64>,
}

/// Pipelines by [`KernelKey`], and the bind group layouts by input count.
#[derive(Debug)]
pub struct PipelineCache {
    pipelines: RefCell<HashMap<KernelKey, Entry>>,
    /// Counts lookups, to find the least recently used numbered pipeline.
    clock: Cell<u64>,
    numbered: Cell<usize>,
    /// [`NUMBERED_BOUND`], or a test's own.
    bound: usize,
    layouts: RefCell<HashMap<usize, wgpu::BindGroupLayout>>,
    /// math.wgsl's `BUILTIN_EXP`, the same for every pipeline of a device.
    builtin_exp: bool,
}

/// The override constant that math.wgsl declares, and its declaration.
const BUILTIN_EXP: &str = "BUILTIN_EXP";
const BUILTIN_EXP_DECLARATION: &str = "override BUILTIN_EXP";

impl PipelineCache {
    /// A cache whose kernels use the built-in `exp` where `builtin_exp` (see
    /// `startup/exp_probe.rs`).
    pub fn new(builtin_exp: bool) -> PipelineCache {
        PipelineCache::with_numbered_bound(builtin_exp, NUMBERED_BOUND)
    }

    /// A cache that keeps at most `bound` pipelines of numbered sources.
    pub fn with_numbered_bound(builtin_exp: bool, bound: usize) -> PipelineCache {
        PipelineCache {
            pipelines: RefCell::default(),
            clock: Cell::new(0),
            numbered: Cell::new(0),
            bound: bound.max(1),
            layouts: RefCell::default(),
            builtin_exp,
        }
    }

    /// Whether kernels compute `exp` with WGSL's built-in.
    pub fn builtin_exp(&self) -> bool {
        self.builtin_exp
    }

    /// The pipeline for `key` (entry point `entry`, `inputs` read-only buffers), compiling
    /// `source()` on first use.
    pub fn get_or_create(
        &self,
        device: &wgpu::Device,
        key: KernelKey,
        entry: &str,
        inputs: usize,
        source: impl FnOnce() -> String,
    ) -> Rc<Kernel> {
        let now = self.clock.get() + 1;
        self.clock.set(now);
        if let Some(entry) = self.pipelines.borrow().get(&key) {
            entry.used.set(now);
            return entry.kernel.clone();
        }
        let name: Rc<str> = key.to_string().into();
        let source = with_index(&source());
        // Only a module that declares the override may be given it.
        let constants: &[(&str, f64)] =
            if self.builtin_exp && source.contains(BUILTIN_EXP_DECLARATION) {
                &[(BUILTIN_EXP, 1.0)]
            } else {
                &[]
            };
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&name),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let bind_layout = self.bind_group_layout(device, inputs);
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&name),
            bind_group_layouts: &[Some(&bind_layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&name),
            layout: Some(&layout),
            module: &module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants,
                ..Default::default()
            },
            cache: None,
        });
        let kernel = Rc::new(Kernel {
            pipeline,
            layout: bind_layout,
            name,
        });
        if key.is_numbered() {
            self.make_room_for_numbered();
        }
        let entry = Entry {
            kernel: kernel.clone(),
            used: Cell::new(now),
        };
        self.pipelines.borrow_mut().insert(key, entry);
        kernel
    }

    /// Drops the least recently used numbered pipeline when the bound's worth are kept,
    /// and counts the one about to be added. A scan, but only beside a shader compile.
    fn make_room_for_numbered(&self) {
        let mut pipelines = self.pipelines.borrow_mut();
        if self.numbered.get() >= self.bound {
            let oldest = pipelines
                .iter()
                .filter(|(key, _)| key.is_numbered())
                .min_by_key(|(_, entry)| entry.used.get())
                .map(|(key, _)| *key);
            if let Some(key) = oldest {
                pipelines.remove(&key);
                self.numbered.set(self.numbered.get() - 1);
            }
        }
        self.numbered.set(self.numbered.get() + 1);
    }

    /// Whether a pipeline for `key` is kept.
    pub fn contains(&self, key: &KernelKey) -> bool {
        self.pipelines.borrow().contains_key(key)
    }

    /// Pipelines of numbered sources kept now.
    pub fn numbered(&self) -> usize {
        self.numbered.get()
    }

    /// The layout of a kernel with `inputs` read-only storage buffers.
    pub fn bind_group_layout(&self, device: &wgpu::Device, inputs: usize) -> wgpu::BindGroupLayout {
        self.layouts
            .borrow_mut()
            .entry(inputs)
            .or_insert_with(|| create_layout(device, inputs))
            .clone()
    }

    /// Number of pipelines made so far.
    pub fn len(&self) -> usize {
        self.pipelines.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.pipelines.borrow().is_empty()
    }
}

fn create_layout(device: &wgpu::Device, inputs: usize) -> wgpu::BindGroupLayout {
    let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let mut entries = vec![wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: None,
        },
        count: None,
    }];
    entries.extend((1..=inputs as u32).map(|b| storage(b, true)));
    entries.push(storage(inputs as u32 + 1, false));
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("tandem kernel"),
        entries: &entries,
    })
}
