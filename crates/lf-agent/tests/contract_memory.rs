//! The store contract on the in-memory store.

use std::sync::Arc;

use lf_agent::MemoryAgentStore;

#[test]
fn memory_store_meets_the_contract() {
    pollster::block_on(lf_agent::contract::suite(Arc::new(MemoryAgentStore::new())));
}

#[test]
fn suite_runs_twice_on_one_store() {
    let store = Arc::new(MemoryAgentStore::new());
    pollster::block_on(lf_agent::contract::suite(store.clone()));
    pollster::block_on(lf_agent::contract::suite(store));
}
