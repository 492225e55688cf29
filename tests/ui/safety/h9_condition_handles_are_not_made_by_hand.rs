// H9: a condition handle is made only by `GraphBuilder::create_condition`, so the safe
// `add_conditional` never receives an invented one (the driver would read it as a handle).
use kgraph::expert::ConditionHandle;

fn main() {
    let invented = ConditionHandle { raw: 7, builder: 1 };
    let _ = invented;
}
