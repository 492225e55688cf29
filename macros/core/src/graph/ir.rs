//! The validated graph: every name resolved, every expression evaluated, every argument bound
//! to a kernel parameter. Code generation, docs and diagrams read only this. The names of what
//! is generated for it ([`HostMethod`], [`Buffer::len_const`], ...) are defined here too, so
//! the checks (which reject clashing names) and the emitters agree without depending on each
//! other.

use crate::syntax::model::{Elem, Extent, KernelDecl, Param};
use crate::syntax::naming::ident_text;

mod role;
pub use role::{HostMethod, Role};

/// A named dim.
#[derive(Debug, Clone)]
pub struct Dim {
    /// Name.
    pub name: String,
    /// Value.
    pub value: i128,
}

/// A buffer.
#[derive(Debug, Clone)]
pub struct Buffer {
    /// Name.
    pub name: String,
    /// Element type.
    pub elem: Elem,
    /// Number of elements.
    pub len: u64,
    /// The length as written (`"n_hid * n_in"` or `"40"`).
    pub len_src: String,
    /// Role.
    pub role: Role,
    /// `doc = "..."`.
    pub doc: Option<String>,
    /// May share the memory plan's arena (`plan = false` opts out; see `graph::memplan`).
    pub plan: bool,
}

/// A literal value, typed by the parameter it is bound to.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Integer.
    Int(i128),
    /// Float (exactly as the f64/f32 it becomes: the TOML text).
    Float(String),
}

/// A scalar.
#[derive(Debug, Clone)]
pub struct Scalar {
    /// Name.
    pub name: String,
    /// Type.
    pub elem: Elem,
    /// Initial value.
    pub default: Value,
    /// `doc = "..."`.
    pub doc: Option<String>,
}

/// What one kernel parameter receives.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    /// A device buffer (`&[T]`, or `&mut [T]` when `mutable`).
    Buffer {
        /// Index into `GraphIr::buffers`.
        buffer: usize,
        /// The kernel writes it.
        mutable: bool,
    },
    /// A pinned, slot or pinned_out buffer through a `Pinned<T>` parameter (read).
    Pinned {
        /// Index into `GraphIr::buffers`.
        buffer: usize,
    },
    /// A pinned_out buffer through a `PinnedMut<T>` parameter (written).
    PinnedMut {
        /// Index into `GraphIr::buffers`.
        buffer: usize,
    },
    /// A scalar, updatable between replays.
    Scalar {
        /// Index into `GraphIr::scalars`.
        scalar: usize,
    },
    /// `"null"` for a parameter declared `Option<&[T; n]>` / `Option<&mut [T; n]>`: the kernel
    /// gets a null pointer (it accepts NULL there).
    Null,
    /// A compile-time constant: a literal, a dim or an expression over dims.
    Const {
        /// The value.
        value: Value,
        /// As written (`"n_feat"`, `"2 * n"`, `0.5`).
        src: String,
    },
}

/// One argument: a kernel parameter and what it is bound to.
#[derive(Debug, Clone)]
pub struct Arg {
    /// Parameter name.
    pub param: String,
    /// Parameter element type.
    pub elem: Elem,
    /// The binding.
    pub binding: Binding,
    /// Bound by the parameter's name: not written in the node's `args`, it names the spec's
    /// dim, buffer or scalar of that name (docs and diagrams say so).
    pub by_name: bool,
}

/// A launch dimension triple, with the source text of each given component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dim3 {
    /// `(x, y, z)`.
    pub value: [u32; 3],
    /// As written, e.g. `"ceil(n / 128)"`.
    pub src: String,
}

/// A kernel node's kernel and launch shape.
#[derive(Debug, Clone)]
pub struct KernelLaunch {
    /// Index into `GraphIr::kernels`.
    pub kernel: usize,
    /// Grid.
    pub grid: Dim3,
    /// Block.
    pub block: Dim3,
    /// Dynamic shared memory in bytes.
    pub shared: u32,
    /// Candidate block sizes for `autotune` (`tune = [...]`); empty when not tunable.
    pub tune: Vec<u32>,
}

