//! What nvcc compiled: the `<stem>.kernels` record and `<stem>.i` preprocessed source of each
//! kernel file, on scratch folders with real nvcc. Covers parameter layouts, linkage and
//! mangling, launch bounds, the PDL instructions, preprocessor traps that a reading of the
//! source gets wrong, the build's `-D`/`-I` flags, and caching of the new files.

use std::path::{Path, PathBuf};
use std::time::Instant;

use kgraph_build::{BuildError, BuildReport, KernelBuild, KernelRecord, ParamRecord};

fn nvcc() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    kgraph_build::find_nvcc(here)
        .unwrap_or_else(|| panic!("these tests need nvcc: {}", kgraph_build::HOW_TO_GET_NVCC))
        .path
}

/// A fresh scratch root (removed when the guard drops) with its `kernels/` and `out/`.
fn scratch(name: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::Builder::new().prefix(&format!("kgraph-records-{name}-")).tempdir().unwrap();
    let (src, out) = (root.path().join("kernels"), root.path().join("out"));
    std::fs::create_dir_all(&src).unwrap();
    (root, src, out)
}

/// What [`compile`] built; the scratch root lives as long as this.
struct Compiled {
    report: BuildReport,
    records: Vec<KernelRecord>,
    _root: tempfile::TempDir,
}

fn builder(src: &Path, out: &Path) -> KernelBuild {
    KernelBuild::new().kernel_dir(src).out_dir(out).archs(["sm_90"]).nvcc(nvcc()).emit_cargo_directives(false)
}

/// Builds one file `<stem>.cu` with `configure` applied; returns the report and the records,
/// after checking the record on disk says the same as the report.
fn compile(name: &str, source: &str, configure: impl FnOnce(KernelBuild) -> KernelBuild) -> Compiled {
    let (root, src, out) = scratch(name);
    std::fs::write(src.join(format!("{name}.cu")), source).unwrap();
    let report = configure(builder(&src, &out)).run().unwrap_or_else(|e| panic!("{name}.cu did not build:\n{e}"));
    let outputs = &report.outputs[0];
    assert_eq!(outputs.record, out.join(format!("{name}.kernels")));
    let text = std::fs::read_to_string(&outputs.record).unwrap();
    assert!(text.starts_with("kgraph-kernels 1\ntarget sm_90\n"), "{text}");
    assert_eq!(kgraph_build::parse_kernel_record(&text).unwrap(), outputs.kernels, "{text}");
    let records = outputs.kernels.clone();
    Compiled { report, records, _root: root }
}

fn kernel<'a>(records: &'a [KernelRecord], name: &str) -> &'a KernelRecord {
    records
        .iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("no entry {name} in {:?}", records.iter().map(|k| &k.name).collect::<Vec<_>>()))
}

/// `(ptx type, size, align, array)` of each parameter.
fn layout(k: &KernelRecord) -> Vec<(&str, u32, u32, Option<u32>)> {
    k.params.iter().map(|p: &ParamRecord| (p.ptx_type.as_str(), p.size, p.align, p.array)).collect()
}

/// 1-based line of the first line of `source` containing `needle`.
fn line_of(source: &str, needle: &str) -> u32 {
    source.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("no {needle}")) as u32 + 1
}

const PARAMS: &str = "struct __align__(16) S48 { float v[12]; };
struct G { float a; double b; int c[5]; };
extern \"C\" __global__ void ext(float* x, int n, double d, S48 s,
                               const __grid_constant__ G g) {
  x[n] = s.v[3] + (float)d + g.a + g.c[4];
}
";

#[test]
fn extern_c_parameters_have_their_compiled_size_and_alignment() {
    let records = compile("params", PARAMS, |b| b).records;
    assert_eq!(records.len(), 1);
    let k = kernel(&records, "ext");
    assert!(k.visible);
    assert_eq!(
        layout(k),
        [
            ("u64", 8, 8, None),      // float*: nvcc 13 at -O3 writes no .ptr annotation
            ("u32", 4, 4, None),      // int
            ("f64", 8, 8, None),      // double
            ("b8", 48, 16, Some(48)), // S48 by value, __align__(16)
            ("b8", 40, 8, Some(40)),  // G as __grid_constant__: 4 + 4 pad + 8 + 20 + 4 pad
        ]
    );
    assert!(k.params.iter().all(|p| p.ptr_space.is_none()));
    assert_eq!(k.line, Some(line_of(PARAMS, "void ext(")));
    assert!(k.file.as_deref().is_some_and(|f| f.ends_with("params.cu")), "{:?}", k.file);
    assert_eq!((k.max_threads, k.pdl_wait, k.pdl_trigger, k.calls), (None, false, false, false));
}

