// #32.6: a communicator made from a bare NCCL id has no channel to the other ranks, so its
// collectives cannot be checked across ranks (counts, types, ops): `with_id` is `unsafe`, its
// caller promising matching arguments. `Communicator::new` checks them through the bootstrap.
use kgraph::nccl::{unique_id, Communicator};
use kgraph::Device;

fn main() {
    let dev = Device::new(0).unwrap();
    let _comm = Communicator::with_id(&dev, 0, 2, unique_id().unwrap());
}
