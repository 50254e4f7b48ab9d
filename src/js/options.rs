//! How the JS layer reads its arguments: the trailing options object of every op (found among
//! optional positionals, its keys checked against the op's), and one parser for the integers
//! that shapes, axes and index lists are made of.

use wasm_bindgen::{JsCast, JsValue};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::js::handles::handle_of;

/// The option keys of ops that take nothing but a stream.
pub const STREAM: &[&str] = &["stream"];

/// Whether `value` is a plain object (`{...}`, or one made by `Object.create(null)`): what an
/// options argument must be. Arrays, functions, `NDArray`s and `Stream`s are not.
pub fn is_options_object(value: &JsValue) -> bool {
    thread_local! {
        static OBJECT_PROTOTYPE: JsValue =
            js_sys::Object::get_prototype_of(&js_sys::Object::new().into()).into();
    }
    if !value.is_object() || value.is_function() || js_sys::Array::is_array(value) {
        return false;
    }
    let prototype: JsValue = js_sys::Object::get_prototype_of(value).into();
    prototype.is_null() || OBJECT_PROTOTYPE.with(|p| js_sys::Object::is(&prototype, p))
}

/// An op's optional positional arguments and its options parameter, as JS passed them: the
/// options object may stand in place of the first omitted positional (`transpose(x, {stream})`,
/// `slice(x, start, stop, {stream})`). Returns each positional that was given (`undefined`
/// and `null` are not) and the options argument.
pub fn trailing_options<'a, const N: usize>(
    op: &str,
    positionals: [&'a JsValue; N],
    last: &'a JsValue,
) -> Result<([Option<&'a JsValue>; N], &'a JsValue)> {
    let given = |v: &'a JsValue| (!v.is_undefined() && !v.is_null()).then_some(v);
    let Some(at) = positionals.iter().position(|v| is_options_object(v)) else {
        return Ok((positionals.map(given), last));
    };
    if positionals[at + 1..].iter().any(|v| !v.is_undefined()) || !last.is_undefined() {
        return Err(Error::Value(format!(
            "{op}: the options object must be the last argument"
        )));
    }
    let mut found = [None; N];
    for (slot, value) in found.iter_mut().zip(&positionals[..at]) {
        *slot = given(value);
    }
    Ok((found, positionals[at]))
}

/// A parsed options argument: `undefined`, `null` or a plain object whose keys are among the
/// op's.
pub struct Options {
    op: &'static str,
    object: Option<js_sys::Object>,
}

impl Options {
    /// Checks that `value` is an options object whose every key is one of `keys`; `op` names
    /// the caller in errors. A typo is an error, never an option silently ignored.
    pub fn parse(op: &'static str, value: &JsValue, keys: &[&str]) -> Result<Options> {
        if value.is_undefined() || value.is_null() {
            return Ok(Options { op, object: None });
        }
        if !is_options_object(value) {
            return Err(Error::Value(format!(
                "{op}: the options argument must be a plain object such as {{{}}}, got {}",
                keys.join(", "),
                describe(value)
            )));
        }
        let object: js_sys::Object = value.clone().unchecked_into();
        for key in js_sys::Object::keys(&object).iter() {
            let key = key.as_string().unwrap_or_default();
            if !keys.contains(&key.as_str()) {
                return Err(Error::Value(format!(
                    "{op}: unknown option \"{key}\"; the options are {}",
                    keys.join(", ")
                )));
            }
        }
        Ok(Options {
            op,
            object: Some(object),
        })
    }

    /// The value under `key`, or `None` when it is absent or `undefined`.
    pub fn get(&self, key: &'static str) -> Option<JsValue> {
        let object = self.object.as_ref()?;
        let value = js_sys::Reflect::get(object, &crate::js::property(key)).ok()?;
        (!value.is_undefined()).then_some(value)
    }

    /// The op whose options these are, for error messages.
    pub fn op(&self) -> &'static str {
        self.op
    }

    /// `opts.dtype`, by name.
    pub fn dtype(&self) -> Result<Option<DType>> {
        let Some(value) = self.get("dtype") else {
            return Ok(None);
        };
        let name = value.as_string().ok_or_else(|| {
            Error::DType(format!(
                "{}: opts.dtype must be a dtype name, got {}",
                self.op,
                describe(&value)
            ))
        })?;
        DType::parse(&name)
            .map(Some)
            .map_err(|e| Error::DType(format!("{}: {}", self.op, e.message())))
    }

    /// `opts.shape`: an array of non-negative integers.
    pub fn shape(&self) -> Result<Option<Vec<usize>>> {
        self.get("shape")
            .map(|v| shape_of(self.op, "opts.shape", &v))
            .transpose()
    }

    /// `opts.axis`: one axis or a list of them; `null` means all axes, as absent does.
    pub fn axis(&self) -> Result<Option<Vec<isize>>> {
        self.get("axis")
            .filter(|v| !v.is_null())
            .map(|v| axes_of(self.op, "opts.axis", &v))
            .transpose()
    }

    /// `opts.axis` as one axis, or `None` when absent (or `null`); a list of several is a
    /// `ValueError`.
    pub fn single_axis(&self) -> Result<Option<isize>> {
        match self.axis()?.as_deref() {
            None => Ok(None),
            Some([axis]) => Ok(Some(*axis)),
            Some(_) => Err(Error::Value(format!(
                "{}: opts.axis must be one axis",
                self.op
            ))),
        }
    }

    /// A boolean option; absent means `false`.
    pub fn flag(&self, key: &'static str) -> Result<bool> {
        match self.get(key) {
            None => Ok(false),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| self.wrong_type(key, "a boolean", &v)),
        }
    }

    /// A number option.
    pub fn number(&self, key: &'static str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, "a number", &v)),
        }
    }

    /// A string option.
    pub fn string(&self, key: &'static str) -> Result<Option<String>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_string()
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, "a string", &v)),
        }
    }

    fn wrong_type(&self, key: &str, expected: &str, got: &JsValue) -> Error {
        Error::Value(format!(
            "{}: opts.{key} must be {expected}, got {}",
            self.op,
            describe(got)
        ))
    }
}

