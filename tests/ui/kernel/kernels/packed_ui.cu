// A file that packs its structs with a pragma (tests/ui/kernel/struct_refusals.rs): nvcc compiles
// `PackedPragma` as 5 bytes aligned to 1, so kgraph refuses every struct of the file rather than
// mirror one with C's default layout (8 bytes, `f` at offset 4). nvcc's preprocessed `.i` keeps
// the pragma, and the reader of the `.i` must see it there.
#pragma pack(push, 1)
struct PackedPragma { char c; float f; };
#pragma pack(pop)
extern "C" __global__ void packed_pragma(PackedPragma p, float* out) {}
