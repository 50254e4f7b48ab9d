//! The JS faces of reverse and forward mode on trees: `grad`, `valueAndGrad`, `vjp`, `jvp`
//! and `checkpoint`. The package's `grad(fn, opts)` (`npm/index.js`) checks its options here
//! once and returns a plain function that calls [`value_and_grad_call`] with `fn`, so Rust
//! never holds the page's function past one call (see `compile.rs` for why).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::options::{Options, count_of, describe};
use crate::js::traced::{self, function, rethrow};
use crate::js::tree::{Numbers, Tree};
use crate::transforms::grad::{self, Function};

/// Which arguments a gradient is taken with respect to, and whether `argnums` was one number
/// (the gradients are then that argument's tree, not a list of trees).
struct Argnums {
    list: Vec<usize>,
    single: bool,
}

/// Checks `grad`'s or `valueAndGrad`'s function and options, as the package does when the
/// transform is made, so that a typo fails there rather than at the first call.
#[wasm_bindgen(js_name = checkGradOptions)]
pub fn check_grad_options(op: String, f: &JsValue, opts: JsValue) -> JsResult<()> {
    let op = if op == "valueAndGrad" {
        "valueAndGrad"
    } else {
        "grad"
    };
    js(function(op, f))?;
    js(argnums_of(op, &opts, None)).map(drop)
}

fn argnums_of(op: &'static str, opts: &JsValue, args: Option<u32>) -> Result<Argnums> {
    let parsed = Options::parse(op, opts, &["argnums"])?;
    let (list, single) = match parsed.get("argnums") {
        None => (vec![0], true),
        Some(v) if v.as_f64().is_some() => (vec![count_of(op, "argnums", &v)?], true),
        Some(v) if js_sys::Array::is_array(&v) => {
            let list = js_sys::Array::from(&v)
                .iter()
                .enumerate()
                .map(|(i, n)| count_of(op, &format!("argnums[{i}]"), &n))
                .collect::<Result<Vec<_>>>()?;
            (list, false)
        }
        Some(v) => {
            return Err(Error::Value(format!(
                "{op}: argnums must be a number or a list of numbers, not {}",
                describe(&v)
            )));
        }
    };
    if let Some(i) = (1..list.len()).find(|&i| list[..i].contains(&list[i])) {
        return Err(Error::Value(format!("{op}: argnums repeats {}", list[i])));
    }
    if let Some(n) = args
        && let Some(&i) = list.iter().find(|&&i| i >= n as usize)
    {
        return Err(Error::Value(format!(
            "{op}: argnums names argument {i}, but the function was called with {n}"
        )));
    }
    Ok(Argnums { list, single })
}

/// `grad(fn, opts)(...args)` (`withValue` false) or `valueAndGrad(fn, opts)(...args)`.
#[wasm_bindgen(js_name = valueAndGradCall)]
pub fn value_and_grad_call(
    f: &JsValue,
    args: js_sys::Array,
    opts: JsValue,
    with_value: bool,
) -> JsResult<JsValue> {
    let op = if with_value { "valueAndGrad" } else { "grad" };
    let f = js(function(op, f))?;
    let argnums = js(argnums_of(op, &opts, Some(args.length())))?;
    let mut primals = Vec::new();
    let trees = argnums
        .list
        .iter()
        .map(|&i| {
            let what = format!("{op}: argument {i}");
            Tree::split(&what, &args.get(i as u32), Numbers::AsArrays, &mut primals)
        })
        .collect::<Result<Vec<_>>>();
    let trees = js(trees)?;
    let result: RefCell<Option<(Tree, Vec<Array>)>> = RefCell::new(None);
    let fun = |stand_ins: &[Array]| {
        let make_args = || with_trees(&args, &argnums.list, &trees, stand_ins);
        let (tree, arrays) = traced::call(op, f, make_args)?;
        let loss = loss_of(op, &tree, &arrays, with_value)?;
        *result.borrow_mut() = Some((tree, arrays));
        Ok(loss)
    };
    let (_, grads) = grad::value_and_grad(fun, &primals).map_err(rethrow)?;
    traced::forget_thrown();
    let built = Tree::build_each(&trees, &grads);
    let grads = match argnums.single {
        true => built.get(0),
        false => built.into(),
    };
    if !with_value {
        return Ok(grads);
    }
    let (tree, arrays) = result.into_inner().expect("the function ran");
    let value = tree.build(&mut arrays.into_iter());
    Ok(js_sys::Array::of2(&value, &grads).into())
}

/// A copy of `args` whose arguments at `argnums` are built from `arrays` on `trees`.
fn with_trees(
    args: &js_sys::Array,
    argnums: &[usize],
    trees: &[Tree],
    arrays: &[Array],
) -> js_sys::Array {
    let call_args = js_sys::Array::from(args);
    let mut leaves = arrays.iter().cloned();
    for (&i, tree) in argnums.iter().zip(trees) {
        call_args.set(i as u32, tree.build(&mut leaves));
    }
    call_args
}

