//! Model contenders answer by themselves. When a battle moves to executing,
//! each `ai_model` contender with neither an answer nor a recorded failure
//! is handed to the [`ModelAnswers`] the composition root gave the service
//! (the runner's asker), which asks its model in the background and hands
//! what came of it to [`crate::BattleService::deliver_answer`]
//! ([`crate::Answer::Asked`], or [`crate::Answer::Failed`]).
//! [`crate::BattleService::answer_waiting`] hands it again the contenders
//! of every executing battle still waiting (a process died while asking).
//!
//! Asking is durable through one [`AskRecord`] per (battle, contender) in
//! an [`AskStore`]: how many attempts were made, and who holds the lease
//! to make the next. The rule, for every asker:
//! - an attempt is counted ([`AskStore::claim_ask`]) before the model is
//!   asked, and is claimed only by the lease's holder or once the lease
//!   has expired: a process that dies while asking leaves a lease that
//!   expires, and another takes the contender over;
//! - at most [`ASK_ATTEMPTS`] attempts are made, each one call of the
//!   endpoint's client (which itself retries once after a 429 or a 5xx):
//!   an endpoint is sent at most twice that many requests per contender;
//! - the holder renews its lease while it asks and waits, and checks it
//!   still holds it before it delivers: a contender is submitted once.

use async_trait::async_trait;
use lf_core::{BattleId, ContenderId, LfResult, Timestamp};

use crate::model::{Battle, Contender};

/// Most attempts at asking one contender's model, across every process.
pub const ASK_ATTEMPTS: u32 = 3;

/// The model side of `ai_model` contenders, given to the service by the
/// composition root ([`crate::BattleService::with_model_answers`]).
pub trait ModelAnswers: Send + Sync {
    /// Starts asking `contender`'s model in the background, unless this
    /// process is asking it already; returns at once. What comes of it is
    /// delivered to the battle.
    fn ask(&self, battle: &Battle, contender: &Contender);
}

/// The durable record of asking one contender's model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AskRecord {
    pub battle_id: BattleId,
    pub contender_id: ContenderId,
    /// Attempts counted so far (each counted before it was made).
    pub attempts: u32,
    /// Who holds the lease: an asker's own token.
    pub holder: String,
    /// When the lease ends unless renewed.
    pub lease_until: Timestamp,
}

/// What [`AskStore::claim_ask`] came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The caller holds the lease and may make attempt number `n` (from 1).
    Attempt(u32),
    /// Another holds the lease until then.
    Leased { until: Timestamp },
    /// Every attempt was made and the lease is free: nobody asks again.
    Spent { attempts: u32 },
}

/// Where [`AskRecord`]s are kept: memory here, SQLite and PostgreSQL in
/// lf-store, each checked by [`crate::contract::asks::suite`].
#[async_trait]
pub trait AskStore: Send + Sync {
    /// Counts an attempt for `holder` and gives it the lease until
    /// `until`, when nobody else holds an unexpired lease (at `now`) and
    /// fewer than `budget` attempts were made; atomic against every other
    /// claim.
    async fn claim_ask(
        &self,
        battle_id: BattleId,
        contender_id: ContenderId,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
        budget: u32,
    ) -> LfResult<Claim>;

    /// Moves `holder`'s lease to `until`: false when it is not (or no
    /// longer) the holder.
    async fn renew_ask(
        &self,
        battle_id: BattleId,
        contender_id: ContenderId,
        holder: &str,
        until: Timestamp,
    ) -> LfResult<bool>;

    /// The record, if the contender's model was ever claimed.
    async fn ask_record(&self, battle_id: BattleId, contender_id: ContenderId)
    -> LfResult<Option<AskRecord>>;
}

/// An [`AskStore`] in memory.
#[derive(Default)]
pub struct MemoryAskStore {
    records: std::sync::Mutex<std::collections::HashMap<(BattleId, ContenderId), AskRecord>>,
}

impl MemoryAskStore {
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl AskStore for MemoryAskStore {
    async fn claim_ask(
        &self,
        battle_id: BattleId,
        contender_id: ContenderId,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
        budget: u32,
    ) -> LfResult<Claim> {
        let mut all = self.records.lock().unwrap_or_else(|p| p.into_inner());
        let record = all.entry((battle_id, contender_id)).or_insert_with(|| AskRecord {
            battle_id,
            contender_id,
            attempts: 0,
            holder: holder.to_owned(),
            lease_until: now,
        });
        match decide(record, holder, now, budget) {
            Ok(n) => {
                record.attempts = n;
                record.holder = holder.to_owned();
                record.lease_until = until;
                Ok(Claim::Attempt(n))
            }
            Err(refused) => Ok(refused),
        }
    }

    async fn renew_ask(
        &self,
        battle_id: BattleId,
        contender_id: ContenderId,
        holder: &str,
        until: Timestamp,
    ) -> LfResult<bool> {
        let mut all = self.records.lock().unwrap_or_else(|p| p.into_inner());
        match all.get_mut(&(battle_id, contender_id)) {
            Some(r) if r.holder == holder => {
                r.lease_until = until;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn ask_record(
        &self,
        battle_id: BattleId,
        contender_id: ContenderId,
    ) -> LfResult<Option<AskRecord>> {
        Ok(self.records.lock().unwrap_or_else(|p| p.into_inner()).get(&(battle_id, contender_id)).cloned())
    }
}

/// What a claim by `holder` at `now` on `record` comes to: `Ok(n)`, the
/// attempt it may make, or the claim refused. Every store decides by it.
pub fn decide(record: &AskRecord, holder: &str, now: Timestamp, budget: u32) -> Result<u32, Claim> {
    decide_lease((record.attempts, &record.holder, record.lease_until), holder, now, budget)
}

/// [`decide`] over any leased work's `(attempts, holder, lease_until)`
/// (an experiment's cells are claimed by the same rule).
pub fn decide_lease(
    (attempts, held_by, lease_until): (u32, &str, Timestamp),
    holder: &str,
    now: Timestamp,
    budget: u32,
) -> Result<u32, Claim> {
    let held_by_another = held_by != holder && lease_until > now;
    if attempts > 0 && held_by_another {
        return Err(Claim::Leased { until: lease_until });
    }
    if attempts >= budget {
        return Err(Claim::Spent { attempts });
    }
    Ok(attempts + 1)
}
