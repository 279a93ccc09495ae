//! Battle types. Every value is parsed once at the edge and valid from then on:
//! the closed sets of words and the checked values here, the records built
//! of them in `records.rs`.

use std::fmt;

use lf_core::{
    BattleId, ContenderId, ContenderRefId, LenserId, LfError, LfResult, SubmissionId, Timestamp, VoteId,
    check_length, no_nul,
};

mod records;
pub use records::*;

lf_core::word_enum!(
    /// Where a battle is in its lifecycle (DESIGN §7; see [`crate::state`]).
    BattleStatus, "status", [
        /// Being set up; only its creator (and the service) can see it.
        Draft = "draft",
        /// Visible to everyone; contenders join and may submit.
        Open = "open",
        /// Contenders are answering the task.
        Executing = "executing",
        /// The community votes on the submissions.
        Voting = "voting",
        /// Submissions are frozen and being judged.
        Scoring = "scoring",
        /// Ranks and winner are recorded.
        Closed = "closed",
        /// A closed battle shown off.
        Published = "published",
        /// Withdrawn; nothing leaves this state.
        Archived = "archived",
    ]
);

impl BattleStatus {
    /// Whether a battle in this status has results: it counts in
    /// [`crate::BattleStore::closed_results`] and on the leaderboard.
    pub const fn has_results(self) -> bool {
        matches!(self, Self::Closed | Self::Published)
    }
}

lf_core::word_enum!(
    /// The format of a battle: which kinds of contender it takes.
    BattleType, "battle_type", [
        /// AI models and agents compete.
        AiVsAi = "ai_vs_ai",
        /// Humans compete; an AI judges.
        HumanVsHumanAiVotes = "human_vs_human_ai_votes",
        /// Humans compete; the community votes.
        HumanVsHumanOpenVotes = "human_vs_human_open_votes",
        /// At least one human against at least one AI.
        HumanVsAi = "human_vs_ai",
        /// Workflows compete.
        WorkflowBattle = "workflow_battle",
        /// Lensers compete directly, in person or through their agents.
        LenserBattle = "lenser_battle",
    ]
);

lf_core::word_enum!(
    /// How a battle's submissions are judged.
    JudgingMode, "judging_mode", [
        /// Ranked by the community's votes.
        CommunityVote = "community_vote",
        /// Scored 0–100 by a model (see [`crate::judge`]).
        AiJudge = "ai_judge",
        /// Scored by a model on each weighted criterion of the battle's rubric.
        RubricScore = "rubric_score",
        /// Scored by the deterministic check set at creation.
        AutoScore = "auto_score",
    ]
);

lf_core::word_enum!(
    /// What a contender is.
    ContenderType, "contender_type", [
        /// A person.
        Human = "human",
        /// A model profile.
        AiModel = "ai_model",
        /// An AI Lenser (an agent owned by a person).
        AiAgent = "ai_agent",
        /// A workflow.
        Workflow = "workflow",
    ]
);

impl ContenderType {
    /// Its word with its article, as a message names it: "a human", "an
    /// ai_agent".
    pub const fn with_article(self) -> &'static str {
        match self {
            ContenderType::Human => "a human",
            ContenderType::AiModel => "an ai_model",
            ContenderType::AiAgent => "an ai_agent",
            ContenderType::Workflow => "a workflow",
        }
    }

    /// Whether this is an AI (a model or an agent).
    pub const fn is_ai(self) -> bool {
        matches!(self, ContenderType::AiModel | ContenderType::AiAgent)
    }
}

impl BattleType {
    /// The contender types this format accepts.
    pub const fn allowed(self) -> &'static [ContenderType] {
        use ContenderType::*;
        match self {
            BattleType::AiVsAi => &[AiModel, AiAgent],
            BattleType::HumanVsHumanAiVotes | BattleType::HumanVsHumanOpenVotes => &[Human],
            BattleType::HumanVsAi => &[Human, AiModel, AiAgent],
            BattleType::WorkflowBattle => &[Workflow],
            BattleType::LenserBattle => &[Human, AiAgent],
        }
    }

    /// Whether this format accepts contenders of type `t`.
    pub fn allows(self, t: ContenderType) -> bool {
        self.allowed().contains(&t)
    }
}

