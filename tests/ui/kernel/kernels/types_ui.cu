// Kernels for the type compile-fail tests (tests/ui/kernel/type_*.rs, struct_*.rs). The root
// build compiles them too (so the cases see nvcc's record): `Mystery` is declared, never defined.
#include <cuda_fp16.h>

extern "C" __global__ void half_scale(const __half* x, __half a, int n, __half* y) {}

struct Mystery;
extern "C" __global__ void mystery(const Mystery* m, int n) {}

struct Empty {};
extern "C" __global__ void empty_struct(Empty e) {}

union Either { float f; int i; };
extern "C" __global__ void union_param(Either u) {}

struct Bits { int a : 3; int b : 5; };
extern "C" __global__ void bit_fields(Bits b) {}

struct Pair { float a; float b; };
extern "C" __global__ void pair_by_value(Pair p, float* out) {}

extern "C" __global__ void flags_ptr(const bool* flags, int n) {}

struct Flagged { float x; bool on; };
extern "C" __global__ void flagged(Flagged f, float* out) {}

// The layout nvcc compiles, read as nvcc does: an alignment attribute after the closing brace
// makes `Vec3A` 16 bytes (12 without it), and a function-pointer member is refused.
struct Vec3A { float x, y, z; } __attribute__((aligned(16)));
extern "C" __global__ void vec3a_by_value(Vec3A v, float* out) {}

struct WithCallback { float x; void (*cb)(int); };
extern "C" __global__ void with_callback(WithCallback w, float* out) {}

// Layouts kgraph refuses to mirror rather than guess (tests/ui/kernel/struct_refusals.rs): a
// packed struct, a plain enum one of whose values needs more than an `int` (C++ may make it
// wider), and a name defined twice in different scopes (kgraph reads no scopes, so it cannot tell
// which one a kernel takes). `#pragma pack` refuses every struct of its file: packed_ui.cu.
struct PackedAttr { char c; float f; } __attribute__((packed));
extern "C" __global__ void packed_attr(PackedAttr p, float* out) {}

enum WideEnum { WIDE_SMALL = 1, WIDE_BIG = 0x100000000 };
struct WithWide { WideEnum w; };
extern "C" __global__ void wide_enum(WithWide w, float* out) {}

struct Twice { float x; };
namespace twice_b { struct Twice { int y; double z; }; }
extern "C" __global__ void name_twice(Twice t, float* out) {}