#[test]
fn cpp_linkage_and_template_instances_are_mangled() {
    let source = "__global__ void cpp_k(float* x, int n) { x[n] = 1.0f; }
template <typename T> __global__ void tk(T* x, int n) { x[n] = T(1); }
template __global__ void tk<float>(float*, int);
template __global__ void tk<double>(double*, int);
static __global__ void hidden(float* x) { x[0] = 3; }
void* keep_hidden() { return (void*)hidden; }
";
    let records = compile("mangled", source, |b| b).records;
    let names: Vec<&str> = records.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["_Z5cpp_kPfi", "_Z2tkIfEvPT_i", "_Z2tkIdEvPT_i", "_Z6hiddenPf"]);
    assert!(records[..3].iter().all(|k| k.visible));
    assert!(!records[3].visible, "a static kernel is an internal .entry");
    assert_eq!(layout(&records[2]), [("u64", 8, 8, None), ("u32", 4, 4, None)]);
}

#[test]
fn launch_bounds_and_cluster_dims_are_recorded_as_compiled() {
    let source = "extern \"C\" __global__ void __launch_bounds__(128) lb(float* x) { x[threadIdx.x] = 0; }
extern \"C\" __global__ void __launch_bounds__(256, 2) lb2(float* x) { x[threadIdx.x] = 0; }
extern \"C\" __global__ void __launch_bounds__(BLOCK) lb3(float* x) { x[threadIdx.x] = 0; }
extern \"C\" __global__ void __cluster_dims__(DIMS) clus(float* x) { x[0] = 3; }
extern \"C\" __global__ void free_k(float* x) { x[0] = 3; }
";
    // A value with commas reaches nvcc whole (nvcc splits -D at unescaped commas).
    let records = compile("bounds", source, |b| b.define_value("BLOCK", "64").define_value("DIMS", "2,1,1")).records;
    assert_eq!(kernel(&records, "lb").max_threads, Some(128));
    let lb2 = kernel(&records, "lb2");
    assert_eq!((lb2.max_threads, lb2.min_blocks_per_sm), (Some(256), Some(2)));
    assert_eq!(kernel(&records, "lb3").max_threads, Some(64));
    assert_eq!(kernel(&records, "clus").cluster_dims, Some([2, 1, 1]));
    let free = kernel(&records, "free_k");
    assert_eq!((free.max_threads, free.min_blocks_per_sm, free.cluster_dims), (None, None, None));
}

#[test]
fn static_shared_arrays_are_recorded_per_kernel() {
    let source = "__device__ float helper(float v) { __shared__ float h[64]; h[threadIdx.x] = v; __syncthreads(); return h[0]; }
extern \"C\" __global__ void tile(float* out) { __shared__ float t[128]; t[threadIdx.x] = 1; __syncthreads(); out[0] = t[5]; }
extern \"C\" __global__ void via_helper(float* out) { out[0] = helper(out[1]); }
extern \"C\" __global__ void via_helper_too(float* out) { out[1] = helper(out[2]); }
extern \"C\" __global__ void dynamic(float* out) { extern __shared__ float d[]; d[threadIdx.x] = 1; out[0] = d[0]; }
extern \"C\" __global__ void none(float* out) { out[0] = 1; }
";
    let records = compile("static_shared", source, |b| b).records;
    let arrays = |name: &str| -> Vec<(String, u64)> {
        kernel(&records, name).static_shared.iter().map(|a| (a.symbol.clone(), a.size)).collect()
    };
    assert_eq!(arrays("tile"), [("_ZZ4tileE1t".to_string(), 512)]);
    // Inlined into two kernels: one module-scope array both name.
    assert_eq!(arrays("via_helper"), arrays("via_helper_too"));
    assert_eq!(arrays("via_helper").iter().map(|a| a.1).collect::<Vec<_>>(), [256]);
    assert!(arrays("dynamic").is_empty() && kernel(&records, "dynamic").dyn_smem);
    assert!(arrays("none").is_empty());
}

