//! kgraph's macro logic as an ordinary library.
