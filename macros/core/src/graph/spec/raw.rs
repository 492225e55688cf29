//! The raw, spanned model of a spec as written: which keys exist, with their TOML types and
//! byte ranges; nothing judged yet.

use std::ops::Range;

/// A byte range in the spec file.
pub type Span = Range<usize>;

/// A value with its span in the spec file.
#[derive(Debug, Clone, PartialEq)]
pub struct S<T> {
    /// The value.
    pub v: T,
    /// Where it is written.
    pub span: Span,
}

/// An integer or an expression string over dims.
#[derive(Debug, Clone, PartialEq)]
pub enum Num {
    /// `128`
    Int(i128),
    /// `"ceil(n / 128)"`, with the byte offset of the text's first character in the file, when
    /// the string has no escapes (so expression positions map back exactly).
    Expr(String, Option<usize>),
}

/// A literal scalar value.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// An integer.
    Int(i128),
    /// A float, with its TOML text (e.g. `1e-3`, `inf`).
    Float(String),
}

/// The right-hand side of `param = ...` in a node's `args`.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// A name (buffer, scalar, dim) or an expression over dims.
    Str(String, Option<usize>),
    /// A literal.
    Lit(Lit),
    /// Some other TOML value (its type name), which is always an error.
    Other(&'static str),
}

/// `[kernels]`.
#[derive(Debug, Clone, Default)]
pub struct RawKernels {
    /// The `[kernels]` key.
    pub key: Span,
    /// `source = "src/model.rs"`: the Rust file with the `#[kernel]` declarations.
    pub source: Option<S<String>>,
    /// `module = "crate::model"`: where the generated handle types live.
    pub module: Option<S<String>>,
}

/// One `[dims]` entry.
#[derive(Debug, Clone)]
pub struct RawDim {
    /// Name.
    pub name: S<String>,
    /// Value.
    pub value: S<i128>,
}

/// One `[buffers.<name>]` table.
#[derive(Debug, Clone)]
pub struct RawBuffer {
    /// Name (the table key).
    pub name: S<String>,
    /// `dtype = "f32"`.
    pub dtype: Option<S<String>>,
    /// `len = 40` or `len = "n_hid * n_in"`.
    pub len: Option<S<Num>>,
    /// `role = "input"`.
    pub role: Option<S<String>>,
    /// `doc = "..."`.
    pub doc: Option<String>,
    /// `plan = false`: keep it out of the memory plan.
    pub plan: Option<S<bool>>,
}

/// One `[scalars.<name>]` table.
#[derive(Debug, Clone)]
pub struct RawScalar {
    /// Name (the table key).
    pub name: S<String>,
    /// `dtype = "f32"`.
    pub dtype: Option<S<String>>,
    /// `default = 0.01`.
    pub default: Option<S<Lit>>,
    /// `doc = "..."`.
    pub doc: Option<String>,
}

/// A node's `args`: `(parameter name, value)` pairs in file order.
pub type RawArgs = Vec<(S<String>, S<ArgValue>)>;

/// One `[[node]]` table.
#[derive(Debug, Clone)]
pub struct RawNode {
    /// The table's span (its `[[node]]` header or inline table).
    pub span: Span,
    /// `name = "..."` (defaults to the kernel name).
    pub name: Option<S<String>>,
    /// `kernel = "..."`.
    pub kernel: Option<S<String>>,
    /// `grid = 4`, `grid = "ceil(n / 128)"` or `grid = [x, y, z]`.
    pub grid: Option<S<Vec<S<Num>>>>,
    /// `block = 128` (same forms as `grid`).
    pub block: Option<S<Vec<S<Num>>>>,
    /// `shared = 0`: dynamic shared memory in bytes.
    pub shared: Option<S<Num>>,
    /// `args = { param = value, ... }`, in file order; `None` when the key is absent.
    pub args: Option<S<RawArgs>>,
    /// `doc = "..."`.
    pub doc: Option<String>,
    /// `pdl = true|false`: overrides the spec's top-level `pdl` for this node.
    pub pdl: Option<S<bool>>,
    /// `tune = [64, 128, 256]`: candidate block sizes for `autotune` (1-D kernel nodes).
    pub tune: Option<S<Vec<S<Num>>>>,
    /// `memset = { dst = "x", value = 0 }`: a memset node instead of a kernel.
    pub memset: Option<S<RawMemset>>,
    /// `memcpy = { src = "a", dst = "b" }`: a copy node instead of a kernel.
    pub memcpy: Option<S<RawMemcpy>>,
    /// `collective = { op = "all_reduce", reduce = "avg", buffer = "g" }`: an NCCL collective.
    pub collective: Option<S<RawCollective>>,
    /// `gemm = { a = "x", b = "w", c = "y", m = "batch", n = .., k = .., compute = "f32" }`: a
    /// cuBLAS matrix product.
    pub gemm: Option<S<RawGemm>>,
}

