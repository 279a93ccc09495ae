//! Conversions between stored battle values and lf-battle's types, shared by
//! both backends. Reading back is strict: a value lf-battle would refuse is a
//! corrupt row (INTERNAL).
//!
//! Both backends store the same columns (see the `0003_battles.sql` and
//! `0004_battle_results.sql` migrations, and the `agent_id` of the
//! `row_agents` ones: SQLite 0015, PostgreSQL 0014); ids, texts, numbers
//! and booleans bind and read as sqlx does, times as each backend's
//! [`crate::dialect::Dialect`] spells them. Rubrics, automatic checks,
//! verdict criteria and result entries are JSON text on both.

use lf_battle::{
    AnswerCostRecord, AnswerError, AutoCheck, Battle, BattleResult, BattleStatus, BattleTitle, BattleType,
    Contender, ContenderRef, ContenderType, CostMean, CriterionDescription, CriterionTitle, DisplayName,
    JudgeError, JudgingMode, MaxContenders, ModelKey, ResultEntry, Rubric, RubricCriterion, Score, Slot,
    Standing, Style, Submission, SubmissionText, TaskPrompt, Verdict, VerdictKind, Vote, VotePick,
};
use lf_core::{
    AnswerCost, BattleId, ContenderId, ContenderRefId, LenserId, LfResult, ModelProfileId, SubmissionId,
};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::dialect::{Bind, Columns};
use crate::error::corrupt;

/// A row of `sql::CLOSED_RESULTS` (`battle_id, battle_type, closed_at,
/// entries`), by position, its texts borrowed: the one large scan, a short
/// row per closed battle.
pub(crate) fn battle_result(row: &impl Columns) -> LfResult<BattleResult> {
    Ok(BattleResult {
        battle_id: BattleId::from_uuid(row.value(0)?),
        tags: tags(row.text(4)?, "battle_results.tags")?,
        battle_type: valid(BattleType::parse(row.text(1)?), "battle_results.battle_type")?,
        closed_at: row.time(2)?,
        entries: result_entries(row.text(3)?)?,
    })
}

/// The columns of `battles` (as `b`), in the order [`bind_battle`] binds
/// them and [`battle`] reads them.
macro_rules! battle_columns {
    () => {
        "b.id, b.title, b.task_prompt, b.battle_type, b.judging_mode, b.max_contenders, b.ai_judge_model_key, \
         b.rubric, b.auto_check, b.creator_id, b.status, b.winner_id, b.created_at, b.updated_at, b.closed_at, \
         b.agent_id, b.tags"
    };
}
pub(crate) use battle_columns;

/// A value read back that lf-battle refuses: a corrupt row.
fn valid<T, E: std::fmt::Display>(r: Result<T, E>, column: &str) -> LfResult<T> {
    r.map_err(|e| corrupt(format!("{column}: {e}")))
}

fn number<T: TryFrom<i64>>(n: i64, column: &str) -> LfResult<T> {
    T::try_from(n).map_err(|_| corrupt(format!("{column}: {n} is out of range")))
}

fn score(tenths: i64, column: &str) -> LfResult<Score> {
    match u16::try_from(tenths) {
        Ok(t) if t <= Score::MAX.tenths() => Ok(Score::from_tenths(t)),
        _ => Err(corrupt(format!("{column}: score {tenths}"))),
    }
}

pub(crate) fn status(s: &str) -> LfResult<BattleStatus> {
    valid(BattleStatus::parse(s), "battles.status")
}

pub(crate) fn contender_type(s: &str) -> LfResult<ContenderType> {
    valid(ContenderType::parse(s), "battle_contenders.contender_type")
}

/// The entries of a `battle_results` row: `[[contender_type, reference_id,
/// rank, display_name], …]`.
pub(crate) fn result_entries(text: &str) -> LfResult<Vec<ResultEntry>> {
    const COLUMN: &str = "battle_results.entries";
    // [type, reference, rank, name, chars, markdown]; rows written before
    // answers' styles were kept have the first four.
    let items: Vec<Vec<serde_json::Value>> = valid(serde_json::from_str(text), COLUMN)?;
    items
        .into_iter()
        .map(|item| {
            let text_at = |i: usize| item.get(i).and_then(serde_json::Value::as_str);
            let int_at = |i: usize| item.get(i).and_then(serde_json::Value::as_i64);
            let (Some(kind), Some(reference), Some(rank), Some(display_name)) =
                (text_at(0), text_at(1), int_at(2), text_at(3))
            else {
                return valid(Err("not [type, reference, rank, name, …]"), COLUMN);
            };
            let kind = valid(ContenderType::parse(kind), COLUMN)?;
            let id = ContenderRefId::from_uuid(valid(Uuid::parse_str(reference), COLUMN)?);
            let style = match (int_at(4), int_at(5)) {
                (Some(c), Some(m)) => Some(Style { chars: number(c, COLUMN)?, markdown: number(m, COLUMN)? }),
                _ => None,
            };
            let (display_name, rank) = (display_name.to_owned(), number(rank, COLUMN)?);
            Ok(ResultEntry { reference: ContenderRef { kind, id }, display_name, rank, style })
        })
        .collect()
}

