//! Scoring: the automatic checks of `auto_score`, the verdict labels, and the
//! final standings recorded at closing. The AI judge (for `ai_judge` and
//! `rubric_score`) lives in [`crate::judge`].

use std::cmp::Ordering;

use lf_core::{LfError, LfResult, Timestamp};
use regex::{Regex, RegexBuilder};

use crate::model::{
    AutoCheck, Battle, Contender, JudgingMode, Score, Standing, Submission, Verdict, VerdictKind, VoteTally,
};

/// Evaluates JSON Schema checks for `auto_score` battles. lf-battle has no
/// JSON library (it stays pure); the application supplies one, e.g. the
/// catalog backed by the `jsonschema` crate. Without a validator, battles
/// with a `json_schema` check cannot be created.
pub trait JsonSchemaValidator: Send + Sync {
    /// Checks that `schema` is a JSON Schema this validator can apply.
    /// INVALID_ARGUMENT with field `auto_check.schema`, saying what is wrong,
    /// otherwise.
    fn check_schema(&self, schema: &str) -> LfResult<()>;

    /// Whether `instance` parses as JSON and is valid against `schema`:
    /// `Ok(())` when it is, `Err(reason)` with a short, human-readable reason
    /// (the first violation) when it is not.
    fn validate(&self, schema: &str, instance: &str) -> Result<(), String>;
}

/// Compiles an `auto_score` pattern within the size limit.
pub fn compile(pattern: &str) -> LfResult<Regex> {
    RegexBuilder::new(pattern).size_limit(AutoCheck::REGEX_SIZE_LIMIT).build().map_err(|e| {
        let why = match e {
            regex::Error::CompiledTooBig(_) => "it compiles too big; simplify it".to_owned(),
            other => lf_core::clip(&other.to_string(), 300).into_owned(),
        };
        LfError::invalid_argument(format!("auto_check.pattern is not a usable regular expression: {why}"))
            .with_field("auto_check.pattern")
    })
}

/// Whether one submission passes a check, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOutcome {
    /// Passed (scores 100) or failed (scores 0).
    pub passed: bool,
    /// One sentence for the verdict's reasoning.
    pub reason: String,
}

/// Applies `check` to `text`. `Err` when the check cannot run at all (a JSON
/// Schema check without a validator): a judge error, not a failed submission.
pub fn run_check(
    check: &AutoCheck,
    text: &str,
    validator: Option<&dyn JsonSchemaValidator>,
) -> Result<CheckOutcome, String> {
    let out = |passed: bool, reason: String| Ok(CheckOutcome { passed, reason });
    match check {
        AutoCheck::Exact { expected } => {
            let passed = text.trim() == expected;
            out(
                passed,
                if passed {
                    "Matches the expected answer exactly."
                } else {
                    "Differs from the expected answer."
                }
                .into(),
            )
        }
        AutoCheck::Contains { needle, case_insensitive } => {
            let passed = if *case_insensitive {
                text.to_lowercase().contains(&needle.to_lowercase())
            } else {
                text.contains(needle.as_str())
            };
            out(
                passed,
                if passed { "Contains the required text." } else { "Does not contain the required text." }
                    .into(),
            )
        }
        AutoCheck::Regex { pattern } => {
            let re = compile(pattern).map_err(|e| e.message().to_owned())?;
            let passed = re.is_match(text);
            out(passed, if passed { "Matches the pattern." } else { "Does not match the pattern." }.into())
        }
        AutoCheck::JsonSchema { schema } => {
            let v = validator.ok_or("no JSON Schema validator is configured on this server")?;
            match v.validate(schema, text) {
                Ok(()) => out(true, "Is valid JSON for the schema.".into()),
                Err(why) => out(false, format!("Is not valid for the schema: {}", lf_core::clip(&why, 300))),
            }
        }
        AutoCheck::LengthRange { min_chars, max_chars } => {
            let n = text.chars().count();
            let passed = (*min_chars as usize..=*max_chars as usize).contains(&n);
            out(
                passed,
                format!(
                    "{n} characters, {} the range {min_chars}–{max_chars}.",
                    if passed { "within" } else { "outside" }
                ),
            )
        }
    }
}

/// The verdicts of an `auto_score` battle: the check applied to every
/// submission (contenders without one get no verdict). `Err(message)` when
/// the check cannot run.
pub fn auto_verdicts(
    battle: &Battle,
    contenders: &[Contender],
    submissions: &[Submission],
    validator: Option<&dyn JsonSchemaValidator>,
    now: Timestamp,
) -> Result<Vec<Verdict>, String> {
    let check = battle.auto_check.as_ref().ok_or("this auto_score battle has no check")?;
    let mut judged = Vec::new();
    for c in contenders {
        let Some(s) = submissions.iter().find(|s| s.contender_id == c.id) else { continue };
        let o = run_check(check, s.text.as_str(), validator)?;
        judged.push((c.id, if o.passed { Score::MAX } else { Score::ZERO }, o.reason));
    }
    let kinds = verdict_kinds(&judged.iter().map(|(_, s, _)| *s).collect::<Vec<_>>());
    Ok(judged
        .into_iter()
        .zip(kinds)
        .map(|((contender_id, score, reasoning), verdict)| Verdict {
            battle_id: battle.id,
            contender_id,
            verdict,
            score,
            criteria: Vec::new(),
            reasoning,
            model: format!("auto_score:{}", check.kind()),
            position_consistent: None,
            created_at: now,
        })
        .collect())
}

