//! What the service tests share: a service on the memory store with a
//! fixed clock, people, agents and tools.

#![allow(dead_code)]

pub mod flaky;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::TimeDelta;
use lf_agent::policy::{Capability, Gate};
use lf_agent::{
    AgentHandle, AgentLimits, AgentService, DisplayName, LedgerSettings, LenserHandles, MemoryAgentStore,
    NewAgent, Safety, ToolGroup, ToolId, ToolName, ToolRef, UsageKind,
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

    async fn lenser_exists(&self, _id: LenserId) -> LfResult<bool> {
        Ok(false)
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

    /// A world whose service keeps a call ledger.
    pub fn ledgered() -> Self {
        World::new().with_ledger()
    }

    /// The same world with its service keeping a call ledger.
    pub fn with_ledger(self) -> Self {
        let service = Arc::new(self.another_server());
        World { service, ..self }
    }

    /// Another server on the same store and clock, with its own ledger
    /// holding at most 256 of a count (the figures the tests count with,
    /// whatever the default).
    pub fn another_server(&self) -> AgentService {
        AgentService::new(self.store.clone(), self.lensers.clone())
            .with_clock(self.clock.clone())
            .with_limits(self.service.limits())
            .with_ledger(LedgerSettings { most_held: 256, ..LedgerSettings::default() })
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

/// The gates the catalog declares on its battle tools, which it hands over
/// with each call: joining (`add_battle_contender`) and creating
/// (`create_battle`) a battle count as a battle of the day, a vote
/// (`cast_battle_vote`) as a vote; submitting (`submit_battle_run`) needs
/// the flag joining needs and counts only as a call.
pub const JOIN: Gate = Gate::needs(Capability::JoinBattles).counting(UsageKind::Battles);
pub const SUBMIT: Gate = Gate::needs(Capability::JoinBattles);
pub const VOTE: Gate = Gate::needs(Capability::Vote).counting(UsageKind::Votes);
pub const CREATE: Gate = Gate::needs(Capability::CreateBattles).counting(UsageKind::Battles);

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

/// `threads` threads, each making `each` checks of `call` for `agent` as
/// `caller`, spread over `servers` in turn: how many passed, and the codes
/// of the refused.
pub fn race(
    servers: &[Arc<AgentService>],
    caller: &Principal,
    agent: LenserId,
    call: &lf_agent::Call,
    threads: usize,
    each: usize,
) -> (usize, Vec<ErrorCode>) {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (service, call, caller) =
                    (servers[i % servers.len()].clone(), call.clone(), caller.clone());
                s.spawn(move || {
                    (0..each)
                        .map(|_| run(service.check_call(&caller, agent, &call)).map_err(|e| e.code()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
        let passed = results.iter().filter(|r| r.is_ok()).count();
        (passed, results.into_iter().filter_map(Result::err).collect())
    })
}
