//! A kernel with static shared memory and no `__launch_bounds__` states its block bound in the
//! declaration (`max_block = 128`, issue #32 item 4): its checked launch refuses a bigger block
//! with `LaunchError::BlockTooLarge` before the driver sees it (a block of 1024 threads would
//! write past the kernel's `__shared__ float[128]`), counting all three dimensions, and runs
//! blocks within the bound. Kernel: `tests/kernels/test_block_bound.cu`.

use kgraph::{Error, LaunchConfig, LaunchError};

use super::common::device;

/// `out[b]` = the threads of block `b` whose index is below `n` (one `__shared__` slot each).
#[kgraph::kernel("test_block_bound.cu", unsafe(extents), max_block = 128)]
fn kb_count_tile(n: i32, n_blocks: i32, out: &mut [f32; n_blocks]);

const POISON: f32 = -7.25;

fn cfg(grid: u32, block: (u32, u32, u32)) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid, 1, 1), block_dim: block, shared_mem_bytes: 0 }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn blocks_beyond_the_declared_bound_are_refused() {
    let dev = device();
    let k = KbCountTile::new(&dev).unwrap();
    assert_eq!(KbCountTile::MAX_THREADS, Some(128), "max_block = 128 is the handle's bound");
    let mut out = dev.upload(&[POISON; 4]).unwrap();
    for block in [(1024, 1, 1), (129, 1, 1), (64, 4, 1), (32, 2, 4)] {
        let threads = block.0 * block.1 * block.2;
        match k.launch(dev.stream(), cfg(4, block), 4 * threads as i32, 4, &mut out) {
            Err(Error::Launch(LaunchError::BlockTooLarge {
                kernel: "kb_count_tile",
                block: b,
                bound: 128,
                file,
                line,
            })) => {
                assert_eq!(b, threads, "{block:?}");
                assert!(file.ends_with("block_bound.rs") && line > 0, "the declaration's place: {file}:{line}");
            }
            other => panic!("block {block:?}: expected LaunchError::BlockTooLarge, got {other:?}"),
        }
    }
    assert!(dev.download(&out).unwrap().iter().all(|&v| v == POISON), "a refused launch wrote");
    // Within the bound: 128 threads in one dimension or two, and the handle's own config.
    for block in [(128, 1, 1), (32, 4, 1)] {
        k.launch(dev.stream(), cfg(4, block), 4 * 128 - 5, 4, &mut out).unwrap();
        assert_eq!(dev.download(&out).unwrap(), [128.0, 128.0, 128.0, 123.0], "block {block:?}");
    }
    let auto = k.cfg_for(300);
    assert_eq!(auto.block_dim, (128, 1, 1), "cfg_for stays within max_block");
}
