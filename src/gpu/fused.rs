//! The WGSL of fused elementwise nodes, generated from small templates (this module is the
//! only place that writes it). A fused node's kernel is the contiguous `vec4` kernel
//! (`vectorized.rs`) with this header in place of one op's:
//!
//! ```wgsl
//! alias In0 = f32;               // one alias per input, then the output's
//! alias Out = f32;
//! fn exp_f32_f32(x_in: f32) -> f32 { ... }    // each distinct op once, from the op's own
//! fn add_f32_f32_f32(a_in: f32, b_in: f32) -> f32 { ... }   // header code (unary.rs, ...)
//! fn fused(a0: In0) -> Out {
//!     let t1 = exp_f32_f32(a0);   // one `let` per step, in the program's order
//!     let t2 = add_f32_f32_f32(t1, a0);
//!     return t2;
//! }
//! ```
//!
//! Each op's function is the one its unfused kernel calls, so a fused node computes every
//! element with the same expressions. Pipelines are cached by the header's text: two programs
//! that generate the same source share one.

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::rc::Rc;

use crate::array::Array;
use crate::dtype::{DType, promote};
use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::elementwise::{convert, wgsl_type};
use crate::gpu::input::{GpuInput, contiguous};
use crate::gpu::vectorized::{self, Access, OpHeader};
use crate::gpu::{binary, packed, select, unary};
use crate::graph::primitive::{FusedExpr, Step, UnaryOp};
use crate::graph::shape::Layout;
use crate::memory::allocator::GpuBuffer;

pub use crate::graph::primitive::GPU_FUSED_BUFFERS as MAX_INPUTS;

/// A generated header and the number that names its pipelines.
pub(crate) struct Program {
    pub(crate) id: u64,
    pub(crate) header: Rc<str>,
    /// The input aliases, in input order (`In0`, `In1`, ...).
    pub(crate) inputs: Vec<String>,
}

/// Programs remembered before these caches start over: a page that makes new programs
/// without end must not keep every one. A program forgotten and seen again gets a new number
/// (numbers are never given out twice, so no pipeline of another source answers to it), and
/// the pipeline cache lets the old number's pipeline go in its turn.
const PROGRAM_BOUND: usize = 1024;

thread_local! {
    /// Programs by expression, so that a replayed node costs a lookup, not a source.
    static BY_EXPR: RefCell<HashMap<FusedExpr, Rc<Program>>> = RefCell::default();
    /// Program numbers by source text.
    static BY_SOURCE: RefCell<HashMap<Rc<str>, u64>> = RefCell::default();
    static NEXT_PROGRAM: std::cell::Cell<u64> = const { std::cell::Cell::new(1) };
}

/// Inserts into a cache of at most [`PROGRAM_BOUND`] entries, emptying it first when full.
fn insert_bounded<K: std::hash::Hash + Eq, V>(map: &mut HashMap<K, V>, key: K, value: V) {
    if map.len() >= PROGRAM_BOUND {
        map.clear();
    }
    map.insert(key, value);
}

/// Programs remembered now, by expression and by source.
pub fn programs_kept() -> (usize, usize) {
    (
        BY_EXPR.with(|p| p.borrow().len()),
        BY_SOURCE.with(|s| s.borrow().len()),
    )
}

/// Records the fused node's kernel and returns its output buffer. Inputs the `vec4` kernel
/// cannot read in place (strided, or at an offset that is not a whole `vec4`) are copied
/// row-major first.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    expr: &FusedExpr,
    node: &Array,
    inputs: &[Array],
    data: &[GpuInput],
) -> Result<GpuBuffer> {
    let stored: Vec<DType> = inputs.iter().map(Array::dtype).collect();
    dispatch_stored(gpu, batch, expr, node, (inputs, &stored), data)
}

