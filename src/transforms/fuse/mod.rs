//! Fusion: a chain of lazy elementwise nodes (unary, binary, `where`) becomes one node whose
//! primitive is the chain's program ([`Primitive::Fused`]), so one kernel runs where there
//! were many, and the intermediates never take memory.
//!
//! `evaluate` and reads fuse the graph they are about to run, and `compile` fuses the graph
//! it traced. A node is folded into the node that reads it only when nothing else can see
//! it: it is lazy, every edge to it comes from nodes of the same region, and no array, tape
//! or other graph holds it (its handle count is its edges plus the walk's own). So a value a
//! page holds, reads or may read is always computed on its own, and a chain that changes
//! stream is cut there. Every input of a region has the region's shape, one element, or is a
//! row repeated along it (a bias: the region's trailing axes, after leading axes of extent 1),
//! so a bias add and its activation run as one kernel.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::rc::Rc;

use crate::array::{Array, lazy_order};
use crate::graph::primitive::{FusedExpr, GPU_FUSED_BUFFERS, Primitive, Step};
use crate::stream::Device;

mod product;
use product::with_product_first;

/// How big a region may grow on a device. GPU programs are shader source that the adapter
/// compiles once per distinct program, so they stay short; the CPU runs any length.
struct Limits {
    ops: usize,
    /// Inputs read from buffers.
    inputs: usize,
    /// Inputs of any kind (one-element host arrays go to GPU kernels as parameter words).
    all_inputs: usize,
}

fn limits(device: Device) -> Limits {
    match device {
        Device::Gpu => Limits {
            ops: 64,
            inputs: GPU_FUSED_BUFFERS,
            all_inputs: 32,
        },
        Device::Cpu => Limits {
            ops: 1024,
            inputs: 64,
            all_inputs: 64,
        },
    }
}

/// When a GPU region becomes a fused kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Always (`compile`: its program runs on every call).
    Always,
    /// From the second time its program turns up (`evaluate`): a new program costs a shader
    /// compile, which a one-off graph would pay for nothing, and a loop pays once.
    Repeated,
}

thread_local! {
    /// GPU programs seen once by [`When::Repeated`] fusion, bounded.
    static SEEN: std::cell::RefCell<HashSet<FusedExpr>> = std::cell::RefCell::default();
}

/// Programs remembered before [`SEEN`] starts over.
const SEEN_BOUND: usize = 4096;

/// Whether a GPU program should be fused now, under `when`.
fn due(expr: &FusedExpr, when: When) -> bool {
    when == When::Always
        || SEEN.with(|seen| {
            let mut seen = seen.borrow_mut();
            if seen.contains(expr) {
                return true;
            }
            if seen.len() >= SEEN_BOUND {
                seen.clear();
            }
            seen.insert(expr.clone());
            false
        })
}

/// Fuses the lazy graph behind `outputs` in place; returns how many fused nodes it made.
pub fn fuse(outputs: &[Array], when: When) -> usize {
    let order = lazy_order(outputs);
    if order.len() < 2 {
        return 0;
    }
    let graph = Graph::new(order);
    let mut region_of: Vec<Option<usize>> = vec![None; graph.nodes.len()];
    let mut made = 0;
    for root in (0..graph.nodes.len()).rev() {
        if region_of[root].is_some() || !graph.fusable[root] {
            continue;
        }
        let (members, edges_in) = graph.grow(root, &mut region_of);
        let product = graph.product_of(&edges_in, root);
        if members.len() < 2 && product.is_none() {
            continue;
        }
        let (expr, leaves) = graph.program(&members);
        if graph.nodes[root].device() == Device::Cpu || due(&expr, when) {
            let node = &graph.nodes[root];
            match product {
                Some((leaf, matmul)) => {
                    let patches = graph.patches_behind(matmul, root);
                    let (leaf, matmul) = (&graph.nodes[leaf], &graph.nodes[matmul]);
                    let (expr, mut inputs) = with_product_first(expr, leaves, leaf, matmul);
                    let primitive = match patches {
                        Some((image, spec)) => {
                            inputs[0] = image;
                            Primitive::PatchesThen(spec, Rc::new(expr))
                        }
                        None => Primitive::MatmulThen(Rc::new(expr)),
                    };
                    node.recompute_as(primitive, inputs);
                }
                None => node.recompute_as(Primitive::Fused(Rc::new(expr)), leaves),
            }
            made += 1;
        }
    }
    made
}