#[test]
fn pdl_instructions_are_found_in_bodies_inlined_code_and_called_functions() {
    let source = "#include <cuda_runtime.h>
__device__ __forceinline__ void enter() { asm volatile(\"griddepcontrol.wait;\" ::: \"memory\"); }
__device__ __noinline__ void helper(float* x) { asm volatile(\"griddepcontrol.wait;\" ::: \"memory\"); x[1] = 2; }
extern \"C\" __global__ void waits(float* x) { asm volatile(\"griddepcontrol.wait;\" ::: \"memory\"); x[0] = 1; }
extern \"C\" __global__ void plain(float* x) { x[0] = 1; /* griddepcontrol.wait; is only a comment */ }
extern \"C\" __global__ void both(float* x) {
  asm volatile(\"griddepcontrol.launch_dependents;\");
  enter();
  x[0] = 1;
}
extern \"C\" __global__ void runtime_api(float* x) {
  cudaGridDependencySynchronize();
  x[0] = 1;
  cudaTriggerProgrammaticLaunchCompletion();
}
extern \"C\" __global__ void via_call(float* x) { helper(x); }
";
    let records = compile("pdl", source, |b| b).records;
    let flags = |name| {
        let k = kernel(&records, name);
        (k.pdl_wait, k.pdl_trigger, k.calls)
    };
    assert_eq!(flags("waits"), (true, false, false));
    assert_eq!(flags("plain"), (false, false, false));
    assert_eq!(flags("both"), (true, true, false), "an inlined device function is part of the body");
    // cuda_device_runtime_api.h implements both with the same inline asm.
    assert_eq!(flags("runtime_api"), (true, true, false));
    assert_eq!(flags("via_call"), (true, false, true), "the wait is in a .func the entry calls");
    let call = &kernel(&records, "via_call").callees;
    assert_eq!(call.len(), 1);
    assert_eq!((call[0].name.as_deref(), call[0].defined), (Some("_Z6helperPf"), true));
}

/// `pdl_wait_first`: an unguarded wait before anything that touches memory or branches, as nvcc
/// compiles it (the asm's "memory" clobber keeps memory accesses on their side of it).
#[test]
fn a_first_wait_is_proven_only_before_any_access_branch_or_call() {
    let source = "#include <cuda_runtime.h>
#define WAIT() asm volatile(\"griddepcontrol.wait;\" ::: \"memory\")
__device__ __forceinline__ void enter() {
  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");
  WAIT();
}
__device__ __noinline__ void helper(float* x) { x[2] = 3; }
extern \"C\" __global__ void first(float* x, int n) { WAIT(); x[threadIdx.x % n] = 1; }
extern \"C\" __global__ void enter_pattern(float* x, int n) {
  enter();
  if (threadIdx.x < n) x[threadIdx.x] += 1;
}
extern \"C\" __global__ void runtime_api(float* x) { cudaGridDependencySynchronize(); x[0] = 1; }
extern \"C\" __global__ void load_first(float* x) { float v = x[0]; WAIT(); x[1] = v; }
extern \"C\" __global__ void store_first(float* x) { x[0] = 1; WAIT(); x[1] = 2; }
extern \"C\" __global__ void branch_first(float* x, int n) {
  if (n > 3) { x[0] = 1; }
  WAIT();
  x[1] = 2;
}
extern \"C\" __global__ void guarded_wait(float* x, int n) { if (threadIdx.x < n) WAIT(); x[1] = 2; }
extern \"C\" __global__ void call_first(float* x) { helper(x); WAIT(); x[1] = 2; }
extern \"C\" __global__ void no_wait(float* x) { x[1] = 2; }
";
    let records = compile("wait_first", source, |b| b).records;
    let first = |name| {
        let k = kernel(&records, name);
        (k.pdl_wait, k.pdl_wait_first)
    };
    for name in ["first", "enter_pattern", "runtime_api"] {
        assert_eq!(first(name), (true, true), "{name}");
    }
    for name in ["load_first", "store_first", "branch_first", "guarded_wait", "call_first"] {
        assert_eq!(first(name), (true, false), "{name}");
    }
    assert_eq!(first("no_wait"), (false, false));
}

const PRECISION: &str = "#ifdef USE_DOUBLE
typedef double real;
#else
typedef float real;
#endif
extern \"C\" __global__ void scale(real* x, real a, int n) { if (threadIdx.x < n) x[threadIdx.x] *= a; }
";

#[test]
fn ifdef_parameters_follow_the_builds_defines() {
    let records = compile("precision", PRECISION, |b| b).records;
    assert_eq!(layout(kernel(&records, "scale"))[1], ("f32", 4, 4, None));
    let records = compile("precision", PRECISION, |b| b.define("USE_DOUBLE")).records;
    assert_eq!(layout(kernel(&records, "scale"))[1], ("f64", 8, 8, None));
}

const OLD_AND_NEW: &str = "#if 0
extern \"C\" __global__ void step(float* x, int n, float dt) { x[0] = dt; }
#endif
extern \"C\" __global__ void step(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 0; }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
extern \"C\" __global__ void arch_new(float* x) { x[0] = 9; }
#else
extern \"C\" __global__ void arch_old(float* x) { x[0] = 8; }
#endif
";

#[test]
fn dead_preprocessor_branches_compile_to_nothing() {
    let Compiled { report, records, _root } = compile("branches", OLD_AND_NEW, |b| b);
    let names: Vec<&str> = records.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["step", "arch_new"], "#if 0 and the pre-sm_90 branch are gone");
    assert_eq!(records[0].params.len(), 2, "the live step has two parameters");
    assert_eq!(records[0].line, Some(line_of(OLD_AND_NEW, "int n) {")));
    let i = std::fs::read_to_string(&report.outputs[0].preprocessed).unwrap();
    assert!(i.contains("arch_new") && !i.contains("arch_old") && !i.contains("float dt"));
}

