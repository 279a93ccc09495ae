//! Judging a battle in scoring: [`BattleService::score`] with the battle's
//! mode (the AI judge through the model its `ai_judge_model_key` resolves
//! to, the automatic check, or nothing), recording what the judge's calls
//! cost, and the verdicts or judge errors a scoring pipeline of the
//! application's own records.

use lf_core::{BattleId, LfError, LfResult, Principal, ResolvedModel};

use crate::judge::{self, JudgeFailure};
use crate::model::{Battle, BattleStatus, JudgeError, JudgingMode, ModelKey, Verdict};
use crate::scoring;
use crate::service::{BattleService, ScoreOutcome, service_only};
use crate::state::wrong_status;

impl BattleService {
    /// Judges a battle in scoring with its mode: the AI judge (`ai_judge`,
    /// `rubric_score`) through the provider, the check (`auto_score`), or
    /// nothing (`community_vote`). Verdicts replace earlier ones; a failure is
    /// recorded as a judge error (the battle stays in scoring: call again).
    /// Only the creator or the service (it spends model calls): FORBIDDEN
    /// otherwise; INVALID_TRANSITION outside scoring.
    pub async fn score(&self, p: &Principal, id: BattleId) -> LfResult<ScoreOutcome> {
        let sheet = self.sheet_for_write(p, id, "score the battle").await?;
        let b = &sheet.battle;
        if b.status != BattleStatus::Scoring {
            return Err(wrong_status("Scoring", b.status, &[BattleStatus::Scoring]));
        }
        let now = self.now();
        let mut asked = Vec::new();
        let mut judged_on = None;
        let result = match b.judging_mode {
            JudgingMode::CommunityVote => return Ok(ScoreOutcome::NothingToJudge),
            JudgingMode::AutoScore => scoring::auto_verdicts(
                b,
                &sheet.contenders,
                &sheet.submissions,
                self.json_schema.as_deref(),
                now,
            )
            .map_err(|message| JudgeFailure {
                model: format!("auto_score:{}", b.auto_check.as_ref().map_or("none", |c| c.kind())),
                message,
            }),
            JudgingMode::AiJudge | JudgingMode::RubricScore => match self.judge_model(b).await {
                Ok((model, battle)) => {
                    let b = battle.as_ref().unwrap_or(b);
                    let (contenders, submissions) = (&sheet.contenders, &sheet.submissions);
                    let judged = judge::judge_asking(
                        model.provider.as_ref(),
                        b,
                        contenders,
                        submissions,
                        now,
                        &mut asked,
                    )
                    .await;
                    judged_on = Some(model);
                    judged
                }
                Err(failure) => Err(failure),
            },
        };
        match result {
            Ok(verdicts) => {
                // What the judge's calls cost is written with its verdicts.
                let cost = judged_on.and_then(|m| crate::cost::judging_cost(&m, &asked)).map(|cost| {
                    crate::model::AnswerCostRecord { battle_id: id, contender_id: None, cost, at: now }
                });
                self.store.put_verdicts(id, &verdicts, cost.as_ref()).await?;
                Ok(ScoreOutcome::Scored(verdicts))
            }
            Err(JudgeFailure { model, message }) => {
                let error = JudgeError { battle_id: id, model, message, at: self.now() };
                self.store.add_judge_error(&error).await?;
                Ok(ScoreOutcome::Failed(error))
            }
        }
    }

    /// Where the judge of `b` is asked: its `ai_judge_model_key` resolved
    /// for its creator (with the battle as the judge reads it: the model
    /// the key stands for), else the service's provider (as the endpoint
    /// `default`, without prices).
    async fn judge_model(&self, b: &Battle) -> Result<(ResolvedModel, Option<Battle>), JudgeFailure> {
        let (Some(resolver), Some(key)) = (&self.resolver, &b.ai_judge_model_key) else {
            let key = b.ai_judge_model_key.as_ref().map(|k| k.as_str().to_owned());
            let model = ResolvedModel::on(self.provider.clone(), "default", key);
            return Ok((model, None));
        };
        let creator = Principal::Lenser { id: b.creator, scopes: lf_core::Scopes::READ };
        let fail = |message: String| JudgeFailure { model: key.as_str().to_owned(), message };
        let resolved = resolver
            .resolve(&creator, "ai_judge_model_key", key.as_str())
            .await
            .map_err(|e| fail(e.message().to_owned()))?;
        let mut battle = b.clone();
        battle.ai_judge_model_key = resolved
            .model
            .clone()
            .map(ModelKey::parse)
            .transpose()
            .map_err(|e| fail(e.message().to_owned()))?;
        Ok((resolved, Some(battle)))
    }

    /// Records verdicts produced elsewhere (a scoring pipeline of the
    /// application's own). Service only: PERMISSION_DENIED for anyone else,
    /// as verdicts decide the battle. INVALID_ARGUMENT (`verdicts`) for a
    /// verdict of another battle; NOT_FOUND for an unknown contender.
    pub async fn record_verdicts(&self, p: &Principal, id: BattleId, verdicts: Vec<Verdict>) -> LfResult<()> {
        service_only(p, "Recording verdicts")?;
        if verdicts.iter().any(|v| v.battle_id != id) {
            return Err(LfError::invalid_argument("every verdict must belong to the battle being scored")
                .with_field("verdicts"));
        }
        self.store.put_verdicts(id, &verdicts, None).await
    }

    /// Records a judge failure produced elsewhere. Service only, as
    /// [`BattleService::record_verdicts`].
    pub async fn record_judge_error(
        &self,
        p: &Principal,
        id: BattleId,
        model: &str,
        message: &str,
    ) -> LfResult<JudgeError> {
        service_only(p, "Recording judge errors")?;
        let error = JudgeError {
            battle_id: id,
            model: model.to_owned(),
            message: lf_core::clip(message, 2_000).into_owned(),
            at: self.now(),
        };
        self.store.add_judge_error(&error).await?;
        Ok(error)
    }
}
