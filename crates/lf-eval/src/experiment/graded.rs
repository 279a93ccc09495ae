//! Graded assertions, asked of the experiment's judge through lf-battle's
//! judge (one implementation of its prompt and of reading its answer:
//! [`lf_battle::judge::build_ask`], [`lf_battle::judge::parse_answer`],
//! [`lf_battle::judge::both_orders`]).
//!
//! - `rubric`: the answer alone, scored on one criterion (the rubric's
//!   text); its score over 100 is the outcome's, passed at the threshold.
//! - `factuality`: the same, the task carrying the case's expected answer
//!   and the criterion agreement with it.
//! - `pairwise`: the answer (contender A) and the baseline's answer to
//!   the same case and repeat (B), asked in both orders as the battle judge
//!   asks; the answer is preferred when its mean score is above the
//!   baseline's, and `position_consistent` says whether both orders ranked
//!   them alike.
//!
//! Calling the model (and retrying) is the runner's: [`Grading`] gives the
//! requests and reads what came back.

use lf_battle::judge::{JudgeAsk, PassScore, both_orders, build_ask, parse_answer};
use lf_battle::{CriterionDescription, CriterionTitle, Rubric, RubricCriterion, Slot};
use lf_core::ChatRequest;
use serde_json::Value;

use super::assertion::Assertion;

/// What the factuality criterion asks of the judge.
const FACTUALITY: &str = "Agrees with the reference answer given after the task: states its facts \
and nothing that contradicts them. Wording and extra detail that do not contradict it do not matter.";

/// One order a judge is asked in: its request and the slots it shows.
#[derive(Clone, Debug)]
pub struct JudgeOrder {
    pub request: ChatRequest,
    pub slots: Vec<Slot>,
}

/// A graded assertion, ready to ask: each order's request.
#[derive(Clone, Debug)]
pub struct Grading {
    pub orders: Vec<JudgeOrder>,
    rubric: Option<Rubric>,
    threshold: f64,
    pairwise: bool,
}

fn slot_b() -> Slot {
    Slot::parse("B").expect("B is a slot")
}

/// What a judge's scores of the answer come to.
#[derive(Clone, Debug, PartialEq)]
pub struct GradedOutcome {
    pub passed: bool,
    /// 0 to 1.
    pub score: f64,
    pub reason: String,
    pub position_consistent: Option<bool>,
}

impl Grading {
    /// The judge's requests for the graded assertion `a` of `answer` to
    /// `task` (the case's question), sent with the model key `model`:
    /// `expected` for factuality, `baseline` (the baseline's answer) for
    /// pairwise. `Err` says why it cannot be graded (no expected answer, a
    /// baseline without an answer, an assertion that is not graded).
    pub fn new(
        a: &Assertion,
        task: &str,
        expected: Option<&Value>,
        answer: &str,
        baseline: Option<&str>,
        model: Option<&str>,
    ) -> Result<Grading, String> {
        let one = |rubric: Rubric, task: &str, threshold: f64| {
            let ask = JudgeAsk { task, rubric: Some(&rubric), model };
            let request = build_ask(&ask, &[(Slot::A, answer)]);
            Grading {
                orders: vec![JudgeOrder { request, slots: vec![Slot::A] }],
                rubric: Some(rubric),
                threshold,
                pairwise: false,
            }
        };
        match a {
            Assertion::Rubric { rubric, threshold } => Ok(one(rubric.clone(), task, *threshold)),
            Assertion::Factuality { threshold } => {
                let expected = match expected {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => return Err("The case has no expected answer to compare.".into()),
                };
                let criterion = RubricCriterion::new(
                    CriterionTitle::parse("Factuality").map_err(|e| e.message().to_owned())?,
                    1,
                    CriterionDescription::parse(FACTUALITY).map_err(|e| e.message().to_owned())?,
                )
                .map_err(|e| e.message().to_owned())?;
                let rubric = Rubric::parse(vec![criterion]).map_err(|e| e.message().to_owned())?;
                let task = format!("{task}\n\nReference answer:\n{expected}");
                Ok(one(rubric, &task, *threshold))
            }
            Assertion::Pairwise { .. } => {
                let base = baseline.ok_or("The baseline has no answer to this case and repeat.")?;
                let ask = JudgeAsk { task, rubric: None, model };
                let (a, b) = (Slot::A, slot_b());
                let forward = build_ask(&ask, &[(a, answer), (b, base)]);
                let reversed = build_ask(&ask, &[(b, base), (a, answer)]);
                Ok(Grading {
                    orders: vec![
                        JudgeOrder { request: forward, slots: vec![a, b] },
                        JudgeOrder { request: reversed, slots: vec![b, a] },
                    ],
                    rubric: None,
                    threshold: 0.5,
                    pairwise: true,
                })
            }
            other => Err(format!("{} is not graded by the judge.", other.kind())),
        }
    }

    /// Reads one order's answer (`order` from 0): its scores, sorted by
    /// slot, or why the answer is not judge JSON.
    pub fn read(&self, order: usize, text: &str) -> Result<Vec<PassScore>, String> {
        parse_answer(text, &self.orders[order].slots, self.rubric.as_ref())
    }