const UNARY: &str = "#define UNARY(name, expr) \\
  extern \"C\" __global__ void name(const float* x, float* y, int n) { \\
    int i = blockIdx.x * blockDim.x + threadIdx.x; \\
    if (i < n) { float v = x[i]; y[i] = (expr); } \\
  }
UNARY(relu, v > 0.f ? v : 0.f)
UNARY(square, v * v)
UNARY(negate, -v)
";

#[test]
fn macro_generated_kernels_are_each_an_entry() {
    let records = compile("unary", UNARY, |b| b).records;
    let names: Vec<&str> = records.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["relu", "square", "negate"]);
    for k in &records {
        assert_eq!(layout(k), [("u64", 8, 8, None), ("u64", 8, 8, None), ("u32", 4, 4, None)]);
        // The line is where the macro is used.
        assert_eq!(k.line, Some(line_of(UNARY, &format!("UNARY({},", k.name))), "{}", k.name);
    }
}

#[test]
fn the_preprocessed_source_maps_back_to_the_cu_file() {
    let (_root, src, out) = scratch("mapping");
    std::fs::write(src.join("defs.cuh"), "// a header\n#define TWICE(v) (2.f * (v))\n").unwrap();
    let source = format!("#include \"defs.cuh\"\n\n// padding\n{PARAMS}");
    std::fs::write(src.join("mapping.cu"), &source).unwrap();
    let report = builder(&src, &out).run().unwrap();
    let i = std::fs::read_to_string(out.join("mapping.i")).unwrap();
    assert_eq!(report.outputs[0].preprocessed, out.join("mapping.i"));
    let at = i.lines().position(|l| l.contains("void ext(")).expect("ext in the .i") + 1;
    let origin = kgraph_build::original_line(&i, at).expect("a line marker above ext");
    assert!(origin.file.ends_with("mapping.cu"), "{origin:?}");
    assert_eq!(origin.line, line_of(&source, "void ext("));
    eprintln!("mapping.i: {} bytes, {} lines", i.len(), i.lines().count());
}