impl JudgingMode {
    /// The judging mode used when a battle is created without one: community
    /// votes for `human_vs_human_open_votes` (the format says so), the AI
    /// judge for everything else (the spec's default).
    pub const fn default_for(battle_type: BattleType) -> JudgingMode {
        match battle_type {
            BattleType::HumanVsHumanOpenVotes => JudgingMode::CommunityVote,
            _ => JudgingMode::AiJudge,
        }
    }

    /// Whether the judging mode runs a judge (a model or a check) once the
    /// battle is in scoring.
    pub const fn is_judged(self) -> bool {
        !matches!(self, JudgingMode::CommunityVote)
    }
}

lf_core::text_newtype!(
    /// A battle title: 1 to 200 characters after trimming.
    BattleTitle, "title", 1, 200, trim = true
);
lf_core::text_newtype!(
    /// The task every contender answers: 1 to 32,000 characters, stored as
    /// written, not blank.
    TaskPrompt, "task_prompt", 1, 32_000, trim = false
);
lf_core::text_newtype!(
    /// A contender's label: 1 to 100 characters after trimming.
    DisplayName, "display_name", 1, 100, trim = true
);
lf_core::text_newtype!(
    /// A contender's answer: 1 to 100,000 characters, stored as written, not
    /// blank.
    SubmissionText, "content_text", 1, 100_000, trim = false
);
lf_core::text_newtype!(
    /// The model the AI judge asks for: 1 to 200 characters after trimming.
    ModelKey, "ai_judge_model_key", 1, 200, trim = true
);
lf_core::text_newtype!(
    /// Why a voter voted as they did: 1 to 2,000 characters after trimming.
    Rationale, "rationale", 1, 2_000, trim = true
);
lf_core::text_newtype!(
    /// The title of a rubric criterion: 1 to 100 characters after trimming.
    CriterionTitle, "rubric.title", 1, 100, trim = true
);
lf_core::text_newtype!(
    /// What a rubric criterion asks for: up to 1,000 characters after trimming.
    CriterionDescription, "rubric.description", 0, 1_000, trim = true
);

/// A contender slot, `A` to `Z`. Slots of a battle are always a prefix of
/// the alphabet: the n-th contender gets the n-th letter.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slot(u8);

impl Slot {
    /// Slot `A`.
    pub const A: Slot = Slot(0);
    /// How many slots there are.
    pub const COUNT: usize = 26;

    /// Parses one uppercase letter `A`–`Z`.
    pub fn parse(s: &str) -> LfResult<Self> {
        match s.as_bytes() {
            [b @ b'A'..=b'Z'] => Ok(Slot(b - b'A')),
            _ => Err(LfError::invalid_argument(format!(
                "slot must be one uppercase letter A to Z, got {}",
                LfError::excerpt(s)
            ))
            .with_field("slot")),
        }
    }

    /// The slot at `index` (0 is `A`), if there is one.
    pub fn from_index(index: usize) -> Option<Self> {
        (index < Self::COUNT).then_some(Slot(index as u8))
    }

    /// 0 for `A`, 25 for `Z`.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The letter.
    pub const fn letter(self) -> char {
        (b'A' + self.0) as char
    }
}

impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Slot({})", self.letter())
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// How many contenders a battle takes: 2 to 26, 2 by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MaxContenders(u8);

impl MaxContenders {
    /// The default, a duel.
    pub const DEFAULT: MaxContenders = MaxContenders(2);

    /// Checks the range 2..=26.
    pub fn parse(n: i64) -> LfResult<Self> {
        if !(2..=26).contains(&n) {
            return Err(LfError::invalid_argument(format!(
                "max_contenders must be between 2 and 26 (one per slot A–Z), got {n}"
            ))
            .with_field("max_contenders"));
        }
        Ok(Self(n as u8))
    }

    /// The number.
    pub const fn get(self) -> usize {
        self.0 as usize
    }
}

impl Default for MaxContenders {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A score from 0 to 100 in steps of 0.1, kept as tenths so that it is
/// exact, ordered, and stored as an integer (0..=1000) by every store.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Score(u16);

impl Score {
    /// 0.
    pub const ZERO: Score = Score(0);
    /// 100.
    pub const MAX: Score = Score(1000);

    /// A score from a number in 0..=100, rounded to the nearest tenth.
    /// INVALID_ARGUMENT naming `field` for anything else (NaN included).
    pub fn from_f64(field: &str, x: f64) -> LfResult<Self> {
        if !(0.0..=100.0).contains(&x) {
            return Err(LfError::invalid_argument(format!(
                "{field} must be a number from 0 to 100, got {x}"
            ))
            .with_field(field));
        }
        Ok(Score((x * 10.0).round() as u16))
    }

