//! `compile(fn)`: the JS face of [`crate::transforms::compile::Tape`]. The package's
//! `compile` wraps a `Compiled` in a plain function (`npm/index.js`), so that it takes any
//! number of arguments.
//!
//! A `Compiled` never holds `fn`: the wrapper does, and passes it to each call. What Rust
//! holds of a JS value sits in wasm-bindgen's table of values, which the garbage collector
//! treats as a root; a traced function that can reach its own compiled wrapper (a closure in
//! the same scope, a method of the object that keeps it) would then keep both alive forever,
//! and the tapes' arrays with them. Held by JS alone, such a cycle is collected, and the
//! wrapper's `FinalizationRegistry` entry frees the tapes.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::array::{Array, next_serial};
use crate::dtype::DType;
use crate::error::Error;
use crate::js::error::{JsResult, js, to_js};
use crate::js::stream::default_device;
use crate::js::traced::{self, function, rethrow};
use crate::js::tree::{Numbers, Tree};
use crate::memory::weak_list::WeakList;
use crate::stream::{Device, Stream};
use crate::transforms::compile::{Tape, stand_ins};

/// What a trace depends on besides the function: the arguments' trees (their numbers by
/// bits); per array, its shape, dtype, stream and which earlier array is the same one; and
/// the default device, which ops without a `stream` option run on.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    trees: Vec<Tree>,
    arrays: Vec<ArrayKey>,
    default: Device,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct ArrayKey {
    shape: Vec<usize>,
    dtype: DType,
    stream: Stream,
    same_as: Option<usize>,
}

/// A traced function: its tape, and the tree its arrays are returned in.
type Traced = (Rc<Tape>, Tree);

thread_local! {
    /// Every compiled function's tapes, weakly: what `memorySnapshot` names as held by
    /// `compile`. Pruned as tapes are added (see [`note_tape`]).
    static TAPES: RefCell<WeakList<Tape>> = const { RefCell::new(WeakList::new()) };
}

/// A compiled function: the traced tapes by [`Key`], each with its result's tree.
#[wasm_bindgen]
pub struct Compiled {
    tapes: RefCell<HashMap<Key, Traced>>,
    disposed: Cell<bool>,
}

#[wasm_bindgen]
impl Compiled {
    /// A compiled function of `f`, which must be a function; nothing is traced until the
    /// first call. `f` itself is not kept (see the module documentation).
    #[wasm_bindgen(constructor)]
    pub fn new(f: &JsValue) -> JsResult<Compiled> {
        js(function("compile", f))?;
        Ok(Compiled {
            tapes: RefCell::default(),
            disposed: Cell::new(false),
        })
    }

    /// Calls the compiled `f` with `args` (trees of NDArrays and numbers): traces it on the
    /// first call with these trees, shapes, dtypes, streams and numbers, then replays.
    pub fn call(&self, f: &JsValue, args: js_sys::Array) -> JsResult<JsValue> {
        self.check_live()?;
        let f = js(function("compile", f))?;
        let (trees, arrays, key) = arguments(&args).map_err(to_js)?;
        let found = self.tapes.borrow().get(&key).cloned();
        let (tape, out_tree) = match found {
            Some(found) => found,
            None => {
                let traced = self.trace(f, &trees, &arrays)?;
                // `f` may have disposed this function while it was traced.
                if !self.disposed.get() {
                    note_tape(&traced.0);
                    self.tapes.borrow_mut().insert(key, traced.clone());
                }
                traced
            }
        };
        let outputs = tape.replay(&arrays).map_err(to_js)?;
        Ok(out_tree.build(&mut outputs.into_iter()))
    }

    /// Input shapes traced so far.
    #[wasm_bindgen(getter)]
    pub fn traces(&self) -> usize {
        self.tapes.borrow().len()
    }

    /// Lets go of every tape, and of the arrays they hold, now; later calls throw
    /// `DisposedArrayError`. Disposing twice does nothing more.
    pub fn dispose(&self) {
        self.disposed.set(true);
        let tapes = std::mem::take(&mut *self.tapes.borrow_mut());
        drop(tapes);
    }
}

impl Compiled {
    fn check_live(&self) -> JsResult<()> {
        if self.disposed.get() {
            return Err(to_js(Error::DisposedArray(
                "compile: this compiled function has been disposed; compile the function again \
                 to call it"
                    .into(),
            )));
        }
        Ok(())
    }

    /// Runs `f` on stand-ins for the call's arrays (see [`stand_ins`]) and records its
    /// graph. Every `NDArray` made meanwhile is disposed, the stand-ins' handles too: the tape
    /// holds what it needs.
    fn trace(&self, f: &js_sys::Function, trees: &[Tree], arrays: &[Array]) -> JsResult<Traced> {
        let traced_on = stand_ins(arrays);
        let since = next_serial();
        let make_args = || Tree::build_each(trees, &traced_on);
        let (out_tree, outputs) = traced::call("compile", f, make_args).map_err(rethrow)?;
        traced::forget_thrown();
        if outputs.is_empty() {
            return Err(to_js(Error::Value(
                "compile: the function must return an NDArray, or a tree that holds one".into(),
            )));
        }
        let tape = Tape::record(&traced_on, &outputs, since).map_err(to_js)?;
        Ok((Rc::new(tape), out_tree))
    }
}

/// Notes a new tape; the gone ones are let go of each time the list is full, so it stays
/// within twice the most tapes ever live at once, and a note costs O(1) on average.
fn note_tape(tape: &Rc<Tape>) {
    TAPES.with(|tapes| tapes.borrow_mut().push(tape));
}

/// The ids of the memory blocks that live compiled functions' tapes hold (their constants'
/// copies), for `memorySnapshot`'s `owner`.
pub(crate) fn held_blocks() -> HashSet<u64> {
    let tapes = TAPES.with(|t| t.borrow().live());
    tapes
        .iter()
        .flat_map(|tape| tape.constants())
        .filter_map(Array::storage)
        .flat_map(|storage| storage.block_ids())
        .collect()
}

/// The trees of `args` (their numbers are literals of the trace), their arrays, and the
/// call's key.
fn arguments(args: &js_sys::Array) -> Result<(Vec<Tree>, Vec<Array>, Key), Error> {
    let mut arrays: Vec<Array> = Vec::new();
    let name = |i| format!("compile: argument {i}");
    let trees = Tree::split_each(args.iter(), name, Numbers::Keep, &mut arrays)?;
    let keys = arrays
        .iter()
        .enumerate()
        .map(|(k, x)| ArrayKey {
            shape: x.shape().to_vec(),
            dtype: x.dtype(),
            stream: x.stream(),
            same_as: arrays[..k].iter().position(|a| a.id() == x.id()),
        })
        .collect();
    let key = Key {
        trees: trees.clone(),
        arrays: keys,
        default: default_device(),
    };
    Ok((trees, arrays, key))
}