#[test]
fn include_dirs_and_defines_reach_the_compile_and_the_cache_key() {
    let (_root, src, out) = scratch("flags");
    let inc = src.parent().unwrap().join("third_party");
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(inc.join("width.h"), "#define WIDTH 128\n").unwrap();
    let source =
        "#include <width.h>\nextern \"C\" __global__ void __launch_bounds__(WIDTH) w(float* x) { x[0] = WIDTH; }\n";
    std::fs::write(src.join("flags.cu"), source).unwrap();
    let build = || builder(&src, &out).include_dir(&inc).run().unwrap();
    assert_eq!(build().outputs[0].kernels[0].max_threads, Some(128));
    assert!(build().compiled.is_empty());
    std::fs::write(inc.join("width.h"), "#define WIDTH 64\n").unwrap();
    let again = build();
    assert_eq!(again.compiled.len(), 1, "a header edit in an include folder rebuilds");
    assert_eq!(again.outputs[0].kernels[0].max_threads, Some(64));

    let err = builder(&src, &out).include_dir(src.join("nope")).run().unwrap_err();
    assert!(matches!(&err, BuildError::MissingIncludeDir { dir } if dir == &src.join("nope")), "{err:?}");
    let err = builder(&src, &out).define("A B").run().unwrap_err();
    assert!(matches!(&err, BuildError::BadDefine { name } if name == "A B"), "{err:?}");
}

#[test]
fn records_are_cached_with_the_cubin_and_a_missing_one_rebuilds() {
    let (_root, src, out) = scratch("cache");
    std::fs::write(src.join("a.cu"), PARAMS).unwrap();
    let first = builder(&src, &out).run().unwrap();
    assert_eq!(first.compiled.len(), 1);
    let cached = builder(&src, &out).run().unwrap();
    assert!(cached.compiled.is_empty());
    assert_eq!(cached.outputs[0].kernels, first.outputs[0].kernels, "cached records are read back");
    assert!(!cached.outputs[0].compiled);
    for gone in ["a.kernels", "a.i", "a.ptx"] {
        std::fs::remove_file(out.join(gone)).unwrap();
        let rebuilt = builder(&src, &out).run().unwrap();
        assert_eq!(rebuilt.compiled.len(), 1, "missing {gone} makes the cubin stale");
        assert!(out.join(gone).is_file());
    }
    std::fs::write(out.join("a.kernels"), "garbage\n").unwrap();
    assert_eq!(builder(&src, &out).run().unwrap().compiled.len(), 1, "an unreadable record rebuilds");
    assert!(!out.join("a.keep").exists(), "nvcc's keep folder is removed");

    let fallback = KernelBuild::new().kernel_dir(&src).out_dir(&out).without_nvcc().require_nvcc(false);
    let report = fallback.emit_cargo_directives(false).run().unwrap();
    assert!(report.nvrtc_fallback && report.outputs.is_empty());
    for gone in ["a.kernels", "a.i", "a.ptx", "a.stamp"] {
        assert!(!out.join(gone).exists(), "the NVRTC fallback leaves no {gone}");
    }
}

#[test]
fn several_archs_record_the_first() {
    let (_root, src, out) = scratch("archs");
    std::fs::write(src.join("a.cu"), OLD_AND_NEW).unwrap();
    let report = builder(&src, &out).archs(["sm_80", "sm_90"]).run().unwrap();
    let text = std::fs::read_to_string(out.join("a.kernels")).unwrap();
    assert!(text.starts_with("kgraph-kernels 1\ntarget sm_80\n"), "{text}");
    let names: Vec<&str> = report.outputs[0].kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["step", "arch_old"], "the sm_80 compile's view");
}

#[test]
fn incremental_rebuild_of_one_file_is_timed() {
    let (_root, src, out) = scratch("timing");
    std::fs::write(src.join("a.cu"), PRECISION).unwrap();
    std::fs::write(src.join("b.cu"), UNARY).unwrap();
    let t = Instant::now();
    builder(&src, &out).run().unwrap();
    let full = t.elapsed();
    std::fs::write(src.join("b.cu"), format!("{UNARY}UNARY(ident, v)\n")).unwrap();
    let t = Instant::now();
    let report = builder(&src, &out).run().unwrap();
    let one = t.elapsed();
    assert_eq!(report.compiled.len(), 1);
    eprintln!("two files from scratch: {full:?}; one edited file rebuilt (cubin, .ptx, .i, .kernels): {one:?}");
}

