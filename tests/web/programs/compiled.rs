//! Compiled functions in the random programs. A function's body is calls the generator
//! proposes over its parameters (arrays or numbers), the arrays it closes over and its own
//! results, each call checked by running it on the arguments of the function's first call.
//! The program compiles it, calls it with the traced shapes and with new ones, inside and
//! outside `tidy`, and disposes it or drops it for the garbage collector.
//!
//! The reference run calls the body plainly, op by op, so every read of a compiled call must
//! give the plain ops' bits; the interleaved run calls it through `Compiled`, as the
//! package's `compile` does (the wrapper keeps the JS function and passes it to each call).

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::common::PageCompiled;
use tandem::js::functions::exported;
use tandem::js::grad::value_and_grad_call;
use tandem::js::tidy::tidy;

use super::generate::{Known, State, op};
use super::page::{Arrays, BINARY, dispose};
use super::{Arg, Call, Rng, Step};

/// The most parameters a function takes (the JS closure that runs its body has this many).
const MAX_ARITY: usize = 3;

/// A random function: its parameters, the page arrays it closes over, and its body.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub arity: usize,
    /// Page arrays it closes over: locals `arity..arity + captures.len()` of its body.
    pub captures: Vec<usize>,
    /// Calls over locals (the parameters, the captures, then each call's results in order),
    /// each with the number of arrays it makes.
    pub body: Vec<(Call, usize)>,
    /// The locals it returns, all made by the body: one is an NDArray, more a list.
    pub outputs: Vec<usize>,
    /// Whether the program takes its gradient: then what is compiled (and what the reference
    /// run calls plainly) is `valueAndGrad` of the float32 sum of its last output, with
    /// respect to its first argument, which makes two arrays: the value and the gradient.
    pub grad: bool,
}

impl Function {
    /// The arrays a call makes.
    pub fn results(&self) -> usize {
        if self.grad { 2 } else { self.outputs.len() }
    }

    /// `(x0, x1) => { … }`, as a page writes it; captures are `k{n}_{j}` constants.
    pub fn to_js(&self, n: usize) -> String {
        let mut names: Vec<String> = (0..self.arity).map(|i| format!("x{i}")).collect();
        names.extend((0..self.captures.len()).map(|j| format!("k{n}_{j}")));
        let mut text = String::new();
        for (j, &a) in self.captures.iter().enumerate() {
            text += &format!("const k{n}_{j} = a[{a}];\n");
        }
        let params = names[..self.arity].join(", ");
        match self.grad {
            true => text += &format!("f[{n}] = tn.compile(tn.valueAndGrad(({params}) => {{\n"),
            false => text += &format!("f[{n}] = tn.compile(({params}) => {{\n"),
        }
        for (call, count) in &self.body {
            let first = names.len();
            let made: Vec<String> = (first..first + count).map(|v| format!("v{v}")).collect();
            let target = match count {
                1 => made[0].clone(),
                _ => format!("[{}]", made.join(", ")),
            };
            let js = super::call_js_named(call, &|i| names[i].clone());
            text += &format!("  const {target} = {js};\n");
            names.extend(made);
        }
        let outs: Vec<&str> = self.outputs.iter().map(|&o| names[o].as_str()).collect();
        if self.grad {
            let last = outs[outs.len() - 1];
            return text + &format!("  return tn.sum(tn.astype({last}, \"float32\"));\n}}));");
        }
        text += &match outs.len() {
            1 => format!("  return {};\n}});", outs[0]),
            _ => format!("  return [{}];\n}});", outs.join(", ")),
        };
        text
    }
}

/// Runs `function`'s body plainly on `locals` (its arguments, then what it closes over);
/// returns its outputs and the other arrays it made. What it made before a call threw is
/// disposed.
pub fn run_body(
    function: &Function,
    streams: &[JsValue],
    mut locals: Vec<JsValue>,
) -> Result<(Vec<JsValue>, Vec<JsValue>), JsValue> {
    let first_made = locals.len();
    for (call, _) in &function.body {
        let page = Arrays {
            streams: streams.to_vec(),
            arrays: locals.iter().cloned().map(Some).collect(),
        };
        match page.make(call) {
            Ok(made) => locals.extend(made),
            Err(err) => {
                locals[first_made..].iter().for_each(dispose);
                return Err(err);
            }
        }
    }
    let made = locals.split_off(first_made);
    let offset = |o: usize| o - first_made;
    let outputs = function.outputs.iter().map(|&o| made[offset(o)].clone());
    let outputs: Vec<JsValue> = outputs.collect();
    let others = (0..made.len())
        .filter(|i| !function.outputs.iter().any(|&o| offset(o) == *i))
        .map(|i| made[i].clone())
        .collect();
    Ok((outputs, others))
}

