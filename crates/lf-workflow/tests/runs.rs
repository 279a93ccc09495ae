//! The run store contract on the in-memory store.

use std::sync::Arc;

use lf_workflow::MemoryWorkflowStore;
use lf_workflow::run::{MemoryRunStore, contract};

#[test]
fn the_memory_run_store_keeps_the_contract() {
    let runs = Arc::new(MemoryRunStore::new());
    let workflows = Arc::new(MemoryWorkflowStore::new());
    pollster::block_on(contract::suite(runs.clone(), workflows.clone()));
    // Again on the same store: the suite leaves nothing due behind.
    pollster::block_on(contract::suite(runs.clone(), workflows.clone()));
    pollster::block_on(contract::wake_suite(runs, workflows));
}
