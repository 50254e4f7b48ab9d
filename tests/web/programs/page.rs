//! Runs a program's calls through the JS API, as a page calls it: every argument a JS value,
//! every array passed as an extra handle that is disposed after the call.

use js_sys::{Array as JsArray, Float32Array, Int32Array, Uint8Array, Uint32Array};
use wasm_bindgen::{JsCast, JsValue};

use tandem::js::functions::{self as ops, exported as ex};
use tandem::js::ndarray::NdArray;
use tandem::js::random::{random_normal, random_uniform};
use tandem::js::stream::new_stream;

use super::{Arg, Call, STREAMS};

type Made = Result<Vec<JsValue>, JsValue>;
type Unary = fn(JsValue, JsValue) -> Result<NdArray, JsValue>;
type Binary = fn(JsValue, JsValue, JsValue) -> Result<NdArray, JsValue>;

/// How many of [`UNARY`]'s first entries are elementwise; the reductions follow.
pub const ELEMENTWISE: usize = 38;

/// The unary ops, and the reductions that take only `x` and options, by JS name.
pub const UNARY: [(&str, Unary); 58] = [
    ("abs", ex::abs),
    ("neg", ex::neg),
    ("sign", ex::sign),
    ("square", ex::square),
    ("sqrt", ex::sqrt),
    ("rsqrt", ex::rsqrt),
    ("exp", ex::exp),
    ("expm1", ex::expm1),
    ("log", ex::log),
    ("log1p", ex::log1p),
    ("sin", ex::sin),
    ("cos", ex::cos),
    ("tan", ex::tan),
    ("tanh", ex::tanh),
    ("sigmoid", ex::sigmoid),
    ("relu", ex::relu),
    ("gelu", ex::gelu),
    ("erf", ex::erf),
    ("floor", ex::floor),
    ("ceil", ex::ceil),
    ("round", ex::round),
    ("reciprocal", ex::reciprocal),
    ("logicalNot", ex::logical_not),
    ("isnan", ex::isnan),
    ("isinf", ex::isinf),
    ("isfinite", ex::isfinite),
    ("log2", ex::log2),
    ("log10", ex::log10),
    ("sinh", ex::sinh),
    ("cosh", ex::cosh),
    ("arcsin", ex::arcsin),
    ("arccos", ex::arccos),
    ("arctan", ex::arctan),
    ("arcsinh", ex::arcsinh),
    ("arccosh", ex::arccosh),
    ("arctanh", ex::arctanh),
    ("erfinv", ex::erfinv),
    ("nanToNum", ex::nan_to_num),
    ("sum", ex::sum),
    ("prod", ex::prod),
    ("max", ex::max),
    ("min", ex::min),
    ("argmax", ex::argmax),
    ("argmin", ex::argmin),
    ("mean", ex::mean),
    ("logsumexp", ex::logsumexp),
    ("softmax", ex::softmax),
    ("var", ex::variance),
    ("std", ex::std),
    ("any", ex::any),
    ("all", ex::all),
    ("cumsum", ex::cumsum),
    ("cumprod", ex::cumprod),
    ("cummax", ex::cummax),
    ("cummin", ex::cummin),
    ("logcumsumexp", ex::logcumsumexp),
    ("sort", ex::sort),
    ("argsort", ex::argsort),
];

/// The binary ops, by JS name; either operand may be a number or a boolean.
pub const BINARY: [(&str, Binary); 19] = [
    ("add", ops::add),
    ("subtract", ops::subtract),
    ("multiply", ops::multiply),
    ("divide", ops::divide),
    ("power", ops::power),
    ("maximum", ops::maximum),
    ("minimum", ops::minimum),
    ("equal", ops::equal),
    ("notEqual", ops::not_equal),
    ("less", ops::less),
    ("lessEqual", ops::less_equal),
    ("greater", ops::greater),
    ("greaterEqual", ops::greater_equal),
    ("logicalAnd", ops::logical_and),
    ("logicalOr", ops::logical_or),
    ("logaddexp", ops::logaddexp),
    ("floorDivide", ops::floor_divide),
    ("remainder", ops::remainder),
    ("arctan2", ops::arctan2),
];

