//! NVTX ranges named after graph nodes (feature `nvtx`): the generated graph structs open one
//! around each eager node launch, each node's addition to a graph under construction, and each
//! replay, so Nsight Systems shows spec node names. Without the feature a range is a zero-sized
//! value and every call compiles to nothing.

/// An open NVTX range, closed when dropped.
#[derive(Debug)]
#[must_use = "the range closes when this value is dropped"]
pub struct Range {
    #[cfg(feature = "nvtx")]
    _range: cudarc::nvtx::safe::Range,
}

/// Opens a range named `name` (a no-op without the `nvtx` feature).
#[inline(always)]
pub fn range(name: &str) -> Range {
    #[cfg(feature = "nvtx")]
    {
        Range { _range: cudarc::nvtx::safe::scoped_range(name) }
    }
    #[cfg(not(feature = "nvtx"))]
    {
        let _ = name;
        Range {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_range_is_free_without_the_feature_and_nests_with_it() {
        let outer = super::range("outer");
        let inner = super::range("inner");
        drop(inner);
        drop(outer);
        #[cfg(not(feature = "nvtx"))]
        assert_eq!(std::mem::size_of::<super::Range>(), 0);
    }
}
