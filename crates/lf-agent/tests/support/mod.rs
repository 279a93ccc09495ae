//! What the service tests share: a service on the memory store with a
//! fixed clock, people, agents and tools.

#![allow(dead_code)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::TimeDelta;
use lf_agent::{
    AgentHandle, AgentLimits, AgentService, DisplayName, LenserHandles, MemoryAgentStore, NewAgent, Safety,
    ToolGroup, ToolId, ToolName, ToolRef,
};
use lf_core::{Detail, ErrorCode, FixedClock, LenserId, LfError, LfResult, Principal, Scopes, Timestamp};

pub use pollster::block_on as run;

/// 2026-05-01T12:00:00Z.
pub const NOON: i64 = 1_777_636_800_000_000;

pub fn code<T: std::fmt::Debug>(r: LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}

pub fn detail(e: &LfError, key: &str) -> Option<Detail> {
    e.details().iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
}

pub fn str_detail(e: &LfError, key: &str) -> Option<String> {
    match detail(e, key) {
        Some(Detail::Str(s)) => Some(s),
        other => other.map(|d| format!("{d:?}")),
    }
}

/// The lensers' handles, as the composition root would answer them.
#[derive(Default)]
pub struct Lensers(pub Mutex<HashSet<String>>);

#[async_trait]
impl LenserHandles for Lensers {
    async fn lenser_holds(&self, handle: &str) -> LfResult<bool> {
        Ok(self.0.lock().unwrap().contains(handle))
    }
}

pub struct World {
    pub service: Arc<AgentService>,
    pub store: Arc<MemoryAgentStore>,
    pub clock: Arc<FixedClock>,
    pub lensers: Arc<Lensers>,
}

impl World {
    pub fn new() -> Self {
        Self::with_limits(AgentLimits::default())
    }

    pub fn with_limits(limits: AgentLimits) -> Self {
        let store = Arc::new(MemoryAgentStore::new());
        let clock = Arc::new(FixedClock::new(Timestamp::from_micros(NOON), TimeDelta::microseconds(1)));
        let lensers = Arc::new(Lensers::default());
        let service = Arc::new(
            AgentService::new(store.clone(), lensers.clone()).with_clock(clock.clone()).with_limits(limits),
        );
        World { service, store, clock, lensers }
    }

    /// A new agent of `owner`'s with handle `handle`.
    pub fn agent(&self, owner: &Principal, handle: &str) -> lf_agent::Agent {
        let new = NewAgent::new(AgentHandle::parse(handle).unwrap(), DisplayName::parse("Agent").unwrap());
        run(self.service.create(owner, new)).unwrap()
    }
}

pub fn person() -> (LenserId, Principal) {
    let id = LenserId::new();
    (id, Principal::Lenser { id, scopes: Scopes::READ_WRITE })
}

pub fn service_as(id: LenserId) -> Principal {
    Principal::Service { acting_as: Some(id) }
}

/// A catalog tool as the catalog would hand it over (the id is made here:
/// the catalog's is a UUID v5 of the name).
pub fn tool(name: &str, group: &str, safety: Safety) -> ToolRef {
    ToolRef {
        id: ToolId::new(),
        name: ToolName::parse("tool", name).unwrap(),
        group: ToolGroup::parse("group", group).unwrap(),
        safety,
    }
}
