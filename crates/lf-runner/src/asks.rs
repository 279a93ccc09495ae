//! The model side of `ai_model` contenders (lf-battle's asks module):
//! [`ModelAsks`] asks a contender's model in the background and hands its
//! answer, with what it cost, or its failure, to the battle.
//!
//! What answers, read as the battle's creator (their reach):
//! - a model profile the creator may use: its model with its parameters,
//!   the task prompt as the user message and a short system message saying
//!   it answers a battle;
//! - an AI Lenser the creator can see: its model (a profile's name or id, a
//!   bare name on `default`, none: `default`'s model) with its persona as
//!   the system message, and no tools.
//!
//! Anything else (a profile the creator may no longer use) is the
//! contender's error. The durable rule (attempts counted before they are
//! made, at most [`ASK_ATTEMPTS`], a lease renewed while asking and taken
//! over once expired) is lf-battle's [`lf_battle::AskStore`]'s: each
//! attempt is one call of the endpoint's client; a 429 (THROTTLED) waits
//! its `retry_after_seconds`, any other INTERNAL failure (5xx, timeout,
//! malformed answer) waits 1 s, before the next attempt; other
//! refusals (an unknown model, a key refused) fail at once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lf_battle::{ASK_ATTEMPTS, Answer, AskStore, Battle, BattleStatus, Claim, Contender, ModelAnswers};
use lf_core::{
    BattleId, Clock, ContenderId, ErrorCode, LenserId, LfError, LfResult, ModelResolver, Principal, Scopes,
    SystemClock, Timestamp,
};

use crate::compose::OwnServices;

/// The system message of a model profile answering a battle.
const SYSTEM: &str = "You are answering a battle: your answer is compared with other models' answers to the same task. Answer the task well and directly.";

/// Asks `ai_model` contenders' models (see the module's docs).
#[derive(Clone)]
pub struct ModelAsks {
    inner: Arc<Inner>,
}

struct Inner {
    own: OwnServices,
    store: Arc<dyn AskStore>,
    resolver: Arc<dyn ModelResolver>,
    clock: Arc<dyn Clock>,
    lease: Duration,
    /// The contenders this process is asking now.
    asking: Mutex<HashSet<(BattleId, ContenderId)>>,
}

impl ModelAsks {
    /// Asks through `resolver`, recording attempts and leases of `lease`
    /// in `store`, and delivering to the battles `own` is bound to.
    pub fn new(
        own: OwnServices,
        store: Arc<dyn AskStore>,
        resolver: Arc<dyn ModelResolver>,
        lease: Duration,
    ) -> Self {
        let lease = lease.max(Duration::from_millis(300));
        let inner =
            Inner { own, store, resolver, clock: Arc::new(SystemClock), lease, asking: Mutex::default() };
        Self { inner: Arc::new(inner) }
    }
}

impl ModelAnswers for ModelAsks {
    fn ask(&self, battle: &Battle, contender: &Contender) {
        let key = (battle.id, contender.id);
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        if !self.inner.asking.lock().unwrap_or_else(|p| p.into_inner()).insert(key) {
            return;
        }
        let (inner, battle, contender) = (self.inner.clone(), battle.clone(), contender.clone());
        rt.spawn(async move {
            if let Err(e) = inner.answer(&battle, &contender).await {
                tracing::warn!(battle_id = %battle.id, contender_id = %contender.id, error = %e, "a model contender was not asked to the end; the next catch-up goes on");
            }
            inner.asking.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
        });
    }
}

/// What one attempt came to.
enum Attempt {
    Answered(Answer),
    /// Worth another attempt after waiting this long.
    Again(Duration, String),
    Failed(String),
}

impl Inner {
    fn until(&self) -> Timestamp {
        self.clock.now().plus_micros(self.lease.as_micros() as i64)
    }

    /// Whether the contender still waits for its answer.
    async fn waits(&self, battle: BattleId, contender: ContenderId) -> LfResult<bool> {
        let bound = self.own.bound().ok_or_else(|| LfError::internal("the battles are not bound yet"))?;
        let sheet = bound.battles.get(&Principal::Service { acting_as: None }, battle).await?;
        Ok(sheet.battle.status == BattleStatus::Executing
            && sheet.submission_of(contender).is_none()
            && sheet.answer_error_of(contender).is_none())
    }