#[test]
fn keeping_the_intermediates_does_not_change_the_cubin() {
    let (_root, src, out) = scratch("identical");
    std::fs::write(src.join("a.cu"), PARAMS).unwrap();
    builder(&src, &out).run().unwrap();
    // The build's flags (nvcc::args) without `-keep -keep-dir`.
    let plain = out.join("plain.cubin");
    let status = std::process::Command::new(nvcc())
        .args(["-cubin", "-arch=sm_90", "-O3", "-lineinfo", "-std=c++17", "-Xptxas=-v"])
        .arg(format!("-I{}", src.display()))
        .arg("-o")
        .args([&plain, &src.join("a.cu")])
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    assert!(std::fs::read(out.join("a.cubin")).unwrap() == std::fs::read(&plain).unwrap(), "-keep changed the cubin");
}

/// The workspace's own kernel folders (the reference model's, the GPU suite's, the benches').
fn workspace_kernel_dirs() -> [PathBuf; 3] {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    [root.join("kernels"), root.join("tests/kernels"), root.join("examples/bench/kernels")]
}

#[test]
fn records_of_the_workspace_kernels_agree_with_ptxas() {
    let [main, tests, bench] = workspace_kernel_dirs();
    let (_root, _, out) = scratch("workspace");
    let t = Instant::now();
    let report = builder(&main, &out).add_kernel_dir(&tests).add_kernel_dir(&bench).run().unwrap();
    eprintln!("workspace kernels, {} files from scratch: {:?}", report.compiled.len(), t.elapsed());
    let mut entries = 0;
    for o in &report.outputs {
        let mut recorded: Vec<&str> = o.kernels.iter().map(|k| k.name.as_str()).collect();
        let stem = o.source.file_stem().unwrap().to_string_lossy();
        let ptxas = std::fs::read_to_string(out.join(format!("{stem}.resources.txt"))).unwrap();
        let reported: Vec<String> = kgraph_build::parse_ptxas_report(&ptxas).into_iter().map(|k| k.kernel).collect();
        let mut reported: Vec<&str> = reported.iter().map(String::as_str).collect();
        recorded.sort();
        reported.sort();
        assert_eq!(recorded, reported, "{}: the record and ptxas list different entries", o.source.display());
        let source = o.source.display().to_string();
        for k in &o.kernels {
            assert_eq!(k.file.as_deref(), Some(source.as_str()), "{}", k.name);
            assert!(k.line.is_some() && k.params.iter().all(|p| p.size > 0 && p.align > 0), "{k:?}");
        }
        entries += o.kernels.len();
    }
    assert!(entries >= 50, "{entries} entries");
    // Every model kernel that waits (`kg_pdl_enter()`) waits first: the memory plan of the model's
    // PDL graphs rests on it.
    let model: Vec<&KernelRecord> =
        report.outputs.iter().filter(|o| o.source.starts_with(&main)).flat_map(|o| &o.kernels).collect();
    let waiting: Vec<&str> = model.iter().filter(|k| k.pdl_wait).map(|k| k.name.as_str()).collect();
    let not_first: Vec<&str> =
        model.iter().filter(|k| k.pdl_wait && !k.pdl_wait_first).map(|k| k.name.as_str()).collect();
    assert!(
        waiting.len() >= 30 && not_first.is_empty(),
        "{} model kernels wait; not first: {not_first:?}",
        waiting.len()
    );
    eprintln!("{} model kernels wait, all first", waiting.len());
    let heads = report.outputs.iter().find(|o| o.source.ends_with("heads.cu")).unwrap();
    let k = &heads.kernels[0];
    assert_eq!(
        (k.name.as_str(), k.max_threads, k.pdl_wait, k.pdl_trigger),
        ("multi_horizon_heads", Some(128), true, true)
    );
    eprintln!("heads.i: {} bytes", std::fs::metadata(&heads.preprocessed).unwrap().len());
}
