//! `vmap(fn, {inAxes, outAxes})(...args)` on trees: the JS face of
//! [`crate::transforms::vmap`], whose fallback calls `fn` once per index of the mapped axis.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::js::error::{JsResult, js, to_js as js_error};
use crate::js::options::Options;
use crate::js::traced::{self, function, rethrow};
use crate::js::tree::{Numbers, Prefix, Tree, axes_prefix};
use crate::transforms::vmap::{move_mapped_axis, vmap};

const KEYS: &[&str] = &["inAxes", "outAxes"];

/// Checks `vmap`'s function and options when the transform is made.
#[wasm_bindgen(js_name = checkVmapOptions)]
pub fn check_vmap_options(f: &JsValue, opts: JsValue) -> JsResult<()> {
    js(function("vmap", f))?;
    js(axes_options(&opts)).map(drop)
}

/// `inAxes` (default 0: every argument on its first axis) and `outAxes` (default 0).
fn axes_options(opts: &JsValue) -> Result<(Prefix<isize>, Prefix<isize>)> {
    let parsed = Options::parse("vmap", opts, KEYS)?;
    let read = |key: &'static str| match parsed.get(key) {
        Some(v) => axes_prefix(&format!("vmap: {key}"), &v, 0),
        None => Ok(Prefix::Leaf(Some(0))),
    };
    Ok((read("inAxes")?, read("outAxes")?))
}

/// Calls the mapped `fn` with `args`.
#[wasm_bindgen(js_name = vmapCall)]
pub fn vmap_call(f: &JsValue, args: js_sys::Array, opts: JsValue) -> JsResult<JsValue> {
    let f = js(function("vmap", f))?;
    let (in_axes, out_axes) = js(axes_options(&opts))?;
    let mut arrays = Vec::new();
    let name = |i| format!("vmap: argument {i}");
    let trees = js(Tree::split_each(
        args.iter(),
        name,
        Numbers::Keep,
        &mut arrays,
    ))?;
    let args_tree = Tree::List(trees.clone());
    let in_axes = js(leaf_axes("vmap: inAxes", &args_tree, &in_axes))?;
    let shape: RefCell<Option<Tree>> = RefCell::new(None);
    let fun = |inputs: &[Array]| {
        let make_args = || Tree::build_each(&trees, inputs);
        let (tree, outputs) = traced::call("vmap", f, make_args)?;
        shape.borrow_mut().get_or_insert(tree);
        Ok(outputs)
    };
    let outputs = vmap(fun, &arrays, &in_axes).map_err(rethrow)?;
    traced::forget_thrown();
    let tree = shape.into_inner().expect("the function ran");
    if tree.has_numbers() {
        return Err(js_error(Error::Value(
            "vmap: the function returned a number; a mapped function returns arrays".into(),
        )));
    }
    let out_axes = js(leaf_axes("vmap: outAxes", &tree, &out_axes))?;
    let moved = outputs
        .iter()
        .zip(out_axes)
        .map(|(y, axis)| {
            let axis = axis.ok_or_else(|| {
                Error::Value("vmap: outAxes cannot be null: every output is mapped".into())
            })?;
            move_mapped_axis(y, axis)
        })
        .collect::<Result<Vec<_>>>();
    Ok(tree.build(&mut js(moved)?.into_iter()))
}

/// One axis (or `None`) per array of `tree` from `prefix`; a result tree that holds numbers
/// cannot be mapped.
fn leaf_axes(what: &str, tree: &Tree, prefix: &Prefix<isize>) -> Result<Vec<Option<isize>>> {
    let mut axes = Vec::new();
    tree.broadcast(what, prefix, &mut axes)?;
    Ok(axes)
}
