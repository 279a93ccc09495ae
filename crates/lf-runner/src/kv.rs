//! The steps over the workflow owner's kv store ([`lf_workflow::kv`]):
//! `kv_store_read`, `kv_store_write`, `cache_read`, `cache_write` and
//! `rate_limit`. The store is always the workflow owner's
//! ([`Job::workflow_owner`]), whoever started the run: a workflow keeps
//! its state across runs, and another owner's workflow never sees it.
//!
//! Keys are templates: `[[name]]` placeholders filled from the step's
//! inputs (as the outbound steps fill theirs), then checked (1 to 256
//! characters). A value is the part of the main input at `value_path`, at
//! most 64 KiB as JSON. A `rate_limit` counts a pass per attempt (its
//! idempotency key), per owner, workflow and step; when the window is
//! full it fails with `throttled` or answers "again at" the moment the
//! window frees up, which the engine keeps as a durable timer.

use std::sync::Arc;

use async_trait::async_trait;
use lf_core::{Clock, ErrorCode, LfError, SystemClock, Timestamp};
use lf_workflow::engine::{Failure, main_input};
use lf_workflow::exec::fill_placeholders;
use lf_workflow::kv::{Bucket, EntryId, KvKey, KvStore, KvValue, MAX_ENTRIES, Namespace, Pass};
use lf_workflow::path::{Pick, WHOLE};
use serde_json::{Value, json};

use crate::executor::{Done, Executor, Executors, Job};
use crate::outbound::common::{Config, scope};
use crate::steps::{self, Runs, STEPS};

/// The default freshness of a cache entry (the catalog's `ttl_seconds`).
const CACHE_TTL_SECONDS: u64 = 3_600;

/// The executors of the kv steps over one store and clock.
#[derive(Clone)]
pub struct KvSteps {
    store: Arc<dyn KvStore>,
    clock: Arc<dyn Clock>,
}

impl KvSteps {
    pub fn new(store: Arc<dyn KvStore>) -> Self {
        Self::with_clock(store, Arc::new(SystemClock))
    }

    /// Over `clock`, which decides expiries and windows (tests fix it).
    pub fn with_clock(store: Arc<dyn KvStore>, clock: Arc<dyn Clock>) -> Self {
        KvSteps { store, clock }
    }

    /// `executors` with an executor for each kv step (a runner with these
    /// steps alone; [`Executors::all`] has every step).
    pub fn register(self, executors: Executors) -> Executors {
        executors.fill(|runs| match runs {
            Runs::Kv(kind) => Some(self.step(kind)),
            _ => None,
        })
    }

    /// The executor of `node_type` (a canonical name), if it is a kv step.
    pub fn executor(&self, node_type: &str) -> Option<Arc<dyn Executor>> {
        match steps::runs(node_type)? {
            Runs::Kv(kind) => Some(self.step(kind)),
            _ => None,
        }
    }

    /// The kv steps' node types, in steps.rs's table.
    pub fn types() -> Vec<&'static str> {
        STEPS.iter().filter(|(_, r)| matches!(r, Runs::Kv(_))).map(|(t, _)| *t).collect()
    }

    pub(crate) fn step(&self, kind: KvKind) -> Arc<dyn Executor> {
        Arc::new(Step { kind, steps: self.clone() })
    }
}

/// Which kv step a step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KvKind {
    Read(Namespace),
    Write(Namespace),
    RateLimit,
}

struct Step {
    kind: KvKind,
    steps: KvSteps,
}

#[async_trait]
impl Executor for Step {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        let now = self.steps.clock.now();
        let store = self.steps.store.as_ref();
        match self.kind {
            KvKind::Read(ns) => read(store, job, ns, now).await.map(Done::output),
            KvKind::Write(ns) => write(store, job, ns, now).await.map(Done::output),
            KvKind::RateLimit => rate_limit(store, job, now).await,
        }
    }
}

/// The entry the step's `key` names once filled, in the owner's `ns`.
fn entry(job: &Job, ns: Namespace) -> Result<EntryId, Failure> {
    let template = Config::of(job).required("key")?;
    let key = KvKey::parse(&fill_placeholders(template, &scope(&job.input))).map_err(|e| failure(&e))?;
    Ok(EntryId { owner: job.workflow_owner, namespace: ns, key })
}

