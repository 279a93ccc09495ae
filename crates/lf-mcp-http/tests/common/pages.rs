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