/// A program's streams and arrays as a page holds them: each array is the JS `NDArray`
/// object an op returned.
pub struct Arrays {
    pub streams: Vec<JsValue>,
    pub arrays: Vec<Option<JsValue>>,
}

impl Arrays {
    pub fn new() -> Arrays {
        let streams = STREAMS
            .iter()
            .map(|s| match *s {
                "s2" => new_stream("cpu").unwrap().into(),
                "s3" => new_stream("gpu").unwrap().into(),
                quoted => JsValue::from(quoted.trim_matches('"')),
            })
            .collect();
        Arrays {
            streams,
            arrays: Vec::new(),
        }
    }

    pub fn get(&self, i: usize) -> &JsValue {
        self.arrays[i].as_ref().expect("programs use live arrays")
    }

    pub fn value(&self, arg: &Arg) -> JsValue {
        match arg {
            Arg::Array(i) => self.get(*i).clone(),
            Arg::Arrays(list) => list
                .iter()
                .map(|&i| self.get(i).clone())
                .collect::<JsArray>()
                .into(),
            Arg::Num(x) => JsValue::from_f64(*x),
            Arg::Bool(b) => JsValue::from_bool(*b),
            Arg::Null => JsValue::NULL,
            Arg::Undefined => JsValue::UNDEFINED,
            Arg::Str(s) => JsValue::from_str(s),
            Arg::Ints(list) => list
                .iter()
                .map(|&v| JsValue::from_f64(v as f64))
                .collect::<JsArray>()
                .into(),
            Arg::Data(kind, values) => typed(kind, values),
            Arg::Stream(s) => self.streams[*s].clone(),
        }
    }

    /// Runs `call`; `Err` is what the API threw.
    pub fn make(&self, call: &Call) -> Made {
        let args: Vec<JsValue> = call.args.iter().map(|a| self.value(a)).collect();
        let opts = js_sys::Object::new();
        for (key, arg) in &call.opts {
            js_sys::Reflect::set(&opts, &JsValue::from_str(key), &self.value(arg)).unwrap();
        }
        dispatch(call.op, &args, opts.into())
    }
}

/// Calls `method` of a JS object with no arguments, as a page does.
pub fn call_method(object: &JsValue, method: &str) -> JsValue {
    let f: js_sys::Function = js_sys::Reflect::get(object, &method.into())
        .unwrap()
        .unchecked_into();
    f.call0(object).unwrap()
}

pub fn dispose(array: &JsValue) {
    call_method(array, "dispose");
}

/// `a.toArray()`: a promise of the typed array.
pub fn read(array: &JsValue) -> js_sys::Promise {
    call_method(array, "toArray").unchecked_into()
}