    /// A score from tenths (0..=1000), as stores keep it; clamped to 1000.
    pub fn from_tenths(tenths: u16) -> Self {
        Score(tenths.min(1000))
    }

    /// The score in tenths, 0..=1000.
    pub const fn tenths(self) -> u16 {
        self.0
    }

    /// The score as a number, 0.0..=100.0.
    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 10.0
    }

    /// The mean of some scores, rounded half up to a tenth; zero for none.
    pub fn mean(scores: impl IntoIterator<Item = Score>) -> Score {
        let (sum, n) = scores.into_iter().fold((0u64, 0u64), |(s, n), x| (s + u64::from(x.0), n + 1));
        if n == 0 { Score::ZERO } else { Score(((2 * sum + n) / (2 * n)) as u16) }
    }
}

impl fmt::Debug for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Score({self})")
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_multiple_of(10) {
            write!(f, "{}", self.0 / 10)
        } else {
            write!(f, "{}.{}", self.0 / 10, self.0 % 10)
        }
    }
}

/// One criterion of a rubric: what it asks for and how much it weighs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RubricCriterion {
    /// A short name ("Correctness").
    pub title: CriterionTitle,
    /// A relative weight, 1 to 100.
    pub weight: u8,
    /// What the judge should look for (may be empty).
    pub description: CriterionDescription,
}

impl RubricCriterion {
    /// Checks the weight range 1..=100.
    pub fn new(title: CriterionTitle, weight: i64, description: CriterionDescription) -> LfResult<Self> {
        if !(1..=100).contains(&weight) {
            return Err(LfError::invalid_argument(format!(
                "rubric.weight must be a whole number from 1 to 100 (weights are relative), got {weight}"
            ))
            .with_field("rubric.weight"));
        }
        Ok(Self { title, weight: weight as u8, description })
    }
}

/// The weighted criteria of a `rubric_score` battle: 1 to 20, titles unique
/// (case-insensitively), in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rubric(Vec<RubricCriterion>);

impl Rubric {
    /// Most criteria a rubric may have.
    pub const MAX_CRITERIA: usize = 20;

    /// Checks the count and that titles are unique.
    pub fn parse(criteria: Vec<RubricCriterion>) -> LfResult<Self> {
        if criteria.is_empty() || criteria.len() > Self::MAX_CRITERIA {
            return Err(LfError::invalid_argument(format!(
                "rubric must have 1 to {} criteria, got {}",
                Self::MAX_CRITERIA,
                criteria.len()
            ))
            .with_field("rubric"));
        }
        for (i, c) in criteria.iter().enumerate() {
            let key = c.title.as_str().to_lowercase();
            if criteria[..i].iter().any(|o| o.title.as_str().to_lowercase() == key) {
                return Err(LfError::invalid_argument(format!(
                    "rubric has two criteria titled {}: give each criterion its own title",
                    LfError::excerpt(c.title.as_str())
                ))
                .with_field("rubric.title"));
            }
        }
        Ok(Self(criteria))
    }

    /// The criteria, in order.
    pub fn criteria(&self) -> &[RubricCriterion] {
        &self.0
    }

    /// The weighted mean of per-criterion scores given in rubric order
    /// (missing trailing scores count as 0), rounded to a tenth.
    pub fn weighted(&self, scores: &[Score]) -> Score {
        let total: u64 = self.0.iter().map(|c| u64::from(c.weight)).sum();
        let sum: u64 = self
            .0
            .iter()
            .zip(scores.iter().copied().chain(std::iter::repeat(Score::ZERO)))
            .map(|(c, s)| u64::from(c.weight) * u64::from(s.tenths()))
            .sum();
        Score::from_tenths(((2 * sum + total) / (2 * total)) as u16)
    }
}

