//! The trailing options object that every op takes.

use std::cell::RefCell;

use wasm_bindgen::{JsCast, JsValue};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::stream::Stream;

/// `key` as a JS string, made once per thread: every op reads a few properties, and
/// converting a Rust string to JS decodes it anew each time.
pub(crate) fn property(key: &'static str) -> JsValue {
    thread_local! {
        static KEYS: RefCell<Vec<(&'static str, JsValue)>> = const { RefCell::new(Vec::new()) };
    }
    KEYS.with(|keys| {
        if let Some((_, value)) = keys.borrow().iter().find(|(k, _)| *k == key) {
            return value.clone();
        }
        let value = JsValue::from_str(key);
        keys.borrow_mut().push((key, value.clone()));
        value
    })
}

/// A parsed options argument: `undefined`, `null` or a plain object.
pub struct Options {
    op: &'static str,
    object: Option<js_sys::Object>,
}

impl Options {
    /// Checks that `value` is an options object; `op` names the caller in errors.
    pub fn parse(op: &'static str, value: &JsValue) -> Result<Options> {
        if value.is_undefined() || value.is_null() {
            return Ok(Options { op, object: None });
        }
        match value.dyn_ref::<js_sys::Object>() {
            Some(object) if !value.is_function() && !js_sys::Array::is_array(value) => {
                Ok(Options {
                    op,
                    object: Some(object.clone()),
                })
            }
            _ => Err(Error::Value(format!(
                "{op}: the options argument must be an object"
            ))),
        }
    }

    /// The value under `key`, or `None` when it is absent or `undefined`.
    pub fn get(&self, key: &'static str) -> Option<JsValue> {
        let object = self.object.as_ref()?;
        let value = js_sys::Reflect::get(object, &property(key)).ok()?;
        (!value.is_undefined()).then_some(value)
    }

    /// `opts.stream`: a `Stream`, or `"cpu"`/`"gpu"` for that device's default stream.
    pub fn stream(&self) -> Result<Option<Stream>> {
        self.get("stream")
            .map(|v| crate::js::stream::stream_of(self.op, &v))
            .transpose()
    }

    /// `opts.dtype`, by name.
    pub fn dtype(&self) -> Result<Option<DType>> {
        let Some(value) = self.get("dtype") else {
            return Ok(None);
        };
        let name = value
            .as_string()
            .ok_or_else(|| Error::DType(format!("{}: opts.dtype must be a dtype name", self.op)))?;
        DType::parse(&name)
            .map(Some)
            .map_err(|e| Error::DType(format!("{}: {}", self.op, e.message())))
    }

    /// `opts.shape`: an array of non-negative integers.
    pub fn shape(&self) -> Result<Option<Vec<usize>>> {
        self.get("shape").map(|v| shape_of(self.op, &v)).transpose()
    }

    /// A boolean option; absent means `false`.
    pub fn flag(&self, key: &'static str) -> Result<bool> {
        match self.get(key) {
            None => Ok(false),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| Error::Value(format!("{}: opts.{key} must be a boolean", self.op))),
        }
    }

    /// A number option.
    pub fn number(&self, key: &'static str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| Error::Value(format!("{}: opts.{key} must be a number", self.op))),
        }
    }

    /// A string option.
    pub fn string(&self, key: &'static str) -> Result<Option<String>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_string()
                .map(Some)
                .ok_or_else(|| Error::Value(format!("{}: opts.{key} must be a string", self.op))),
        }
    }
}

/// A count of bytes from JS: a whole number from 0 to 2^53; `what` names the caller.
pub fn byte_count(what: &str, value: f64) -> Result<u64> {
    if !(value >= 0.0 && value.fract() == 0.0 && value <= 2f64.powi(53)) {
        return Err(Error::Value(format!(
            "{what} must be a whole number of bytes, got {value}"
        )));
    }
    Ok(value as u64)
}

/// A JS array of non-negative integers as a shape.
pub fn shape_of(op: &str, value: &JsValue) -> Result<Vec<usize>> {
    let bad = || {
        Error::Shape(format!(
            "{op}: a shape must be an array of non-negative integers"
        ))
    };
    if !js_sys::Array::is_array(value) {
        return Err(bad());
    }
    js_sys::Array::from(value)
        .iter()
        .map(|d| match d.as_f64() {
            Some(x) if x >= 0.0 && x.fract() == 0.0 && x <= u32::MAX as f64 => Ok(x as usize),
            _ => Err(bad()),
        })
        .collect()
}

/// An axis or a list of axes (`1` or `[0, -1]`).
pub fn axes_of(op: &str, value: &JsValue) -> Result<Vec<isize>> {
    let bad = || {
        Error::Value(format!(
            "{op}: an axis must be an integer or an array of integers"
        ))
    };
    let one = |v: &JsValue| match v.as_f64() {
        Some(x) if x.fract() == 0.0 && x.abs() < 1e9 => Ok(x as isize),
        _ => Err(bad()),
    };
    if js_sys::Array::is_array(value) {
        js_sys::Array::from(value).iter().map(|v| one(&v)).collect()
    } else {
        one(value).map(|a| vec![a])
    }
}

/// A list of integers that may be negative (slice bounds, reshape sizes with -1).
pub fn integers_of(op: &str, what: &str, value: &JsValue) -> Result<Vec<isize>> {
    let bad = || Error::Value(format!("{op}: {what} must be an array of integers"));
    if !js_sys::Array::is_array(value) {
        return Err(bad());
    }
    js_sys::Array::from(value)
        .iter()
        .map(|v| match v.as_f64() {
            Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(x as isize),
            _ => Err(bad()),
        })
        .collect()
}

impl Options {
    /// `opts.axis` as a list of axes, if present.
    pub fn axes(&self) -> Result<Option<Vec<isize>>> {
        self.get("axis")
            .filter(|v| !v.is_null())
            .map(|v| axes_of(self.op, &v))
            .transpose()
    }
}
