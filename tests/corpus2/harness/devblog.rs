//! NVIDIA developer-blog samples (LSTM cell, shuffle reductions, finite differences): filled by part B.
