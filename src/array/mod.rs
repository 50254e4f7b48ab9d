//! `Array`: a cheap, shared handle to a node of the lazy graph.
//!
//! A node knows its shape, dtype, stream and either its data (once evaluated, or when made from
//! data) or the primitive and inputs that compute it. Ops build nodes; the runtime's scheduler
//! evaluates them.

use std::cell::RefCell;
use std::rc::Rc;

mod order;

pub use order::{Visit, lazy_order, order_by};

use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::graph::primitive::Primitive;
use crate::graph::shape::{Layout, checked_size, fmt_shape, numel};
use crate::storage::Storage;
use crate::stream::{Device, Stream};

/// A shared handle to a graph node. Cloning it is cheap and shares the node.
#[derive(Clone, Debug)]
pub struct Array(Rc<Node>);

#[derive(Debug)]
struct Node {
    shape: Vec<usize>,
    dtype: DType,
    stream: Stream,
    /// Replaced only while the node is lazy, when fusion folds its inputs' ops into it.
    primitive: RefCell<Option<Primitive>>,
    inputs: RefCell<Vec<Array>>,
    /// When it was made, in the order of every node of the thread.
    serial: u64,
    data: RefCell<Option<Data>>,
    /// Where the page made it (a JS stack), kept only while the memory history asks.
    origin: RefCell<Option<Rc<str>>>,
}

