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
use crate::js::error::{JsResult, to_js};
use crate::js::handles;
use crate::js::ndarray::NdArray;
use crate::js::options::describe;
use crate::js::stream::default_device;
use crate::memory::weak_list::WeakList;
use crate::stream::{Device, Stream};
use crate::transforms::compile::{Tape, stand_ins};

/// What a trace depends on besides the function: per argument, an array's shape, dtype,
/// stream and which earlier argument is the same array, or a number's bits; and the default
/// device, which ops without a `stream` option run on.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    args: Vec<ArgKey>,
    default: Device,
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum ArgKey {
    Array {
        shape: Vec<usize>,
        dtype: DType,
        stream: Stream,
        same_as: Option<usize>,
    },
    Number(u64),
}

thread_local! {
    /// Every compiled function's tapes, weakly: what `memorySnapshot` names as held by
    /// `compile`. Pruned as tapes are added (see [`note_tape`]).
    static TAPES: RefCell<WeakList<Tape>> = const { RefCell::new(WeakList::new()) };
}

/// A compiled function: the traced tapes by [`Key`], and whether it returns one array.
#[wasm_bindgen]
pub struct Compiled {
    tapes: RefCell<HashMap<Key, (Rc<Tape>, bool)>>,
    disposed: Cell<bool>,
}

#[wasm_bindgen]
impl Compiled {
    /// A compiled function of `f`, which must be a function; nothing is traced until the
    /// first call. `f` itself is not kept (see the module documentation).
    #[wasm_bindgen(constructor)]
    pub fn new(f: &JsValue) -> JsResult<Compiled> {
        function(f)?;
        Ok(Compiled {
            tapes: RefCell::default(),
            disposed: Cell::new(false),
        })
    }

    /// Calls the compiled `f` with `args` (NDArrays and numbers): traces it on the first call
    /// with these shapes, dtypes, streams and numbers, then replays.
    pub fn call(&self, f: &JsValue, args: js_sys::Array) -> JsResult<JsValue> {
        self.check_live()?;
        let f = function(f)?;
        let (arrays, key) = arguments(&args).map_err(to_js)?;
        let found = self.tapes.borrow().get(&key).cloned();
        let (tape, single) = match found {
            Some(found) => found,
            None => {
                let traced = self.trace(f, &args, &arrays)?;
                // `f` may have disposed this function while it was traced.
                if !self.disposed.get() {
                    note_tape(&traced.0);
                    self.tapes.borrow_mut().insert(key, traced.clone());
                }
                traced
            }
        };
        let outputs = tape.replay(&arrays).map_err(to_js)?;
        if single {
            return Ok(NdArray::new(outputs[0].clone()).into());
        }
        Ok(outputs
            .into_iter()
            .map(|a| JsValue::from(NdArray::new(a)))
            .collect::<js_sys::Array>()
            .into())
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
    fn trace(
        &self,
        f: &js_sys::Function,
        args: &js_sys::Array,
        arrays: &[Array],
    ) -> JsResult<(Rc<Tape>, bool)> {
        let traced_on = stand_ins(arrays);
        handles::open_scope();
        let mut next = traced_on.iter();
        let traced_args: js_sys::Array = args
            .iter()
            .map(|arg| match arg.as_f64() {
                Some(_) => arg,
                None => NdArray::new(next.next().expect("a stand-in per array").clone()).into(),
            })
            .collect();
        let since = next_serial();
        let result = f.apply(&JsValue::UNDEFINED, &traced_args);
        drop(traced_args);
        let scope = handles::close_scope();
        let outputs = result.and_then(|value| outputs_of(&value).map_err(to_js));
        scope.into_iter().for_each(handles::dispose);
        let (outputs, single) = outputs?;
        let tape = Tape::record(&traced_on, &outputs, since).map_err(to_js)?;
        Ok((Rc::new(tape), single))
    }
}

/// `f` as a function, or the `ValueError` that says it is not one.
fn function(f: &JsValue) -> JsResult<&js_sys::Function> {
    f.dyn_ref::<js_sys::Function>().ok_or_else(|| {
        to_js(Error::Value(format!(
            "compile: expected a function, got {}",
            describe(f)
        )))
    })
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

/// The arrays among `args` (numbers are literals of the trace) and the call's key.
fn arguments(args: &js_sys::Array) -> Result<(Vec<Array>, Key), Error> {
    let mut arrays: Vec<Array> = Vec::new();
    let mut keys = Vec::with_capacity(args.length() as usize);
    for (i, arg) in args.iter().enumerate() {
        if let Some(x) = arg.as_f64() {
            keys.push(ArgKey::Number(x.to_bits()));
            continue;
        }
        if handles::handle_of(&arg).is_none() {
            return Err(Error::Value(format!(
                "compile: argument {i} is {}; a compiled function takes NDArrays and numbers",
                describe(&arg)
            )));
        }
        let x = NdArray::from_js("compile", &arg)?;
        let same_as = arrays.iter().position(|a| a.id() == x.id());
        keys.push(ArgKey::Array {
            shape: x.shape().to_vec(),
            dtype: x.dtype(),
            stream: x.stream(),
            same_as,
        });
        arrays.push(x);
    }
    let key = Key {
        args: keys,
        default: default_device(),
    };
    Ok((arrays, key))
}

/// The arrays a traced function returned (an `NDArray` or a list of them), and whether it
/// was one.
fn outputs_of(value: &JsValue) -> Result<(Vec<Array>, bool), Error> {
    if value.is_instance_of::<js_sys::Promise>() {
        return Err(Error::Value(
            "compile: the function returned a promise; compile needs a synchronous function".into(),
        ));
    }
    let wrong = || {
        Error::Value(format!(
            "compile: the function must return an NDArray or an array of NDArrays, not {}",
            describe(value)
        ))
    };
    if js_sys::Array::is_array(value) {
        let list = js_sys::Array::from(value);
        if list.length() == 0 {
            return Err(wrong());
        }
        let arrays = list
            .iter()
            .map(|v| match handles::handle_of(&v) {
                Some(_) => NdArray::from_js("compile", &v),
                None => Err(wrong()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok((arrays, false));
    }
    match handles::handle_of(value) {
        Some(_) => Ok((vec![NdArray::from_js("compile", value)?], true)),
        None => Err(wrong()),
    }
}
