//! The program of a fused elementwise node ([`super::Primitive::Fused`]): the ops of a chain
//! of unary, binary and `where` nodes, in order, over the fused node's inputs. Both devices
//! run each step with the same per-element function as the unfused op, so fusing changes
//! which kernels run, not the values.

use std::fmt::Write;

use super::{BinaryOp, UnaryOp};
use crate::dtype::DType;

/// One step of a fused program. Operands are indices of earlier steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// The fused node's input `k`, broadcast to its shape (every input has the node's shape
    /// or one element).
    Input(usize),
    Unary(UnaryOp, usize),
    Binary(BinaryOp, usize, usize),
    /// `where(cond, x, y)`.
    Where(usize, usize, usize),
}

impl Step {
    /// The steps this one reads.
    pub fn operands(&self) -> Vec<usize> {
        match *self {
            Step::Input(_) => Vec::new(),
            Step::Unary(_, a) => vec![a],
            Step::Binary(_, a, b) => vec![a, b],
            Step::Where(c, x, y) => vec![c, x, y],
        }
    }
}

/// A fused program: steps with the dtype each produces; the last step is the node's value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FusedExpr {
    pub steps: Vec<Step>,
    pub dtypes: Vec<DType>,
}

impl FusedExpr {
    /// The number of ops (steps that are not inputs).
    pub fn ops(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| !matches!(s, Step::Input(_)))
            .count()
    }

    /// For each step, the index of the last step that reads it (itself for the result and
    /// for steps nothing reads), so that executors free values early.
    pub fn last_uses(&self) -> Vec<usize> {
        let mut last: Vec<usize> = (0..self.steps.len()).collect();
        for (i, step) in self.steps.iter().enumerate() {
            for a in step.operands() {
                last[a] = i;
            }
        }
        last
    }

    /// A short description for profiles: the ops in order, runs of one op counted
    /// (`exp×500`, `add, multiply`).
    pub fn describe(&self) -> String {
        let mut names: Vec<(&str, usize)> = Vec::new();
        for step in &self.steps {
            let name = match step {
                Step::Input(_) => continue,
                Step::Unary(op, _) => op.name(),
                Step::Binary(op, ..) => op.name(),
                Step::Where(..) => "where",
            };
            match names.last_mut() {
                Some((last, count)) if *last == name => *count += 1,
                _ => names.push((name, 1)),
            }
        }
        let mut text = String::new();
        for (i, (name, count)) in names.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            text.push_str(name);
            if *count > 1 {
                let _ = write!(text, "×{count}");
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_describes_itself_and_its_last_uses() {
        let expr = FusedExpr {
            steps: vec![
                Step::Input(0),
                Step::Unary(UnaryOp::Exp, 0),
                Step::Unary(UnaryOp::Exp, 1),
                Step::Binary(BinaryOp::Add, 2, 0),
            ],
            dtypes: vec![DType::Float32; 4],
        };
        assert_eq!(expr.describe(), "exp×2, add");
        assert_eq!(expr.ops(), 3);
        assert_eq!(expr.last_uses(), vec![3, 2, 3, 3]);
    }
}