fn dispatch(op: &str, args: &[JsValue], opts: JsValue) -> Made {
    let at = |i: usize| args.get(i).cloned().unwrap_or(JsValue::UNDEFINED);
    let one = |made: Result<NdArray, JsValue>| made.map(|a| vec![JsValue::from(a)]);
    if let Some((_, f)) = UNARY.iter().find(|(name, _)| *name == op) {
        return one(f(at(0), opts));
    }
    if let Some((_, f)) = BINARY.iter().find(|(name, _)| *name == op) {
        return one(f(at(0), at(1), opts));
    }
    if op == "split" {
        return ex::split(at(0), at(1), opts).map(|parts| parts.iter().collect());
    }
    one(match op {
        "where" => ops::where_(at(0), at(1), at(2), opts),
        "clip" => ex::clip(at(0), at(1), at(2), opts),
        "astype" => ex::astype(at(0), &at(1).as_string().unwrap_or_default(), opts),
        "matmul" => ex::matmul(at(0), at(1), opts),
        "reshape" => ex::reshape(at(0), at(1), opts),
        "transpose" => ex::transpose(at(0), at(1), opts),
        "expandDims" => ex::expand_dims(at(0), at(1), opts),
        "squeeze" => ex::squeeze(at(0), opts),
        "broadcastTo" => ex::broadcast_to(at(0), at(1), opts),
        "slice" => ex::slice(at(0), at(1), at(2), at(3), opts),
        "flatten" => ex::flatten(at(0), opts),
        "take" => ex::take(at(0), at(1), opts),
        "takeAlongAxis" => ex::take_along_axis(at(0), at(1), opts),
        "putAlongAxis" => ex::put_along_axis(at(0), at(1), at(2), opts),
        "sliceUpdate" => ex::slice_update(at(0), at(1), at(2), at(3), at(4), opts),
        "topk" => ex::topk(at(0), at(1), opts),
        "pad" => ex::pad(at(0), at(1), opts),
        "tile" => ex::tile(at(0), at(1), opts),
        "repeat" => ex::repeat(at(0), at(1), opts),
        "roll" => ex::roll(at(0), at(1), opts),
        "tril" => ex::tril(at(0), at(1), opts),
        "triu" => ex::triu(at(0), at(1), opts),
        "diagonal" => ex::diagonal(at(0), opts),
        "fast.layerNorm" => ops::fast_layer_norm(at(0), at(1), at(2), at(3), opts),
        "fast.rmsNorm" => ops::fast_rms_norm(at(0), at(1), at(2), opts),
        "conv1d" => ex::conv1d(at(0), at(1), opts),
        "einsum" => {
            let operands: JsArray = args[1..].iter().collect();
            operands.push(&opts);
            ops::einsum(at(0), operands)
        }
        "concatenate" => ops::concatenate(at(0), opts),
        "stack" => ops::stack(at(0), opts),
        "array" => ops::array(at(0), opts),
        "zeros" => ops::zeros(at(0), opts),
        "ones" => ops::ones(at(0), opts),
        "full" => ops::full(at(0), at(1), opts),
        "arange" => ops::arange(at(0), at(1), at(2), opts),
        "linspace" => ops::linspace(at(0), at(1), at(2), opts),
        "eye" => ops::eye(at(0), opts),
        "randomUniform" => random_uniform(at(0), opts),
        "randomNormal" => random_normal(at(0), opts),
        other => panic!("the generator made an unknown call {other}"),
    })
}

fn typed(kind: &str, values: &[f64]) -> JsValue {
    match kind {
        "Float32Array" => {
            let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
            Float32Array::from(&v[..]).into()
        }
        "Int32Array" => {
            let v: Vec<i32> = values.iter().map(|&x| x as i32).collect();
            Int32Array::from(&v[..]).into()
        }
        "Uint32Array" => {
            let v: Vec<u32> = values.iter().map(|&x| x as u32).collect();
            Uint32Array::from(&v[..]).into()
        }
        "Int8Array" => {
            let v: Vec<i8> = values.iter().map(|&x| x as i8).collect();
            js_sys::Int8Array::from(&v[..]).into()
        }
        _ => {
            let v: Vec<u8> = values.iter().map(|&x| x as i8 as u8).collect();
            Uint8Array::from(&v[..]).into()
        }
    }
}

/// A read's words, as bits: float NaNs compare equal whatever their payload.
pub fn words_of(value: &JsValue) -> Vec<u64> {
    if let Some(f) = value.dyn_ref::<Float32Array>() {
        return f
            .to_vec()
            .into_iter()
            .map(|x| {
                if x.is_nan() {
                    u64::MAX
                } else {
                    u64::from(x.to_bits())
                }
            })
            .collect();
    }
    if let Some(i) = value.dyn_ref::<Int32Array>() {
        return i.to_vec().into_iter().map(|x| x as u32 as u64).collect();
    }
    if let Some(u) = value.dyn_ref::<Uint32Array>() {
        return u.to_vec().into_iter().map(u64::from).collect();
    }
    if let Some(i) = value.dyn_ref::<js_sys::Int8Array>() {
        return i.to_vec().into_iter().map(|x| x as u8 as u64).collect();
    }
    // A Float16Array (the only 2-byte array a read gives), as its bits.
    let width = js_sys::Reflect::get(value, &"BYTES_PER_ELEMENT".into()).ok();
    if width.and_then(|w| w.as_f64()) == Some(2.0) {
        let view: js_sys::Uint8Array = value.clone().unchecked_into();
        let halves = js_sys::Uint16Array::new_with_byte_offset_and_length(
            &view.buffer(),
            view.byte_offset(),
            view.byte_length() / 2,
        );
        return halves.to_vec().into_iter().map(u64::from).collect();
    }
    let bytes: Uint8Array = value.clone().unchecked_into();
    bytes.to_vec().into_iter().map(u64::from).collect()
}
