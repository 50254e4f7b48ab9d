//! The loop every elementwise CPU kernel shares: walk the output in row-major order, reading
//! each operand through its own strides and offset.

/// An operand viewed as `T`: its storage, and its strides over the output shape.
pub struct Strided<'a, T> {
    pub data: &'a [T],
    pub strides: Vec<isize>,
    pub offset: usize,
}

/// `f` over one operand.
pub fn map1<T: Copy, O>(shape: &[usize], a: &Strided<T>, f: impl Fn(T) -> O) -> Vec<O> {
    let mut out = Vec::with_capacity(crate::graph::shape::numel(shape));
    let (dims, [sa]) = crate::graph::shape::collapse_dims(shape, [&a.strides[..]]);
    let (inner, ia) = (dims[dims.len() - 1], sa[sa.len() - 1]);
    crate::graph::shape::for_each_row(&dims, [&sa[..]], |_, [oa]| {
        let start = a.offset as isize + oa;
        if ia == 1 {
            // Contiguous rows: a plain slice loop that the compiler vectorises.
            let row = &a.data[start as usize..start as usize + inner];
            out.extend(row.iter().map(|&x| f(x)));
        } else {
            out.extend((0..inner as isize).map(|i| f(a.data[(start + i * ia) as usize])));
        }
    });
    out
}

/// `f` over two operands.
pub fn map2<A: Copy, B: Copy, O>(
    shape: &[usize],
    a: &Strided<A>,
    b: &Strided<B>,
    f: impl Fn(A, B) -> O,
) -> Vec<O> {
    let mut out = Vec::with_capacity(crate::graph::shape::numel(shape));
    let (dims, [sa, sb]) =
        crate::graph::shape::collapse_dims(shape, [&a.strides[..], &b.strides[..]]);
    let inner = dims[dims.len() - 1];
    let (ia, ib) = (sa[sa.len() - 1], sb[sb.len() - 1]);
    crate::graph::shape::for_each_row(&dims, [&sa[..], &sb[..]], |_, [oa, ob]| {
        let (pa, pb) = (a.offset as isize + oa, b.offset as isize + ob);
        if ia == 1 && ib == 1 {
            let ra = &a.data[pa as usize..pa as usize + inner];
            let rb = &b.data[pb as usize..pb as usize + inner];
            out.extend(ra.iter().zip(rb).map(|(&x, &y)| f(x, y)));
        } else {
            out.extend((0..inner as isize).map(|i| {
                f(
                    a.data[(pa + i * ia) as usize],
                    b.data[(pb + i * ib) as usize],
                )
            }));
        }
    });
    out
}

/// `f` over three operands (only `where` needs it, so there is no fast path).
pub fn map3<T: Copy, O>(
    shape: &[usize],
    ops: [&Strided<T>; 3],
    f: impl Fn(T, T, T) -> O,
) -> Vec<O> {
    let mut out = Vec::with_capacity(crate::graph::shape::numel(shape));
    let strides = [
        &ops[0].strides[..],
        &ops[1].strides[..],
        &ops[2].strides[..],
    ];
    let (dims, s) = crate::graph::shape::collapse_dims(shape, strides);
    let inner = dims[dims.len() - 1] as isize;
    let inner_strides = [
        s[0][s[0].len() - 1],
        s[1][s[1].len() - 1],
        s[2][s[2].len() - 1],
    ];
    crate::graph::shape::for_each_row(&dims, [&s[0][..], &s[1][..], &s[2][..]], |_, offsets| {
        let at = |k: usize, i: isize| {
            ops[k].data[(ops[k].offset as isize + offsets[k] + i * inner_strides[k]) as usize]
        };
        out.extend((0..inner).map(|i| f(at(0, i), at(1, i), at(2, i))));
    });
    out
}
