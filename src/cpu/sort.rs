//! Sorting rows: a stable sort of each row's positions by value (NaN after everything, -0
//! equal to +0), then the first `keep` of each row, or the last `keep` from the end.

use std::cmp::Ordering;

use crate::dtype::DType;

/// How two elements of `dtype` order: the value order, NaN greatest, -0 equal to +0.
fn compare(dtype: DType, a: u32, b: u32) -> Ordering {
    match dtype {
        DType::Float32 => {
            let (x, y) = (f32::from_bits(a), f32::from_bits(b));
            match (x.is_nan(), y.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => x.partial_cmp(&y).expect("neither is NaN"),
            }
        }
        DType::Int32 => (a as i32).cmp(&(b as i32)),
        DType::Uint32 | DType::Bool => a.cmp(&b),
        packed => unreachable!("{packed:?} is widened before a kernel runs"),
    }
}

/// The sort node of `input`'s rows (its last axis).
pub fn eval(
    input: &crate::cpu::Spec,
    host: &crate::cpu::HostInput,
    (indices, descending, keep): (bool, bool, usize),
) -> crate::error::Result<Vec<u32>> {
    let n = input.shape().last().copied().unwrap_or(1);
    let words = crate::cpu::row_major(input, host)?;
    Ok(sort(input.dtype(), &words, n, indices, descending, keep))
}

/// The sort of each `n`-long row of `words`: `keep` of each, as values or positions.
pub fn sort(
    dtype: DType,
    words: &[u32],
    n: usize,
    indices: bool,
    descending: bool,
    keep: usize,
) -> Vec<u32> {
    let rows = words.len().checked_div(n).unwrap_or(0);
    let mut out = Vec::with_capacity(rows * keep);
    let mut order: Vec<usize> = Vec::with_capacity(n);
    for row in words.chunks(n.max(1)).take(rows) {
        order.clear();
        order.extend(0..n);
        order.sort_by(|&i, &j| compare(dtype, row[i], row[j]));
        let picked: Box<dyn Iterator<Item = &usize>> = if descending {
            Box::new(order.iter().rev().take(keep))
        } else {
            Box::new(order.iter().take(keep))
        };
        out.extend(picked.map(|&i| if indices { i as u32 } else { row[i] }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(x: &[f32]) -> Vec<u32> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn nan_goes_last_and_ties_keep_their_order() {
        let x = floats(&[3.0, f32::NAN, -0.0, 0.0, -1.0]);
        let order = sort(DType::Float32, &x, 5, true, false, 5);
        assert_eq!(order, vec![4, 2, 3, 0, 1]);
        let top = sort(DType::Float32, &x, 5, false, true, 2);
        assert!(f32::from_bits(top[0]).is_nan() && f32::from_bits(top[1]) == 3.0);
    }
}
