//! `compile(fn)`: the JS face of [`crate::compile::Tape`]. The package's `compile` wraps a
//! `Compiled` in a plain function (`npm/index.js`), so that it takes any number of arguments.

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::array::{Array, next_serial};
use crate::compile::Tape;
use crate::dtype::DType;
use crate::error::Error;
use crate::js::error::{JsResult, to_js};
use crate::js::handles;
use crate::js::ndarray::NdArray;
use crate::js::options::describe;
use crate::js::stream::default_device;
use crate::stream::{Device, Stream};

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

/// A compiled function: the traced tapes by [`Key`], and whether it returns one array.
#[wasm_bindgen]
pub struct Compiled {
    f: js_sys::Function,
    tapes: RefCell<HashMap<Key, (Rc<Tape>, bool)>>,
}

#[wasm_bindgen]
impl Compiled {
    /// Wraps `f`; nothing is traced until the first call.
    #[wasm_bindgen(constructor)]
    pub fn new(f: JsValue) -> JsResult<Compiled> {
        let f = f.dyn_into::<js_sys::Function>().map_err(|v| {
            to_js(Error::Value(format!(
                "compile: expected a function, got {}",
                describe(&v)
            )))
        })?;
        Ok(Compiled {
            f,
            tapes: RefCell::default(),
        })
    }

    /// Calls the compiled function with `args` (NDArrays and numbers): traces it on the first
    /// call with these shapes, dtypes, streams and numbers, then replays.
    pub fn call(&self, args: js_sys::Array) -> JsResult<JsValue> {
        let (arrays, key) = arguments(&args).map_err(to_js)?;
        let found = self.tapes.borrow().get(&key).cloned();
        let (tape, single) = match found {
            Some(found) => found,
            None => {
                let traced = self.trace(&args, &arrays)?;
                self.tapes.borrow_mut().insert(key, traced.clone());
                traced
            }
        };
        let outputs = tape.replay(&arrays);
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
}

impl Compiled {
    /// Runs `f` on the call's arguments and records its graph. Every `NDArray` it made is
    /// disposed: the tape holds what it needs.
    fn trace(&self, args: &js_sys::Array, arrays: &[Array]) -> JsResult<(Rc<Tape>, bool)> {
        let since = next_serial();
        handles::open_scope();
        let result = self.f.apply(&JsValue::UNDEFINED, args);
        let scope = handles::close_scope();
        let outputs = result.and_then(|value| outputs_of(&value).map_err(to_js));
        scope.into_iter().for_each(handles::dispose);
        let (outputs, single) = outputs?;
        let tape = Tape::record(arrays, &outputs, since).map_err(to_js)?;
        Ok((Rc::new(tape), single))
    }
}

/// The arrays among `args` (numbers are constants of the trace) and the call's key.
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
