//! A matmul that only an elementwise region reads becomes the region's input 0, its epilogue
//! (`Primitive::MatmulThen`); on the CPU, a convolution's patches behind it are folded in too
//! (`Primitive::PatchesThen`), so that the product makes them as it needs them.

use rustc_hash::FxHashMap as HashMap;

use super::{Graph, Input};
use crate::array::Array;
use crate::dtype::DType;
use crate::graph::primitive::{FusedExpr, Patches, Primitive, Step, View};
use crate::stream::Device;

impl Graph {
    /// A matmul the region can take as its epilogue's input: a lazy float32 `Matmul` on the
    /// region's stream, of the region's size, that nothing but the region reads or holds,
    /// read directly or through a reshape (a convolution's product, `[1, N * H * W, O]`, is
    /// read as `[N, H, W, O]`). Its finished rows then go through the program before they
    /// leave the cache (CPU), and the product never outlives the node. Returns the leaf (the
    /// matmul or its reshape) and the matmul.
    pub(super) fn product_of(
        &self,
        edges: &HashMap<usize, usize>,
        root: usize,
    ) -> Option<(usize, usize)> {
        let region = &self.nodes[root];
        // The CPU's epilogue writes over the float32 product in place; the GPU's stores each
        // value in the node's dtype and rounds a packed product first (`gpu/epilogue.rs`).
        let cpu = region.device() == Device::Cpu;
        if cpu && region.dtype() != DType::Float32 {
            return None;
        }
        let only_read_here = |j: usize, reads: usize| {
            self.free[j]
                && reads == self.uses[j]
                && self.nodes[j].stream() == region.stream()
                && self.nodes[j].size() == region.size()
        };
        let is_matmul = |j: usize| {
            let dtype = self.nodes[j].dtype();
            self.nodes[j].primitive() == Some(Primitive::Matmul)
                && (dtype == DType::Float32 || (!cpu && dtype.is_packed()))
        };
        let mut candidates: Vec<(usize, usize)> = edges
            .iter()
            .map(|(&j, &reads)| (j, reads))
            .filter(|&(j, reads)| only_read_here(j, reads))
            .filter_map(|(j, _)| {
                if is_matmul(j) {
                    return (self.nodes[j].shape() == region.shape()).then_some((j, j));
                }
                let reshape = self.nodes[j].primitive() == Some(Primitive::View(View::Reshape));
                let i = self.first_lazy(j).filter(|_| reshape)?;
                (is_matmul(i) && only_read_here(i, 1)).then_some((j, i))
            })
            .collect();
        // The latest one (by dependency order), the same on every run.
        candidates.sort_unstable();
        candidates.pop()
    }

    /// On the CPU stream, whether the product `matmul` (of the region rooted at `root`) is a
    /// convolution's, its A the patches of an image seen as rows (`ops/conv.rs`, one group):
    /// the image and the patches' spec, so that the product makes the patches as it needs them
    /// and they never take memory. Every node between the patches and the product must be a
    /// reshape, or a transpose that moves only axes of extent 1, that only this walk and the
    /// next node hold.
    pub(super) fn patches_behind(&self, matmul: usize, root: usize) -> Option<(Array, Patches)> {
        let region = &self.nodes[root];
        if region.device() != Device::Cpu || region.ndim() != 4 {
            return None;
        }
        let b = &self.nodes[matmul].inputs()[1];
        let only_here = |j: usize| {
            self.free[j] && self.uses[j] == 1 && self.nodes[j].stream() == region.stream()
        };
        let mut at = self.first_lazy(matmul)?;
        loop {
            if !only_here(at) {
                return None;
            }
            let node = &self.nodes[at];
            match node.primitive()? {
                Primitive::View(View::Reshape) => {}
                Primitive::View(View::Transpose(axes)) => {
                    let extents = node.inputs()[0].shape().to_vec();
                    let moved: Vec<usize> = axes.into_iter().filter(|&a| extents[a] > 1).collect();
                    if !moved.is_sorted() {
                        return None;
                    }
                }
                Primitive::Patches(spec) => {
                    let (p, image) = (node.shape(), node.inputs()[0].clone());
                    let rows_match = p[..3] == region.shape()[..3];
                    let depth = b.shape()[b.ndim() - 2] == p[3] * p[4];
                    let flat = b.shape()[..b.ndim() - 2].iter().all(|&d| d == 1);
                    let ok = rows_match && depth && flat && image.dtype() == DType::Float32;
                    return ok.then_some((image, spec));
                }
                _ => return None,
            }
            at = self.first_lazy(at)?;
        }
    }

    /// Node `j`'s first input, where it is lazy.
    fn first_lazy(&self, j: usize) -> Option<usize> {
        match self.inputs[j].first() {
            Some(&Input::Lazy(i)) => Some(i),
            _ => None,
        }
    }
}

/// The program and inputs of a matmul with its epilogue: the product (`leaf`, the matmul or
/// its reshape) becomes input 0, the other leaves follow in order, and the node's inputs are
/// the matmul's two then those leaves.
pub(super) fn with_product_first(
    expr: FusedExpr,
    leaves: Vec<Array>,
    leaf: &Array,
    matmul: &Array,
) -> (FusedExpr, Vec<Array>) {
    let at = leaves
        .iter()
        .position(|l| l.id() == leaf.id())
        .expect("the product is one of the region's leaves");
    let renumber = |k: usize| match k.cmp(&at) {
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Less => k + 1,
        std::cmp::Ordering::Greater => k,
    };
    let steps = expr
        .steps
        .into_iter()
        .map(|step| match step {
            Step::Input(k) => Step::Input(renumber(k)),
            other => other,
        })
        .collect();
    let mut inputs = matmul.inputs();
    inputs.extend(leaves.into_iter().filter(|l| l.id() != leaf.id()));
    let expr = FusedExpr {
        steps,
        dtypes: expr.dtypes,
    };
    (expr, inputs)
}