/// The stored form of a rubric: `[[title, weight, description], …]`.
pub(crate) fn rubric_json(rubric: &Rubric) -> String {
    let items: Vec<(&str, u8, &str)> =
        rubric.criteria().iter().map(|c| (c.title.as_str(), c.weight, c.description.as_str())).collect();
    json!(items).to_string()
}

pub(crate) fn rubric(text: &str) -> LfResult<Rubric> {
    let items: Vec<(String, i64, String)> = valid(serde_json::from_str(text), "battles.rubric")?;
    let criteria = items
        .into_iter()
        .map(|(title, weight, description)| {
            RubricCriterion::new(
                CriterionTitle::parse(title)?,
                weight,
                CriterionDescription::parse(description)?,
            )
        })
        .collect::<LfResult<Vec<_>>>();
    valid(criteria.and_then(Rubric::parse), "battles.rubric")
}

/// The stored form of an automatic check: an object with its `kind` and
/// the check's fields under their own names.
pub(crate) fn auto_check_json(check: &AutoCheck) -> String {
    let fields = match check {
        AutoCheck::Exact { expected } => json!({ "expected": expected }),
        AutoCheck::Contains { needle, case_insensitive } => {
            json!({ "needle": needle, "case_insensitive": case_insensitive })
        }
        AutoCheck::Regex { pattern } => json!({ "pattern": pattern }),
        AutoCheck::JsonSchema { schema } => json!({ "schema": schema }),
        AutoCheck::LengthRange { min_chars, max_chars } => {
            json!({ "min_chars": min_chars, "max_chars": max_chars })
        }
    };
    let mut object = json!({ "kind": check.kind() });
    if let (Value::Object(o), Value::Object(f)) = (&mut object, fields) {
        o.extend(f);
    }
    object.to_string()
}

pub(crate) fn auto_check(text: &str) -> LfResult<AutoCheck> {
    const COLUMN: &str = "battles.auto_check";
    let v: Value = valid(serde_json::from_str(text), COLUMN)?;
    let text_of = |key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| corrupt(format!("{COLUMN}: {key}")))
    };
    let int_of =
        |key: &str| v.get(key).and_then(Value::as_i64).ok_or_else(|| corrupt(format!("{COLUMN}: {key}")));
    let check = match v.get("kind").and_then(Value::as_str) {
        Some("exact") => AutoCheck::exact(text_of("expected")?),
        Some("contains") => {
            let ci = v.get("case_insensitive").and_then(Value::as_bool);
            AutoCheck::contains(text_of("needle")?, ci.ok_or_else(|| corrupt(format!("{COLUMN}: case")))?)
        }
        // Stored only after it compiled: not compiled again on every read.
        Some("regex") => Ok(AutoCheck::Regex { pattern: text_of("pattern")? }),
        Some("json_schema") => AutoCheck::json_schema(text_of("schema")?),
        Some("length_range") => AutoCheck::length_range(int_of("min_chars")?, int_of("max_chars")?),
        other => return Err(corrupt(format!("{COLUMN}: kind {other:?}"))),
    };
    valid(check, COLUMN)
}

/// The stored form of a verdict's criteria scores: a JSON array of tenths.
pub(crate) fn criteria_json(criteria: &[Score]) -> String {
    json!(criteria.iter().map(|s| s.tenths()).collect::<Vec<_>>()).to_string()
}

pub(crate) fn criteria(text: &str) -> LfResult<Vec<Score>> {
    let tenths: Vec<i64> = valid(serde_json::from_str(text), "battle_verdicts.criteria")?;
    tenths.into_iter().map(|t| score(t, "battle_verdicts.criteria")).collect()
}