/// A parameter as the generator knows it: an array's shape and dtype, or a number.
#[derive(Debug, Clone)]
pub enum Param {
    Array(Known),
    Number,
}

/// A new function of live arrays, and the arguments of its first call, on which its body
/// was checked: each proposed call runs plainly and stays only if the API takes it.
pub fn new_function(rng: &mut Rng, page: &Arrays, live: &[Known]) -> Option<(Function, Vec<Arg>)> {
    let arity = 1 + rng.below(MAX_ARITY);
    let mut params = Vec::new();
    let mut args = Vec::new();
    let mut locals: Vec<JsValue> = Vec::new();
    for _ in 0..arity {
        if rng.chance(25) {
            let x = rng.below(9) as f64 / 2.0 - 2.0;
            params.push(Param::Number);
            args.push(Arg::Num(x));
            locals.push(JsValue::from_f64(x));
        } else {
            let k = live[rng.below(live.len())].clone();
            args.push(Arg::Array(k.index));
            locals.push(page.get(k.index).clone());
            params.push(Param::Array(k));
        }
    }
    let captures: Vec<usize> = (0..rng.below(2))
        .map(|_| live[rng.below(live.len())].index)
        .collect();
    locals.extend(captures.iter().map(|&c| page.get(c).clone()));
    let mut known: Vec<Known> = params
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match p {
            Param::Array(k) => Some(Known {
                index: i,
                ..k.clone()
            }),
            Param::Number => None,
        })
        .collect();
    known.extend(captures.iter().enumerate().map(|(j, &c)| {
        let k = live.iter().find(|k| k.index == c).expect("a live capture");
        Known {
            index: arity + j,
            ..k.clone()
        }
    }));
    let numbers: Vec<usize> = (0..arity)
        .filter(|&i| matches!(params[i], Param::Number))
        .collect();
    let first_made = locals.len();
    let body = grow_body(rng, page, &mut locals, &mut known, &numbers);
    let made = locals.split_off(first_made);
    made.iter().for_each(dispose);
    if body.is_empty() {
        return None;
    }
    let results = first_made..first_made + made.len();
    let last = results.end - 1;
    let mut outputs = vec![last];
    if results.len() > 1 && rng.chance(20) {
        outputs.insert(0, results.start + rng.below(results.len() - 1));
    }
    let function = Function {
        arity,
        captures,
        body,
        outputs,
        grad: rng.chance(30),
    };
    Some((function, args))
}

/// Up to eight calls the generator proposes over `locals`, each run at once and kept if the
/// API takes it; their results join `locals` and `known`. A binary op's number operand is
/// now and then a number parameter instead.
fn grow_body(
    rng: &mut Rng,
    page: &Arrays,
    locals: &mut Vec<JsValue>,
    known: &mut Vec<Known>,
    numbers: &[usize],
) -> Vec<(Call, usize)> {
    let want = 1 + rng.below(8);
    let mut body = Vec::new();
    let mut tries = 0;
    while body.len() < want && tries < 40 && !known.is_empty() {
        tries += 1;
        let state = State {
            live: known,
            next: locals.len(),
            open: &[],
            big: false,
        };
        for step in op(rng, &state) {
            let Step::Make { mut call, .. } = step else {
                unreachable!("op proposes calls only")
            };
            if !numbers.is_empty() && BINARY.iter().any(|(n, _)| *n == call.op) {
                for arg in call.args.iter_mut() {
                    if matches!(arg, Arg::Num(_)) && rng.chance(50) {
                        *arg = Arg::Array(numbers[rng.below(numbers.len())]);
                    }
                }
            }
            let local = Arrays {
                streams: page.streams.clone(),
                arrays: locals.iter().cloned().map(Some).collect(),
            };
            let Ok(made) = local.make(&call) else { break };
            for array in &made {
                known.push(super::known_of(locals.len(), array));
                locals.push(array.clone());
            }
            body.push((call, made.len()));
        }
    }
    body
}