    async fn deliver(&self, battle: BattleId, contender: ContenderId, answer: Answer) -> LfResult<()> {
        let bound = self.own.bound().ok_or_else(|| LfError::internal("the battles are not bound yet"))?;
        bound.battles.deliver_answer(battle, contender, answer).await
    }

    /// Asks until the contender is answered, fails for good, or another
    /// process holds it (and then, once its lease ends, takes it over).
    async fn answer(&self, battle: &Battle, contender: &Contender) -> LfResult<()> {
        let holder = uuid::Uuid::now_v7().to_string();
        let (b, c) = (battle.id, contender.id);
        let mut last = None;
        loop {
            if !self.waits(b, c).await? {
                return Ok(());
            }
            // Taken before the lease's end is reckoned: while less than
            // half the lease has passed since, the lease is surely held.
            let claimed = Instant::now();
            let n = match self
                .store
                .claim_ask(b, c, &holder, self.clock.now(), self.until(), ASK_ATTEMPTS)
                .await?
            {
                Claim::Attempt(n) => n,
                Claim::Leased { until } => {
                    lease_out(self.clock.now(), until).await;
                    continue;
                }
                Claim::Spent { attempts } => {
                    let why = last.take().unwrap_or_else(|| {
                        "the process asking it last stopped before it answered".to_owned()
                    });
                    let message =
                        format!("The contender's model was asked {attempts} times without an answer: {why}");
                    return self.deliver(b, c, Answer::Failed { run_id: None, message }).await;
                }
            };
            let outcome = self.held(b, c, &holder, self.attempt(battle, contender)).await;
            match outcome {
                Attempt::Answered(answer) => {
                    // Delivered only while still held: a takeover never
                    // submits twice. An answer within half the lease is
                    // (the renewals only extend it); a slower one checks.
                    let surely = claimed.elapsed() < self.lease / 2;
                    if surely || self.store.renew_ask(b, c, &holder, self.until()).await? {
                        return self.deliver(b, c, answer).await;
                    }
                    return Ok(());
                }
                Attempt::Failed(message) => {
                    return self.deliver(b, c, Answer::Failed { run_id: None, message }).await;
                }
                Attempt::Again(wait, why) => {
                    tracing::info!(battle_id = %b, contender_id = %c, attempt = n, error = %why, "a model contender's attempt failed; it is asked again within its budget");
                    last = Some(why);
                    if n < ASK_ATTEMPTS {
                        self.held(b, c, &holder, tokio::time::sleep(wait)).await;
                    }
                }
            }
        }
    }

    /// Runs `work` while renewing `holder`'s lease.
    async fn held<T>(&self, b: BattleId, c: ContenderId, holder: &str, work: impl Future<Output = T>) -> T {
        let renewing = async {
            loop {
                tokio::time::sleep(self.lease / 3).await;
                if let Err(e) = self.store.renew_ask(b, c, holder, self.until()).await {
                    tracing::warn!(battle_id = %b, contender_id = %c, error = %e, "a model contender's lease was not renewed");
                }
            }
        };
        tokio::select! {
            out = work => out,
            () = renewing => unreachable!("renewing never ends"),
        }
    }

    /// One attempt: the model resolved and asked once.
    async fn attempt(&self, battle: &Battle, contender: &Contender) -> Attempt {
        let creator = Principal::Lenser { id: battle.creator, scopes: Scopes::READ };
        let (model, system) = match self.answerer(&creator, contender).await {
            Ok(found) => found,
            Err(e) => return judged(e),
        };
        let request = model.request(system, battle.task_prompt.as_str());
        let started = Instant::now();
        match model.provider.chat(request.clone()).await {
            Ok(answer) => {
                let elapsed = started.elapsed().as_millis() as u64;
                let cost = model.cost(&request, &answer, elapsed, lf_lens::estimate_tokens);
                Attempt::Answered(Answer::Asked { text: answer.text, cost })
            }
            Err(e) => judged(e),
        }
    }

