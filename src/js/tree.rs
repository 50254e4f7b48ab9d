//! Trees of arrays (MLX's pytrees) as the function transforms and `compile` take and return
//! them: an `NDArray`, a number, `null`, or JS arrays and plain objects of trees. A tree is
//! split into its structure ([`Tree`]) and its arrays, in order (depth first, arrays by index,
//! objects by their keys' order), and built again from new arrays.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::js::handles;
use crate::js::ndarray::NdArray;
use crate::js::options::describe;

/// How deep a tree may nest: deeper is taken for a cycle.
const MAX_DEPTH: usize = 64;

/// A tree's structure; its arrays are numbered in order. Numbers compare by their bits, so
/// that a tree is a key (`compile`'s) even with a NaN in it.
#[derive(Debug, Clone)]
pub(crate) enum Tree {
    Array,
    Number(f64),
    Null,
    List(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

impl PartialEq for Tree {
    fn eq(&self, other: &Tree) -> bool {
        match (self, other) {
            (Tree::Array, Tree::Array) | (Tree::Null, Tree::Null) => true,
            (Tree::Number(a), Tree::Number(b)) => a.to_bits() == b.to_bits(),
            (Tree::List(a), Tree::List(b)) => a == b,
            (Tree::Object(a), Tree::Object(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Tree {}

impl std::hash::Hash for Tree {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Tree::Array | Tree::Null => {}
            Tree::Number(x) => x.to_bits().hash(state),
            Tree::List(items) => items.hash(state),
            Tree::Object(entries) => entries.hash(state),
        }
    }
}

/// What becomes of a tree's numbers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Numbers {
    /// They stay numbers, part of the structure.
    Keep,
    /// Each becomes a `float32` scalar array (an argument that is differentiated).
    AsArrays,
}

impl Tree {
    /// The structure of `value` and its arrays, appended to `arrays`; `what` names the tree in
    /// errors ("grad: argument 0").
    pub(crate) fn split(
        what: &str,
        value: &JsValue,
        numbers: Numbers,
        arrays: &mut Vec<Array>,
    ) -> Result<Tree> {
        split_at(what, value, numbers, arrays, 0)
    }

    /// The tree with its arrays taken in order from `arrays`, each as a new `NDArray`.
    pub(crate) fn build(&self, arrays: &mut impl Iterator<Item = Array>) -> JsValue {
        self.build_with(&mut || NdArray::new(arrays.next().expect("an array per leaf")).into())
    }

    /// The tree with each array replaced by what `leaf` gives, in order.
    pub(crate) fn build_with(&self, leaf: &mut impl FnMut() -> JsValue) -> JsValue {
        match self {
            Tree::Array => leaf(),
            Tree::Number(x) => JsValue::from_f64(*x),
            Tree::Null => JsValue::NULL,
            Tree::List(items) => items
                .iter()
                .map(|t| t.build_with(leaf))
                .collect::<js_sys::Array>()
                .into(),
            Tree::Object(entries) => {
                let object = js_sys::Object::new();
                for (key, t) in entries {
                    crate::js::set_property(&object, key, t.build_with(leaf));
                }
                object.into()
            }
        }
    }

    /// Each item of `list` split (see [`Tree::split`]); `what(i)` names item `i` in errors.
    pub(crate) fn split_each(
        list: impl IntoIterator<Item = JsValue>,
        what: impl Fn(usize) -> String,
        numbers: Numbers,
        arrays: &mut Vec<Array>,
    ) -> Result<Vec<Tree>> {
        list.into_iter()
            .enumerate()
            .map(|(i, item)| Tree::split(&what(i), &item, numbers, arrays))
            .collect()
    }

    /// `trees` built from `arrays` in order, as a JS list (a function's arguments).
    pub(crate) fn build_each(trees: &[Tree], arrays: &[Array]) -> js_sys::Array {
        let mut leaves = arrays.iter().cloned();
        trees.iter().map(|t| t.build(&mut leaves)).collect()
    }

    /// How many arrays the tree holds.
    pub(crate) fn arrays(&self) -> usize {
        match self {
            Tree::Array => 1,
            Tree::Number(_) | Tree::Null => 0,
            Tree::List(items) => items.iter().map(Tree::arrays).sum(),
            Tree::Object(entries) => entries.iter().map(|(_, t)| t.arrays()).sum(),
        }
    }

    /// Each array's path from the root (`"layers[0].w"`), in order.
    pub(crate) fn paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.paths_into(String::new(), &mut out);
        out
    }

    fn paths_into(&self, at: String, out: &mut Vec<String>) {
        match self {
            Tree::Array => out.push(at),
            Tree::Number(_) | Tree::Null => {}
            Tree::List(items) => {
                for (i, t) in items.iter().enumerate() {
                    t.paths_into(format!("{at}[{i}]"), out);
                }
            }
            Tree::Object(entries) => {
                for (key, t) in entries {
                    let inner = if at.is_empty() {
                        key.clone()
                    } else {
                        format!("{at}.{key}")
                    };
                    t.paths_into(inner, out);
                }
            }
        }
    }

    /// Whether the tree holds a number.
    pub(crate) fn has_numbers(&self) -> bool {
        match self {
            Tree::Number(_) => true,
            Tree::Array | Tree::Null => false,
            Tree::List(items) => items.iter().any(Tree::has_numbers),
            Tree::Object(entries) => entries.iter().any(|(_, t)| t.has_numbers()),
        }
    }

    /// A leaf per array of `self`, in order, taken from `prefix`: a tree of `self`'s shape
    /// cut short, whose leaves stand for everything below them (MLX's `in_axes`: one number
    /// for a whole argument). `None` where the prefix has `null`.
    pub(crate) fn broadcast<T: Clone>(
        &self,
        what: &str,
        prefix: &Prefix<T>,
        out: &mut Vec<Option<T>>,
    ) -> Result<()> {
        match (prefix, self) {
            (Prefix::Leaf(v), _) => out.extend(std::iter::repeat_n(v.clone(), self.arrays())),
            (Prefix::List(ps), Tree::List(items)) if ps.len() == items.len() => {
                for (p, t) in ps.iter().zip(items) {
                    t.broadcast(what, p, out)?;
                }
            }
            (Prefix::Object(ps), Tree::Object(entries)) => {
                for (key, t) in entries {
                    match ps.iter().find(|(k, _)| k == key) {
                        Some((_, p)) => t.broadcast(what, p, out)?,
                        None => {
                            return Err(Error::Value(format!("{what} has no entry for {key:?}")));
                        }
                    }
                }
            }
            _ => {
                return Err(Error::Value(format!(
                    "{what} does not match the structure of the arguments"
                )));
            }
        }
        Ok(())
    }
}

/// A tree of settings that applies to another tree (see [`Tree::broadcast`]).
pub(crate) enum Prefix<T> {
    Leaf(Option<T>),
    List(Vec<Prefix<T>>),
    Object(Vec<(String, Prefix<T>)>),
}

fn split_at(
    what: &str,
    value: &JsValue,
    numbers: Numbers,
    arrays: &mut Vec<Array>,
    depth: usize,
) -> Result<Tree> {
    if depth > MAX_DEPTH {
        return Err(Error::Value(format!(
            "{what} nests deeper than {MAX_DEPTH} levels (a cycle?)"
        )));
    }
    if handles::handle_of(value).is_some() {
        arrays.push(NdArray::from_js(what, value)?);
        return Ok(Tree::Array);
    }
    if let Some(x) = value.as_f64() {
        if numbers == Numbers::AsArrays {
            arrays.push(Array::from_f32(&[x as f32], &[])?);
            return Ok(Tree::Array);
        }
        return Ok(Tree::Number(x));
    }
    if value.is_null() || value.is_undefined() {
        return Ok(Tree::Null);
    }
    if js_sys::Array::is_array(value) {
        let items = js_sys::Array::from(value)
            .iter()
            .enumerate()
            .map(|(i, item)| split_at(&format!("{what}[{i}]"), &item, numbers, arrays, depth + 1))
            .collect::<Result<Vec<_>>>()?;
        return Ok(Tree::List(items));
    }
    if let Some(object) = plain_object(value) {
        let keys = js_sys::Object::keys(object);
        let values = js_sys::Object::values(object);
        let entries = keys
            .iter()
            .zip(values.iter())
            .map(|(key, item)| {
                let key = key.as_string().unwrap_or_default();
                let inner = format!("{what}.{key}");
                Ok((key, split_at(&inner, &item, numbers, arrays, depth + 1)?))
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(Tree::Object(entries));
    }
    Err(Error::Value(format!(
        "{what} is {}; a tree holds NDArrays, numbers, null, arrays and plain objects",
        describe(value)
    )))
}

/// `value` as a plain object (made by `{}` or `Object.create(null)`), if it is one.
pub(crate) fn plain_object(value: &JsValue) -> Option<&js_sys::Object> {
    if !value.is_object() || value.is_function() {
        return None;
    }
    let object: &js_sys::Object = value.unchecked_ref();
    let proto = js_sys::Object::get_prototype_of(object);
    let plain = js_sys::Object::get_prototype_of(&js_sys::Object::new());
    (proto.is_null() || js_sys::Object::is(&proto, &plain)).then_some(object)
}

/// `value` read as a [`Prefix`] of optional numbers (`inAxes`, `outAxes`, `argnums`-like).
pub(crate) fn axes_prefix(what: &str, value: &JsValue, depth: usize) -> Result<Prefix<isize>> {
    if depth > MAX_DEPTH {
        return Err(Error::Value(format!("{what} nests too deep")));
    }
    if value.is_null() {
        return Ok(Prefix::Leaf(None));
    }
    if let Some(x) = value.as_f64() {
        if x.fract() != 0.0 || x.abs() > i32::MAX as f64 {
            return Err(Error::Value(format!("{what}: {x} is not an axis")));
        }
        return Ok(Prefix::Leaf(Some(x as isize)));
    }
    if js_sys::Array::is_array(value) {
        let items = js_sys::Array::from(value)
            .iter()
            .map(|v| axes_prefix(what, &v, depth + 1))
            .collect::<Result<Vec<_>>>()?;
        return Ok(Prefix::List(items));
    }
    if let Some(object) = plain_object(value) {
        let entries = js_sys::Object::entries(object)
            .iter()
            .map(|pair| {
                let pair = js_sys::Array::from(&pair);
                let key = pair.get(0).as_string().unwrap_or_default();
                Ok((key, axes_prefix(what, &pair.get(1), depth + 1)?))
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(Prefix::Object(entries));
    }
    Err(Error::Value(format!(
        "{what} is {}; expected a number, null, or a list or object of them",
        describe(value)
    )))
}