/// The loss in a function's result: the result itself, or with `valueAndGrad` the first item
/// of a list (`[loss, aux]`).
fn loss_of(op: &str, tree: &Tree, arrays: &[Array], aux: bool) -> Result<Array> {
    match tree {
        Tree::Array => Ok(arrays[0].clone()),
        Tree::List(items) if aux && items.first() == Some(&Tree::Array) => Ok(arrays[0].clone()),
        Tree::List(_) if !aux => Err(Error::Value(format!(
            "{op}: the function returned a list; grad needs one scalar NDArray (use \
             valueAndGrad for [loss, aux])"
        ))),
        _ => Err(Error::Value(format!(
            "{op}: the function must return a scalar NDArray{}",
            if aux {
                " or [loss, aux] with loss a scalar NDArray"
            } else {
                ""
            }
        ))),
    }
}

/// `vjp(fn, primals, cotangents)` → `[outputs, vjps]`, each a list.
#[wasm_bindgen]
pub fn vjp(f: &JsValue, primals: JsValue, cotangents: JsValue) -> JsResult<js_sys::Array> {
    let f = js(function("vjp", f))?;
    let (trees, arrays) = js(tree_list("vjp", "primals", &primals))?;
    let (_, cotangents) = js(tree_list("vjp", "cotangents", &cotangents))?;
    let shape: RefCell<Option<Tree>> = RefCell::new(None);
    let fun = |stand_ins: &[Array]| {
        let (tree, outputs) = traced::call("vjp", f, || Tree::build_each(&trees, stand_ins))?;
        *shape.borrow_mut() = Some(tree);
        Ok(outputs)
    };
    let (outputs, grads) = grad::vjp(fun, &arrays, &cotangents).map_err(rethrow)?;
    traced::forget_thrown();
    let outputs = as_list(&shape.into_inner().expect("the function ran"), outputs);
    Ok(js_sys::Array::of2(
        &outputs,
        &Tree::build_each(&trees, &grads),
    ))
}

/// `jvp(fn, primals, tangents)` → `[outputs, jvps]`, each a list.
#[wasm_bindgen]
pub fn jvp(f: &JsValue, primals: JsValue, tangents: JsValue) -> JsResult<js_sys::Array> {
    let f = js(function("jvp", f))?;
    let (trees, arrays) = js(tree_list("jvp", "primals", &primals))?;
    let (_, tangents) = js(tree_list("jvp", "tangents", &tangents))?;
    let shape: RefCell<Option<Tree>> = RefCell::new(None);
    let fun = |stand_ins: &[Array]| {
        let (tree, outputs) = traced::call("jvp", f, || Tree::build_each(&trees, stand_ins))?;
        shape.borrow_mut().get_or_insert(tree);
        Ok(outputs)
    };
    let (outputs, jvps) = grad::jvp(fun, &arrays, &tangents).map_err(rethrow)?;
    traced::forget_thrown();
    let tree = shape.into_inner().expect("the function ran");
    Ok(js_sys::Array::of2(
        &as_list(&tree, outputs),
        &as_list(&tree, jvps),
    ))
}

/// A JS list of trees (`primals`, `cotangents`, `tangents`): their structures and arrays.
fn tree_list(op: &str, what: &str, value: &JsValue) -> Result<(Vec<Tree>, Vec<Array>)> {
    if !js_sys::Array::is_array(value) {
        return Err(Error::Value(format!(
            "{op}: {what} must be a list of trees (as MLX's lists of arrays), not {}",
            describe(value)
        )));
    }
    let mut arrays = Vec::new();
    let list = js_sys::Array::from(value);
    let name = |i| format!("{op}: {what}[{i}]");
    let trees = Tree::split_each(list.iter(), name, Numbers::AsArrays, &mut arrays)?;
    Ok((trees, arrays))
}

/// A function's result as MLX's list of outputs: its items if it returned a list, else
/// itself, alone.
fn as_list(tree: &Tree, arrays: Vec<Array>) -> JsValue {
    let built = tree.build(&mut arrays.into_iter());
    match tree {
        Tree::List(_) => built,
        _ => js_sys::Array::of1(&built).into(),
    }
}

/// `checkpoint(fn)(...args)`: `fn`'s result, whose gradient recomputes `fn` rather than
/// keeping its intermediates. The arguments' numbers stay numbers.
#[wasm_bindgen(js_name = checkpointCall)]
pub fn checkpoint_call(f: &JsValue, args: js_sys::Array) -> JsResult<JsValue> {
    let f = js(function("checkpoint", f))?.clone();
    let mut arrays = Vec::new();
    let name = |i| format!("checkpoint: argument {i}");
    let trees = js(Tree::split_each(
        args.iter(),
        name,
        Numbers::Keep,
        &mut arrays,
    ))?;
    let shape: Rc<RefCell<Option<Tree>>> = Rc::default();
    let seen = shape.clone();
    let fun: Function = Rc::new(move |inputs: &[Array]| {
        let (tree, outputs) = traced::call("checkpoint", &f, || Tree::build_each(&trees, inputs))?;
        seen.borrow_mut().get_or_insert(tree);
        Ok(outputs)
    });
    let outputs = grad::checkpoint(fun, &arrays).map_err(rethrow)?;
    traced::forget_thrown();
    let tree = shape.borrow_mut().take().expect("the function ran");
    Ok(tree.build(&mut outputs.into_iter()))
}
