//! kgraph's procedural macros. Thin: the logic lives in `kgraph-codegen`, an ordinary library
//! crate, so it is unit-, snapshot- and property-tested without a compiler in the loop.
