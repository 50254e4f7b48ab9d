//! The optimizers of `mlx.optimizers`: SGD (momentum, dampening, Nesterov, weight decay),
//! Adam and AdamW, with MLX's update rules and defaults (Adam without bias correction unless
//! asked). An update is a few lazy elementwise ops per parameter, which fusion joins into one
//! kernel per parameter on each device. The state (`v`, or `m` and `v`) is kept by the
//! parameter's name, made of zeros at its first update and replaced (the old arrays dropped)
//! at each one after.

use std::collections::BTreeMap;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::{BinaryOp, UnaryOp};
use crate::ops;
use crate::stream::Stream;

/// An update rule and its settings.
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    Sgd {
        momentum: f64,
        weight_decay: f64,
        dampening: f64,
        nesterov: bool,
    },
    /// Adam, and AdamW when `weight_decay` is not 0 (decoupled: the parameter shrinks by
    /// `1 - lr * weight_decay` before Adam's step).
    Adam {
        betas: (f64, f64),
        eps: f64,
        bias_correction: bool,
        weight_decay: f64,
    },
}

impl Rule {
    /// The names of the state kept per parameter.
    pub fn state_names(&self) -> &'static [&'static str] {
        match self {
            Rule::Sgd { momentum, .. } if *momentum > 0.0 => &["v"],
            Rule::Sgd { .. } => &[],
            Rule::Adam { .. } => &["m", "v"],
        }
    }

    /// MLX's checks of the settings; `op` names the optimizer.
    fn check(&self, op: &str) -> Result<()> {
        let bad = |what: String| Err(Error::Value(format!("{op}: {what}")));
        match *self {
            Rule::Sgd {
                momentum,
                dampening,
                nesterov,
                ..
            } if nesterov && (momentum <= 0.0 || dampening != 0.0) => {
                bad("Nesterov momentum needs a momentum above 0 and no dampening".into())
            }
            Rule::Adam { betas, eps, .. } => {
                for (i, b) in [betas.0, betas.1].into_iter().enumerate() {
                    if !(0.0..1.0).contains(&b) {
                        return bad(format!("betas[{i}] must be in [0, 1), not {b}"));
                    }
                }
                if eps.is_nan() || eps < 0.0 {
                    return bad(format!("eps must be 0 or more, not {eps}"));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// An optimizer: its rule, the number of updates made, and each parameter's state.
pub struct Optimizer {
    rule: Rule,
    step: u64,
    state: BTreeMap<String, Vec<Array>>,
}

impl Optimizer {
    pub fn new(op: &str, rule: Rule) -> Result<Optimizer> {
        rule.check(op)?;
        Ok(Optimizer {
            rule,
            step: 0,
            state: BTreeMap::new(),
        })
    }

    pub fn rule(&self) -> &Rule {
        &self.rule
    }

    /// Updates made so far (MLX's `optimizer.step`); a schedule is asked for the learning
    /// rate at this step before the next update.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// Each parameter's state, by name, in [`Rule::state_names`]' order.
    pub fn state(&self) -> &BTreeMap<String, Vec<Array>> {
        &self.state
    }

    /// Drops every parameter's state, and starts counting steps again.
    pub fn reset(&mut self) {
        self.state.clear();
        self.step = 0;
    }

    /// The parameters after one update with learning rate `lr`; each entry is a parameter's
    /// name, its value and its gradient. Nothing changes if an entry is rejected.
    pub fn update(&mut self, lr: f64, entries: &[(String, Array, Array)]) -> Result<Vec<Array>> {
        for (name, p, g) in entries {
            check_entry(name, p, g, self.state.get(name))?;
        }
        self.step += 1;
        let mut updated = Vec::with_capacity(entries.len());
        for (name, p, g) in entries {
            let state = match self.state.remove(name) {
                Some(state) => state,
                None => self.zeros_like(p)?,
            };
            let at = Scalars::new(p.dtype(), p.stream(), lr);
            let (new_p, new_state) = match self.rule {
                Rule::Sgd { .. } => self.sgd(&at, p, g, &state)?,
                Rule::Adam { .. } => self.adam(&at, p, g, &state)?,
            };
            self.state.insert(name.clone(), new_state);
            updated.push(new_p);
        }
        Ok(updated)
    }

    fn zeros_like(&self, p: &Array) -> Result<Vec<Array>> {
        let names = self.rule.state_names();
        names
            .iter()
            .map(|_| ops::zeros(p.shape(), p.dtype(), p.stream()))
            .collect()
    }

    fn sgd(
        &self,
        at: &Scalars,
        p: &Array,
        g: &Array,
        state: &[Array],
    ) -> Result<(Array, Vec<Array>)> {
        let Rule::Sgd {
            momentum,
            weight_decay,
            dampening,
            nesterov,
        } = self.rule
        else {
            unreachable!("sgd is called for Rule::Sgd")
        };
        let mut g = g.clone();
        if weight_decay != 0.0 {
            g = at.add(&g, &at.times(weight_decay, p)?)?;
        }
        if momentum <= 0.0 {
            return Ok((at.sub(p, &at.times_lr(&g)?)?, Vec::new()));
        }
        let decayed = at.times(momentum, &state[0])?;
        let v = match dampening > 0.0 {
            true => at.add(&decayed, &at.times(1.0 - dampening, &g)?)?,
            false => at.add(&decayed, &g)?,
        };
        let step = match nesterov {
            true => at.add(&g, &at.times(momentum, &v)?)?,
            false => v.clone(),
        };
        Ok((at.sub(p, &at.times_lr(&step)?)?, vec![v]))
    }

    fn adam(
        &self,
        at: &Scalars,
        p: &Array,
        g: &Array,
        state: &[Array],
    ) -> Result<(Array, Vec<Array>)> {
        let Rule::Adam {
            betas: (b1, b2),
            eps,
            bias_correction,
            weight_decay,
        } = self.rule
        else {
            unreachable!("adam is called for Rule::Adam")
        };
        let p = match weight_decay != 0.0 {
            true => at.times(1.0 - at.lr * weight_decay, p)?,
            false => p.clone(),
        };
        let m = at.add(&at.times(b1, &state[0])?, &at.times(1.0 - b1, g)?)?;
        let g2 = at.binary(BinaryOp::Multiply, g, g)?;
        let v = at.add(&at.times(b2, &state[1])?, &at.times(1.0 - b2, &g2)?)?;
        let root = ops::unary(UnaryOp::Sqrt, &v, at.stream)?;
        let new_p = if bias_correction {
            let t = self.step as f64;
            let numerator = at.times(at.lr / (1.0 - b1.powf(t)), &m)?;
            let scaled = at.times(1.0 / (1.0 - b2.powf(t)).sqrt(), &root)?;
            let denominator = at.plus(eps, &scaled)?;
            at.sub(&p, &at.binary(BinaryOp::Divide, &numerator, &denominator)?)?
        } else {
            let denominator = at.plus(eps, &root)?;
            let ratio = at.binary(BinaryOp::Divide, &at.times_lr(&m)?, &denominator)?;
            at.sub(&p, &ratio)?
        };
        Ok((new_p, vec![m, v]))
    }
}

/// That a parameter and its gradient agree, with each other and with its state.
fn check_entry(name: &str, p: &Array, g: &Array, state: Option<&Vec<Array>>) -> Result<()> {
    if !p.dtype().is_float() {
        return Err(Error::DType(format!(
            "optimizer: parameter {name:?} is {}; only float parameters are updated",
            p.dtype().name()
        )));
    }
    if p.shape() != g.shape() {
        return Err(Error::Shape(format!(
            "optimizer: parameter {name:?} has shape {:?} but its gradient {:?}",
            p.shape(),
            g.shape()
        )));
    }
    if let Some(s) = state.and_then(|s| s.first())
        && s.shape() != p.shape()
    {
        return Err(Error::Shape(format!(
            "optimizer: parameter {name:?} has shape {:?} but its state {:?}; a new model \
             needs a new optimizer (or reset())",
            p.shape(),
            s.shape()
        )));
    }
    Ok(())
}

/// Elementwise ops with scalars in a parameter's dtype on its stream, and the step's
/// learning rate.
struct Scalars {
    dtype: DType,
    stream: Stream,
    lr: f64,
}

impl Scalars {
    fn new(dtype: DType, stream: Stream, lr: f64) -> Scalars {
        Scalars { dtype, stream, lr }
    }

    fn scalar(&self, value: f64) -> Result<Array> {
        ops::full(&[], value, self.dtype, self.stream)
    }

    fn binary(&self, op: BinaryOp, a: &Array, b: &Array) -> Result<Array> {
        ops::binary(op, a, b, self.stream)
    }

    fn add(&self, a: &Array, b: &Array) -> Result<Array> {
        self.binary(BinaryOp::Add, a, b)
    }

    fn sub(&self, a: &Array, b: &Array) -> Result<Array> {
        self.binary(BinaryOp::Subtract, a, b)
    }

    fn times(&self, k: f64, x: &Array) -> Result<Array> {
        self.binary(BinaryOp::Multiply, &self.scalar(k)?, x)
    }

    fn plus(&self, k: f64, x: &Array) -> Result<Array> {
        self.binary(BinaryOp::Add, x, &self.scalar(k)?)
    }

    fn times_lr(&self, x: &Array) -> Result<Array> {
        self.times(self.lr, x)
    }
}