/// A `battles` row.
pub(crate) fn battle<R: Columns>(row: &R) -> LfResult<Battle> {
    Ok(Battle {
        id: BattleId::from_uuid(row.value("id")?),
        title: valid(BattleTitle::parse(row.value::<String>("title")?), "battles.title")?,
        task_prompt: valid(TaskPrompt::parse(row.value::<String>("task_prompt")?), "battles.task_prompt")?,
        battle_type: valid(BattleType::parse(&row.value::<String>("battle_type")?), "battles.battle_type")?,
        judging_mode: valid(
            JudgingMode::parse(&row.value::<String>("judging_mode")?),
            "battles.judging_mode",
        )?,
        max_contenders: valid(MaxContenders::parse(row.value("max_contenders")?), "battles.max_contenders")?,
        ai_judge_model_key: valid(
            row.value::<Option<String>>("ai_judge_model_key")?.map(ModelKey::parse).transpose(),
            "battles.ai_judge_model_key",
        )?,
        rubric: row.value::<Option<String>>("rubric")?.as_deref().map(rubric).transpose()?,
        auto_check: row.value::<Option<String>>("auto_check")?.as_deref().map(auto_check).transpose()?,
        tags: tags(&row.value::<String>("tags")?, "battles.tags")?,
        creator: LenserId::from_uuid(row.value("creator_id")?),
        agent: row.value::<Option<Uuid>>("agent_id")?.map(LenserId::from_uuid),
        status: status(&row.value::<String>("status")?)?,
        winner: row.value::<Option<Uuid>>("winner_id")?.map(ContenderId::from_uuid),
        created_at: row.time("created_at")?,
        updated_at: row.time("updated_at")?,
        closed_at: row.opt_time("closed_at")?,
    })
}

/// A `battle_contenders` row.
pub(crate) fn contender<R: Columns>(row: &R) -> LfResult<Contender> {
    let slot = number::<usize>(row.value("slot")?, "battle_contenders.slot")?;
    Ok(Contender {
        id: ContenderId::from_uuid(row.value("id")?),
        battle_id: BattleId::from_uuid(row.value("battle_id")?),
        slot: Slot::from_index(slot).ok_or_else(|| corrupt(format!("battle_contenders.slot: {slot}")))?,
        display_name: valid(
            DisplayName::parse(row.value::<String>("display_name")?),
            "battle_contenders.display_name",
        )?,
        contender_type: contender_type(&row.value::<String>("contender_type")?)?,
        reference: ContenderRefId::from_uuid(row.value("reference_id")?),
        owner: row.value::<Option<Uuid>>("owner_id")?.map(LenserId::from_uuid),
        agent: row.value::<Option<Uuid>>("agent_id")?.map(LenserId::from_uuid),
        joined_at: row.time("joined_at")?,
    })
}

/// A `battle_submissions` row.
pub(crate) fn submission<R: Columns>(row: &R) -> LfResult<Submission> {
    Ok(Submission {
        id: SubmissionId::from_uuid(row.value("id")?),
        battle_id: BattleId::from_uuid(row.value("battle_id")?),
        contender_id: ContenderId::from_uuid(row.value("contender_id")?),
        text: valid(SubmissionText::parse(row.value::<String>("text")?), "battle_submissions.text")?,
        submitted_by: row.value::<Option<Uuid>>("submitted_by")?.map(LenserId::from_uuid),
        created_at: row.time("created_at")?,
        updated_at: row.time("updated_at")?,
    })
}

/// A `battle_verdicts` row.
pub(crate) fn verdict<R: Columns>(row: &R) -> LfResult<Verdict> {
    Ok(Verdict {
        battle_id: BattleId::from_uuid(row.value("battle_id")?),
        contender_id: ContenderId::from_uuid(row.value("contender_id")?),
        verdict: valid(VerdictKind::parse(&row.value::<String>("verdict")?), "battle_verdicts.verdict")?,
        score: score(row.value("score")?, "battle_verdicts.score")?,
        criteria: criteria(&row.value::<String>("criteria")?)?,
        reasoning: row.value("reasoning")?,
        model: row.value("model")?,
        position_consistent: row.value("position_consistent")?,
        created_at: row.time("created_at")?,
    })
}

/// A `battle_judge_errors` row.
pub(crate) fn judge_error<R: Columns>(row: &R) -> LfResult<JudgeError> {
    Ok(JudgeError {
        battle_id: BattleId::from_uuid(row.value("battle_id")?),
        model: row.value("model")?,
        message: row.value("message")?,
        at: row.time("at")?,
    })
}

/// A `battle_answer_errors` row.
pub(crate) fn answer_error<R: Columns>(row: &R) -> LfResult<AnswerError> {
    Ok(AnswerError {
        battle_id: BattleId::from_uuid(row.value("battle_id")?),
        contender_id: ContenderId::from_uuid(row.value("contender_id")?),
        run_id: row.value("run_id")?,
        message: row.value("message")?,
        at: row.time("at")?,
    })
}