/// What a node does.
#[derive(Debug, Clone)]
pub enum NodeOp {
    /// Launches a kernel; `args` are its parameters' arguments.
    Kernel(KernelLaunch),
    /// Sets every element of `args[0]` (`dst`) to one value: `pattern`, the value's low
    /// `elem_size` bytes (1, 2 or 4) repeated.
    Memset {
        /// The value as written.
        value: Value,
        /// Its bits, as `cuMemsetD{8,16,32}` takes them.
        pattern: u32,
        /// Bytes per memset element (the buffer's element size, or 1 for a zero fill of
        /// 8-byte elements).
        elem_size: u32,
    },
    /// Copies `args[0]` (`src`) into `args[1]` (`dst`), same dtype and length.
    Memcpy,
    /// An NCCL collective over the graph's communicator: in place on `args[0]` (`buffer`), or
    /// from `args[0]` (`send`) into `args[1]` (`recv`).
    Collective(CollectiveOp),
    /// A cuBLAS matrix product, row-major `C = alpha * op(A) * op(B) + beta * C`: `args` are
    /// [`GemmOp::A`], [`GemmOp::B`], [`GemmOp::C`] (written), [`GemmOp::ALPHA`],
    /// [`GemmOp::BETA`], and C again, read, when [`GemmOp::reads_c`].
    Gemm(GemmOp),
}

/// How a GEMM node accumulates (`compute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemmCompute {
    /// `f32`: IEEE f32 (f32 buffers), or f32 accumulation of f16/bf16 products.
    F32,
    /// `tf32`: TF32 products on tensor cores, summed in f32 (f32 buffers only).
    Tf32,
}

/// A strided batch of a GEMM node, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmBatch {
    /// Number of products.
    pub count: u64,
    /// Elements between consecutive A matrices.
    pub stride_a: u64,
    /// Elements between consecutive B matrices.
    pub stride_b: u64,
    /// Elements between consecutive C matrices.
    pub stride_c: u64,
}

/// A GEMM node's shape, every size a compile-time constant (checked against the buffers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmOp {
    /// The accumulation.
    pub compute: GemmCompute,
    /// `op(A) = A^T`.
    pub trans_a: bool,
    /// `op(B) = B^T`.
    pub trans_b: bool,
    /// Rows of C.
    pub m: u64,
    /// Columns of C.
    pub n: u64,
    /// The inner dimension.
    pub k: u64,
    /// Elements between rows of A.
    pub lda: u64,
    /// Elements between rows of B.
    pub ldb: u64,
    /// Elements between rows of C.
    pub ldc: u64,
    /// A strided batch, or one product.
    pub batch: Option<GemmBatch>,
    /// C is read (beta is a scalar or a nonzero constant).
    pub reads_c: bool,
}

impl GemmOp {
    /// The index of A's argument.
    pub const A: usize = 0;
    /// The index of B's argument.
    pub const B: usize = 1;
    /// The index of C's argument (written).
    pub const C: usize = 2;
    /// The index of alpha's argument (a scalar or a constant, f32).
    pub const ALPHA: usize = 3;
    /// The index of beta's argument.
    pub const BETA: usize = 4;
}

/// A reduction of a collective (`ncclSum`, ...), by its spec spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// `sum`
    Sum,
    /// `avg`
    Avg,
    /// `prod`
    Prod,
    /// `max`
    Max,
    /// `min`
    Min,
}

impl Reduction {
    /// Every reduction with its spec spelling.
    pub const ALL: [(Reduction, &'static str); 5] = [
        (Reduction::Sum, "sum"),
        (Reduction::Avg, "avg"),
        (Reduction::Prod, "prod"),
        (Reduction::Max, "max"),
        (Reduction::Min, "min"),
    ];

    /// The spec spelling (also `kgraph::nccl::ReduceOp::from_name`'s).
    pub fn name(self) -> &'static str {
        Reduction::ALL.iter().find(|(r, _)| *r == self).map_or("?", |(_, n)| n)
    }
}

