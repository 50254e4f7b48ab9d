//! A matmul's epilogue (`Primitive::MatmulThen`) inside the `vec4` matmul kernel's store: each
//! thread runs the fused program on its register tile, reading the program's other inputs (a
//! bias row, a residual, a mask) with the elementwise kernels' `vec4` loads, and stores the
//! program's value. No product buffer, and no second pass over it.
//!
//! Where the `vec4` kernel does not run, or an input would need a copy, or the parameters do
//! not fit one parameter block, the product is made and the fused kernel runs over it (two
//! dispatches, as before fusion took the matmul).

use std::rc::Rc;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::params::PARAM_SLOT;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::elementwise::{CONVERT, MATH, more_math_for};
use crate::gpu::fused::{self, Program, program};
use crate::gpu::input::GpuInput;
use crate::gpu::matmul_kernels::Dtypes;
use crate::gpu::packed;
use crate::gpu::vectorized::{self, Access};
use crate::graph::primitive::{FusedExpr, Step};
use crate::graph::shape::Layout;
use crate::memory::allocator::GpuBuffer;

/// Words of the matmul kernel's own parameters, before the epilogue's.
pub const MATMUL_WORDS: usize = 12;

/// The program over a matmul's product (its input 0) and its other inputs.
pub struct Epilogue<'a> {
    pub expr: &'a FusedExpr,
    pub node: &'a Array,
    /// The program's inputs from its second on, with their data.
    pub inputs: &'a [Array],
    pub data: &'a [GpuInput<'a>],
}

/// How the store reads the program's inputs: what the kernel is specialized on.
pub struct Plan {
    program: Rc<Program>,
    /// For inputs 1.. of the program.
    accesses: Vec<Access>,
    /// Their parameter words (`vectorized::operand_words`), after the matmul's.
    words: Vec<u32>,
    /// Their dtypes in storage.
    stored: Vec<DType>,
    /// The product's dtype as the program reads it.
    product: DType,
}

impl Epilogue<'_> {
    /// The dtype the program reads its product (input 0) in: the matmul node's, float32 or
    /// (on the GPU) a packed float that the store rounds to before the program runs.
    pub fn product_dtype(&self) -> DType {
        let first = self.expr.steps.iter().position(|s| *s == Step::Input(0));
        first.map_or(DType::Float32, |i| self.expr.dtypes[i])
    }

    /// The store's plan, if every input reads in place and the parameters fit one block.
    pub fn plan(&self) -> Option<Plan> {
        let shape = self.node.shape();
        let accesses = self
            .inputs
            .iter()
            .zip(self.data)
            .map(|(x, d)| fused::access_of(shape, x, d))
            .collect::<Option<Vec<Access>>>()?;
        let offsets: Vec<usize> = self.data.iter().map(|d| d.layout.offset).collect();
        let words = vectorized::operand_words(&accesses, &offsets);
        (MATMUL_WORDS + words.len() <= PARAM_SLOT as usize / 4).then(|| Plan {
            program: program(self.expr),
            accesses,
            words,
            stored: self.inputs.iter().map(Array::dtype).collect(),
            product: self.product_dtype(),
        })
    }

    /// The input buffers the store reads, after the matmul's two.
    pub fn buffers(&self) -> Vec<&GpuBuffer> {
        self.data.iter().filter_map(|d| d.buffer).collect()
    }
}

impl Plan {
    /// The pipeline of a `rows` x `cols4` tile with this store.
    pub fn key(&self, tile: u32, dtypes: Dtypes) -> KernelKey {
        let stored = [dtypes.a, dtypes.b, dtypes.out];
        KernelKey {
            program: self.program.id,
            accesses: vectorized::access_number(&self.accesses),
            ..KernelKey::new("matmul_epilogue", "", &stored).variant(tile)
        }
    }

    /// The parameters after the matmul's, padded to whole `vec4`s.
    pub fn params(&self) -> Vec<u32> {
        let mut words = self.words.clone();
        words.resize(
            (MATMUL_WORDS + words.len()).next_multiple_of(4) - MATMUL_WORDS,
            0,
        );
        words
    }

    /// The kernel: the program's header and helpers, then `matmul` (the `vec4` matmul's
    /// source with its operands' loads, storing through `epilogue`) with the inputs' bindings
    /// from 3 and the output's (of `dtypes.out`) after them.
    pub fn source(&self, matmul: String, dtypes: Dtypes) -> String {
        let header = &self.program.header;
        let n = self.accesses.len();
        // Input k of the program is load k: its fields and bindings follow the matmul's.
        let fields = vectorized::operand_fields(&self.accesses, 1, MATMUL_WORDS);
        let mut bindings = String::new();
        let mut binding = 2;
        for (k, access) in (1..=n).zip(&self.accesses) {
            if !matches!(access, Access::Word(_)) {
                binding += 1;
            }
            let alias = &self.program.inputs[k];
            let stored = self.stored[k - 1];
            bindings += &vectorized::operand_text(k, alias, *access, binding, stored);
        }
        let out = bindings + &vectorized::output_text(binding + 1, dtypes.out, "Out");
        let lane = |l: &str| {
            let args: Vec<String> = std::iter::once(format!("p.{l}"))
                .chain((1..=n).map(|k| format!("a{k}.{l}")))
                .collect();
            format!("fused({})", args.join(", "))
        };
        let loads: String = (1..=n)
            .map(|k| format!("    let a{k} = load{k}(v);\n"))
            .collect();
        // A packed product is rounded as its store would round it.
        let rounded = packed::widen4(self.product, &packed::narrow4(self.product, "acc"));
        let function = format!(
            "fn epilogue(v: u32, acc: vec4<f32>) -> vec4<Out> {{\n    let p = {rounded};\n{loads}    return vec4<Out>({}, {}, {}, {});\n}}\n",
            lane("x"),
            lane("y"),
            lane("z"),
            lane("w")
        );
        let kernel = matmul.replace(
            "    pad1: u32,\n}",
            &format!("    pad1: u32,\n{fields}}}\n{out}"),
        );
        let dtypes: Vec<DType> = [dtypes.a, dtypes.b, dtypes.out, self.product]
            .into_iter()
            .chain(self.stored.iter().copied())
            .collect();
        format!(
            "{header}\n{CONVERT}\n{MATH}\n{}\n{}\n{kernel}\n{function}",
            more_math_for(header),
            packed::source_for(&dtypes, header)
        )
    }
}

/// The program over a made product (`product`, the program's input 0, of `dtype`): the fused
/// kernel, a second dispatch.
pub fn over_product(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    e: &Epilogue,
    product: &GpuBuffer,
    dtype: DType,
) -> Result<GpuBuffer> {
    let layout = Layout::contiguous(e.node.shape());
    let first = GpuInput {
        buffer: Some(product),
        word: None,
        layout: &layout,
    };
    let rest = e.data.iter().map(|d| GpuInput { ..*d });
    let data: Vec<GpuInput> = std::iter::once(first).chain(rest).collect();
    // The product has the node's shape: the node stands in for it.
    let inputs: Vec<Array> = std::iter::once(e.node.clone())
        .chain(e.inputs.iter().cloned())
        .collect();
    let stored: Vec<DType> = std::iter::once(dtype)
        .chain(e.inputs.iter().map(Array::dtype))
        .collect();
    fused::dispatch_stored(gpu, batch, e.expr, e.node, (&inputs, &stored), &data)
}