    /// What answers for `contender`: its profile, or its AI Lenser's model
    /// and persona.
    async fn answerer(
        &self,
        p: &Principal,
        contender: &Contender,
    ) -> LfResult<(lf_core::ResolvedModel, String)> {
        let named = contender.reference.to_string();
        let missing = match self.resolver.resolve(p, "contender_ref_id", &named).await {
            Ok(model) => return Ok((model, SYSTEM.to_owned())),
            Err(e) if e.code() == ErrorCode::NotFound => e,
            Err(e) => return Err(e),
        };
        if self.own.teams().is_none() {
            return Err(missing);
        }
        let agent = LenserId::from_uuid(contender.reference.as_uuid());
        match ai_lenser(&self.own, self.resolver.as_ref(), p, agent, "a battle").await {
            Ok(Some(found)) => Ok(found),
            Ok(None) => Err(LfError::new(
                ErrorCode::NotFound,
                format!(
                    "The contender's model profile or AI Lenser {named} is not one the battle's creator may use (any more)."
                ),
            )),
            Err(e) => Err(e),
        }
    }
}

/// What answers as the AI Lenser `agent`, which `p` can see, answering
/// `what` (`a battle`): its model (a profile's name or id, a bare name on
/// `default`, none: `default`'s model) with its persona as the system
/// message. `None` when `p` cannot see it; INTERNAL before the AI Lensers
/// are bound. Battle asks and experiments' AI Lenser contenders answer so.
pub(crate) async fn ai_lenser(
    own: &OwnServices,
    resolver: &dyn ModelResolver,
    p: &Principal,
    agent: LenserId,
    what: &str,
) -> LfResult<Option<(lf_core::ResolvedModel, String)>> {
    let Some(agents) = own.teams().map(|t| t.agents()) else {
        return Err(LfError::internal("the AI Lensers are not bound to the server's services yet"));
    };
    let Some(agent) = agents.visible(p, agent).await? else { return Ok(None) };
    let system = match &agent.profile.persona {
        Some(persona) => persona.as_str().to_owned(),
        None => format!(
            "You are {}, an AI Lenser answering {what}. Answer the task well and directly.",
            agent.profile.display_name.as_str()
        ),
    };
    let named = agent.profile.model.as_ref().map(|m| m.as_str());
    Ok(Some((lf_core::agent_model(resolver, p, named).await?, system)))
}

/// Whether failure `e` is worth another attempt, and after how long.
fn judged(e: LfError) -> Attempt {
    let message = e.message().to_owned();
    match again_after(&e) {
        Some(wait) => Attempt::Again(wait, message),
        None => Attempt::Failed(format!("The contender's model could not be asked: {message}")),
    }
}

/// Waits out another process's lease ending at `until` (seen at `now`),
/// and a little more, before its work is claimed again.
pub(crate) async fn lease_out(now: Timestamp, until: Timestamp) {
    let left = until.as_micros().saturating_sub(now.as_micros()).max(0);
    tokio::time::sleep(Duration::from_micros(left as u64) + Duration::from_millis(50)).await;
}

/// How long to wait before asking again after failure `e`, when another
/// attempt is worth it: a 429 (THROTTLED) its `retry_after_seconds`
/// (1 to 60), any other INTERNAL failure (5xx, timeout, malformed answer)
/// 1 s. Experiments' cells follow the same rule.
pub(crate) fn again_after(e: &LfError) -> Option<Duration> {
    match e.code() {
        ErrorCode::Throttled => {
            let secs = e
                .details()
                .iter()
                .find_map(|(k, v)| match v {
                    lf_core::DetailValue::Int(s) if k == "retry_after_seconds" => {
                        Some((*s).clamp(1, 60) as u64)
                    }
                    _ => None,
                })
                .unwrap_or(1);
            Some(Duration::from_secs(secs))
        }
        ErrorCode::Internal => Some(Duration::from_secs(1)),
        _ => None,
    }
}
