//! `tn.optimizers.SGD`, `Adam` and `AdamW` (MLX's `mlx.optimizers`) on trees: the JS face of
//! [`crate::optimizers`]. Each parameter's state is kept by its path in the tree
//! (`"layers[0].w"`), so a tree of the same structure finds its state at the next update.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::js::error::{JsResult, js, to_js};
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, describe};
use crate::js::tree::{Numbers, Tree};
use crate::optimizers::{Optimizer, Rule};

/// A learning rate: a number, or a function of the step that returns one.
enum LearningRate {
    Fixed(f64),
    Schedule(js_sys::Function),
}

/// What the three classes share.
struct Inner {
    op: &'static str,
    core: Optimizer,
    learning_rate: LearningRate,
    /// The structure of the last parameters updated, for `state`.
    last: Option<Tree>,
}

impl Inner {
    fn new(op: &'static str, opts: &Options, rule: Rule) -> Result<Inner> {
        let learning_rate = match opts.get("learningRate") {
            Some(v) if v.as_f64().is_some() => LearningRate::Fixed(finite(op, v.as_f64())?),
            Some(v) if v.is_function() => LearningRate::Schedule(v.unchecked_into()),
            Some(v) => {
                return Err(Error::Value(format!(
                    "{op}: learningRate must be a number or a function of the step, not {}",
                    describe(&v)
                )));
            }
            None => {
                return Err(Error::Value(format!(
                    "{op}: learningRate is required, as in new tn.optimizers.{op}({{learningRate: 1e-3}})"
                )));
            }
        };
        Ok(Inner {
            op,
            core: Optimizer::new(op, rule)?,
            learning_rate,
            last: None,
        })
    }

    /// The learning rate of the next update.
    fn learning_rate(&self) -> std::result::Result<f64, JsValue> {
        match &self.learning_rate {
            LearningRate::Fixed(lr) => Ok(*lr),
            LearningRate::Schedule(f) => {
                let step = JsValue::from_f64(self.core.step() as f64);
                let lr = f.call1(&JsValue::UNDEFINED, &step)?;
                js(finite(self.op, lr.as_f64()).map_err(|_| {
                    Error::Value(format!(
                        "{}: the learning-rate schedule returned {} at step {}; it must return a \
                         finite number",
                        self.op,
                        describe(&lr),
                        self.core.step()
                    ))
                }))
            }
        }
    }

    fn update(&mut self, params: &JsValue, grads: &JsValue) -> JsResult<JsValue> {
        let op = self.op;
        let mut values = Vec::new();
        let tree = js(Tree::split(
            &format!("{op}.update: params"),
            params,
            Numbers::Keep,
            &mut values,
        ))?;
        let mut gradients = Vec::new();
        let grad_tree = js(Tree::split(
            &format!("{op}.update: grads"),
            grads,
            Numbers::Keep,
            &mut gradients,
        ))?;
        if grad_tree.paths() != tree.paths() {
            return Err(to_js(Error::Value(format!(
                "{op}.update: grads must have the structure of params (arrays at {:?}), but has \
                 arrays at {:?}",
                tree.paths(),
                grad_tree.paths()
            ))));
        }
        let lr = self.learning_rate()?;
        let entries: Vec<(String, Array, Array)> = tree
            .paths()
            .into_iter()
            .zip(values)
            .zip(gradients)
            .map(|((path, p), g)| (path, p, g))
            .collect();
        let updated = js(self.core.update(lr, &entries))?;
        let built = tree.build(&mut updated.into_iter());
        self.last = Some(tree);
        Ok(built)
    }

    /// `{step, learningRate, params}`: `params` mirrors the last parameters updated, each
    /// array replaced by an object of its state (`{v}` or `{m, v}`), as new `NDArray`s.
    fn state(&self) -> JsResult<JsValue> {
        let object = js_sys::Object::new();
        crate::js::set_property(&object, "step", JsValue::from_f64(self.core.step() as f64));
        crate::js::set_property(
            &object,
            "learningRate",
            JsValue::from_f64(self.learning_rate()?),
        );
        let params = match &self.last {
            Some(tree) => {
                let names = self.core.rule().state_names();
                let mut paths = tree.paths().into_iter();
                let mut next_state = || {
                    let path = paths.next().expect("a path per array");
                    state_object(names, self.core.state().get(&path))
                };
                tree.build_with(&mut next_state)
            }
            None => JsValue::NULL,
        };
        crate::js::set_property(&object, "params", params);
        Ok(object.into())
    }
}

