//! Integer expressions of declarations: extents (`x: &[f32; batch * n]`), `shared = <bytes>`
//! and the operands of `requires` conditions, over the kernel's scalar parameters, the launch's
//! shape (`grid.x` ... `block.z`) and literals. Re-exported by [`super::model`]; what they are
//! read from is `extent.rs`.

use proc_macro2::Span;

/// A binary operator of an extent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtentOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (truncating, as C does)
    Div,
    /// `%`
    Rem,
}

/// `min(a, b)` or `max(a, b)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtentFn {
    /// `min(a, b)`
    Min,
    /// `max(a, b)`
    Max,
}

/// An axis of a launch's grid or block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// `x`.
    X,
    /// `y`.
    Y,
    /// `z`.
    Z,
}

impl Axis {
    /// The axis's index in a `(x, y, z)` triple (`LaunchConfig::grid_dim`, `block_dim`).
    pub fn index(self) -> usize {
        match self {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        }
    }
}

/// Which of a launch's two shapes an extent names: `grid` (`gridDim` in C, blocks) or `block`
/// (`blockDim`, threads per block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchDim {
    /// `grid.x`, `grid.y`, `grid.z`.
    Grid,
    /// `block.x`, `block.y`, `block.z`.
    Block,
}

impl LaunchDim {
    /// `grid.x`, `block.z` and the like, as written.
    pub fn text(self, axis: Axis) -> &'static str {
        match (self, axis) {
            (LaunchDim::Grid, Axis::X) => "grid.x",
            (LaunchDim::Grid, Axis::Y) => "grid.y",
            (LaunchDim::Grid, Axis::Z) => "grid.z",
            (LaunchDim::Block, Axis::X) => "block.x",
            (LaunchDim::Block, Axis::Y) => "block.y",
            (LaunchDim::Block, Axis::Z) => "block.z",
        }
    }
}

/// An extent expression.
#[derive(Debug, Clone)]
pub enum ExtentExpr {
    /// An integer literal (no suffix).
    Int {
        /// Its value.
        value: u64,
        /// Where it is written.
        span: Span,
    },
    /// A parameter name (a scalar parameter, once checked).
    Name(syn::Ident),
    /// `grid.x` ... `block.z`: the launch's grid (blocks) or block (threads) size along an axis
    /// (counted as `int`: kernels copy `gridDim` and `blockDim` into `int`), taken from the launch's
    /// configuration: by the checked launch at run time, by `graph!` from the node's `grid` and
    /// `block` at compile time.
    Launch {
        /// Grid or block.
        dim: LaunchDim,
        /// Which axis.
        axis: Axis,
        /// Where it is written.
        span: Span,
    },
    /// `lhs op rhs`.
    Binary {
        /// The operator.
        op: ExtentOp,
        /// Left operand.
        lhs: Box<ExtentExpr>,
        /// Right operand.
        rhs: Box<ExtentExpr>,
    },
    /// `min(a, b)` or `max(a, b)`.
    Call {
        /// Which.
        func: ExtentFn,
        /// First argument.
        a: Box<ExtentExpr>,
        /// Second argument.
        b: Box<ExtentExpr>,
    },
}

/// A pointer parameter's extent as declared.
#[derive(Debug, Clone)]
pub struct Extent {
    /// The expression.
    pub expr: ExtentExpr,
    /// The expression as written (`batch * n_hid`), for messages and docs.
    pub text: String,
    /// The span of the expression.
    pub span: Span,
}

impl ExtentOp {
    /// The operator's spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            ExtentOp::Add => "+",
            ExtentOp::Sub => "-",
            ExtentOp::Mul => "*",
            ExtentOp::Div => "/",
            ExtentOp::Rem => "%",
        }
    }
}

impl ExtentExpr {
    /// Every name the expression uses, in order (with repeats).
    pub fn names(&self) -> Vec<&syn::Ident> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let ExtentExpr::Name(name) = e {
                out.push(name);
            }
        });
        out
    }

    /// `grid.x` ... `block.z` as the expression uses them, in order (with repeats).
    pub fn launch_names(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let ExtentExpr::Launch { dim, axis, .. } = e {
                out.push(dim.text(*axis));
            }
        });
        out
    }

    /// Whether the expression names the launch's shape (`grid.x` ... `block.z`).
    pub fn uses_launch(&self) -> bool {
        self.uses(|_| true)
    }

    /// Whether the expression names the launch's grid (`grid.x`, `grid.y`, `grid.z`).
    pub fn uses_grid(&self) -> bool {
        self.uses(|dim| dim == LaunchDim::Grid)
    }

    fn uses(&self, which: impl Fn(LaunchDim) -> bool) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= matches!(e, ExtentExpr::Launch { dim, .. } if which(*dim)));
        found
    }

    /// Every literal the expression uses, with its span.
    pub fn literals(&self) -> Vec<(u64, Span)> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let ExtentExpr::Int { value, span } = e {
                out.push((*value, *span));
            }
        });
        out
    }

    fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a ExtentExpr)) {
        f(self);
        match self {
            ExtentExpr::Int { .. } | ExtentExpr::Name(_) | ExtentExpr::Launch { .. } => {}
            ExtentExpr::Binary { lhs, rhs, .. } => {
                lhs.visit(f);
                rhs.visit(f);
            }
            ExtentExpr::Call { a, b, .. } => {
                a.visit(f);
                b.visit(f);
            }
        }
    }
}