thread_local! {
    static SERIAL: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    static GPU_MATMUL_MADE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

const CAST: Primitive = Primitive::Unary(crate::graph::primitive::UnaryOp::Cast);

/// `x` in its compute dtype: an `astype` node. (Never a converted copy made at once, even of
/// a number: `compile` traces with stand-ins for its arguments, and a copy would bake the
/// stand-in's value into the tape instead of following the argument.)
fn widened(x: Array, stream: Stream) -> Array {
    let (from, to) = (x.dtype(), x.dtype().compute());
    if from == to {
        return x;
    }
    Array::node(x.shape().to_vec(), to, stream, Some(CAST), vec![x])
}

/// Whether any GPU matmul node has been made on this thread: until one is, nothing needs the
/// matmul kernel chosen, and evaluations need not look for one.
pub fn gpu_matmul_made() -> bool {
    GPU_MATMUL_MADE.with(std::cell::Cell::get)
}

/// The serial number the next node gets: nodes made after this call have this one or more.
pub fn next_serial() -> u64 {
    SERIAL.with(|s| s.get())
}

fn take_serial() -> u64 {
    SERIAL.with(|s| s.replace(s.get() + 1))
}

impl Drop for Node {
    /// Lets go of the inputs with a loop, not recursion: a lazy chain thousands of nodes long
    /// would otherwise overflow wasm's small stack when its last handle goes.
    fn drop(&mut self) {
        let mut pending = std::mem::take(self.inputs.get_mut());
        while let Some(input) = pending.pop() {
            if let Some(mut node) = Rc::into_inner(input.0) {
                pending.append(node.inputs.get_mut());
            }
        }
    }
}

/// A handle to a node that does not keep it (or its data) alive.
#[derive(Clone, Debug)]
pub struct WeakArray(std::rc::Weak<Node>);

impl WeakArray {
    /// The array, if anything still holds it.
    pub fn upgrade(&self) -> Option<Array> {
        self.0.upgrade().map(Array)
    }
}

/// An evaluated array's elements: shared storage and the layout this array reads it with.
#[derive(Clone, Debug)]
pub struct Data {
    pub storage: Rc<Storage>,
    pub layout: Layout,
}

impl Data {
    /// Fresh row-major storage for an array of `shape`.
    pub fn contiguous(storage: Rc<Storage>, shape: &[usize]) -> Data {
        Data {
            storage,
            layout: Layout::contiguous(shape),
        }
    }

    /// Whether the storage holds exactly this array's elements, row-major from its start.
    /// A packed array whose last word is part-used is dense only when it fills whole words:
    /// words say nothing of how many elements a storage of another view holds.
    pub fn is_dense(&self, shape: &[usize], dtype: DType) -> bool {
        let n = numel(shape);
        self.layout.offset == 0
            && self.storage.len() == dtype.words(n)
            && n.is_multiple_of(dtype.per_word())
            && self.layout.is_contiguous(shape)
    }
}

impl Array {
    /// An array from host words (row-major in the dtype's storage: one word per element, or
    /// for the packed dtypes several elements to a word; see `dtype::packed`).
    ///
    /// ```
    /// use tandem::{Array, DType};
    /// let a = Array::from_words(vec![1, 2, 3, 4], &[2, 2], DType::Uint32).unwrap();
    /// assert_eq!(a.shape(), &[2, 2]);
    /// assert!(Array::from_words(vec![1, 2, 3], &[2, 2], DType::Uint32).is_err());
    /// ```
    pub fn from_words(words: Vec<u32>, shape: &[usize], dtype: DType) -> Result<Array> {
        let size = checked_size("array", shape)?;
        if dtype.words(size) != words.len() {
            return Err(Error::Shape(format!(
                "array: shape {} has {size} elements of {} ({} words) but the data has {} words",
                fmt_shape(shape),
                dtype.name(),
                dtype.words(size),
                words.len()
            )));
        }
        let array = Array::node(shape.to_vec(), dtype, Device::Cpu.into(), None, Vec::new());
        array.set_data(Data::contiguous(Rc::new(Storage::from_host(words)?), shape));
        Ok(array)
    }

    /// An array from a slice of `f32`, `i32` or `u32`.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Array> {
        Array::from_words(bytemuck::cast_slice(data).to_vec(), shape, T::DTYPE)
    }

    /// An `f32` array; a shorthand for [`Array::from_slice`].
    pub fn from_f32(data: &[f32], shape: &[usize]) -> Result<Array> {
        Array::from_slice(data, shape)
    }

    /// A `bool` array.
    pub fn from_bool(data: &[bool], shape: &[usize]) -> Result<Array> {
        let words = data.iter().map(|&b| u32::from(b)).collect();
        Array::from_words(words, shape, DType::Bool)
    }

    /// A node computed by `primitive` from `inputs`; used by the op builders.
    pub(crate) fn from_primitive(
        primitive: Primitive,
        inputs: Vec<Array>,
        shape: Vec<usize>,
        dtype: DType,
        stream: Stream,
    ) -> Array {
        if primitive == Primitive::Matmul && stream.device == Device::Gpu {
            GPU_MATMUL_MADE.with(|made| made.set(true));
        }
        let device = stream.device;
        let widens =
            |(k, x): (usize, &Array)| x.dtype().is_packed() && !primitive.reads_packed(k, device);
        let rounds = dtype.is_packed() && !primitive.writes_packed(device);
        if rounds || inputs.iter().enumerate().any(widens) {
            return Array::through_compute(primitive, inputs, shape, dtype, stream);
        }
        Array::node(shape, dtype, stream, Some(primitive), inputs)
    }

    /// A primitive whose kernels do not read or write packed dtypes, on packed inputs or
    /// output: its packed inputs are widened to their compute dtypes by `astype` nodes, it
    /// computes in the compute dtype of `dtype`, and an `astype` rounds the result once.
    /// Where the operands of an elementwise op promote to a packed dtype, each is first
    /// converted to it, as MLX converts them: `bfloat16 + int32` rounds the integer to
    /// bfloat16 before the sum.
    fn through_compute(
        primitive: Primitive,
        inputs: Vec<Array>,
        shape: Vec<usize>,
        dtype: DType,
        stream: Stream,
    ) -> Array {
        let dtypes: Vec<DType> = inputs.iter().map(Array::dtype).collect();
        let promoted = primitive
            .operand_dtype(&dtypes)
            .filter(|(to, _)| to.is_packed());
        let inputs = inputs
            .into_iter()
            .enumerate()
            .map(|(k, x)| match &promoted {
                Some((to, operands)) if operands.contains(&k) && x.dtype() != *to => {
                    let x_shape = x.shape().to_vec();
                    let x = Array::node(x_shape, *to, stream, Some(CAST), vec![x]);
                    (k, x)
                }
                _ => (k, x),
            })
            .map(|(k, x)| match primitive.reads_packed(k, stream.device) {
                true => x,
                false => widened(x, stream),
            })
            .collect();
        let rounds = dtype.is_packed() && !primitive.writes_packed(stream.device);
        let computed = if rounds { dtype.compute() } else { dtype };
        let node = Array::from_primitive(primitive, inputs, shape, computed, stream);
        if !rounds {
            return node;
        }
        let shape = node.shape().to_vec();
        Array::node(shape, dtype, stream, Some(CAST), vec![node])
    }

    fn node(
        shape: Vec<usize>,
        dtype: DType,
        stream: Stream,
        primitive: Option<Primitive>,
        inputs: Vec<Array>,
    ) -> Array {
        Array(Rc::new(Node {
            shape,
            dtype,
            stream,
            primitive: RefCell::new(primitive),
            inputs: RefCell::new(inputs),
            serial: take_serial(),
            data: RefCell::new(None),
            origin: RefCell::new(None),
        }))
    }

    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    /// Notes where the page made this array, for the memory history's stacks.
    pub fn set_origin(&self, origin: Rc<str>) {
        *self.0.origin.borrow_mut() = Some(origin);
    }

    pub fn origin(&self) -> Option<Rc<str>> {
        self.0.origin.borrow().clone()
    }

    pub fn dtype(&self) -> DType {
        self.0.dtype
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        numel(&self.0.shape)
    }

    pub fn ndim(&self) -> usize {
        self.0.shape.len()
    }

    /// Logical bytes: `size × dtype.size()` (1 byte per `bool`, as in MLX).
    pub fn nbytes(&self) -> usize {
        self.size() * self.0.dtype.size()
    }

    /// The stream the node's op runs on.
    pub fn stream(&self) -> Stream {
        self.0.stream
    }

    /// The device the node's op runs on.
    pub fn device(&self) -> Device {
        self.0.stream.device
    }

    /// The node's primitive; `None` for arrays made from data.
    pub fn primitive(&self) -> Option<Primitive> {
        self.0.primitive.borrow().clone()
    }

    /// The node's place in the order nodes were made (see [`next_serial`]).
    pub fn serial(&self) -> u64 {
        self.0.serial
    }

    /// Handles to this node: arrays, graph edges and anything else that holds it.
    pub(crate) fn holders(&self) -> usize {
        Rc::strong_count(&self.0)
    }

    /// Makes a lazy node compute its value by `primitive` from `inputs` instead (fusion:
    /// the same values from fewer kernels).
    pub(crate) fn recompute_as(&self, primitive: Primitive, inputs: Vec<Array>) {
        debug_assert!(!self.is_evaluated(), "only a lazy node is rewritten");
        *self.0.primitive.borrow_mut() = Some(primitive);
        let old = std::mem::replace(&mut *self.0.inputs.borrow_mut(), inputs);
        drop(old);
    }

    /// The node's inputs; empty once it has been evaluated.
    pub fn inputs(&self) -> Vec<Array> {
        self.0.inputs.borrow().clone()
    }

    /// The node's data, if it has been evaluated.
    pub fn data(&self) -> Option<Data> {
        self.0.data.borrow().clone()
    }

    /// The node's storage, if it has been evaluated.
    pub fn storage(&self) -> Option<Rc<Storage>> {
        self.0.data.borrow().as_ref().map(|d| d.storage.clone())
    }

    /// Whether it is one element with data only on the host: elementwise GPU kernels take
    /// such an array as a parameter word instead of a buffer.
    pub fn is_host_scalar(&self) -> bool {
        self.size() == 1 && self.storage().is_some_and(|s| s.on_host() && !s.on_gpu())
    }

    /// Whether the node has data.
    pub fn is_evaluated(&self) -> bool {
        self.0.data.borrow().is_some()
    }

    /// A handle that does not keep the node alive.
    pub fn downgrade(&self) -> WeakArray {
        WeakArray(Rc::downgrade(&self.0))
    }

    /// A key that identifies the node while any handle to it lives.
    pub(crate) fn id(&self) -> usize {
        Rc::as_ptr(&self.0) as usize
    }

    /// Stores the node's result and lets go of its inputs, so intermediates can be freed.
    pub(crate) fn set_data(&self, data: Data) {
        self.set_data_keeping_inputs(data);
        self.release_inputs();
    }

    /// Stores the node's result but keeps its inputs, so that it can run again if the work
    /// that computes it has to be discarded ([`Array::clear_data`]).
    pub(crate) fn set_data_keeping_inputs(&self, data: Data) {
        *self.0.data.borrow_mut() = Some(data);
    }

    /// Lets go of the inputs of an evaluated node.
    pub(crate) fn release_inputs(&self) {
        let inputs = std::mem::take(&mut *self.0.inputs.borrow_mut());
        drop(inputs);
    }

    /// Forgets the result of a node whose inputs were kept, so that it runs again.
    pub(crate) fn clear_data(&self) {
        let data = self.0.data.borrow_mut().take();
        drop(data);
    }
}