/// The label of each score among `scores`: the single best is the winner,
/// several sharing the best score tie, the rest lose.
pub fn verdict_kinds(scores: &[Score]) -> Vec<VerdictKind> {
    let Some(best) = scores.iter().copied().max() else { return Vec::new() };
    let at_top = scores.iter().filter(|s| **s == best).count();
    scores
        .iter()
        .map(|s| match (*s == best, at_top) {
            (true, 1) => VerdictKind::Winner,
            (true, _) => VerdictKind::Tie,
            _ => VerdictKind::Loser,
        })
        .collect()
}

/// The final standings of a battle, by position.
///
/// The primary key is the judging mode's: votes received for
/// `community_vote`; the verdict's score for the judged modes (a contender
/// without a verdict comes after every judged one). Contenders equal on the
/// primary key share a `rank` (1, 1, 3). `position` breaks those ties, in
/// this order, and is what names the winner:
/// 1. the primary key, higher first;
/// 2. the other signal, higher first: votes received in judged modes (a
///    battle may have gone through voting), the verdict score in
///    `community_vote` (none there unless recorded);
/// 3. the earlier current submission first (`updated_at`; no submission last);
/// 4. the slot, A first.
///
/// Every step is a pure function of stored data, so every store and every
/// replay gives the same standings.
pub fn standings(
    battle: &Battle,
    contenders: &[Contender],
    submissions: &[Submission],
    votes: &VoteTally,
    verdicts: &[Verdict],
) -> Vec<Standing> {
    struct Row {
        standing: Standing,
        primary: (bool, u32),
        secondary: (bool, u32),
        submitted: Option<Timestamp>,
        slot: usize,
    }
    let community = battle.judging_mode == JudgingMode::CommunityVote;
    let mut rows: Vec<Row> = contenders
        .iter()
        .map(|c| {
            let score = verdicts.iter().find(|v| v.contender_id == c.id).map(|v| v.score);
            let n = votes.votes_for(c.id);
            let by_score = (score.is_some(), score.map_or(0, |s| u32::from(s.tenths())));
            let by_votes = (true, n);
            let (primary, secondary) = if community { (by_votes, by_score) } else { (by_score, by_votes) };
            Row {
                standing: Standing { contender_id: c.id, position: 0, rank: 0, score, votes: n },
                primary,
                secondary,
                submitted: submissions.iter().find(|s| s.contender_id == c.id).map(|s| s.updated_at),
                slot: c.slot.index(),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.primary
            .cmp(&a.primary)
            .then(b.secondary.cmp(&a.secondary))
            .then(match (a.submitted, b.submitted) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            })
            .then(a.slot.cmp(&b.slot))
    });
    let mut out: Vec<Standing> = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let rank = if i > 0 && rows[i - 1].primary == row.primary { out[i - 1].rank } else { (i + 1) as u8 };
        out.push(Standing { position: (i + 1) as u8, rank, ..row.standing });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lenient;
    impl JsonSchemaValidator for Lenient {
        fn check_schema(&self, _: &str) -> LfResult<()> {
            Ok(())
        }
        fn validate(&self, _: &str, instance: &str) -> Result<(), String> {
            if instance.trim_start().starts_with('{') { Ok(()) } else { Err("not an object".into()) }
        }
    }

    #[test]
    fn checks() {
        let pass = |c: &AutoCheck, t: &str| run_check(c, t, Some(&Lenient)).unwrap().passed;
        let exact = AutoCheck::exact("42").unwrap();
        assert!(pass(&exact, "  42\n") && !pass(&exact, "42.0"));
        let ci = AutoCheck::contains("RUST", true).unwrap();
        assert!(pass(&ci, "I like rust.") && !pass(&AutoCheck::contains("RUST", false).unwrap(), "rust"));
        let re = AutoCheck::regex(r"^\d{3}-\d{4}$").unwrap();
        assert!(pass(&re, "555-1234") && !pass(&re, "5551234"));
        let len = AutoCheck::length_range(2, 3).unwrap();
        assert!(pass(&len, "éé") && !pass(&len, "abcd") && !pass(&len, "a"));
        let js = AutoCheck::json_schema("{}").unwrap();
        assert!(pass(&js, "{\"a\":1}") && !pass(&js, "[1]"));
        assert!(run_check(&js, "{}", None).is_err(), "no validator: the check cannot run");
    }

    #[test]
    fn verdict_labels() {
        use VerdictKind::*;
        let s = |t| Score::from_tenths(t);
        assert_eq!(verdict_kinds(&[s(900), s(500)]), [Winner, Loser]);
        assert_eq!(verdict_kinds(&[s(900), s(900), s(10)]), [Tie, Tie, Loser]);
        assert!(verdict_kinds(&[]).is_empty());
    }
}
