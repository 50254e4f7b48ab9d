//! The program of a fused elementwise node ([`super::Primitive::Fused`]): the ops of a chain
//! of unary, binary and `where` nodes, in order, over the fused node's inputs. Both devices
//! run each step with the same per-element function as the unfused op, so fusing changes
//! which kernels run, not the values.

use super::{BinaryOp, UnaryOp};
use crate::dtype::DType;

/// The most inputs a fused node on the GPU reads from buffers: with its output, within
/// WebGPU's default limit of 8 storage buffers per shader stage. The planner (`fuse`) and the
/// GPU kernel both keep to it.
pub const GPU_FUSED_BUFFERS: usize = 6;

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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_knows_each_steps_last_use() {
        let expr = FusedExpr {
            steps: vec![
                Step::Input(0),
                Step::Unary(UnaryOp::Exp, 0),
                Step::Unary(UnaryOp::Exp, 1),
                Step::Binary(BinaryOp::Add, 2, 0),
            ],
            dtypes: vec![DType::Float32; 4],
        };
        assert_eq!(expr.last_uses(), vec![3, 2, 3, 3]);
    }
}
