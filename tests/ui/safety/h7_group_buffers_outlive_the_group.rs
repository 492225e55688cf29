// H7: NCCL enqueues a group's collectives at `ncclGroupEnd`, after the closure returns, so a
// buffer made and dropped inside `Communicator::group` would be freed before the collective
// runs. The `Group` borrows its buffers for the whole `group` call: this must not compile.
use kgraph::nccl::{Communicator, ReduceOp};
use kgraph::Device;

fn main() {
    let dev = Device::new(0).unwrap();
    let comm = Communicator::single(&dev).unwrap();
    comm.group(|g| {
        let send = dev.alloc_zeros::<f32>(8)?;
        let mut recv = dev.alloc_zeros::<f32>(8)?;
        g.all_reduce(&send, &mut recv, ReduceOp::Sum)
    })
    .unwrap();
}