/// A node's `gemm = { a, b, c, m, n, k, trans_a, trans_b, lda, ldb, ldc, alpha, beta, compute,
/// batch }`: row-major `C = alpha * op(A) * op(B) + beta * C`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawGemm {
    /// The buffer of A (read).
    pub a: Option<S<String>>,
    /// The buffer of B (read).
    pub b: Option<S<String>>,
    /// The buffer of C (written; read too when beta is not 0).
    pub c: Option<S<String>>,
    /// Rows of C (a dim, an integer or an expression over dims).
    pub m: Option<S<Num>>,
    /// Columns of C.
    pub n: Option<S<Num>>,
    /// The inner dimension.
    pub k: Option<S<Num>>,
    /// `op(A) = A^T`.
    pub trans_a: Option<S<bool>>,
    /// `op(B) = B^T`.
    pub trans_b: Option<S<bool>>,
    /// Elements between rows of A (default: its row length).
    pub lda: Option<S<Num>>,
    /// Elements between rows of B.
    pub ldb: Option<S<Num>>,
    /// Elements between rows of C.
    pub ldc: Option<S<Num>>,
    /// The product's factor: a literal or a scalar's name (default 1).
    pub alpha: Option<S<ArgValue>>,
    /// C's factor: a literal or a scalar's name (default 0).
    pub beta: Option<S<ArgValue>>,
    /// `f32` (IEEE) or `tf32`; required for f32 buffers, `f32` the default for f16/bf16.
    pub compute: Option<S<String>>,
    /// `batch = { count, stride_a, stride_b, stride_c }`: a strided batch.
    pub batch: Option<S<RawBatch>>,
}

/// A GEMM's `batch = { count, stride_a, stride_b, stride_c }`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawBatch {
    /// Number of products.
    pub count: Option<S<Num>>,
    /// Elements between consecutive A matrices (default: one A matrix, packed).
    pub stride_a: Option<S<Num>>,
    /// Elements between consecutive B matrices.
    pub stride_b: Option<S<Num>>,
    /// Elements between consecutive C matrices.
    pub stride_c: Option<S<Num>>,
}

/// A node's `collective = { op, reduce, root, buffer | send + recv }`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawCollective {
    /// `all_reduce`, `reduce_scatter`, `all_gather` or `broadcast`.
    pub op: Option<S<String>>,
    /// The reduction of `all_reduce`/`reduce_scatter`: `sum`, `avg`, `prod`, `max`, `min`.
    pub reduce: Option<S<String>>,
    /// The root rank of `broadcast`.
    pub root: Option<S<i128>>,
    /// In place: the buffer reduced or broadcast (`all_reduce`, `broadcast`).
    pub buffer: Option<S<String>>,
    /// Out of place: the buffer sent.
    pub send: Option<S<String>>,
    /// Out of place: the buffer received into.
    pub recv: Option<S<String>>,
}

/// A node's `memset = { dst, value }`.
#[derive(Debug, Clone, PartialEq)]
pub struct RawMemset {
    /// The buffer set.
    pub dst: Option<S<String>>,
    /// The value of every element (default 0).
    pub value: Option<S<Lit>>,
}

/// A node's `memcpy = { src, dst }`.
#[derive(Debug, Clone, PartialEq)]
pub struct RawMemcpy {
    /// The buffer read.
    pub src: Option<S<String>>,
    /// The buffer written (same dtype and length).
    pub dst: Option<S<String>>,
}

/// Which conditional table it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawControlKind {
    /// `[[while]]`.
    While,
    /// `[[if]]`.
    If,
}