/// The lazy nodes in dependency order, with what the planner needs of each.
struct Graph {
    nodes: Vec<Array>,
    /// Each node's inputs, as indices into `nodes` where they are lazy.
    inputs: Vec<Vec<Input>>,
    /// Edges into each node from the lazy nodes.
    uses: Vec<usize>,
    /// Whether nothing but those edges (and this walk) holds the node.
    free: Vec<bool>,
    /// Whether the node is elementwise with inputs of its shape or of one element.
    fusable: Vec<bool>,
}

#[derive(Clone)]
enum Input {
    Lazy(usize),
    /// An evaluated node, by its id, and whether a GPU kernel takes it as a word.
    Ready(usize, bool),
}

impl Graph {
    fn new(nodes: Vec<Array>) -> Graph {
        let index: HashMap<usize, usize> =
            nodes.iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
        let mut uses = vec![0; nodes.len()];
        let mut inputs = Vec::with_capacity(nodes.len());
        let mut fusable = Vec::with_capacity(nodes.len());
        for node in &nodes {
            let node_inputs = node.inputs();
            let mut mine = Vec::with_capacity(node_inputs.len());
            for input in &node_inputs {
                match index.get(&input.id()) {
                    Some(&i) => {
                        uses[i] += 1;
                        mine.push(Input::Lazy(i));
                    }
                    None => mine.push(Input::Ready(input.id(), input.is_host_scalar())),
                }
            }
            fusable.push(is_fusable(node, &node_inputs));
            inputs.push(mine);
        }
        // Every clone taken above is dropped: a node's handles are now its edges, `nodes`,
        // and whatever else holds it.
        let free = nodes
            .iter()
            .zip(&uses)
            .map(|(n, &u)| n.holders() == u + 1)
            .collect();
        Graph {
            nodes,
            inputs,
            uses,
            free,
            fusable,
        }
    }

    /// The region rooted at `root`: the nodes that can fold into it, in dependency order, and
    /// the edges from them into each lazy node.
    fn grow(
        &self,
        root: usize,
        region_of: &mut [Option<usize>],
    ) -> (Vec<usize>, HashMap<usize, usize>) {
        let stream = self.nodes[root].stream();
        let limits = limits(stream.device);
        let mut region = Region::default();
        region.add(self, root);
        region_of[root] = Some(root);
        while let Some(j) = region.pending.pop() {
            // A row input stays an input: the region computes only the region's shape.
            let fits = region_of[j].is_none()
                && self.fusable[j]
                && self.nodes[j].shape() == self.nodes[root].shape()
                && self.free[j]
                && self.nodes[j].stream() == stream
                && region.edges_in.get(&j) == Some(&self.uses[j])
                && region.members.len() < limits.ops
                && region.fits_inputs_of(self, j, &limits);
            if fits {
                region.add(self, j);
                region_of[j] = Some(root);
            }
        }
        let mut members: Vec<usize> = region.members.into_iter().collect();
        members.sort_unstable();
        (members, region.edges_in)
    }