/// Which collective a node runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectiveOp {
    /// `all_reduce`: every rank receives the reduction over ranks.
    AllReduce(Reduction),
    /// `reduce_scatter`: send `W * n`, receive block `rank` of the reduction (`n`).
    ReduceScatter(Reduction),
    /// `all_gather`: send `n`, receive every rank's (`W * n`).
    AllGather,
    /// `broadcast` from rank `root`.
    Broadcast(u32),
}

impl CollectiveOp {
    /// The spec spelling of the op (`kgraph::nccl::Collective::name`).
    pub fn name(self) -> &'static str {
        match self {
            CollectiveOp::AllReduce(_) => "all_reduce",
            CollectiveOp::ReduceScatter(_) => "reduce_scatter",
            CollectiveOp::AllGather => "all_gather",
            CollectiveOp::Broadcast(_) => "broadcast",
        }
    }
}

/// One node.
#[derive(Debug, Clone)]
pub struct Node {
    /// Node name (unique).
    pub name: String,
    /// What it does.
    pub op: NodeOp,
    /// Arguments: a kernel's in parameter order; `[dst]` for a memset, `[src, dst]` for a memcpy.
    pub args: Vec<Arg>,
    /// `doc = "..."`.
    pub doc: Option<String>,
    /// Launched with programmatic dependent launch (the node's `pdl`, else the spec's, else
    /// false): the kernel promises to execute `griddepcontrol.wait` before touching its buffers.
    /// Always false for memset and memcpy nodes.
    pub pdl: bool,
}

/// How a conditional node decides.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlKind {
    /// `[[while]] repeat = n`: the body runs `n` (≥ 1) times per launch.
    Repeat(u32),
    /// `[[while]] until = { buffer, below }, max`: the body runs until the first element of
    /// device `f32` buffer `buffer` is below `below` (tested after each iteration, so at least
    /// once), at most `max` times.
    Until {
        /// Index into `GraphIr::buffers`.
        buffer: usize,
        /// The threshold, as the TOML float text.
        below: String,
        /// The iteration cap.
        max: u32,
    },
    /// `[[if]] flag = b`: the body runs once when the first element of device `i32` buffer
    /// `flag` is non-zero.
    If {
        /// Index into `GraphIr::buffers`.
        flag: usize,
    },
}

/// A `[[while]]` or `[[if]]`: a run of consecutive nodes executed conditionally on the device,
/// as one conditional node of the graph whose body holds them.
#[derive(Debug, Clone)]
pub struct Control {
    /// Name (unique among nodes and controls).
    pub name: String,
    /// The condition.
    pub kind: ControlKind,
    /// The first body node (index into `GraphIr::nodes`).
    pub first: usize,
    /// How many consecutive nodes the body holds.
    pub len: usize,
    /// `doc = "..."`.
    pub doc: Option<String>,
}

impl Control {
    /// The body's node indices.
    pub fn body(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.len
    }

    /// An `until` loop's threshold as the f32 the control kernel compares with.
    pub fn until_below(&self) -> Option<f32> {
        match &self.kind {
            ControlKind::Until { below, .. } => Some(below.replace('_', "").parse().unwrap_or(f32::NAN)),
            _ => None,
        }
    }

    /// The buffer its condition reads (`until`'s value, `if`'s flag).
    pub fn condition_buffer(&self) -> Option<usize> {
        match self.kind {
            ControlKind::Repeat(_) => None,
            ControlKind::Until { buffer, .. } => Some(buffer),
            ControlKind::If { flag } => Some(flag),
        }
    }

    /// Whether it is a loop.
    pub fn is_loop(&self) -> bool {
        !matches!(self.kind, ControlKind::If { .. })
    }
}