/// A JS value in a few words, for error messages.
pub fn describe(value: &JsValue) -> String {
    if let Some(x) = value.as_f64() {
        return format!("the number {x}");
    }
    if let Some(s) = value.as_string() {
        return format!("the string {s:?}");
    }
    if js_sys::Array::is_array(value) {
        return "an array".into();
    }
    if handle_of(value).is_some() {
        return "an NDArray".into();
    }
    value.js_typeof().as_string().unwrap_or_default()
}

/// Whole numbers a JS number can hold exactly: every integer up to 2^53 in magnitude.
const SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// The one integer parser: `value` as a whole number in `[min, max]`, or an error that names
/// `what`.
fn integer(op: &str, what: &str, value: &JsValue, min: f64, max: f64) -> Result<f64> {
    match value.as_f64() {
        Some(x) if x.fract() == 0.0 && (min..=max).contains(&x) => Ok(x),
        _ => Err(Error::Value(format!(
            "{op}: {what} must be {}, got {}",
            if min >= 0.0 {
                "a non-negative integer"
            } else {
                "an integer"
            },
            describe(value)
        ))),
    }
}

/// The items of a JS array (or, where `one` allows, a single value as a list of one), each
/// an integer in `[min, max]`.
fn integer_list(
    op: &str,
    what: &str,
    value: &JsValue,
    one: bool,
    (min, max): (f64, f64),
) -> Result<Vec<f64>> {
    if !js_sys::Array::is_array(value) {
        if one && value.as_f64().is_some() {
            return Ok(vec![integer(op, what, value, min, max)?]);
        }
        return Err(Error::Value(format!(
            "{op}: {what} must be {}, got {}",
            if one {
                "an integer or an array of integers"
            } else {
                "an array of integers"
            },
            describe(value)
        )));
    }
    js_sys::Array::from(value)
        .iter()
        .enumerate()
        .map(|(i, v)| integer(op, &format!("{what}[{i}]"), &v, min, max))
        .collect()
}

/// A count or size: a non-negative integer that a JS number holds exactly.
pub fn count_of(op: &str, what: &str, value: &JsValue) -> Result<usize> {
    let x = integer(op, what, value, 0.0, SAFE_INTEGER)?;
    usize::try_from(x as u64).map_err(|_| too_large(op, &format!("{what} of {x}")))
}

/// A shape: an array of sizes. Whether their product fits is the core's check (`shape.rs`);
/// a size that a `usize` cannot hold (on wasm32, 2^32 or more) fails here, the same way.
pub fn shape_of(op: &str, what: &str, value: &JsValue) -> Result<Vec<usize>> {
    let sizes = integer_list(op, what, value, false, (0.0, SAFE_INTEGER))?;
    sizes
        .iter()
        .map(|&x| usize::try_from(x as u64))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| {
            let sizes: Vec<u64> = sizes.iter().map(|&x| x as u64).collect();
            too_large(op, &format!("an array of shape {sizes:?}"))
        })
}

fn too_large(op: &str, what: &str) -> Error {
    Error::MemoryLimit(format!(
        "{op}: {what} has more bytes than this platform can address"
    ))
}

/// An axis or a list of axes (`1` or `[0, -1]`); their range is the op's check.
pub fn axes_of(op: &str, what: &str, value: &JsValue) -> Result<Vec<isize>> {
    let axes = integer_list(op, what, value, true, (-SAFE_INTEGER, SAFE_INTEGER))?;
    Ok(axes.into_iter().map(saturating_isize).collect())
}

/// A list of integers that may be negative (slice bounds and strides, reshape sizes with -1).
pub fn integers_of(op: &str, what: &str, value: &JsValue) -> Result<Vec<isize>> {
    let items = integer_list(op, what, value, false, (-SAFE_INTEGER, SAFE_INTEGER))?;
    Ok(items.into_iter().map(saturating_isize).collect())
}

/// An integer beyond `isize` (on wasm32, beyond 2^31) becomes the nearest `isize`: still out of
/// every range that the ops check, and a slice bound clamps as MLX's do.
fn saturating_isize(x: f64) -> isize {
    // `as` saturates from floating point.
    x as isize
}

/// A count of bytes from JS: a whole number from 0 to 2^53; `what` names the caller.
pub fn byte_count(what: &str, value: f64) -> Result<u64> {
    if !(value >= 0.0 && value.fract() == 0.0 && value <= SAFE_INTEGER) {
        return Err(Error::Value(format!(
            "{what} must be a whole number of bytes, got {value}"
        )));
    }
    Ok(value as u64)
}