/// [`dispatch`] with the dtypes the inputs are stored in given: a matmul's epilogue passes
/// its node for the product, which may be stored in another dtype than the node's.
pub fn dispatch_stored(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    expr: &FusedExpr,
    node: &Array,
    (inputs, stored): (&[Array], &[DType]),
    data: &[GpuInput],
) -> Result<GpuBuffer> {
    let shape = node.shape();
    let mut copies: Vec<Option<GpuBuffer>> = Vec::with_capacity(inputs.len());
    let mut accesses = Vec::with_capacity(inputs.len());
    for (x, d) in inputs.iter().zip(data) {
        match access_of(shape, x, d) {
            Some(access) => {
                copies.push(None);
                accesses.push(access);
            }
            None => {
                // A row-major copy reads as the region (`Dense`) or, for a row input
                // (fusion admits only rows of whole vec4s here), as a `Row`.
                let copy = contiguous(gpu, batch, x, d)?;
                let strides = Layout::contiguous(x.shape()).broadcast(x.shape(), shape);
                let access = vectorized::access(shape, &strides, 0).ok_or_else(|| {
                    Error::Shape(format!(
                        "fused kernel: an input of shape {:?} is neither the region {shape:?} nor a row of whole vec4s along it",
                        x.shape()
                    ))
                })?;
                copies.push(Some(copy));
                accesses.push(access);
            }
        }
    }
    let operands: Vec<(Option<&GpuBuffer>, usize, Access)> = data
        .iter()
        .zip(&copies)
        .zip(&accesses)
        .map(|((d, copy), &access)| match copy {
            Some(buffer) => (Some(buffer), 0, access),
            None => (d.buffer, d.layout.offset, access),
        })
        .collect();
    let program = program(expr);
    let key = KernelKey {
        program: program.id,
        ..KernelKey::new("fused", "", &[])
    };
    let names: Vec<&str> = program.inputs.iter().map(String::as_str).collect();
    let op = OpHeader {
        inputs: &names,
        function: "fused",
        stored,
        out: node.dtype(),
    };
    let header = || program.header.to_string();
    vectorized::dispatch(gpu, batch, key, header, &op, shape, &operands)
}

/// How the `vec4` kernels read input `x` (with `data`) over `shape`: as its word, or in
/// place through its layout; `None` where it must be copied first.
pub(crate) fn access_of(shape: &[usize], x: &Array, data: &GpuInput) -> Option<Access> {
    match data.word {
        Some(word) => Some(Access::Word(word)),
        None => {
            let strides = data.layout.broadcast(x.shape(), shape);
            vectorized::access(shape, &strides, data.layout.offset)
        }
    }
}

/// The program of `expr`, generated on first use.
pub(crate) fn program(expr: &FusedExpr) -> Rc<Program> {
    if let Some(program) = BY_EXPR.with(|p| p.borrow().get(expr).cloned()) {
        return program;
    }
    let header: Rc<str> = header(expr).into();
    let id = BY_SOURCE.with(|s| {
        let mut s = s.borrow_mut();
        if let Some(&id) = s.get(&header) {
            return id;
        }
        let id = NEXT_PROGRAM.with(|n| n.replace(n.get() + 1));
        insert_bounded(&mut s, header.clone(), id);
        id
    });
    let inputs = expr
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Input(_)))
        .enumerate()
        .map(|(k, _)| format!("In{k}"))
        .collect();
    let program = Rc::new(Program { id, header, inputs });
    BY_EXPR.with(|p| insert_bounded(&mut p.borrow_mut(), expr.clone(), program.clone()));
    program
}

/// The aliases, each distinct op's function, and `fn fused`.
pub fn header(expr: &FusedExpr) -> String {
    let dtype = |i: usize| expr.dtypes[i];
    let mut aliases = String::new();
    let mut functions: Vec<(String, String)> = Vec::new();
    let mut params = Vec::new();
    let mut body = String::new();
    for (i, step) in expr.steps.iter().enumerate() {
        let (name, args) = match *step {
            Step::Input(k) => {
                aliases += &alias(&format!("In{k}"), dtype(i));
                params.push((k, format!("a{k}: In{k}")));
                body += &format!("    let t{i} = a{k};\n");
                continue;
            }
            Step::Unary(op, a) => {
                let name = format!("{}_{}", op.name(), suffix(&[dtype(a), dtype(i)]));
                let text = || match op {
                    UnaryOp::Cast if dtype(a).is_packed() || dtype(i).is_packed() => {
                        packed_cast(&name, dtype(a), dtype(i))
                    }
                    _ => unary::function(&name, op, dtype(a), dtype(i)),
                };
                (define(&mut functions, name.clone(), text), vec![a])
            }
            Step::Binary(op, a, b) => {
                let promoted = promote(dtype(a), dtype(b));
                let name = format!("{}_{}", op.name(), suffix(&[dtype(a), dtype(b), promoted]));
                let text = || binary::function(&name, op, dtype(a), dtype(b), promoted);
                (define(&mut functions, name.clone(), text), vec![a, b])
            }
            Step::Where(c, x, y) => {
                let name = format!(
                    "where_{}",
                    suffix(&[dtype(c), dtype(x), dtype(y), dtype(i)])
                );
                let text = || select::function(&name, dtype(c), dtype(x), dtype(y), dtype(i));
                (define(&mut functions, name.clone(), text), vec![c, x, y])
            }
        };
        let args: Vec<String> = args.iter().map(|a| format!("t{a}")).collect();
        body += &format!("    let t{i} = {name}({});\n", args.join(", "));
    }
    let last = expr.steps.len() - 1;
    aliases += &alias("Out", dtype(last));
    let functions: String = functions.into_iter().map(|(_, text)| text).collect();
    // Callers pass the inputs in their order, which a matmul's epilogue (its product input 0)
    // need not share with the steps.
    params.sort_unstable();
    let params: Vec<String> = params.into_iter().map(|(_, p)| p).collect();
    format!(
        "{aliases}{functions}fn fused({}) -> Out {{\n{body}    return t{last};\n}}\n",
        params.join(", ")
    )
}