/// `until = { buffer = "loss", below = 0.05 }` of a `[[while]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RawUntil {
    /// A device `f32` buffer whose first element is tested after each iteration.
    pub buffer: Option<S<String>>,
    /// The loop stops once that value is below this.
    pub below: Option<S<Lit>>,
}

/// One `[[while]]` or `[[if]]` table: nodes that run conditionally, on the device.
#[derive(Debug, Clone)]
pub struct RawControl {
    /// Which.
    pub kind: RawControlKind,
    /// The table's span.
    pub span: Span,
    /// `name = "..."`.
    pub name: Option<S<String>>,
    /// `nodes = ["a", "b"]`: a run of consecutive `[[node]]`s, in file order.
    pub nodes: Option<S<Vec<S<String>>>>,
    /// `repeat = 100` or `repeat = "k"` (a dim): iterations per launch (`[[while]]`).
    pub repeat: Option<S<Num>>,
    /// `until = { ... }` (`[[while]]`).
    pub until: Option<S<RawUntil>>,
    /// `max = 1000`: the iteration cap of an `until` loop.
    pub max: Option<S<Num>>,
    /// `flag = "b"`: a device `i32` buffer; the body runs when its first element is non-zero
    /// (`[[if]]`).
    pub flag: Option<S<String>>,
    /// `doc = "..."`.
    pub doc: Option<String>,
}

/// What an included scalar is bound to in an `[[include]]`'s `scalars`.
#[derive(Debug, Clone, PartialEq)]
pub enum ScalarTarget {
    /// `a = "lr"`: a scalar of the including spec.
    Scalar(String),
    /// `a = 3.0`: a literal, passed wherever the included spec passes the scalar.
    Lit(Lit),
}

/// An include's bindings: `(included name, what it is bound to)` pairs in file order.
pub type Bindings<T> = Vec<(S<String>, S<T>)>;

/// One `[[include]]` table: another spec's nodes, spliced in at this position.
#[derive(Debug, Clone)]
pub struct RawInclude {
    /// The table's span.
    pub span: Span,
    /// `name = "first"`: the prefix of the included names (`first_<node>`).
    pub name: Option<S<String>>,
    /// `spec = "graphs/x.toml"`: the included spec, relative to the crate root.
    pub spec: Option<S<String>>,
    /// `buffers = { x = "mid" }`: (included buffer, this spec's buffer), in file order; `None`
    /// when the key is absent.
    pub buffers: Option<S<Bindings<String>>>,
    /// `scalars = { a = "a", b = 0.5 }`: (included scalar, target), in file order.
    pub scalars: Option<S<Bindings<ScalarTarget>>>,
}

/// A spec file included (directly or through another include), once spliced.
#[derive(Debug, Clone, PartialEq)]
pub struct IncludedFile {
    /// The prefix of its names in this spec (`first`, `first_inner` for a nested one).
    pub name: String,
    /// Its path, relative to the crate root.
    pub spec: String,
}

/// A whole spec, as written.
#[derive(Debug, Clone, Default)]
pub struct RawSpec {
    /// Top-level `doc = "..."`.
    pub doc: Option<String>,
    /// Top-level `pdl = true|false`: the default of every node's `pdl`.
    pub pdl: Option<S<bool>>,
    /// Top-level `plan_memory = true|false`: whether buffers share the memory plan's arena.
    pub plan_memory: Option<S<bool>>,
    /// Top-level `resident = true`: the build also lowers the spec to one resident kernel.
    pub resident: Option<S<bool>>,
    /// `[kernels]`.
    pub kernels: Option<RawKernels>,
    /// `[dims]`, in file order.
    pub dims: Vec<RawDim>,
    /// `[buffers.*]`, in file order.
    pub buffers: Vec<RawBuffer>,
    /// `[scalars.*]`, in file order.
    pub scalars: Vec<RawScalar>,
    /// `[[node]]`, in file order.
    pub nodes: Vec<RawNode>,
    /// `[[while]]` and `[[if]]`, in file order.
    pub controls: Vec<RawControl>,
    /// `[[include]]`, in file order.
    pub includes: Vec<RawInclude>,
    /// Filled when the includes are spliced in (`super::include`): every file included, nested
    /// ones too. Empty as read.
    pub included: Vec<IncludedFile>,
}
