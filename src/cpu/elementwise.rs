//! The loop every elementwise CPU kernel shares: walk the output in runs of consecutive
//! elements (whole rows, or tiles where an operand is read across its rows: see
//! `graph::shape::for_each_run`), reading each operand through its own strides and offset.

use std::mem::MaybeUninit;

use crate::graph::shape::{collapse_dims, for_each_run, numel};

/// An operand viewed as `T`: its storage, and its strides over the output shape.
pub struct Strided<'a, T> {
    pub data: &'a [T],
    pub strides: Vec<isize>,
    pub offset: usize,
}

/// A row-major output of `n` elements, each written once by `fill` (given the output's
/// uninitialized slots).
fn filled<O>(n: usize, fill: impl FnOnce(&mut [MaybeUninit<O>])) -> Vec<O> {
    let mut out = Vec::with_capacity(n);
    fill(&mut out.spare_capacity_mut()[..n]);
    // SAFETY: every caller's runs cover each of the n slots once (`for_each_run`).
    unsafe { out.set_len(n) };
    out
}

/// `f` over one operand.
pub fn map1<T: Copy, O>(shape: &[usize], a: &Strided<T>, f: impl Fn(T) -> O) -> Vec<O> {
    let (dims, [sa]) = collapse_dims(shape, [&a.strides[..]]);
    let ia = sa[sa.len() - 1];
    filled(numel(shape), |out| {
        for_each_run(&dims, [&sa[..]], |start, [oa], len| {
            let to = &mut out[start..start + len];
            let from = a.offset as isize + oa;
            if ia == 1 {
                // Contiguous runs: a plain slice loop that the compiler vectorises.
                let run = &a.data[from as usize..from as usize + len];
                for (o, &x) in to.iter_mut().zip(run) {
                    o.write(f(x));
                }
            } else {
                for (i, o) in to.iter_mut().enumerate() {
                    o.write(f(a.data[(from + i as isize * ia) as usize]));
                }
            }
        });
    })
}

/// `f` over two operands.
pub fn map2<A: Copy, B: Copy, O>(
    shape: &[usize],
    a: &Strided<A>,
    b: &Strided<B>,
    f: impl Fn(A, B) -> O,
) -> Vec<O> {
    let (dims, [sa, sb]) = collapse_dims(shape, [&a.strides[..], &b.strides[..]]);
    let (ia, ib) = (sa[sa.len() - 1], sb[sb.len() - 1]);
    filled(numel(shape), |out| {
        for_each_run(&dims, [&sa[..], &sb[..]], |start, [oa, ob], len| {
            let to = &mut out[start..start + len];
            let (pa, pb) = (a.offset as isize + oa, b.offset as isize + ob);
            if ia == 1 && ib == 1 {
                let ra = &a.data[pa as usize..pa as usize + len];
                let rb = &b.data[pb as usize..pb as usize + len];
                for ((o, &x), &y) in to.iter_mut().zip(ra).zip(rb) {
                    o.write(f(x, y));
                }
            } else {
                for (i, o) in to.iter_mut().enumerate() {
                    let i = i as isize;
                    o.write(f(
                        a.data[(pa + i * ia) as usize],
                        b.data[(pb + i * ib) as usize],
                    ));
                }
            }
        });
    })
}

/// `f` over three operands (only `where` needs it, so there is no fast path).
pub fn map3<T: Copy, O>(
    shape: &[usize],
    ops: [&Strided<T>; 3],
    f: impl Fn(T, T, T) -> O,
) -> Vec<O> {
    let strides = [
        &ops[0].strides[..],
        &ops[1].strides[..],
        &ops[2].strides[..],
    ];
    let (dims, s) = collapse_dims(shape, strides);
    let inner: [isize; 3] = std::array::from_fn(|k| s[k][s[k].len() - 1]);
    filled(numel(shape), |out| {
        for_each_run(
            &dims,
            [&s[0][..], &s[1][..], &s[2][..]],
            |start, offsets, len| {
                let at = |k: usize, i: isize| {
                    ops[k].data[(ops[k].offset as isize + offsets[k] + i * inner[k]) as usize]
                };
                for (i, o) in out[start..start + len].iter_mut().enumerate() {
                    let i = i as isize;
                    o.write(f(at(0, i), at(1, i), at(2, i)));
                }
            },
        );
    })
}