/// A `battle_standings` row.
pub(crate) fn standing<R: Columns>(row: &R) -> LfResult<Standing> {
    Ok(Standing {
        contender_id: ContenderId::from_uuid(row.value("contender_id")?),
        position: number(row.value("position")?, "battle_standings.position")?,
        rank: number(row.value("rank")?, "battle_standings.rank")?,
        score: row.value::<Option<i64>>("score")?.map(|s| score(s, "battle_standings.score")).transpose()?,
        votes: number(row.value("votes")?, "battle_standings.votes")?,
    })
}

/// Binds the columns of a `battles` row, in [`battle_columns`] order.
pub(crate) fn bind_battle<Q: Bind>(q: Q, b: &Battle) -> Q {
    q.put(b.id.as_uuid())
        .put(b.title.as_str().to_owned())
        .put(b.task_prompt.as_str().to_owned())
        .put(b.battle_type.as_str().to_owned())
        .put(b.judging_mode.as_str().to_owned())
        .put(b.max_contenders.get() as i64)
        .put(b.ai_judge_model_key.as_ref().map(|k| k.as_str().to_owned()))
        .put(b.rubric.as_ref().map(rubric_json))
        .put(b.auto_check.as_ref().map(auto_check_json))
        .put(b.creator.as_uuid())
        .put(b.status.as_str().to_owned())
        .put(b.winner.map(|w| w.as_uuid()))
        .put_time(b.created_at)
        .put_time(b.updated_at)
        .put_opt_time(b.closed_at)
        .put(b.agent.map(|a| a.as_uuid()))
        .put(json!(b.tags).to_string())
}

/// A battle's tags as stored: a JSON array of text.
fn tags(text: &str, column: &str) -> LfResult<Vec<String>> {
    valid(serde_json::from_str(text), column)
}

/// Binds the columns of a `battle_contenders` row, in table order.
pub(crate) fn bind_contender<Q: Bind>(q: Q, c: &Contender) -> Q {
    q.put(c.id.as_uuid())
        .put(c.battle_id.as_uuid())
        .put(c.slot.index() as i64)
        .put(c.display_name.as_str().to_owned())
        .put(c.contender_type.as_str().to_owned())
        .put(c.reference.as_uuid())
        .put(c.owner.map(|o| o.as_uuid()))
        .put_time(c.joined_at)
        .put(c.agent.map(|a| a.as_uuid()))
}

/// Binds the columns of a `battle_submissions` row, in table order.
pub(crate) fn bind_submission<Q: Bind>(q: Q, s: &Submission) -> Q {
    q.put(s.id.as_uuid())
        .put(s.battle_id.as_uuid())
        .put(s.contender_id.as_uuid())
        .put(s.text.as_str().to_owned())
        .put(s.submitted_by.map(|l| l.as_uuid()))
        .put_time(s.created_at)
        .put_time(s.updated_at)
}

/// The contender a vote picks; `None` for a tie.
pub(crate) fn pick_id(pick: VotePick) -> Option<Uuid> {
    match pick {
        VotePick::Contender(c) => Some(c.as_uuid()),
        VotePick::Tie => None,
    }
}

/// Binds the columns of a `battle_votes` row, in table order.
pub(crate) fn bind_vote<Q: Bind>(q: Q, v: &Vote) -> Q {
    q.put(v.id.as_uuid())
        .put(v.battle_id.as_uuid())
        .put(v.voter.as_uuid())
        .put(pick_id(v.pick))
        .put(v.rationale.as_ref().map(|r| r.as_str().to_owned()))
        .put_time(v.created_at)
        .put_time(v.updated_at)
}

/// Binds the columns of a `battle_verdicts` row, in table order.
pub(crate) fn bind_verdict<Q: Bind>(q: Q, v: &Verdict) -> Q {
    q.put(v.battle_id.as_uuid())
        .put(v.contender_id.as_uuid())
        .put(v.verdict.as_str().to_owned())
        .put(i64::from(v.score.tenths()))
        .put(criteria_json(&v.criteria))
        .put(v.reasoning.clone())
        .put(v.model.clone())
        .put(v.position_consistent)
        .put_time(v.created_at)
}

/// Binds the columns of a `battle_standings` row of battle `battle`.
pub(crate) fn bind_standing<Q: Bind>(q: Q, battle: BattleId, s: &Standing) -> Q {
    q.put(battle.as_uuid())
        .put(s.contender_id.as_uuid())
        .put(i64::from(s.position))
        .put(i64::from(s.rank))
        .put(s.score.map(|x| i64::from(x.tenths())))
        .put(i64::from(s.votes))
}