/// Arguments for another call of a function: the shapes and dtypes of an earlier call (a
/// replay), or new ones (a new trace, which the API may refuse).
pub fn arguments(rng: &mut Rng, params: &[Param], earlier: &[Arg], live: &[Known]) -> Vec<Arg> {
    let replay = rng.chance(60);
    params
        .iter()
        .zip(earlier)
        .map(|(param, before)| match (param, before) {
            (Param::Number, Arg::Num(x)) if replay => Arg::Num(*x),
            (Param::Number, _) => Arg::Num(rng.below(9) as f64 / 2.0 - 2.0),
            (Param::Array(k), _) if replay => {
                let same: Vec<&Known> = live
                    .iter()
                    .filter(|l| l.shape == k.shape && l.dtype == k.dtype)
                    .collect();
                match same.is_empty() {
                    true => Arg::Array(live[rng.below(live.len())].index),
                    false => Arg::Array(same[rng.below(same.len())].index),
                }
            }
            (Param::Array(_), _) => Arg::Array(live[rng.below(live.len())].index),
        })
        .collect()
}

/// A compiled function as a page holds it: the JS function and its `Compiled`, a JS object
/// that the glue's finalizer frees once the garbage collector takes it.
pub struct PageFunction(PageCompiled);

impl PageFunction {
    /// Compiles `function`, closing over `captured` (the page's arrays, as JS values).
    pub fn new(function: &Function, streams: &[JsValue], captured: Vec<JsValue>) -> PageFunction {
        let (function, streams) = (function.clone(), streams.to_vec());
        let grad = function.grad;
        let body = move |x0: JsValue, x1: JsValue, x2: JsValue| -> Result<JsValue, JsValue> {
            let mut locals: Vec<JsValue> = [x0, x1, x2][..function.arity].to_vec();
            locals.extend(captured.iter().cloned());
            let (outputs, _) = run_body(&function, &streams, locals)?;
            if function.grad {
                return loss(&outputs);
            }
            Ok(match outputs.len() {
                1 => outputs[0].clone(),
                _ => outputs.into_iter().collect::<js_sys::Array>().into(),
            })
        };
        type Body = dyn Fn(JsValue, JsValue, JsValue) -> Result<JsValue, JsValue>;
        let mut f = Closure::wrap(Box::new(body) as Box<Body>).into_js_value();
        if grad {
            f = value_and_grad_of(f);
        }
        PageFunction(PageCompiled::new(f).expect("a function"))
    }

    /// Calls it with `args`, inside `tidy` or not; returns the arrays it made.
    pub fn call(&self, args: js_sys::Array, in_tidy: bool) -> Result<Vec<JsValue>, JsValue> {
        let result = match in_tidy {
            false => self.0.call(args)?,
            true => {
                let compiled = self.0.clone();
                let call = Closure::once_into_js(move || compiled.call(args));
                tidy(call.unchecked_ref())?
            }
        };
        Ok(match js_sys::Array::is_array(&result) {
            true => js_sys::Array::from(&result).iter().collect(),
            false => vec![result],
        })
    }

    pub fn dispose(&self) {
        self.0.dispose();
    }
}

/// The float32 sum of a function's last output: the loss its gradient is taken of.
fn loss(outputs: &[JsValue]) -> Result<JsValue, JsValue> {
    let last = outputs[outputs.len() - 1].clone();
    let wide = exported::astype(last, "float32", JsValue::UNDEFINED)?;
    Ok(exported::sum(wide.into(), JsValue::UNDEFINED)?.into())
}

/// `valueAndGrad(f)` as the package makes it: a function of three arguments (the closures'
/// arity) that passes `f` to the glue at each call.
fn value_and_grad_of(f: JsValue) -> JsValue {
    let call = move |x0: JsValue, x1: JsValue, x2: JsValue| -> Result<JsValue, JsValue> {
        let args: js_sys::Array = [x0, x1, x2]
            .into_iter()
            .filter(|x| !x.is_undefined())
            .collect();
        value_and_grad_call(&f, args, JsValue::UNDEFINED, true)
    };
    type Call = dyn Fn(JsValue, JsValue, JsValue) -> Result<JsValue, JsValue>;
    Closure::wrap(Box::new(call) as Box<Call>).into_js_value()
}