/// The deterministic check of an `auto_score` battle, set at creation. A
/// submission that passes scores 100, one that fails scores 0 (see
/// [`crate::scoring::run_check`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AutoCheck {
    /// The submission, with leading and trailing whitespace removed, equals
    /// `expected` (also trimmed), character for character.
    Exact {
        /// The expected answer, trimmed.
        expected: String,
    },
    /// The submission contains `needle`; with `case_insensitive`, after
    /// lowercasing both.
    Contains {
        /// The text to find.
        needle: String,
        /// Compare after lowercasing both.
        case_insensitive: bool,
    },
    /// The regular expression (Rust `regex` syntax: no backreferences or
    /// lookaround, linear-time matching) matches somewhere in the submission.
    Regex {
        /// The pattern.
        pattern: String,
    },
    /// The submission is a JSON document valid against this JSON Schema.
    /// Evaluated by the [`crate::JsonSchemaValidator`] the service is given.
    JsonSchema {
        /// The schema, as JSON text.
        schema: String,
    },
    /// The submission's length in characters is within `min..=max`.
    LengthRange {
        /// Fewest characters.
        min_chars: u32,
        /// Most characters.
        max_chars: u32,
    },
}

impl AutoCheck {
    /// Most characters of an expected text, needle or schema.
    pub const MAX_TEXT_CHARS: usize = 100_000;
    /// Most characters of a pattern.
    pub const MAX_PATTERN_CHARS: usize = 1_000;
    /// Most memory a compiled pattern may take.
    pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

    /// The name of the check's kind, as the catalog spells it.
    pub const fn kind(&self) -> &'static str {
        match self {
            AutoCheck::Exact { .. } => "exact",
            AutoCheck::Contains { .. } => "contains",
            AutoCheck::Regex { .. } => "regex",
            AutoCheck::JsonSchema { .. } => "json_schema",
            AutoCheck::LengthRange { .. } => "length_range",
        }
    }

    /// An exact-match check; INVALID_ARGUMENT for an empty or oversized text.
    pub fn exact(expected: impl Into<String>) -> LfResult<Self> {
        let expected = expected.into();
        check_text("auto_check.expected", expected.trim(), Self::MAX_TEXT_CHARS)?;
        Ok(AutoCheck::Exact { expected: expected.trim().to_owned() })
    }

    /// A substring check.
    pub fn contains(needle: impl Into<String>, case_insensitive: bool) -> LfResult<Self> {
        let needle = needle.into();
        check_text("auto_check.needle", &needle, Self::MAX_TEXT_CHARS)?;
        Ok(AutoCheck::Contains { needle, case_insensitive })
    }

    /// A regular-expression check; the pattern must compile within
    /// [`AutoCheck::REGEX_SIZE_LIMIT`].
    pub fn regex(pattern: impl Into<String>) -> LfResult<Self> {
        let pattern = pattern.into();
        check_text("auto_check.pattern", &pattern, Self::MAX_PATTERN_CHARS)?;
        crate::scoring::compile(&pattern)?;
        Ok(AutoCheck::Regex { pattern })
    }

    /// A JSON Schema check. Only the size is checked here; the service asks
    /// its [`crate::JsonSchemaValidator`] whether the schema is usable.
    pub fn json_schema(schema: impl Into<String>) -> LfResult<Self> {
        let schema = schema.into();
        check_text("auto_check.schema", &schema, Self::MAX_TEXT_CHARS)?;
        Ok(AutoCheck::JsonSchema { schema })
    }

    /// A length check: `min_chars <= max_chars <= 100,000`.
    pub fn length_range(min_chars: i64, max_chars: i64) -> LfResult<Self> {
        let max = SubmissionText::MAX_CHARS as i64;
        if !(0..=max).contains(&min_chars) {
            return Err(LfError::invalid_argument(format!(
                "auto_check.min_chars must be between 0 and {max}, got {min_chars}"
            ))
            .with_field("auto_check.min_chars"));
        }
        if !(min_chars..=max).contains(&max_chars) {
            return Err(LfError::invalid_argument(format!(
                "auto_check.max_chars must be between min_chars ({min_chars}) and {max}, got {max_chars}"
            ))
            .with_field("auto_check.max_chars"));
        }
        Ok(AutoCheck::LengthRange { min_chars: min_chars as u32, max_chars: max_chars as u32 })
    }
}