/// A count or duration in a `battle_answer_costs` row.
fn count(n: i64, what: &str) -> LfResult<u64> {
    u64::try_from(n).map_err(|_| corrupt(format!("{what} is negative: {n}")))
}

/// A `battle_answer_costs` row.
pub(crate) fn answer_cost<R: Columns>(row: &R) -> LfResult<AnswerCostRecord> {
    Ok(AnswerCostRecord {
        battle_id: BattleId::from_uuid(row.value("battle_id")?),
        contender_id: row.value::<Option<Uuid>>("contender_id")?.map(ContenderId::from_uuid),
        cost: AnswerCost {
            profile_id: row.value::<Option<Uuid>>("profile_id")?.map(ModelProfileId::from_uuid),
            endpoint: row.value("endpoint")?,
            model: row.value("model")?,
            first_byte_ms: row
                .value::<Option<i64>>("first_byte_ms")?
                .map(|n| count(n, "battle_answer_costs.first_byte_ms"))
                .transpose()?,
            total_ms: count(row.value("total_ms")?, "battle_answer_costs.total_ms")?,
            input_tokens: count(row.value("input_tokens")?, "battle_answer_costs.input_tokens")?,
            output_tokens: count(row.value("output_tokens")?, "battle_answer_costs.output_tokens")?,
            tokens_estimated: row.value("tokens_estimated")?,
            cost_usd: row.value("cost_usd")?,
            finish_reason: row.value("finish_reason")?,
        },
        at: row.time("at")?,
    })
}

/// Binds the columns of a `battle_answer_costs` row, `seq` left out.
pub(crate) fn bind_answer_cost<Q: Bind>(q: Q, k: &AnswerCostRecord) -> Q {
    let big = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let c = &k.cost;
    q.put(k.battle_id.as_uuid())
        .put(k.contender_id.map(|c| c.as_uuid()))
        .put(c.profile_id.map(|p| p.as_uuid()))
        .put(c.endpoint.clone())
        .put(c.model.clone())
        .put(c.first_byte_ms.map(big))
        .put(big(c.total_ms))
        .put(big(c.input_tokens))
        .put(big(c.output_tokens))
        .put(c.tokens_estimated)
        .put(c.cost_usd)
        .put(c.finish_reason.clone())
        .put_time(k.at)
}

/// A row of the leaderboard's cost means.
pub(crate) fn cost_mean<R: Columns>(row: &R) -> LfResult<CostMean> {
    Ok(CostMean {
        reference: ContenderRef {
            kind: contender_type(&row.value::<String>("contender_type")?)?,
            id: ContenderRefId::from_uuid(row.value("reference_id")?),
        },
        answers: u32::try_from(row.value::<i64>("answers")?).unwrap_or(u32::MAX),
        mean_cost_usd: row.value("mean_cost_usd")?,
        mean_total_ms: row.value("mean_total_ms")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_columns_round_trip_and_refuse_the_rest() {
        for check in [
            AutoCheck::exact("42").unwrap(),
            AutoCheck::contains("Ünï \"q\"", true).unwrap(),
            AutoCheck::regex(r"^\d+$").unwrap(),
            AutoCheck::json_schema(r#"{"type":"object"}"#).unwrap(),
            AutoCheck::length_range(3, 100_000).unwrap(),
        ] {
            assert_eq!(auto_check(&auto_check_json(&check)).unwrap(), check);
        }
        for bad in [
            r#"{"kind":"vibes"}"#,
            r#"{"kind":"exact"}"#,
            r#"{"kind":"length_range","min_chars":9,"max_chars":1}"#,
            "[]",
            "x",
        ] {
            assert_eq!(auto_check(bad).unwrap_err().code(), lf_core::ErrorCode::Internal, "{bad}");
        }
        let c = |t: &str, w| {
            RubricCriterion::new(
                CriterionTitle::parse(t).unwrap(),
                w,
                CriterionDescription::parse("").unwrap(),
            )
            .unwrap()
        };
        let r = Rubric::parse(vec![c("Correct", 3), c("Clear 'é'", 1)]).unwrap();
        assert_eq!(rubric(&rubric_json(&r)).unwrap(), r);
        assert!(rubric("[]").is_err() && rubric(r#"[["x",0,""]]"#).is_err());
        let scores = vec![Score::from_tenths(0), Score::from_tenths(1000)];
        assert_eq!(criteria(&criteria_json(&scores)).unwrap(), scores);
        assert!(criteria("[1001]").is_err() && criteria("[-1]").is_err());
    }
}
