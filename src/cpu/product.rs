//! Products: a matmul of two float32 inputs broadcast to one batch shape, one with its
//! epilogue (a fused program run on each stretch of finished rows while they are in cache),
//! and a convolution's, whose A is its input's patches made as the product needs them.

use crate::cpu::cast::Operand;
use crate::cpu::patches::PatchRows;
use crate::cpu::{Broadcast, HostInput, Spec, contiguous, fused, matmul, operand, row_major};
use crate::dtype::DType;
use crate::error::Result;
use crate::graph::primitive::{FusedExpr, Patches};

/// Matmul of two float32 inputs broadcast to one batch shape: each is walked in place when its
/// matrices are dense (or one matrix is broadcast), and copied otherwise.
pub(super) fn eval_matmul(inputs: &[Spec], host: &[HostInput]) -> Vec<u32> {
    bytemuck::cast_vec(product(inputs, host, &|_, _| {}))
}

/// A matmul with its epilogue: the fused program runs on each stretch of finished rows of
/// the product while they are in cache, instead of in a second pass over memory.
pub(super) fn eval_matmul_then(
    expr: &FusedExpr,
    node: &Spec,
    inputs: &[Spec],
    host: &[HostInput],
) -> Result<Vec<u32>> {
    with_epilogue(expr, node, inputs, host, |finish| {
        product(&inputs[..2], host, finish)
    })
}

/// A convolution's product with its epilogue: input 0 is the image (`[N, H, W, C]`), whose
/// patches are A's rows, made a block at a time by the thread that multiplies them.
pub(super) fn eval_patches_then(
    spec: &Patches,
    expr: &FusedExpr,
    node: &Spec,
    inputs: &[Spec],
    host: &[HostInput],
) -> Result<Vec<u32>> {
    let x = row_major(&inputs[0], &host[0])?;
    let s = inputs[0].shape();
    let (b_shape, shape) = (inputs[1].shape(), node.shape());
    let (k, n) = (b_shape[b_shape.len() - 2], b_shape[b_shape.len() - 1]);
    // The node is `[N, OH, OW, O]`: its leading axes are the patches' positions.
    let rows = PatchRows {
        spec,
        x: bytemuck::cast_slice(&x),
        image: [s[1], s[2], s[3]],
        out: [shape[1], shape[2]],
    };
    let m = shape[0] * shape[1] * shape[2];
    let b = matrix_words(&inputs[1], &host[1]);
    with_epilogue(expr, node, inputs, host, |finish| {
        matmul::patches_then(m, n, k, rows, (b.elements(), b.1, b.2), finish)
    })
}

/// Runs `product` with the program of `expr` as its finish, over the node's inputs from the
/// third on (the program's input 0 is the product's rows).
fn with_epilogue(
    expr: &FusedExpr,
    node: &Spec,
    inputs: &[Spec],
    host: &[HostInput],
    product: impl FnOnce(&matmul::Finish) -> Vec<f32>,
) -> Result<Vec<u32>> {
    let shape = node.shape();
    // The program's input 0, the product, comes from the rows themselves: a stand-in here.
    let stand_in = Broadcast {
        words: &[],
        dtype: DType::Float32,
        strides: vec![0; shape.len()],
        offset: 0,
    };
    let leaves: Vec<Broadcast> = std::iter::once(stand_in)
        .chain((2..inputs.len()).map(|k| operand(node, inputs, host, k)))
        .collect();
    let operands: Vec<Operand> = leaves.iter().map(Broadcast::as_operand).collect();
    let program = fused::InPlace::new(expr, shape, &operands);
    // Rows finish on the CPU pool's threads; the first failure is kept (a program's failure
    // is its dtype's, the same for every row, so a second one racing it loses nothing).
    let failed = std::sync::Mutex::new(None);
    let out = product(&|at, rows| {
        if let Err(e) = program.run(at, bytemuck::cast_slice_mut(rows))
            && let Ok(mut slot) = failed.try_lock()
        {
            slot.get_or_insert(e);
        }
    });
    match failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(bytemuck::cast_vec(out)),
    }
}

/// An operand's words, where its first matrix starts, how far apart its matrices are, and
/// its dtype: in place when its matrices are dense (or one is broadcast), else a copy.
struct MatrixWords<'a>(std::borrow::Cow<'a, [u32]>, usize, usize, DType);

impl MatrixWords<'_> {
    /// B's elements: float32, or a packed float (a float16 weight) widened as its panels are
    /// packed.
    fn elements(&self) -> matmul::Elements<'_> {
        match self.3 {
            DType::Float32 => matmul::Elements::F32(bytemuck::cast_slice(&self.0)),
            packed => matmul::Elements::Packed(&self.0, packed),
        }
    }
}

/// Input `x`'s matrices as [`MatrixWords`].
fn matrix_words<'a>(x: &Spec, h: &HostInput<'a>) -> MatrixWords<'a> {
    match crate::graph::shape::matrix_batch_stride(x.shape(), h.layout) {
        Some(stride) => MatrixWords(
            std::borrow::Cow::Borrowed(h.words),
            h.layout.offset,
            stride,
            x.dtype(),
        ),
        None => {
            let words = contiguous(x, h).expect("a float32 copy cannot fail");
            let n = x.ndim();
            let stride = x.shape()[n - 2] * x.shape()[n - 1];
            MatrixWords(std::borrow::Cow::Owned(words), 0, stride, x.dtype())
        }
    }
}

/// The product of float32 `inputs` (broadcast to one batch shape), row-major; an input whose
/// matrices cannot be walked in place is copied first. `finish` sees each finished stretch.
fn product(inputs: &[Spec], host: &[HostInput], finish: &matmul::Finish) -> Vec<f32> {
    let (a, b) = (
        matrix_words(&inputs[0], &host[0]),
        matrix_words(&inputs[1], &host[1]),
    );
    let (a_shape, b_shape) = (inputs[0].shape(), inputs[1].shape());
    let r = a_shape.len();
    let batch = crate::graph::shape::numel(&a_shape[..r - 2]);
    matmul::matmul_then(
        batch,
        a_shape[r - 2],
        b_shape[r - 1],
        a_shape[r - 1],
        (bytemuck::cast_slice(&a.0), a.1, a.2),
        (b.elements(), b.1, b.2),
        finish,
    )
}