/// `[value, gradient]` as the two arrays a gradient call makes.
fn flat_pair(result: JsValue) -> Vec<JsValue> {
    js_sys::Array::from(&result).iter().collect()
}

/// A function as the reference run knows it: what it closed over when it was compiled, and
/// each call it took, with what its arguments were then.
pub struct RefFunction {
    pub function: Function,
    captured: Vec<JsValue>,
    pub calls: Vec<(Vec<Arg>, Vec<Param>)>,
}

impl RefFunction {
    pub fn new(function: &Function, page: &Arrays) -> RefFunction {
        RefFunction {
            function: function.clone(),
            captured: function
                .captures
                .iter()
                .map(|&c| page.get(c).clone())
                .collect(),
            calls: Vec::new(),
        }
    }

    /// Runs the body plainly on `args`; returns its outputs and notes the call.
    pub fn call(&mut self, page: &Arrays, args: &[Arg]) -> Result<Vec<JsValue>, JsValue> {
        let mut locals: Vec<JsValue> = args.iter().map(|a| page.value(a)).collect();
        locals.extend(self.captured.iter().cloned());
        let params = args
            .iter()
            .map(|a| match a {
                Arg::Array(i) => Param::Array(super::known_of(*i, page.get(*i))),
                _ => Param::Number,
            })
            .collect();
        if self.function.grad {
            let (function, streams) = (self.function.clone(), page.streams.clone());
            let arity = args.len();
            let captured = self.captured.clone();
            let body = move |x0: JsValue, x1: JsValue, x2: JsValue| -> Result<JsValue, JsValue> {
                let mut locals: Vec<JsValue> = [x0, x1, x2][..arity].to_vec();
                locals.extend(captured.iter().cloned());
                let (outputs, _) = run_body(&function, &streams, locals)?;
                loss(&outputs)
            };
            type Body = dyn Fn(JsValue, JsValue, JsValue) -> Result<JsValue, JsValue>;
            let f = Closure::wrap(Box::new(body) as Box<Body>).into_js_value();
            let call_args: js_sys::Array = args.iter().map(|a| page.value(a)).collect();
            let result = value_and_grad_call(&f, call_args, JsValue::UNDEFINED, true)?;
            self.calls.push((args.to_vec(), params));
            return Ok(flat_pair(result));
        }
        let (outputs, others) = run_body(&self.function, &page.streams, locals)?;
        others.iter().for_each(dispose);
        self.calls.push((args.to_vec(), params));
        Ok(outputs)
    }
}

/// Now and then a step of compiled functions: a new one and its first call, or a call,
/// dispose or drop of a live one (`functions`, by the program's numbering); `None` leaves
/// the proposal to the rest of the generator.
pub fn propose(
    rng: &mut Rng,
    page: &Arrays,
    live: &[Known],
    functions: &[Option<RefFunction>],
) -> Option<Vec<Step>> {
    if live.is_empty() || !rng.chance(12) {
        return None;
    }
    let held: Vec<usize> = (0..functions.len())
        .filter(|&f| functions[f].as_ref().is_some_and(|r| !r.calls.is_empty()))
        .collect();
    if held.is_empty() || rng.chance(25) {
        let (function, args) = new_function(rng, page, live)?;
        let count = function.results();
        let call = Step::CallCompiled {
            f: functions.len(),
            args,
            tidy: rng.chance(50),
            count,
        };
        return Some(vec![Step::Compile(function), call]);
    }
    let f = held[rng.below(held.len())];
    let known = functions[f].as_ref().expect("a held function");
    Some(vec![match rng.below(10) {
        0 => Step::DisposeCompiled(f),
        1 => Step::DropCompiled(f),
        _ => {
            let (earlier, params) = &known.calls[rng.below(known.calls.len())];
            Step::CallCompiled {
                f,
                args: arguments(rng, params, earlier, live),
                tidy: rng.chance(50),
                count: known.function.results(),
            }
        }
    }])
}