fn finite(op: &str, x: Option<f64>) -> Result<f64> {
    x.filter(|x| x.is_finite())
        .ok_or_else(|| Error::Value(format!("{op}: learningRate must be a finite number")))
}

fn state_object(names: &[&str], arrays: Option<&Vec<Array>>) -> JsValue {
    let object = js_sys::Object::new();
    for (name, a) in names.iter().zip(arrays.into_iter().flatten()) {
        crate::js::set_property(&object, name, NdArray::new(a.clone()).into());
    }
    object.into()
}

/// A number option with a default.
fn number_or(opts: &Options, key: &'static str, default: f64) -> Result<f64> {
    Ok(opts.number(key)?.unwrap_or(default))
}

/// `betas`: a list of two numbers.
fn betas(opts: &Options) -> Result<(f64, f64)> {
    let Some(v) = opts.get("betas") else {
        return Ok((0.9, 0.999));
    };
    let list: Option<Vec<f64>> = js_sys::Array::is_array(&v)
        .then(|| js_sys::Array::from(&v).iter().map(|b| b.as_f64()).collect())
        .flatten();
    match list.as_deref() {
        Some(&[b1, b2]) => Ok((b1, b2)),
        _ => Err(Error::Value(format!(
            "{}: betas must be a list of two numbers, such as [0.9, 0.999], not {}",
            opts.op(),
            describe(&v)
        ))),
    }
}

fn sgd_rule(opts: &Options) -> Result<Rule> {
    Ok(Rule::Sgd {
        momentum: number_or(opts, "momentum", 0.0)?,
        weight_decay: number_or(opts, "weightDecay", 0.0)?,
        dampening: number_or(opts, "dampening", 0.0)?,
        nesterov: opts.flag("nesterov")?,
    })
}

fn adam_rule(opts: &Options, weight_decay: f64) -> Result<Rule> {
    Ok(Rule::Adam {
        betas: betas(opts)?,
        eps: number_or(opts, "eps", 1e-8)?,
        bias_correction: opts.flag("biasCorrection")?,
        weight_decay: number_or(opts, "weightDecay", weight_decay)?,
    })
}

/// Declares an optimizer class: its JS name, option keys and rule.
macro_rules! optimizer_class {
    ($rust:ident, $js:literal, $keys:expr, $rule:expr) => {
        #[doc = concat!("`new tn.optimizers.", $js, "(opts)`.")]
        #[wasm_bindgen(js_name = $js)]
        pub struct $rust {
            inner: Inner,
        }

        #[wasm_bindgen(js_class = $js)]
        impl $rust {
            #[wasm_bindgen(constructor)]
            pub fn new(opts: JsValue) -> JsResult<$rust> {
                let opts = js(Options::parse($js, &opts, $keys))?;
                let rule: fn(&Options) -> Result<Rule> = $rule;
                let inner = js(rule(&opts).and_then(|rule| Inner::new($js, &opts, rule)))?;
                Ok($rust { inner })
            }

            /// The parameters after one update from `grads` (a tree of the same structure);
            /// the state of the previous update is dropped.
            pub fn update(&mut self, params: JsValue, grads: JsValue) -> JsResult<JsValue> {
                self.inner.update(&params, &grads)
            }

            /// Updates made so far.
            #[wasm_bindgen(getter)]
            pub fn step(&self) -> f64 {
                self.inner.core.step() as f64
            }

            /// The learning rate the next update uses.
            #[wasm_bindgen(getter, js_name = learningRate)]
            pub fn learning_rate(&self) -> JsResult<f64> {
                self.inner.learning_rate()
            }

            /// `{step, learningRate, params}` (see the docs); its arrays are new handles.
            #[wasm_bindgen(getter)]
            pub fn state(&self) -> JsResult<JsValue> {
                self.inner.state()
            }

            /// Drops the state now and starts counting steps again.
            pub fn reset(&mut self) {
                self.inner.core.reset();
                self.inner.last = None;
            }
        }
    };
}

optimizer_class!(
    Sgd,
    "SGD",
    &[
        "learningRate",
        "momentum",
        "weightDecay",
        "dampening",
        "nesterov"
    ],
    sgd_rule
);
optimizer_class!(
    Adam,
    "Adam",
    &["learningRate", "betas", "eps", "biasCorrection"],
    |o| adam_rule(o, 0.0)
);
optimizer_class!(
    AdamW,
    "AdamW",
    &[
        "learningRate",
        "betas",
        "eps",
        "weightDecay",
        "biasCorrection"
    ],
    |o| adam_rule(o, 0.01)
);
