//! The pages' fixtures: battles made through the tools, and a browser-less
//! sign-in that keeps the session cookie.

use lf_core::Scopes;
use serde_json::{Value, json};

use super::{PASSWORD, Server, call_tool, client};

/// The answer with a script in it: shown as text, never run.
pub const SCRIPT_ANSWER: &str = "<script>document.title='pwned'</script>Borrowing lends a value.";

async fn ok(s: &Server, token: &str, tool: &str, args: Value) -> Value {
    let r = call_tool(s, Some(token), tool, args).await;
    assert_eq!(r["isError"], false, "{tool}: {r}");
    r["structuredContent"].clone()
}

/// A human_vs_human_open_votes battle `creator` made, its contenders
/// `writers` (humans, in slot order) with an answer each: the first writer's
/// answer carries [`SCRIPT_ANSWER`]. In voting, unless `draft`. Its id and
/// its contenders' ids.
pub async fn battle(s: &Server, creator: &str, writers: [&str; 2], draft: bool) -> (String, Vec<String>) {
    let token = s.token(creator, Scopes::READ_WRITE).await;
    let created = ok(
        s,
        &token,
        "create_battle",
        json!({"title": "Ownership duel", "task_prompt": "Explain <b>ownership</b> to a Python programmer.",
               "battle_type": "human_vs_human_open_votes"}),
    )
    .await;
    let battle = created["id"].as_str().unwrap().to_owned();
    let mut contenders = Vec::new();
    for (n, w) in writers.iter().enumerate() {
        let args = json!({"battle_id": battle, "display_name": format!("Writer {w}"), "contender_type": "human",
                          "contender_ref_id": s.lenser(w).await.to_string()});
        let added = ok(s, &token, "add_battle_contender", args).await;
        contenders.push((added["contender_id"].as_str().unwrap().to_owned(), n));
    }
    if !draft {
        for status in ["open", "executing"] {
            ok(s, &token, "set_battle_status", json!({"battle_id": battle, "status": status})).await;
        }
        for (c, n) in &contenders {
            let text = if *n == 0 { SCRIPT_ANSWER.to_owned() } else { format!("Answer number {n}.") };
            ok(
                s,
                &token,
                "submit_battle_run",
                json!({"battle_id": battle, "contender_id": c, "content_text": text}),
            )
            .await;
        }
    }
    (battle, contenders.into_iter().map(|(c, _)| c).collect())
}

/// A browser without a browser: signs in through the form and keeps the
/// session cookie.
pub struct Visitor {
    pub cookie: String,
}

/// The `name=value` of a `Set-Cookie` named `name` in `r`, and the whole header.
pub fn set_cookie(r: &reqwest::Response, name: &str) -> Option<(String, String)> {
    r.headers().get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).find_map(|v| {
        let pair = v.split(';').next()?.trim();
        pair.starts_with(&format!("{name}=")).then(|| (pair.to_owned(), v.to_owned()))
    })
}

/// The value of the hidden field `name` in `page`.
pub fn hidden(page: &str, name: &str) -> String {
    let at = page.find(&format!("name=\"{name}\" value=\"")).unwrap_or_else(|| panic!("no {name} in {page}"));
    let rest = &page[at + name.len() + 15..];
    rest[..rest.find('"').unwrap()].to_owned()
}

impl Visitor {
    pub async fn sign_in(s: &Server, handle: &str) -> Visitor {
        let page = client().get(s.url("/sign-in")).send().await.unwrap();
        let (form_cookie, _) = set_cookie(&page, "lf_sign_in_csrf").expect("the form's cookie");
        let csrf = hidden(&page.text().await.unwrap(), "csrf");
        let r = client()
            .post(s.url("/sign-in"))
            .header("cookie", form_cookie)
            .form(&[("csrf", csrf.as_str()), ("handle", handle), ("password", PASSWORD), ("next", "/arena")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), reqwest::StatusCode::SEE_OTHER, "{}", r.text().await.unwrap());
        let (cookie, _) = set_cookie(&r, "lf_session").expect("a session cookie");
        Visitor { cookie }
    }

    pub async fn get(&self, s: &Server, path: &str) -> reqwest::Response {
        client().get(s.url(path)).header("cookie", &self.cookie).send().await.unwrap()
    }

    pub async fn post(&self, s: &Server, path: &str, form: &[(&str, &str)]) -> reqwest::Response {
        client().post(s.url(path)).header("cookie", &self.cookie).form(form).send().await.unwrap()
    }
}

/// The model name with markup in it: escaped in every page.
pub const MARKUP_MODEL: &str = "model-<i>two</i>";

/// A cell as the fixtures write it: position, contender, passed, error, answer.
type Cell<'a> = (u32, u16, bool, Option<&'a str>, &'a str);

/// The cells of [`experiment`].
const FIRST: [Cell<'static>; 4] = [
    (1, 0, true, None, SCRIPT_ANSWER),
    (1, 1, false, None, "Ownership is <b>borrowing</b>."),
    (2, 0, false, Some("the endpoint failed"), ""),
    (60, 0, true, None, "The sixtieth answer."),
];

/// An experiment of `owner`'s over 120 cases and two contenders (the
/// second named [`MARKUP_MODEL`]), written straight into the server's
/// store as its runner writes cells: case 1 passed by contender 0 with
/// [`SCRIPT_ANSWER`] and failed by contender 1; case 2 an error; case 60
/// passed (on the matrix's second page); the rest pending. Its id.
pub async fn experiment(s: &Server, owner: &str) -> String {
    scripted(s, owner, lf_eval::dataset::DatasetId::new(), &FIRST).await
}

