//! Must fail to compile: `repeat = 4` over a spec with a `[[while]]` of its own (conditional
//! bodies do not nest). The error is in the spec's own file, at the `[[while]]`, and names
//! `repeat` (it once pointed past the file's end, at text the macro had appended).

kgraph::graph!("tests/ui/graph/valid/repeat_over_a_loop.toml", name = Looped, repeat = 4);

fn main() {}