fn check_text(field: &str, s: &str, max: usize) -> LfResult<()> {
    check_length(field, s, 1, max)?;
    no_nul(field, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip_and_name_the_field() {
        for s in BattleStatus::ALL {
            assert_eq!(BattleStatus::parse(s.as_str()).unwrap(), *s);
        }
        for t in BattleType::ALL {
            assert_eq!(BattleType::parse(t.as_str()).unwrap(), *t);
        }
        let e = JudgingMode::parse("vibes").unwrap_err();
        assert_eq!(e.code(), lf_core::ErrorCode::InvalidArgument);
        assert!(e.message().contains("community_vote, ai_judge, rubric_score, auto_score"), "{e}");
        assert_eq!(e.details()[0].1, lf_core::Detail::Str("judging_mode".into()));
    }

    #[test]
    fn texts_are_bounded_and_not_blank() {
        assert_eq!(BattleTitle::parse("  Haiku duel ").unwrap().as_str(), "Haiku duel");
        assert!(BattleTitle::parse("x".repeat(201)).is_err());
        assert!(BattleTitle::parse("x".repeat(200)).is_ok());
        assert!(TaskPrompt::parse("   \n ").is_err());
        assert_eq!(TaskPrompt::parse(" keep spaces ").unwrap().as_str(), " keep spaces ");
        assert!(SubmissionText::parse("x".repeat(100_000)).is_ok());
        let e = SubmissionText::parse("x".repeat(100_001)).unwrap_err();
        assert!(e.message().contains("more than 100000"), "{e}");
        assert!(SubmissionText::parse("\t\n").unwrap_err().message().contains("blank"));
        assert!(SubmissionText::parse("a\0b").is_err());
        assert!(DisplayName::parse("x".repeat(101)).is_err());
        assert!(CriterionDescription::parse("").is_ok());
    }

    #[test]
    fn slots_and_ranges() {
        assert_eq!(Slot::parse("C").unwrap().index(), 2);
        for bad in ["", "a", "AB", "[", "Ä"] {
            assert!(Slot::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Slot::from_index(25).unwrap().letter(), 'Z');
        assert!(Slot::from_index(26).is_none());
        assert!(MaxContenders::parse(1).is_err() && MaxContenders::parse(27).is_err());
        assert_eq!(MaxContenders::parse(26).unwrap().get(), 26);
    }

    #[test]
    fn scores_are_tenths() {
        assert_eq!(Score::from_f64("score", 92.44).unwrap().tenths(), 924);
        assert_eq!(Score::from_f64("score", 92.45).unwrap().to_string(), "92.5");
        assert!(Score::from_f64("score", 100.1).is_err());
        assert!(Score::from_f64("score", f64::NAN).is_err());
        assert_eq!(Score::mean([Score::from_tenths(900), Score::from_tenths(851)]).tenths(), 876);
        assert_eq!(Score::mean([]), Score::ZERO);
    }

    #[test]
    fn rubric_weights() {
        let c = |t: &str, w| {
            RubricCriterion::new(
                CriterionTitle::parse(t).unwrap(),
                w,
                CriterionDescription::parse("").unwrap(),
            )
            .unwrap()
        };
        let r = Rubric::parse(vec![c("Correct", 3), c("Clear", 1)]).unwrap();
        assert_eq!(r.weighted(&[Score::from_tenths(1000), Score::from_tenths(0)]).tenths(), 750);
        assert!(Rubric::parse(vec![c("Same", 1), c("same", 2)]).is_err());
        assert!(Rubric::parse(vec![]).is_err());
        assert!(
            RubricCriterion::new(
                CriterionTitle::parse("x").unwrap(),
                0,
                CriterionDescription::parse("").unwrap()
            )
            .is_err()
        );
    }

    #[test]
    fn auto_checks_validate_at_creation() {
        assert!(AutoCheck::regex("(unclosed").is_err());
        assert!(AutoCheck::regex("a{1000}{1000}").is_err(), "oversized patterns are refused");
        assert!(AutoCheck::regex(r"^\d+$").is_ok());
        assert!(AutoCheck::length_range(10, 5).is_err());
        assert!(AutoCheck::length_range(0, 100_000).is_ok());
        assert_eq!(AutoCheck::exact("  42 ").unwrap(), AutoCheck::Exact { expected: "42".into() });
        assert!(AutoCheck::exact("   ").is_err());
    }

    #[test]
    fn formats_allow_their_types() {
        use ContenderType::*;
        assert!(BattleType::AiVsAi.allows(AiAgent) && !BattleType::AiVsAi.allows(Human));
        assert!(BattleType::LenserBattle.allows(Human) && !BattleType::LenserBattle.allows(AiModel));
        assert!(BattleType::WorkflowBattle.allows(Workflow) && !BattleType::WorkflowBattle.allows(AiAgent));
        assert_eq!(JudgingMode::default_for(BattleType::HumanVsHumanOpenVotes), JudgingMode::CommunityVote);
        assert_eq!(JudgingMode::default_for(BattleType::AiVsAi), JudgingMode::AiJudge);
    }
}
