// H10: a whole-graph update copies the rebuilt graph's nodes, with their raw addresses, into the
// executable graph, whose replays the rebuilt builder's promises never covered: `unsafe`, like
// adding a child graph.
use kgraph::{expert::GraphBuilder, Graph};

fn update(graph: &mut Graph, rebuilt: GraphBuilder<'static>) -> kgraph::Result<()> {
    graph.update_from(rebuilt, "update")
}

fn main() {
    let _ = update;
}
