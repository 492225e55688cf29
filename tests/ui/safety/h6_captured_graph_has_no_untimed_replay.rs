// H6: a graph struct's `graph()` lends a `CapturedGraph`, which has no untimed `replay`: one
// there would run behind the struct's bookkeeping of launches in flight, and a later
// `write_*` would form `&mut [T]` over pinned memory the replay is reading.
fn replay_behind_the_struct(graph: kgraph::expert::CapturedGraph<'_>) {
    graph.replay().unwrap();
}

fn main() {}
