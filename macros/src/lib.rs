//! kgraph's procedural macros. Thin: the logic lives in `kgraph-codegen`, an ordinary library
//! crate, so it is unit-, snapshot- and property-tested without a compiler in the loop.

use proc_macro::TokenStream;

/// Binds one CUDA kernel: `#[kernel("file.cu")] pub fn name(x: &[f32], n: i32, y: &mut [f32]);`.
///
/// The declaration is checked against `kernels/file.cu` (or the same name in `$KGRAPH_KERNEL_DIR`,
/// or in any folder the build script compiled, `$KGRAPH_KERNEL_DIRS`) at
/// compile time, and becomes a handle struct named in UpperCamelCase (`Name`) with a typed
/// `launch(&self, stream, cfg, ...)`. Parameters: `&[T]` (kernel `const T*`), `&mut [T]`
/// (`T*`), `T` by value, `Pinned<T>` (`const T*` into mapped pinned memory), `PinnedMut<T>`
/// (`T*` into mapped pinned memory the kernel writes), with T a number type (f32 f64 i8 u8 i16
/// u16 i32 u32 i64 u64), `f16`, `bf16`, a CUDA vector type (`Float4`, `Half2`, ...), `bool` (by
/// value) or a `#[derive(DeviceStruct)]` struct, whose layout is checked against the kernel's C
/// struct. `name = "symbol"` binds a differently named kernel.
///
/// Extents (`x: &[f32; n]`) with `unsafe(extents)` in the attribute make `launch` safe. That is
/// the kernel author's promise, for any scalar arguments and any launch whose block is within the
/// kernel's bound (its `__launch_bounds__`, or `max_block = <threads>` in the attribute), that
/// the kernel accesses each pointer only within its extent, writes nothing through a read-only
/// parameter (`&[T]`, `Pinned<T>`), keeps its shared memory accesses in bounds, and accesses its
/// module's `__device__` variables free of races with concurrent launches of the module's
/// kernels (docs/safety.md has the full text). `shared = <bytes>` states its dynamic shared
/// memory. A kernel with static `__shared__` arrays and no `__launch_bounds__` must declare
/// `max_block` (checked at every launch and by `graph!`); a kernel taking texture/surface
/// objects or structs holding pointers cannot make the promise and keeps an `unsafe` launch.
///
/// Parameter names are checked against the `.cu`'s (ignoring case and underscores): a differing
/// name is a compile error, two parameters in each other's place are reported as a swap. A
/// deliberate rename is written in the attribute, Rust name first:
/// `#[kernel("norm.cu", rename(n = num_tokens))]`. A declaration with errors still defines its
/// handle as a stub with every item, so code using it reports nothing further.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let config = kgraph_codegen::Config::from_env();
    kgraph_codegen::expand_kernel(attr.into(), item.into(), &config).into()
}

/// A registry of kernels: on an inline module of `#[kernel]` declarations, generates each
/// handle plus `Kernels { <name>: <Handle>, ... }` with `Kernels::load(&device)`, loading each
/// `.cu` module once.
#[proc_macro_attribute]
pub fn kernels(attr: TokenStream, item: TokenStream) -> TokenStream {
    let config = kgraph_codegen::Config::from_env();
    kgraph_codegen::expand_kernels(attr.into(), item.into(), &config).into()
}

/// Turns a TOML graph spec into a graph struct: `kgraph::graph!("graphs/perception.toml");`
/// (path relative to the crate root; `graph!("x.toml", name = MyGraph)` overrides the struct
/// name, which defaults to the file stem in UpperCamelCase).
///
/// The spec is validated at compile time against the kernels' `#[kernel]` declarations (every
/// error with the TOML `file:line:col`), and the struct owns the buffers, launches the nodes
/// eagerly (`run_eager`) or as a captured CUDA graph with parallel branches (`capture`,
/// `replay`), and updates scalars between replays without re-capture. See `docs/graph-spec.md`.
#[proc_macro]
pub fn graph(input: TokenStream) -> TokenStream {
    kgraph_codegen::graph::expand(input.into()).into()
}

/// Makes a `#[repr(C)]` struct a kernel argument: `#[derive(bytemuck::Pod, bytemuck::Zeroable,
/// Clone, Copy, kgraph::DeviceStruct)]`. It requires `bytemuck::Pod` (no padding, `Pod` fields)
/// and implements `kgraph::Pod`, cudarc's `DeviceRepr` and `ValidAsZeroBits`, and
/// `kgraph::DeviceStruct` (the layout `#[kernel]` checks against the kernel's C struct).
#[proc_macro_derive(DeviceStruct)]
pub fn device_struct(input: TokenStream) -> TokenStream {
    kgraph_codegen::derive_device_struct(input.into()).into()
}
