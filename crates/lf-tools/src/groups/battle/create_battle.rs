use lf_agent::UsageKind;
use lf_agent::policy::{Capability, Gate};
use lf_battle::guide;
use lf_battle::{
    AutoCheck, BattleTitle, CriterionDescription, CriterionTitle, JudgingState, MaxContenders, ModelKey,
    NewBattle, Rubric, RubricCriterion, TaskPrompt,
};
use lf_core::{LfError, LfResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shapes::{BattleFieldsOut, BattleTypeIn, JudgingModeIn};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

/// The kind of an automatic check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckKindIn {
    Exact,
    Contains,
    Regex,
    JsonSchema,
    LengthRange,
}

impl CheckKindIn {
    const fn as_str(self) -> &'static str {
        match self {
            CheckKindIn::Exact => "exact",
            CheckKindIn::Contains => "contains",
            CheckKindIn::Regex => "regex",
            CheckKindIn::JsonSchema => "json_schema",
            CheckKindIn::LengthRange => "length_range",
        }
    }

    /// The fields of `auto_check` this kind reads.
    const fn fields(self) -> &'static [&'static str] {
        match self {
            CheckKindIn::Exact => &["expected"],
            CheckKindIn::Contains => &["needle", "case_insensitive"],
            CheckKindIn::Regex => &["pattern"],
            CheckKindIn::JsonSchema => &["schema"],
            CheckKindIn::LengthRange => &["min_chars", "max_chars"],
        }
    }
}

// One weighted criterion of a rubric_score battle.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CriterionIn {
    /// A short name, unique in the rubric ("Correctness").
    #[schemars(length(min = 1, max = 100))]
    pub title: String,
    /// Relative weight.
    #[schemars(range(min = 1, max = 100), extend("default" = 1))]
    pub weight: Option<i64>,
    /// What the judge looks for.
    #[schemars(length(max = 1000))]
    pub description: Option<String>,
}

// The deterministic check of an auto_score battle. A submission that passes
// scores 100, one that fails 0. Give only the fields of the chosen kind.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutoCheckIn {
    /// exact (expected), contains (needle, case_insensitive), regex (pattern), json_schema (schema) or length_range (min_chars, max_chars).
    pub kind: CheckKindIn,
    /// exact: the answer (whitespace around it ignored).
    #[schemars(length(min = 1, max = 100000))]
    pub expected: Option<String>,
    /// contains: text the answer must contain.
    #[schemars(length(min = 1, max = 100000))]
    pub needle: Option<String>,
    /// contains: ignore case.
    #[schemars(extend("default" = false))]
    pub case_insensitive: Option<bool>,
    /// regex: a Rust regex (no look-around) the answer must match.
    #[schemars(length(min = 1, max = 1000))]
    pub pattern: Option<String>,
    /// json_schema: a self-contained JSON Schema (object or text) the answer, as JSON, must satisfy.
    pub schema: Option<Value>,
    /// length_range: fewest characters.
    #[schemars(range(min = 0, max = 100000), extend("default" = 0))]
    pub min_chars: Option<i64>,
    /// length_range: most characters.
    #[schemars(range(min = 0, max = 100000))]
    pub max_chars: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBattleIn {
    /// Display name.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    /// The challenge every contender answers.
    #[schemars(length(min = 1, max = 32000))]
    pub task_prompt: String,
    /// The format: which kinds of contender it takes.
    #[schemars(extend("default" = "ai_vs_ai"))]
    pub battle_type: Option<BattleTypeIn>,
    /// How answers are judged (community_vote by default for human_vs_human_open_votes).
    #[schemars(extend("default" = "ai_judge"))]
    pub judging_mode: Option<JudgingModeIn>,
    /// Contender slots (A, B, C…).
    #[schemars(range(min = 2, max = 26), extend("default" = 2))]
    pub max_contenders: Option<i64>,
    /// The model the AI judge asks; default: the server's.
    #[schemars(length(min = 1, max = 200))]
    pub ai_judge_model_key: Option<String>,
    /// rubric_score only (required there): the judge's weighted criteria.
    #[schemars(length(min = 1, max = 20))]
    pub rubric: Option<Vec<CriterionIn>>,
    /// auto_score only (required there): the check each answer passes (100) or fails (0).
    pub auto_check: Option<AutoCheckIn>,
    /// For get_leaderboard's category.
    #[schemars(length(max = 5))]
    pub tags: Option<Vec<String>>,
}

#[derive(Serialize, JsonSchema)]
pub struct CreatedBattleOut {
    #[serde(flatten)]
    pub battle: BattleFieldsOut,
    pub next_step: String,
}

