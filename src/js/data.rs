//! Conversion between JS data (numbers, nested arrays, typed arrays) and host words.

use wasm_bindgen::{JsCast, JsValue};

use crate::dtype::convert::{cast, from_number};
use crate::dtype::{DType, packed};
use crate::error::{Error, Result};
use crate::graph::shape::{fmt_shape, numel};

/// Elements in their dtype's words, with the shape the data had.
pub struct HostData {
    pub words: Vec<u32>,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

/// Reads `array(data)`'s data as `dtype`, or as its own dtype without one: JS numbers give
/// `float32` and booleans `bool`; a typed array keeps its own dtype where tandem has it
/// (`Float64Array` becomes `float32`, 16-bit integer arrays widen to `int32`/`uint32`).
/// Numbers convert to the target dtype from their exact values, never through `float32`, so
/// integers above 2^24 stay exact.
pub fn from_js(data: &JsValue, dtype: Option<DType>) -> Result<HostData> {
    if let Some(values) = data.dyn_ref::<js_sys::Float64Array>() {
        let values = values.to_vec();
        let shape = vec![values.len()];
        return Ok(numbers(&values, shape, dtype.unwrap_or(DType::Float32)));
    }
    if let Some(typed) = typed_array(data)? {
        return Ok(match dtype {
            Some(dtype) => with_dtype(typed, dtype),
            None => typed,
        });
    }
    let (values, shape, all_bool) = flatten(data)?;
    let own = if all_bool && !values.is_empty() {
        DType::Bool
    } else {
        DType::Float32
    };
    Ok(numbers(&values, shape, dtype.unwrap_or(own)))
}

fn numbers(values: &[f64], shape: Vec<usize>, dtype: DType) -> HostData {
    HostData {
        words: numbers_to_words(values, dtype),
        shape,
        dtype,
    }
}

/// Converts typed data to `dtype`, with the casts' rules.
fn with_dtype(data: HostData, dtype: DType) -> HostData {
    let len = numel(&data.shape);
    let words = cast(&data.words, len, data.dtype, dtype).into_owned();
    HostData {
        words,
        shape: data.shape,
        dtype,
    }
}

/// JS numbers as storage words of `dtype`, with C's conversion rules (truncation,
/// two's-complement wrap), each float rounded once from the number's exact value.
pub fn numbers_to_words(values: &[f64], dtype: DType) -> Vec<u32> {
    packed::pack(values.iter().map(|&x| from_number(x, dtype)), dtype)
}

/// Whether the engine has `Float16Array` (Chromium 135+, Firefox 129+). Checked on the
/// global before any `instanceof`, which would throw where the name is not defined.
fn has_float16_array() -> bool {
    thread_local! {
        static HAS: bool = js_sys::Reflect::has(&js_sys::global(), &"Float16Array".into())
            .unwrap_or(false);
    }
    HAS.with(|has| *has)
}

/// A `Float16Array`'s elements as their bits.
fn float16_bits(data: &JsValue) -> Option<Vec<u32>> {
    if !has_float16_array() {
        return None;
    }
    let a = data.dyn_ref::<js_sys::Float16Array>()?;
    let bits = js_sys::Uint16Array::new_with_byte_offset_and_length(
        &a.buffer(),
        a.byte_offset(),
        a.length(),
    );
    Some(bits.to_vec().into_iter().map(u32::from).collect())
}

fn typed_array(data: &JsValue) -> Result<Option<HostData>> {
    // Each element's bits, one to an item; packed into storage words here.
    let one_dim = |bits: Vec<u32>, dtype: DType| {
        let shape = vec![bits.len()];
        Some(HostData {
            words: packed::pack(bits, dtype),
            shape,
            dtype,
        })
    };
    if let Some(a) = data.dyn_ref::<js_sys::Float32Array>() {
        return Ok(one_dim(bytemuck::cast_vec(a.to_vec()), DType::Float32));
    }
    if let Some(a) = data.dyn_ref::<js_sys::Int32Array>() {
        return Ok(one_dim(bytemuck::cast_vec(a.to_vec()), DType::Int32));
    }
    if let Some(a) = data.dyn_ref::<js_sys::Uint32Array>() {
        return Ok(one_dim(a.to_vec(), DType::Uint32));
    }
    if let Some(bits) = float16_bits(data) {
        return Ok(one_dim(bits, DType::Float16));
    }
    if let Some(a) = data.dyn_ref::<js_sys::Int16Array>() {
        let values = a.to_vec().into_iter().map(|x| x as i32 as u32).collect();
        return Ok(one_dim(values, DType::Int32));
    }
    if let Some(a) = data.dyn_ref::<js_sys::Uint16Array>() {
        return Ok(one_dim(
            a.to_vec().into_iter().map(u32::from).collect(),
            DType::Uint32,
        ));
    }
    if let Some(a) = data.dyn_ref::<js_sys::Int8Array>() {
        let bits = a.to_vec().into_iter().map(|x| x as u8 as u32).collect();
        return Ok(one_dim(bits, DType::Int8));
    }
    let bytes = data
        .dyn_ref::<js_sys::Uint8Array>()
        .map(js_sys::Uint8Array::to_vec)
        .or_else(|| {
            data.dyn_ref::<js_sys::Uint8ClampedArray>()
                .map(|a| a.to_vec())
        });
    if let Some(bytes) = bytes {
        return Ok(one_dim(
            bytes.into_iter().map(u32::from).collect(),
            DType::Uint8,
        ));
    }
    if data.is_instance_of::<js_sys::BigInt64Array>()
        || data.is_instance_of::<js_sys::BigUint64Array>()
    {
        return Err(Error::DType(
            "array: 64-bit integer data is not supported; tandem has int32 and uint32".into(),
        ));
    }
    Ok(None)
}

/// Flattens a number, a boolean or nested arrays of them, level by level (never recursively, so
/// hostile nesting cannot overflow the stack). Returns the values, the shape, and whether every
/// value was a boolean.
fn flatten(data: &JsValue) -> Result<(Vec<f64>, Vec<usize>, bool)> {
    let mut shape = Vec::new();
    let mut level = vec![data.clone()];
    while level.iter().any(js_sys::Array::is_array) {
        let rows: Vec<js_sys::Array> = level
            .iter()
            .map(|v| v.clone().dyn_into::<js_sys::Array>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| ragged(&shape))?;
        let len = rows[0].length();
        if rows.iter().any(|r| r.length() != len) {
            return Err(ragged(&shape));
        }
        shape.push(len as usize);
        level = rows.iter().flat_map(|r| r.iter()).collect();
    }
    let mut all_bool = true;
    let values = level
        .iter()
        .map(|v| {
            if let Some(b) = v.as_bool() {
                return Ok(if b { 1.0 } else { 0.0 });
            }
            all_bool = false;
            v.as_f64().ok_or_else(|| {
                Error::Value(format!(
                    "array: elements must be numbers or booleans, found {}",
                    v.js_typeof().as_string().unwrap_or_default()
                ))
            })
        })
        .collect::<Result<Vec<f64>>>()?;
    Ok((values, shape, all_bool))
}

fn ragged(shape_so_far: &[usize]) -> Error {
    Error::Shape(format!(
        "array: nested data is ragged below the leading dimensions {}; every row must have the same length",
        fmt_shape(shape_so_far)
    ))
}

/// The `len` elements in host words as the typed array of their dtype: `bool` as
/// `Uint8Array`, `float16` as `Float16Array` where the engine has one (else a `Float32Array`
/// of the same values), `bfloat16` as a `Float32Array` of the same values.
pub fn to_typed_array(words: &[u32], dtype: DType, len: usize) -> JsValue {
    match dtype {
        DType::Float32 => {
            js_sys::Float32Array::from(bytemuck::cast_slice::<u32, f32>(words)).into()
        }
        DType::Int32 => js_sys::Int32Array::from(bytemuck::cast_slice::<u32, i32>(words)).into(),
        DType::Uint32 => js_sys::Uint32Array::from(words).into(),
        DType::Bool => {
            let bytes: Vec<u8> = words.iter().map(|&w| w as u8).collect();
            js_sys::Uint8Array::from(bytes.as_slice()).into()
        }
        DType::Float16 if has_float16_array() => {
            let bits: Vec<u16> = (0..len)
                .map(|i| packed::bits(words, dtype, i) as u16)
                .collect();
            js_sys::Float16Array::new_from_u16_slice(&bits).into()
        }
        DType::Float16 | DType::BFloat16 => {
            let wide = packed::unpack(words, dtype, len);
            js_sys::Float32Array::from(bytemuck::cast_slice::<u32, f32>(&wide)).into()
        }
        DType::Int8 => {
            let bytes: Vec<i8> = (0..len)
                .map(|i| packed::bits(words, dtype, i) as i8)
                .collect();
            js_sys::Int8Array::from(bytes.as_slice()).into()
        }
        DType::Uint8 => {
            let bytes: Vec<u8> = (0..len)
                .map(|i| packed::bits(words, dtype, i) as u8)
                .collect();
            js_sys::Uint8Array::from(bytes.as_slice()).into()
        }
    }
}

/// One element, given as its compute dtype's word, as a JS value: a number, or a boolean
/// for `bool`.
pub fn element_to_js(word: u32, dtype: DType) -> JsValue {
    match dtype.compute() {
        DType::Float32 => JsValue::from_f64(f32::from_bits(word) as f64),
        DType::Int32 => JsValue::from_f64(word as i32 as f64),
        DType::Bool => JsValue::from_bool(word != 0),
        _ => JsValue::from_f64(word as f64),
    }
}

/// Host words as nested JS arrays of `shape` (a bare value for a scalar), built innermost first.
pub fn to_nested(words: &[u32], shape: &[usize], dtype: DType) -> JsValue {
    let elements = packed::unpack(words, dtype, numel(shape));
    let mut level: Vec<JsValue> = elements.iter().map(|&w| element_to_js(w, dtype)).collect();
    for axis in (0..shape.len()).rev() {
        let (groups, extent) = (numel(&shape[..axis]), shape[axis]);
        level = (0..groups)
            .map(|g| {
                level[g * extent..(g + 1) * extent]
                    .iter()
                    .collect::<js_sys::Array>()
                    .into()
            })
            .collect();
    }
    // A scalar has one element, and every other shape ends as one outermost array.
    level.into_iter().next().expect("one value remains")
}