    /// What every order's scores come to.
    pub fn outcome(&self, scores: &[Vec<PassScore>]) -> GradedOutcome {
        if self.pairwise {
            let combined = both_orders(&scores[0], &scores[1]);
            let (mine, theirs) = (combined[0].0, combined[1].0);
            let consistent = combined[0].1;
            let (score, said) = match mine.cmp(&theirs) {
                std::cmp::Ordering::Greater => (1.0, "preferred to the baseline's"),
                std::cmp::Ordering::Equal => (0.5, "tied with the baseline's"),
                std::cmp::Ordering::Less => (0.0, "not preferred to the baseline's"),
            };
            let reason = format!(
                "The answer is {said} ({mine} to {theirs} of 100, both orders' mean; {}). {}",
                if consistent { "position consistent" } else { "not position consistent" },
                reasons(scores, Slot::A),
            );
            return GradedOutcome {
                passed: score == 1.0,
                score,
                reason,
                position_consistent: Some(consistent),
            };
        }
        let s = scores[0][0].score;
        let score = f64::from(s.tenths()) / 1000.0;
        let passed = score >= self.threshold;
        let reason = format!(
            "Scored {s} of 100 ({} the pass mark of {}). {}",
            if passed { "at or above" } else { "below" },
            self.threshold * 100.0,
            reasons(scores, Slot::A)
        );
        GradedOutcome { passed, score, reason, position_consistent: None }
    }
}

/// The judge's reasons for `slot`, each order's (once when they agree).
fn reasons(scores: &[Vec<PassScore>], slot: Slot) -> String {
    let mut said: Vec<&str> = Vec::new();
    for order in scores {
        if let Some(p) = order.iter().find(|p| p.slot == slot)
            && !said.contains(&p.reasoning.as_str())
        {
            said.push(&p.reasoning);
        }
    }
    said.join(" / ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn assertion(v: Value) -> Assertion {
        let Value::Object(o) = v else { panic!("an object") };
        Assertion::parse(&o, "assertions[0]", None).unwrap()
    }

    #[test]
    fn a_rubric_passes_at_its_threshold() {
        let a = assertion(json!({"type": "rubric", "rubric": "Names the capital.", "threshold": 0.7}));
        let g = Grading::new(&a, "Capital of France?", None, "Paris", None, Some("judge")).unwrap();
        assert_eq!(g.orders.len(), 1);
        let user = &g.orders[0].request.user;
        assert!(user.contains("Names the capital.") && user.contains("Paris"), "{user}");
        let reply = |score: f64| {
            format!(
                r#"{{"verdicts":[{{"contender":"A","criteria":[{{"criterion":1,"score":{score}}}],"reasoning":"ok"}}]}}"#
            )
        };
        let pass = g.outcome(&[g.read(0, &reply(70.0)).unwrap()]);
        assert_eq!((pass.passed, pass.score), (true, 0.7));
        let fail = g.outcome(&[g.read(0, &reply(69.9)).unwrap()]);
        assert_eq!((fail.passed, fail.score), (false, 0.699));
        assert!(g.read(0, "not json").is_err());
    }

    #[test]
    fn factuality_needs_the_expected_answer() {
        let a = assertion(json!({"type": "factuality"}));
        assert!(Grading::new(&a, "Q", None, "x", None, None).is_err());
        let g = Grading::new(&a, "Q", Some(&json!("Paris")), "x", None, None).unwrap();
        assert!(g.orders[0].request.user.contains("Reference answer:\nParis"));
    }

    #[test]
    fn pairwise_asks_both_orders_and_records_consistency() {
        let a = assertion(json!({"type": "pairwise", "baseline": 1}));
        assert!(Grading::new(&a, "Q", None, "mine", None, None).is_err(), "no baseline answer");
        let g = Grading::new(&a, "Q", None, "mine", Some("theirs"), None).unwrap();
        assert_eq!(g.orders.len(), 2);
        let reply = |a: u32, b: u32| {
            format!(
                r#"{{"verdicts":[{{"contender":"A","score":{a},"reasoning":"a"}},{{"contender":"B","score":{b},"reasoning":"b"}}]}}"#
            )
        };
        let won = g.outcome(&[g.read(0, &reply(80, 40)).unwrap(), g.read(1, &reply(70, 50)).unwrap()]);
        assert_eq!((won.passed, won.score, won.position_consistent), (true, 1.0, Some(true)));
        // The first-shown answer preferred each time: inconsistent.
        let split = g.outcome(&[g.read(0, &reply(90, 40)).unwrap(), g.read(1, &reply(30, 60)).unwrap()]);
        assert_eq!((split.passed, split.score, split.position_consistent), (true, 1.0, Some(false)));
        let tie = g.outcome(&[g.read(0, &reply(50, 50)).unwrap(), g.read(1, &reply(50, 50)).unwrap()]);
        assert_eq!((tie.passed, tie.score), (false, 0.5));
    }
}