/// The validated graph.
#[derive(Debug, Clone)]
pub struct GraphIr {
    /// Spec file as written in the macro call (for messages and docs).
    pub spec_path: String,
    /// Top-level `doc`.
    pub doc: Option<String>,
    /// The Rust file holding the `#[kernel]` declarations, as written in the spec.
    pub kernel_source: String,
    /// Where the generated kernel handle types live.
    pub module: syn::Path,
    /// Dims, in file order.
    pub dims: Vec<Dim>,
    /// Buffers, in file order.
    pub buffers: Vec<Buffer>,
    /// Scalars, in file order.
    pub scalars: Vec<Scalar>,
    /// The kernels the nodes use (each once), in order of first use.
    pub kernels: Vec<KernelDecl>,
    /// Nodes, in file order (= eager order).
    pub nodes: Vec<Node>,
    /// Conditional groups of nodes, in file order; their bodies do not overlap.
    pub controls: Vec<Control>,
    /// The specs spliced in by `[[include]]`, nested ones too, in the order they were spliced.
    pub includes: Vec<Include>,
    /// Plan memory (`plan_memory`, default true; `graph!(.., plan_memory = false)` overrides).
    pub plan_memory: bool,
    /// `resident = true`, asked for by the request (not with `repeat` or `dims`): the build
    /// lowers the spec to one resident kernel and the struct gets `into_resident`.
    pub resident: bool,
}

/// A spec spliced in by `[[include]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Include {
    /// The prefix of its names (`first`; `first_inner` for an include inside it).
    pub name: String,
    /// Its path, relative to the crate root.
    pub spec: String,
}

impl Dim {
    /// The associated constant holding its value: `N_FEAT` for dim `n_feat`.
    pub fn const_name(&self) -> String {
        self.name.to_uppercase()
    }
}

impl Buffer {
    /// Its replacer: `replace_x` for buffer `x` (device buffers).
    pub fn replacer(&self) -> String {
        format!("replace_{}", self.name)
    }

    /// The associated constant holding its length: `X_LEN` for buffer `x`.
    pub fn len_const(&self) -> String {
        format!("{}_LEN", self.name.to_uppercase())
    }
}

impl Scalar {
    /// Its setter: `set_lr` for scalar `lr`.
    pub fn setter(&self) -> String {
        format!("set_{}", self.name)
    }
}

impl Value {
    /// The value as written in docs: the integer, or the float's TOML text.
    pub fn text(&self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.clone(),
        }
    }
}

impl Binding {
    /// The buffer this binding passes and whether the kernel writes it; `None` for values.
    pub fn buffer_access(&self) -> Option<(usize, bool)> {
        match *self {
            Binding::Buffer { buffer, mutable } => Some((buffer, mutable)),
            Binding::Pinned { buffer } => Some((buffer, false)),
            Binding::PinnedMut { buffer } => Some((buffer, true)),
            Binding::Scalar { .. } | Binding::Const { .. } | Binding::Null => None,
        }
    }
}

impl GraphIr {
    /// What node `n` runs, for docs and diagrams: its kernel's name, `memset` or `memcpy`.
    pub fn node_label(&self, n: usize) -> String {
        match &self.nodes[n].op {
            NodeOp::Kernel(l) => ident_text(&self.kernels[l.kernel].name),
            NodeOp::Memset { .. } => "memset".to_string(),
            NodeOp::Memcpy => "memcpy".to_string(),
            NodeOp::Collective(c) => c.name().to_string(),
            NodeOp::Gemm(_) => "gemm".to_string(),
        }
    }

    /// The GEMM nodes, in node order: a GEMM's position here is its cuBLAS workspace slot.
    pub fn gemm_nodes(&self) -> Vec<usize> {
        (0..self.nodes.len()).filter(|&n| matches!(self.nodes[n].op, NodeOp::Gemm(_))).collect()
    }

    /// Whether any node is a collective (the struct then holds a communicator).
    pub fn has_collectives(&self) -> bool {
        self.nodes.iter().any(|n| matches!(n.op, NodeOp::Collective(_)))
    }