/// `alias {name} = ...;`: a value of `dtype` is computed in its compute type. A packed dtype
/// is named in a comment too, so that programs that differ only in how they store their
/// inputs or output have different sources (and pipelines).
fn alias(name: &str, dtype: DType) -> String {
    let compute = wgsl_type(dtype.compute());
    match dtype.is_packed() {
        true => format!("alias {name} = {compute}; // stored as {}\n", dtype.name()),
        false => format!("alias {name} = {compute};\n"),
    }
}

/// `fn {name}(x_in) -> out`: a cast from or to a packed dtype, on compute values. A value
/// of a packed dtype is held widened, so the cast converts between compute types
/// (`cast.rs`'s rules) and rounds to a packed target as storing and loading it would.
fn packed_cast(name: &str, from: DType, to: DType) -> String {
    let (a, b) = (from.compute(), to.compute());
    format!(
        "fn {name}(x_in: {}) -> {} {{\n    return {};\n}}\n",
        wgsl_type(a),
        wgsl_type(b),
        packed::round_trip(to, &convert("x_in", a, b))
    )
}

/// Adds a function once, by name, and returns the name.
fn define(
    functions: &mut Vec<(String, String)>,
    name: String,
    text: impl FnOnce() -> String,
) -> String {
    if !functions.iter().any(|(n, _)| *n == name) {
        functions.push((name.clone(), text()));
    }
    name
}

fn suffix(dtypes: &[DType]) -> String {
    let names: Vec<&str> = dtypes.iter().map(|d| d.name()).collect();
    names.join("_")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::primitive::{BinaryOp, UnaryOp};

    #[test]
    fn programs_are_remembered_up_to_a_bound_and_never_share_a_number() {
        let expr = |k: usize| FusedExpr {
            steps: std::iter::once(Step::Input(0))
                .chain((0..k).map(|i| Step::Unary(UnaryOp::Exp, i)))
                .collect(),
            dtypes: vec![DType::Float32; k + 1],
        };
        let mut ids = std::collections::HashSet::new();
        for k in 1..=PROGRAM_BOUND + 100 {
            assert!(
                ids.insert(program(&expr(k)).id),
                "a new program, a new number"
            );
            let (by_expr, by_source) = programs_kept();
            assert!(by_expr <= PROGRAM_BOUND && by_source <= PROGRAM_BOUND);
        }
        let again = program(&expr(1)).id;
        assert!(
            ids.insert(again),
            "a program forgotten and seen again gets a new number"
        );
        assert_eq!(program(&expr(1)).id, again, "and keeps it while remembered");
    }

    #[test]
    fn the_header_defines_each_op_once_and_calls_them_in_order() {
        let expr = FusedExpr {
            steps: vec![
                Step::Input(0),
                Step::Unary(UnaryOp::Exp, 0),
                Step::Unary(UnaryOp::Exp, 1),
                Step::Input(1),
                Step::Binary(BinaryOp::Add, 2, 3),
            ],
            dtypes: vec![DType::Float32; 5],
        };
        let text = header(&expr);
        assert_eq!(text.matches("fn exp_float32_float32(").count(), 1);
        assert!(text.contains("fn fused(a0: In0, a1: In1) -> Out {"));
        assert!(text.contains("let t2 = exp_float32_float32(t1);"));
        assert!(text.contains("let t4 = add_float32_float32_float32(t2, t3);"));
        assert!(text.contains("return t4;"));
        // Inputs out of step order (a matmul epilogue's product is input 0 wherever it is
        // read) are still parameters in input order.
        let expr = FusedExpr {
            steps: vec![
                Step::Input(1),
                Step::Input(0),
                Step::Binary(BinaryOp::Subtract, 0, 1),
            ],
            dtypes: vec![DType::Bool, DType::Float32, DType::Float32],
        };
        let text = header(&expr);
        assert!(
            text.contains("fn fused(a0: In0, a1: In1) -> Out {"),
            "{text}"
        );
        assert!(
            text.contains("let t0 = a1;") && text.contains("alias In1 = u32;"),
            "{text}"
        );
    }
}