fn required<T>(value: Option<T>, kind: CheckKindIn, name: &str) -> LfResult<T> {
    value.ok_or_else(|| {
        LfError::invalid_argument(format!("auto_check of kind {} needs {name}.", kind.as_str()))
            .with_field(&format!("auto_check.{name}"))
    })
}

fn auto_check(a: AutoCheckIn) -> LfResult<AutoCheck> {
    let kind = a.kind;
    let given = [
        ("expected", a.expected.is_some()),
        ("needle", a.needle.is_some()),
        ("case_insensitive", a.case_insensitive.is_some()),
        ("pattern", a.pattern.is_some()),
        ("schema", a.schema.is_some()),
        ("min_chars", a.min_chars.is_some()),
        ("max_chars", a.max_chars.is_some()),
    ];
    if let Some((name, _)) = given.iter().find(|(name, set)| *set && !kind.fields().contains(name)) {
        return Err(LfError::invalid_argument(format!(
            "auto_check.{name} is not used by kind {}, which takes {}: drop it or change kind.",
            kind.as_str(),
            kind.fields().join(", ")
        ))
        .with_field(&format!("auto_check.{name}")));
    }
    match kind {
        CheckKindIn::Exact => AutoCheck::exact(required(a.expected, kind, "expected")?),
        CheckKindIn::Contains => {
            AutoCheck::contains(required(a.needle, kind, "needle")?, a.case_insensitive.unwrap_or(false))
        }
        CheckKindIn::Regex => AutoCheck::regex(required(a.pattern, kind, "pattern")?),
        CheckKindIn::JsonSchema => AutoCheck::json_schema(match required(a.schema, kind, "schema")? {
            Value::String(text) => text,
            other => other.to_string(),
        }),
        CheckKindIn::LengthRange => {
            AutoCheck::length_range(a.min_chars.unwrap_or(0), required(a.max_chars, kind, "max_chars")?)
        }
    }
}

fn rubric(criteria: Vec<CriterionIn>) -> LfResult<Rubric> {
    let parsed = criteria
        .into_iter()
        .map(|c| {
            RubricCriterion::new(
                CriterionTitle::parse(c.title)?,
                c.weight.unwrap_or(1),
                CriterionDescription::parse(c.description.unwrap_or_default())?,
            )
        })
        .collect::<LfResult<Vec<_>>>()?;
    Rubric::parse(parsed)
}

pub struct CreateBattle;

impl Tool for CreateBattle {
    const NAME: &'static str = "create_battle";
    const TITLE: &'static str = "Create a battle";
    const SAFETY: Safety = Safety::Write;
    const AGENT_GATE: Gate = Gate::needs(Capability::CreateBattles).counting(UsageKind::Battles);
    const ACTION_WORDS: &'static [&'static str] = &["create_battle"];
    const DESCRIPTION: &'static str = "Create a battle in draft: a task prompt, a format, how answers are judged and 2 to 26 slots; then add contenders and open it.";
    type Input = CreateBattleIn;
    type Output = CreatedBattleOut;

    async fn call(ctx: Ctx, i: CreateBattleIn) -> LfResult<CreatedBattleOut> {
        let mut new = NewBattle::new(BattleTitle::parse(i.title)?, TaskPrompt::parse(i.task_prompt)?);
        new.battle_type = i.battle_type.map(Into::into);
        new.judging_mode = i.judging_mode.map(Into::into);
        new.max_contenders = i.max_contenders.map(MaxContenders::parse).transpose()?;
        new.ai_judge_model_key = i.ai_judge_model_key.map(ModelKey::parse).transpose()?;
        new.rubric = i.rubric.map(rubric).transpose()?;
        new.auto_check = i.auto_check.map(auto_check).transpose()?;
        new.tags = i.tags.unwrap_or_default();
        let b = ctx.services.battle.create(&ctx.principal, new).await?;
        let next_step = guide::next_step(&b, &[], JudgingState::of(&b, &[], &[], false));
        Ok(CreatedBattleOut { next_step, battle: BattleFieldsOut::from(&b) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_kinds_match_the_domain() {
        for (kind, check) in [
            (CheckKindIn::Exact, AutoCheck::exact("x").unwrap()),
            (CheckKindIn::Contains, AutoCheck::contains("x", false).unwrap()),
            (CheckKindIn::Regex, AutoCheck::regex("x").unwrap()),
            (CheckKindIn::JsonSchema, AutoCheck::json_schema("{}").unwrap()),
            (CheckKindIn::LengthRange, AutoCheck::length_range(0, 1).unwrap()),
        ] {
            assert_eq!(kind.as_str(), check.kind());
            let w: CheckKindIn = serde_json::from_value(Value::String(check.kind().to_owned())).unwrap();
            assert_eq!(w, kind);
        }
    }
}