    /// The control whose body holds node `n`, if any.
    pub fn control_of(&self, n: usize) -> Option<usize> {
        self.controls.iter().position(|c| c.body().contains(&n))
    }

    /// Buffers node `n` reads and writes: `(buffer, writes)`, one entry per buffer (a buffer
    /// passed both ways counts as written).
    ///
    /// A collective also writes the communicator, as buffer index [`Self::comm_index`], so all
    /// collectives are ordered one after another, in file order, on every rank alike (NCCL needs
    /// the same order everywhere, and parallel branches run in any order).
    pub fn accesses(&self, n: usize) -> Vec<(usize, bool)> {
        let mut out: Vec<(usize, bool)> = Vec::new();
        for (b, w) in self.nodes[n].args.iter().filter_map(|a| a.binding.buffer_access()) {
            merge_access(&mut out, b, w);
        }
        if matches!(self.nodes[n].op, NodeOp::Collective(_)) {
            out.push((self.comm_index(), true));
        }
        out
    }

    /// A buffer's name for edge labels; `communicator` for [`Self::comm_index`].
    pub fn buffer_label(&self, b: usize) -> &str {
        self.buffers.get(b).map_or("communicator", |buf| buf.name.as_str())
    }

    /// The pseudo-buffer index of the communicator in [`Self::accesses`] (one past the buffers).
    pub fn comm_index(&self) -> usize {
        self.buffers.len()
    }
}

/// Adds access `(b, writes)` to `out`, one entry per buffer (a buffer both read and written
/// counts as written).
pub fn merge_access(out: &mut Vec<(usize, bool)>, b: usize, writes: bool) {
    match out.iter_mut().find(|(x, _)| *x == b) {
        Some(e) => e.1 |= writes,
        None => out.push((b, writes)),
    }
}

/// A pointer argument of a node with its parameter's declared extent: what the compile-time
/// extent rules check and what a setter re-checks when one of the extent's names is a scalar.
#[derive(Debug, Clone, Copy)]
pub struct ExtentUse<'d> {
    /// Index into the node's `args`.
    pub arg: usize,
    /// The kernel parameter.
    pub param: &'d Param,
    /// Its declared extent.
    pub extent: &'d Extent,
    /// Index into `GraphIr::buffers`: the buffer bound to it.
    pub buffer: usize,
}

impl Node {
    /// The kernel and launch shape of a kernel node.
    pub fn launch(&self) -> Option<&KernelLaunch> {
        match &self.op {
            NodeOp::Kernel(l) => Some(l),
            _ => None,
        }
    }

    /// The kernel index of a kernel node.
    pub fn kernel(&self) -> Option<usize> {
        self.launch().map(|l| l.kernel)
    }

    /// The argument bound to kernel parameter `param`, if any.
    pub fn arg(&self, param: &str) -> Option<&Arg> {
        self.args.iter().find(|a| a.param == param)
    }

    /// Every pointer argument whose parameter declares an extent (in `decl`, the node's
    /// kernel), in parameter order.
    pub fn extent_uses<'d>(&self, decl: &'d KernelDecl) -> Vec<ExtentUse<'d>> {
        let mut out = Vec::new();
        for (i, a) in self.args.iter().enumerate() {
            let Some((buffer, _)) = a.binding.buffer_access() else { continue };
            let Some(param) = decl.param(&a.param) else { continue };
            if let Some(extent) = &param.extent {
                out.push(ExtentUse { arg: i, param, extent, buffer });
            }
        }
        out
    }

    /// The scalars (indices into `GraphIr::scalars`) that the extent `extent` of this node
    /// depends on, each once: those bound to a parameter the extent names.
    pub fn extent_scalars(&self, extent: &Extent) -> Vec<usize> {
        let mut out = Vec::new();
        for name in extent.expr.names() {
            if let Some(Binding::Scalar { scalar }) = self.arg(&ident_text(name)).map(|a| &a.binding) {
                if !out.contains(scalar) {
                    out.push(*scalar);
                }
            }
        }
        out
    }
}
