//! A GPU node's inputs as its kernels read them: a buffer and a layout, or a word; and the
//! row-major copy of an input that a kernel cannot read in place.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::elementwise::{self, Operand};
use crate::gpu::{cast, unary};
use crate::graph::primitive::UnaryOp;
use crate::graph::shape::Layout;
use crate::memory::allocator::GpuBuffer;

/// An input's GPU buffer and layout; or, for a one-element input of an elementwise op that
/// is only on the host (a JS number, a constant an op made), its word, which the kernel takes
/// as a parameter: no buffer is made or written for it.
pub struct GpuInput<'a> {
    pub buffer: Option<&'a GpuBuffer>,
    pub word: Option<u32>,
    pub layout: &'a Layout,
}

impl GpuInput<'_> {
    pub(crate) fn buffer(&self) -> &GpuBuffer {
        self.buffer
            .expect("only elementwise ops take inputs as words, and they take every kind")
    }
}

/// A row-major copy of an input.
pub(crate) fn contiguous(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    input: &Array,
    data: &GpuInput,
) -> Result<GpuBuffer> {
    let dtype = input.dtype();
    if dtype.is_packed() {
        return converted(gpu, batch, input, data, dtype);
    }
    let copy = Operand {
        buffer: data.buffer(),
        strides: data.layout.strides.clone(),
        offset: data.layout.offset,
    };
    let key = unary::key(UnaryOp::Cast, dtype, dtype);
    let source = || unary::source(UnaryOp::Cast, dtype, dtype);
    elementwise::dispatch(gpu, batch, key, source, input.shape(), &[copy])
}

/// `input` converted to `to` (or copied row-major, where `to` is its dtype) by the kernel
/// that reads and writes the packed dtypes.
pub(crate) fn converted(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    input: &Array,
    data: &GpuInput,
    to: DType,
) -> Result<GpuBuffer> {
    let operand = Operand {
        buffer: data.buffer(),
        strides: data.layout.strides.clone(),
        offset: data.layout.offset,
    };
    cast::dispatch(gpu, batch, (input.dtype(), to), input.shape(), operand)
}

/// An input as row-major words: its own buffer, from its offset, where its layout already is
/// row-major; else a row-major copy.
pub(crate) enum RowMajor<'a> {
    Own(&'a GpuBuffer, usize),
    Copy(GpuBuffer),
}

impl RowMajor<'_> {
    pub(crate) fn buffer(&self) -> &GpuBuffer {
        match self {
            RowMajor::Own(buffer, _) => buffer,
            RowMajor::Copy(buffer) => buffer,
        }
    }

    /// The element the input starts at.
    pub(crate) fn offset(&self) -> usize {
        match self {
            RowMajor::Own(_, offset) => *offset,
            RowMajor::Copy(_) => 0,
        }
    }
}

/// `input` read row-major: in place when its layout allows, else through [`contiguous`].
pub(crate) fn row_major<'a>(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    input: &Array,
    data: &GpuInput<'a>,
) -> Result<RowMajor<'a>> {
    if data.layout.is_contiguous(input.shape()) {
        let buffer = data.buffer.expect("a row-major input has a buffer");
        return Ok(RowMajor::Own(buffer, data.layout.offset));
    }
    contiguous(gpu, batch, input, data).map(RowMajor::Copy)
}
