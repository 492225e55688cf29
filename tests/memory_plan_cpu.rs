//! The model graphs' memory plans as `graph!` makes them by default, no GPU needed: every kernel
//! of the PDL specs is proven by its compiled record to wait first (`pdl_wait_first`: it enters
//! through `kg_pdl_enter()`), so the default structs of `src/graphs.rs` plan exactly what the
//! `unsafe(pdl_waits_first)` promise plans (`tests/gpu/memory_plan.rs` runs both on the GPU).

use kgraph_model::graphs::{Perception, PpoUpdate, PpoUpdateLoop, TrainStep, TrainSteps100};

/// The kernel modules at the paths the specs name (`crate::model::kernels`, `crate::ppo::kernels`).
mod model {
    pub use kgraph_model::model::kernels;
}
mod ppo {
    pub use kgraph_model::ppo::kernels;
}

// SAFETY (each `unsafe(pdl_waits_first)` below): every kernel of these specs begins with
// `kg_pdl_enter()` (kernels/model_common.cuh: `griddepcontrol.launch_dependents`, then
// `griddepcontrol.wait`) before it reads or writes any buffer.
kgraph::graph!("graphs/train_step.toml", name = TrainStepPromised, unsafe(pdl_waits_first));
kgraph::graph!("graphs/ppo_update.toml", name = PpoUpdatePromised, unsafe(pdl_waits_first));
kgraph::graph!("graphs/ppo_update.toml", name = PpoUpdateLoopPromised, repeat = 32, unsafe(pdl_waits_first));
kgraph::graph!("graphs/perception.toml", name = PerceptionPromised, unsafe(pdl_waits_first));
kgraph::graph!("graphs/train_step.toml", name = TrainStepUnplanned, plan_memory = false);

// Checked at compile time: the default structs share an arena.
const _: () = {
    assert!(TrainStep::PLANNED_BYTES > 0 && TrainSteps100::PLANNED_BYTES > 0);
    assert!(PpoUpdate::PLANNED_BYTES > 0 && PpoUpdateLoop::PLANNED_BYTES > 0);
    assert!(Perception::PLANNED_BYTES > 0);
    assert!(TrainStepUnplanned::PLANNED_BYTES == 0);
};

/// `(PLANNED_BYTES, UNPLANNED_BYTES, BYTES_WITHOUT_PLAN, MEMORY_PLAN)` of a graph struct.
macro_rules! plan_of {
    ($g:ty) => {
        (<$g>::PLANNED_BYTES, <$g>::UNPLANNED_BYTES, <$g>::BYTES_WITHOUT_PLAN, <$g>::MEMORY_PLAN)
    };
}

#[test]
fn the_model_graphs_plan_by_default_what_the_promise_plans() {
    assert_eq!(plan_of!(TrainStep), plan_of!(TrainStepPromised));
    assert_eq!(plan_of!(PpoUpdate), plan_of!(PpoUpdatePromised));
    assert_eq!(plan_of!(PpoUpdateLoop), plan_of!(PpoUpdateLoopPromised));
    assert_eq!(plan_of!(Perception), plan_of!(PerceptionPromised));
    for (name, planned, unplanned, without) in [
        ("train step", TrainStep::PLANNED_BYTES, TrainStep::UNPLANNED_BYTES, TrainStep::BYTES_WITHOUT_PLAN),
        ("PPO minibatch", PpoUpdate::PLANNED_BYTES, PpoUpdate::UNPLANNED_BYTES, PpoUpdate::BYTES_WITHOUT_PLAN),
        ("Graph A", Perception::PLANNED_BYTES, Perception::UNPLANNED_BYTES, Perception::BYTES_WITHOUT_PLAN),
    ] {
        assert!(planned + unplanned < without, "{name}: {planned} + {unplanned} of {without} B");
        println!("{name}: arena {planned} B + unplanned {unplanned} B, {without} B without the plan");
    }
}
