//! `where(cond, x, y)`: picks x's element where cond is true, else y's.

use crate::cpu::cast::{Operand, cast_strided};
use crate::cpu::elementwise::map3;
use crate::dtype::DType;

/// Words of `out` dtype; `x` and `y` are converted to it, `cond` to bool.
pub fn select(out: DType, shape: &[usize], cond: Operand, x: Operand, y: Operand) -> Vec<u32> {
    let c = cast_strided(&cond, DType::Bool);
    let (x, y) = (cast_strided(&x, out), cast_strided(&y, out));
    map3(shape, [&c.view(), &x.view(), &y.view()], |c, a, b| {
        if c != 0 { a } else { b }
    })
}