/// Two experiments of `owner`'s on one dataset, a and b, and a third of
/// `stranger`'s (private) on it: a has [`experiment`]'s cells and cases 3
/// to 10 passed by contender 0; in b contender 0 fails cases 1 and 3 to 10
/// (nine regressions: McNemar's p = 22/1024, significant) and passes case
/// 2 (a fix), case 60 unchanged; contender 1 passes case 1 (a fix). Their
/// ids: a, b, the stranger's.
pub async fn compared(s: &Server, owner: &str, stranger: &str) -> (String, String, String) {
    let dataset = lf_eval::dataset::DatasetId::new();
    let mut first = FIRST.to_vec();
    first.extend((3..=10).map(|p| (p, 0, true, None, "Passed before.")));
    let a = scripted(s, owner, dataset, &first).await;
    let mut later: Vec<Cell<'static>> = vec![
        (1, 0, false, None, "Wrong now."),
        (1, 1, true, None, "Right now."),
        (2, 0, true, None, "Answered now."),
        (60, 0, true, None, "The sixtieth answer."),
    ];
    later.extend((3..=10).map(|p| (p, 0, false, None, "Failed since.")));
    let b = scripted(s, owner, dataset, &later).await;
    let theirs = scripted(s, stranger, dataset, &later).await;
    (a, b, theirs)
}

/// A private experiment of `owner`'s on `dataset` with `cells` written. Its id.
async fn scripted(
    s: &Server,
    owner: &str,
    dataset: lf_eval::dataset::DatasetId,
    cells: &[Cell<'_>],
) -> String {
    use lf_core::{Clock, SystemClock};
    use lf_eval::experiment::{AssertionOutcome, CellKey, CellResult, Contender, Experiment, ExperimentId};
    let db = lf_server::Database::connect(&s.database_url).await.unwrap();
    let store = db.experiment_store();
    let now = SystemClock.now();
    let owner = s.lenser(owner).await;
    let e = Experiment {
        id: ExperimentId::new(),
        owner,
        visibility: lf_eval::dataset::Visibility::Private,
        dataset,
        dataset_version: 1,
        case_count: 120,
        contenders: vec![Contender::model("model-one"), Contender::model(MARKUP_MODEL)],
        assertions: Vec::new(),
        repeats: 1,
        concurrency: 1,
        budget_credits: None,
        status: lf_eval::experiment::ExperimentStatus::Running,
        created_at: now,
        updated_at: now,
        created_by: owner,
        agent: None,
        judge: None,
    };
    store.add_experiment(&e).await.unwrap();
    for &(position, contender, passed, error, answer) in cells {
        let key = CellKey { experiment: e.id, position, contender, repeat: 1 };
        store.claim_cell(key, "test", now, now.plus_micros(60_000_000), 3).await.unwrap();
        let outcome = AssertionOutcome {
            kind: "contains".into(),
            from: "assertions[0]".into(),
            passed,
            reason: if passed { "found \"ownership\"".into() } else { "no <em>ownership</em> in it".into() },
            judged: None,
        };
        let result = CellResult {
            key,
            tags: vec![format!("case-{position}")],
            answer: error.is_none().then(|| answer.to_owned()),
            outcomes: if error.is_none() { vec![outcome] } else { Vec::new() },
            passed,
            score: if passed { 1.0 } else { 0.0 },
            error: error.map(str::to_owned),
            input_tokens: 10,
            output_tokens: 5,
            cost_usd: 0.001,
            credits: 1,
            latency_ms: 120 + u64::from(position),
            attempts: 1,
            created_at: now,
            matchups: Vec::new(),
        };
        assert!(store.save_result(&result, "test", now).await.unwrap());
    }
    e.id.to_string()
}

/// A private workflow of `owner`'s (a trigger, two logger steps from it and
/// a third after the first: three layers) run to its end with a note carrying
/// [`SCRIPT_ANSWER`]: the workflow's id and the run's.
pub async fn workflow_run(s: &Server, owner: &str) -> (String, String) {
    let token = s.token(owner, Scopes::READ_WRITE).await;
    let steps = json!([
        {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
        {"key": "left", "kind": "tool", "name": "Note left", "node_type": "logger",
         "config": {"message": "left [[note]]"}},
        {"key": "right", "kind": "tool", "name": "Note right", "node_type": "logger",
         "config": {"message": "right"}},
        {"key": "after", "kind": "tool", "name": "After left", "node_type": "logger", "config": {"message": "after"}}
    ]);
    let connections = json!([
        {"from_step": "start", "to_step": "left", "input_parameter": "input"},
        {"from_step": "start", "to_step": "right", "input_parameter": "input"},
        {"from_step": "left", "to_step": "after", "input_parameter": "input"}
    ]);
    let made = ok(
        s,
        &token,
        "create_workflow",
        json!({"title": "Notes <fork>", "steps": steps, "connections": connections}),
    )
    .await;
    let wf = made["id"].as_str().unwrap().to_owned();
    let run =
        ok(s, &token, "run_workflow", json!({"workflow_id": wf, "inputs": {"note": SCRIPT_ANSWER}})).await;
    let run = run["id"].as_str().unwrap().to_owned();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let status = ok(s, &token, "get_workflow_run_status", json!({"run_id": run})).await;
        if matches!(status["status"].as_str(), Some("completed" | "failed" | "cancelled")) {
            assert_eq!(status["status"], "completed", "{status}");
            return (wf, run);
        }
        assert!(std::time::Instant::now() < deadline, "run {run} did not end: {status}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
