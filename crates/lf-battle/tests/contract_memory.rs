//! The store contract on the in-memory store.

use std::sync::Arc;

use lf_battle::MemoryBattleStore;

#[test]
fn memory_store_meets_the_contract() {
    pollster::block_on(lf_battle::contract::suite(Arc::new(MemoryBattleStore::new())));
}

#[test]
fn suite_runs_twice_on_one_store() {
    let store = Arc::new(MemoryBattleStore::new());
    pollster::block_on(lf_battle::contract::suite(store.clone()));
    pollster::block_on(lf_battle::contract::suite(store));
}

#[test]
fn memory_ask_store_meets_the_contract() {
    let store = Arc::new(lf_battle::MemoryAskStore::new());
    pollster::block_on(lf_battle::contract::asks::suite(store.clone()));
    pollster::block_on(lf_battle::contract::asks::suite(store));
}