    /// The region's program and its inputs.
    fn program(&self, members: &[usize]) -> (FusedExpr, Vec<Array>) {
        let mut steps = Vec::new();
        let mut dtypes = Vec::new();
        let mut leaves: Vec<Array> = Vec::new();
        let mut step_of: HashMap<usize, usize> = HashMap::default();
        for &m in members {
            let node = &self.nodes[m];
            let mut operands = Vec::new();
            for input in node.inputs() {
                let step = match step_of.get(&input.id()) {
                    Some(&s) => s,
                    None => {
                        steps.push(Step::Input(leaves.len()));
                        dtypes.push(input.dtype());
                        step_of.insert(input.id(), steps.len() - 1);
                        leaves.push(input);
                        steps.len() - 1
                    }
                };
                operands.push(step);
            }
            steps.push(match node.primitive() {
                Some(Primitive::Unary(op)) => Step::Unary(op, operands[0]),
                Some(Primitive::Binary(op)) => Step::Binary(op, operands[0], operands[1]),
                _ => Step::Where(operands[0], operands[1], operands[2]),
            });
            dtypes.push(node.dtype());
            step_of.insert(node.id(), steps.len() - 1);
        }
        (FusedExpr { steps, dtypes }, leaves)
    }
}

/// A region as it grows.
#[derive(Default)]
struct Region {
    members: HashSet<usize>,
    /// Edges from members into each lazy node.
    edges_in: HashMap<usize, usize>,
    /// The region's inputs.
    external: HashSet<Key>,
    /// Lazy inputs to consider.
    pending: Vec<usize>,
}

impl Region {
    fn add(&mut self, graph: &Graph, i: usize) {
        self.members.insert(i);
        self.external.remove(&Key::Lazy(i));
        for input in &graph.inputs[i] {
            match *input {
                Input::Lazy(j) => {
                    *self.edges_in.entry(j).or_insert(0) += 1;
                    if !self.members.contains(&j) {
                        self.external.insert(Key::Lazy(j));
                        self.pending.push(j);
                    }
                }
                Input::Ready(id, word) => {
                    self.external.insert(Key::Ready(id, word));
                }
            }
        }
    }

    /// Whether the region's inputs stay within `limits` once `j` (one of them) joins it.
    fn fits_inputs_of(&self, graph: &Graph, j: usize, limits: &Limits) -> bool {
        let mut inputs = self.external.clone();
        inputs.remove(&Key::Lazy(j));
        for input in &graph.inputs[j] {
            match *input {
                Input::Lazy(k) if self.members.contains(&k) => {}
                Input::Lazy(k) => {
                    inputs.insert(Key::Lazy(k));
                }
                Input::Ready(id, word) => {
                    inputs.insert(Key::Ready(id, word));
                }
            }
        }
        let buffers = inputs
            .iter()
            .filter(|k| !matches!(k, Key::Ready(_, true)))
            .count();
        buffers <= limits.inputs && inputs.len() <= limits.all_inputs
    }
}

/// A region input: a lazy node by index, or an evaluated one by id.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Lazy(usize),
    Ready(usize, bool),
}

/// Whether `node` can be a step of a fused program.
fn is_fusable(node: &Array, inputs: &[Array]) -> bool {
    let elementwise = matches!(
        node.primitive(),
        Some(Primitive::Unary(_) | Primitive::Binary(_) | Primitive::Where)
    );
    // Fused programs on both devices read packed leaves and write a packed result: the casts
    // that widen and round them fold in.
    elementwise
        && node.size() > 0
        && inputs.iter().all(|x| {
            let row = || is_row(x.shape(), node.shape(), node.device());
            x.shape() == node.shape() || x.size() == 1 || row()
        })
}

/// Whether an input of `shape` is a row repeated along `region`: its axes after any leading
/// ones of extent 1 are the region's last axes. The GPU's fused kernel reads a row as whole
/// `vec4`s, so there the row's length must be a multiple of 4.
fn is_row(shape: &[usize], region: &[usize], device: Device) -> bool {
    let first = shape.iter().position(|&d| d != 1).unwrap_or(shape.len());
    let row = &shape[first..];
    let len: usize = row.iter().product();
    !row.is_empty()
        && row.len() < region.len()
        && region.ends_with(row)
        && (device == Device::Cpu || len.is_multiple_of(4))
}