async fn read(store: &dyn KvStore, job: &Job, ns: Namespace, now: Timestamp) -> Result<Value, Failure> {
    let entry = entry(job, ns)?;
    let found = store.get(&entry, now).await.map_err(|e| failure(&e))?;
    Ok(match (ns, found) {
        (Namespace::Kv, Some(value)) => json!({"found": true, "value": value}),
        (Namespace::Kv, None) => {
            json!({"found": false, "value": Config::of(job).get("default").cloned().unwrap_or(Value::Null)})
        }
        (Namespace::Cache, Some(value)) => json!({"hit": true, "value": value}),
        (Namespace::Cache, None) => json!({"hit": false, "value": null}),
    })
}

async fn write(store: &dyn KvStore, job: &Job, ns: Namespace, now: Timestamp) -> Result<Value, Failure> {
    let c = Config::of(job);
    let entry = entry(job, ns)?;
    let path = c.str("value_path")?.unwrap_or(WHOLE);
    let pick = Pick::parse("value_path", path).map_err(|e| Failure::new("config_invalid", e.message()))?;
    let value = pick.pick(main_input(&job.input)).ok_or_else(|| {
        Failure::new("invalid_input", format!("value_path {} selects nothing in the input", pick.as_str()))
    })?;
    let stored = KvValue::new(&value).map_err(|e| failure(&e))?;
    let ttl = match ns {
        Namespace::Kv => c.uint("ttl_seconds")?,
        Namespace::Cache => Some(c.uint("ttl_seconds")?.unwrap_or(CACHE_TTL_SECONDS)),
    };
    let expires_at = ttl.map(|s| now.plus_micros(micros(s)));
    store.put(&entry, &stored, expires_at, now, MAX_ENTRIES).await.map_err(|e| failure(&e))?;
    Ok(json!({"key": entry.key.as_str(), "value": value}))
}

async fn rate_limit(store: &dyn KvStore, job: &Job, now: Timestamp) -> Result<Done, Failure> {
    let c = Config::of(job);
    let limit = c.uint("limit")?.ok_or_else(|| Failure::new("config_invalid", "limit must be given"))?;
    let limit = u32::try_from(limit.max(1)).unwrap_or(u32::MAX);
    let window = c.uint("window_seconds")?.unwrap_or(60).max(1);
    let wait = c.str("on_limit")?.unwrap_or("wait") == "wait";
    let node = job.node();
    let bucket = Bucket { owner: job.workflow_owner, workflow: job.workflow_id, step: node.key.clone() };
    // The attempt's own key: the same after a takeover, so it counts once.
    let attempt = job.attempt_key();
    match store.pass(&bucket, &attempt, limit, micros(window), now).await.map_err(|e| failure(&e))? {
        Pass::Through | Pass::Again => Ok(Done::output(main_input(&job.input).clone())),
        Pass::Full { frees_at } if wait => Ok(Done::again_at(frees_at)),
        Pass::Full { frees_at } => {
            let secs = ((frees_at.as_micros() - now.as_micros()).max(0) as u64).div_ceil(1_000_000);
            Err(Failure::new(
                "throttled",
                format!(
                    "step {} lets {limit} through per {window} s and its window is full; it frees up at {frees_at} \
                     (in {secs} s). Set on_limit to wait to queue instead of failing.",
                    node.key
                ),
            ))
        }
    }
}

fn micros(seconds: u64) -> i64 {
    i64::try_from(seconds).unwrap_or(i64::MAX).saturating_mul(1_000_000)
}

/// A store's refusal as a step failure: a bad key or value is the input's
/// fault, a full store the owner's.
fn failure(e: &LfError) -> Failure {
    let code = match e.code() {
        ErrorCode::InvalidArgument => "invalid_input",
        ErrorCode::SlotsFull => "store_full",
        ErrorCode::Conflict => "conflict",
        _ => "store_error",
    };
    Failure::new(code, e.message())
}
