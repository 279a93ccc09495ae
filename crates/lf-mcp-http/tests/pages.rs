//! The web pages over plain HTTP (the browser's side is in browser.rs):
//! sign-in and its cookie, CSRF on every form, the security headers, 404
//! for what a person may not read, votes through the rule of
//! `cast_battle_vote`, escaping, sessions that end, and `--no-pages`; an
//! experiment's matrix a page of cases at a time and its cells; two
//! experiments compared, regressions first; a workflow run's graph and log.

mod common;

use common::pages::{
    MARKUP_MODEL, SCRIPT_ANSWER, Visitor, battle, compared, experiment, hidden, set_cookie, workflow_run,
};
use common::{Options, PASSWORD, Server, call_tool, client};
use lf_core::Scopes;
use reqwest::StatusCode;
use serde_json::json;

fn people() -> Options {
    Options { lensers: vec!["owner", "wri_a", "wri_b", "bob", "eve"], ..Options::default() }
}

async fn votes(s: &Server, battle: &str) -> u64 {
    let token = s.token("owner", Scopes::READ).await;
    let score = call_tool(s, Some(&token), "get_battle_score", json!({"battle_id": battle})).await;
    score["structuredContent"]["total_vote_count"].as_u64().unwrap_or_else(|| panic!("{score}"))
}

#[tokio::test]
async fn headers_cookie_and_sign_in_redirect() {
    let s = Server::with(people()).await;
    let r = client().get(s.url("/arena")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER, "no session: to the sign-in");
    assert_eq!(r.headers()["location"], "/sign-in?next=%2Farena");

    let page = client().get(s.url("/sign-in")).send().await.unwrap();
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
    assert!(!csp.contains("unsafe"), "no inline script or style: {csp}");
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    let html = page.text().await.unwrap();
    assert!(!html.contains("<script>") && !html.contains(" style="), "nothing inline: {html}");

    let page = client().get(s.url("/sign-in")).send().await.unwrap();
    let (form_cookie, _) = set_cookie(&page, "lf_sign_in_csrf").unwrap();
    let csrf = hidden(&page.text().await.unwrap(), "csrf");
    let r = client()
        .post(s.url("/sign-in"))
        .header("cookie", &form_cookie)
        .form(&[
            ("csrf", csrf.as_str()),
            ("handle", "bob"),
            ("password", PASSWORD),
            ("next", "//evil.example"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()["location"], "/arena", "only a path of this site is followed");
    let (_, header) = set_cookie(&r, "lf_session").unwrap();
    for flag in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=43200"] {
        assert!(header.contains(flag), "{flag} in {header}");
    }
    assert!(!header.contains("Secure"), "not on http: {header}");

    let wrong = client()
        .post(s.url("/sign-in"))
        .header("cookie", &form_cookie)
        .form(&[("csrf", csrf.as_str()), ("handle", "bob"), ("password", "not the password")])
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(set_cookie(&wrong, "lf_session").is_none());
    s.stop().await;
}

#[tokio::test]
async fn on_https_the_cookie_is_secure_and_host_bound() {
    let s = Server::with(Options {
        serve: Some(|a| a.public_url = Some("https://pages.example".into())),
        ..people()
    })
    .await;
    let page = client().get(format!("http://{}/sign-in", s.addr)).send().await.unwrap();
    let (_, header) = set_cookie(&page, "lf_sign_in_csrf").unwrap();
    assert!(header.contains("; Secure"), "{header}");
    let (form_cookie, _) = set_cookie(&page, "lf_sign_in_csrf").unwrap();
    let csrf = hidden(&page.text().await.unwrap(), "csrf");
    let r = client()
        .post(format!("http://{}/sign-in", s.addr))
        .header("cookie", form_cookie)
        .form(&[("csrf", csrf.as_str()), ("handle", "bob"), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    let (_, header) = set_cookie(&r, "__Host-lf_session").expect("the __Host- cookie");
    assert!(header.contains("; Secure") && header.contains("Path=/"), "{header}");
    s.stop().await;
}

#[tokio::test]
async fn forms_without_their_token_are_refused() {
    let s = Server::with(people()).await;
    let (id, _) = battle(&s, "owner", ["wri_a", "wri_b"], false).await;
    let page = client().get(s.url("/sign-in")).send().await.unwrap();
    let (form_cookie, _) = set_cookie(&page, "lf_sign_in_csrf").unwrap();
    for form in [
        vec![("handle", "bob"), ("password", PASSWORD)],
        vec![("csrf", "0".repeat(64).leak() as &str), ("handle", "bob"), ("password", PASSWORD)],
    ] {
        let r =
            client().post(s.url("/sign-in")).header("cookie", &form_cookie).form(&form).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "sign-in without its token");
        assert!(set_cookie(&r, "lf_session").is_none());
    }

    let bob = Visitor::sign_in(&s, "bob").await;
    let path = format!("/battles/{id}/vote");
    for form in [vec![("pick", "a")], vec![("pick", "a"), ("csrf", "f00d")]] {
        let r = bob.post(&s, &path, &form).await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
    }
    let r = bob.post(&s, "/sign-out", &[]).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "sign-out too");
    assert_eq!(votes(&s, &id).await, 0, "nothing was voted");

    // Another site's page posting the form is refused before it is read.
    let page = bob.get(&s, &format!("/battles/{id}")).await.text().await.unwrap();
    let csrf = hidden(&page, "csrf");
    let r = client()
        .post(s.url(&path))
        .header("cookie", &bob.cookie)
        .header("origin", "https://evil.example")
        .form(&[("pick", "a"), ("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(votes(&s, &id).await, 0);
    s.stop().await;
}

#[tokio::test]
async fn a_blind_vote_then_the_names() {
    let s = Server::with(people()).await;
    let (id, _) = battle(&s, "owner", ["wri_a", "wri_b"], false).await;
    let bob = Visitor::sign_in(&s, "bob").await;

    let arena = bob.get(&s, "/arena").await.text().await.unwrap();
    assert!(arena.contains(&format!("action=\"/battles/{id}/vote\"")), "{arena}");
    let page = bob.get(&s, &format!("/battles/{id}")).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(!html.contains("Writer wri_a") && !html.contains("Writer wri_b"), "names hidden before voting");
    assert!(html.contains("Answer A") && html.contains("Answer B"));
    assert!(!html.contains(SCRIPT_ANSWER), "the answer's markup is not markup");
    assert!(html.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"), "{html}");
    assert!(html.contains("Explain &lt;b&gt;ownership&lt;/b&gt;"), "the prompt too");

    let csrf = hidden(&html, "csrf");
    let r = bob.post(&s, &format!("/battles/{id}/vote"), &[("pick", "b"), ("csrf", &csrf)]).await;
    assert_eq!(r.status(), StatusCode::SEE_OTHER, "{}", r.text().await.unwrap());
    assert_eq!(votes(&s, &id).await, 1, "the vote is the tool's");
    let html = bob.get(&s, &format!("/battles/{id}")).await.text().await.unwrap();
    assert!(html.contains("Writer wri_a") && html.contains("Writer wri_b"), "names shown after voting");
    assert!(html.contains("your vote"));
    let arena = bob.get(&s, "/arena").await.text().await.unwrap();
    assert!(arena.contains("Nothing to vote on"), "voted battles leave the arena: {arena}");

    // A writer cannot vote for their own answer: the rule of cast_battle_vote.
    let wra = Visitor::sign_in(&s, "wri_a").await;
    let html = wra.get(&s, &format!("/battles/{id}")).await.text().await.unwrap();
    let csrf = hidden(&html, "csrf");
    let lenser = s.lenser("wri_a").await;
    let battle_id = id.parse().unwrap();
    let sheet_order = {
        let token = s.token("owner", Scopes::READ).await;
        let got = call_tool(&s, Some(&token), "get_battle", json!({"battle_id": id})).await;
        got["structuredContent"]["contenders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().parse().unwrap())
            .collect::<Vec<lf_core::ContenderId>>()
    };
    let seen = lf_pages::order(lenser, battle_id, &sheet_order);
    let own = if seen[0] == sheet_order[0] { "a" } else { "b" };
    let r = wra.post(&s, &format!("/battles/{id}/vote"), &[("pick", own), ("csrf", &csrf)]).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(r.text().await.unwrap().contains("you answer for it"));
    assert_eq!(votes(&s, &id).await, 1, "refused votes are not counted");
    s.stop().await;
}

#[tokio::test]
async fn what_a_person_may_not_read_is_404() {
    let s = Server::with(people()).await;
    let (draft, _) = battle(&s, "owner", ["wri_a", "wri_b"], true).await;
    let eve = Visitor::sign_in(&s, "eve").await;
    for path in [
        format!("/battles/{draft}"),
        "/battles/00000000-0000-4000-8000-000000000000".to_owned(),
        "/battles/not-an-id".to_owned(),
    ] {
        let r = eve.get(&s, &path).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
        assert!(r.headers()["content-security-policy"].to_str().unwrap().contains("default-src 'none'"));
        assert!(!r.text().await.unwrap().contains("Ownership duel"), "{path}");
    }
    let page = eve.get(&s, "/leaderboard").await.text().await.unwrap();
    let csrf = hidden(&page, "csrf");
    let r = eve.post(&s, &format!("/battles/{draft}/vote"), &[("pick", "tie"), ("csrf", &csrf)]).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let arena = eve.get(&s, "/arena").await.text().await.unwrap();
    assert!(!arena.contains(&draft), "a draft is not in the arena");
    let owner = Visitor::sign_in(&s, "owner").await;
    assert_eq!(
        owner.get(&s, &format!("/battles/{draft}")).await.status(),
        StatusCode::OK,
        "its creator reads it"
    );
    s.stop().await;
}

#[tokio::test]
async fn sessions_end_and_open_nothing_else() {
    let s = Server::with(people()).await;
    let bob = Visitor::sign_in(&s, "bob").await;
    assert_eq!(bob.get(&s, "/leaderboard").await.status(), StatusCode::OK);
    let secret = bob.cookie.split_once('=').unwrap().1.to_owned();
    let r = client()
        .post(s.url("/mcp"))
        .bearer_auth(&secret)
        .header("accept", "application/json, text/event-stream")
        .json(&common::rpc("tools/list", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "a page session is no MCP token");

    let page = bob.get(&s, "/leaderboard").await.text().await.unwrap();
    let csrf = hidden(&page, "csrf");
    let out = bob.post(&s, "/sign-out", &[("csrf", &csrf)]).await;
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    let (_, cleared) = set_cookie(&out, "lf_session").unwrap();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    assert_eq!(bob.get(&s, "/leaderboard").await.status(), StatusCode::SEE_OTHER, "revoked in the database");

    // Signing in again replaces the session the browser had.
    let first = Visitor::sign_in(&s, "bob").await;
    let page = client().get(s.url("/sign-in")).send().await.unwrap();
    let (form_cookie, _) = set_cookie(&page, "lf_sign_in_csrf").unwrap();
    let csrf = hidden(&page.text().await.unwrap(), "csrf");
    let r = client()
        .post(s.url("/sign-in"))
        .header("cookie", format!("{form_cookie}; {}", first.cookie))
        .form(&[("csrf", csrf.as_str()), ("handle", "bob"), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    let (second, _) = set_cookie(&r, "lf_session").unwrap();
    assert_ne!(second, first.cookie, "a new session");
    assert_eq!(first.get(&s, "/arena").await.status(), StatusCode::SEE_OTHER, "the old one ended");
    let second = Visitor { cookie: second };
    assert_eq!(second.get(&s, "/arena").await.status(), StatusCode::OK);
    let listed = s.auth.list_tokens(Some(s.lenser("bob").await), false).await.unwrap();
    assert_eq!(listed.len(), 1, "one live session, listed and revocable as a token");
    assert_eq!(listed[0].label.as_deref(), Some("browser session"));
    assert!(listed[0].expires_at.is_some(), "it expires");
    s.stop().await;
}

#[tokio::test]
async fn no_pages_serves_none() {
    let s = Server::with(Options { serve: Some(|a| a.no_pages = true), ..people() }).await;
    for path in ["/sign-in", "/arena", "/leaderboard", "/pages/style.css"] {
        assert_eq!(client().get(s.url(path)).send().await.unwrap().status(), StatusCode::NOT_FOUND, "{path}");
    }
    s.stop().await;
}

const ESCAPED_SCRIPT: &str = "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;";

#[tokio::test]
async fn an_experiments_matrix_a_page_at_a_time() {
    let s = Server::with(people()).await;
    let id = experiment(&s, "owner").await;
    let owner = Visitor::sign_in(&s, "owner").await;
    let page = owner.get(&s, &format!("/experiments/{id}")).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("default-src 'none'"));
    let html = page.text().await.unwrap();
    assert!(!html.contains(MARKUP_MODEL) && html.contains("model-&lt;i&gt;two&lt;/i&gt;"), "{html}");
    assert!(html.contains("Cases 1–50 of 120") && html.contains("page 1 of 3"), "{html}");
    // Contender 0: two passes of three cells, one error; p50 over the answered.
    assert!(html.contains("<td class=\"n\">67%</td>"), "pass rate: {html}");
    assert!(html.contains("121 ms") && html.contains("180 ms"), "latency p50 and p95: {html}");
    assert!(html.contains(&format!("href=\"/experiments/{id}/cells/1/0\"")), "{html}");
    assert!(html.contains("class=\"cell h10 pass\"") && html.contains("class=\"cell h0 fail\""));
    assert!(html.contains("class=\"cell h0 error\"") && html.contains("cell pending"));
    assert!(!html.contains("/cells/60/0"), "case 60 is on the second page");
    let second = owner.get(&s, &format!("/experiments/{id}?page=2")).await.text().await.unwrap();
    assert!(second.contains("Cases 51–100") && second.contains(&format!("/experiments/{id}/cells/60/0")));
    assert!(!second.contains("/cells/1/0\""), "{second}");
    assert_eq!(owner.get(&s, &format!("/experiments/{id}?page=4")).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(owner.get(&s, &format!("/experiments/{id}?page=x")).await.status(), StatusCode::BAD_REQUEST);

    // A cell: its answer (the script as text), assertions and verdict.
    let cell = owner.get(&s, &format!("/experiments/{id}/cells/1/0")).await.text().await.unwrap();
    assert!(!cell.contains(SCRIPT_ANSWER) && cell.contains(ESCAPED_SCRIPT), "{cell}");
    assert!(cell.contains("<span class=\"verdict\">passed</span>") && cell.contains("contains"));
    let failed = owner.get(&s, &format!("/experiments/{id}/cells/1/1")).await.text().await.unwrap();
    assert!(failed.contains("<span class=\"verdict\">failed</span>"), "{failed}");
    assert!(
        failed.contains("no &lt;em&gt;ownership&lt;/em&gt; in it") && failed.contains("&lt;b&gt;borrowing")
    );
    let error = owner.get(&s, &format!("/experiments/{id}/cells/2/0")).await.text().await.unwrap();
    assert!(error.contains("the endpoint failed"), "{error}");
    for path in ["cells/0/0", "cells/121/0", "cells/1/2", "cells/x/0"] {
        let r = owner.get(&s, &format!("/experiments/{id}/{path}")).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
    }

    // Eve may not read it: every page of it is a 404 that shows nothing.
    let eve = Visitor::sign_in(&s, "eve").await;
    for path in [
        format!("/experiments/{id}"),
        format!("/experiments/{id}?page=2"),
        format!("/experiments/{id}/cells/1/0"),
        "/experiments/00000000-0000-4000-8000-000000000000".to_owned(),
        "/experiments/not-an-id".to_owned(),
    ] {
        let r = eve.get(&s, &path).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
        let html = r.text().await.unwrap();
        assert!(!html.contains("model-one") && !html.contains("pwned"), "{path}: {html}");
    }
    let r = client().get(s.url(&format!("/experiments/{id}"))).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER, "no session: to the sign-in");
    s.stop().await;
}

#[tokio::test]
async fn two_experiments_compared_regressions_first() {
    let s = Server::with(people()).await;
    let (a, b, eves) = compared(&s, "owner", "eve").await;
    let owner = Visitor::sign_in(&s, "owner").await;
    // The experiment page's form leads to the comparison.
    let matrix = owner.get(&s, &format!("/experiments/{a}")).await.text().await.unwrap();
    assert!(matrix.contains(&format!("action=\"/experiments/{a}/compare\"")), "{matrix}");
    // It lists the owner's other experiment on the dataset, not the
    // stranger's private one, nor itself.
    assert!(matrix.contains(&format!("href=\"/experiments/{a}/compare/{b}\"")), "{matrix}");
    assert!(!matrix.contains(&eves) && !matrix.contains(&format!("compare/{a}\"")), "{matrix}");
    let r = owner.get(&s, &format!("/experiments/{a}/compare?with={b}")).await;
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()["location"], format!("/experiments/{a}/compare/{b}").as_str());
    let r = owner.get(&s, &format!("/experiments/{a}/compare?with=nope")).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);

    let page = owner.get(&s, &format!("/experiments/{a}/compare/{b}")).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("default-src 'none'"));
    let html = page.text().await.unwrap();
    assert!(!html.contains(MARKUP_MODEL) && html.contains("model-&lt;i&gt;two&lt;/i&gt;"), "{html}");
    assert!(!html.contains("<script>") && !html.contains(" style="), "nothing inline");
    // model-one: 11 pairs, 10 of 11 passed then 2 of 11; 9 pass→fail, 1
    // fail→pass: p = 2·(1 + 10)/1024; the score fell by 8/11.
    for figure in ["90.9% → 18.2%", "-72.7 points", "0.0215", "-0.727"] {
        assert!(html.contains(figure), "{figure}: {html}");
    }
    let row = &html[html.find("<td>model-one</td>").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert_eq!(row.matches("class=\"sig yes\"").count(), 2, "both tests significant: {row}");
    assert!(row.contains("<td class=\"n\">9</td><td class=\"n\">1</td>"), "{row}");
    // model-<i>two</i>: one pair, a fix: McNemar's p is 1.
    let row = &html[html.find("<td>model-&lt;i&gt;two&lt;/i&gt;</td>").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains("0.0% → 100.0%") && row.contains("1.0000</td><td class=\"sig no\">"), "{row}");

    // Regressions first, each case linking to its cells in a and in b.
    let (regressions, fixes) = (html.find("id=\"regressions\"").unwrap(), html.find("id=\"fixes\"").unwrap());
    assert!(regressions < fixes);
    let cases = |from: usize, to: usize| -> Vec<u32> {
        html[from..to]
            .split("data-case=\"")
            .skip(1)
            .map(|x| x[..x.find('"').unwrap()].parse().unwrap())
            .collect()
    };
    assert_eq!(cases(regressions, fixes), [1, 3, 4, 5, 6, 7, 8, 9, 10], "model-one's regressions");
    assert_eq!(cases(fixes, html.len()), [2, 1], "model-one's fix, then model-<i>two</i>'s");
    let first = &html[regressions..fixes];
    assert!(first.contains(&format!("href=\"/experiments/{a}/cells/1/0\">1 of 1 passed</a> → ")), "{first}");
    assert!(first.contains(&format!("href=\"/experiments/{b}/cells/1/0\">0 of 1 passed</a>")), "{first}");
    assert!(html[fixes..].contains(&format!("href=\"/experiments/{b}/cells/1/1\">1 of 1 passed</a>")));
    let cell = owner.get(&s, &format!("/experiments/{b}/cells/1/0")).await.text().await.unwrap();
    assert!(cell.contains("Wrong now.") && cell.contains("<span class=\"verdict\">failed</span>"), "{cell}");
    assert!(html.contains(&format!("href=\"/experiments/{b}/compare/{a}\"")), "the other way round");
    let back = owner.get(&s, &format!("/experiments/{b}/compare/{a}")).await.text().await.unwrap();
    let (regressions, fixes) = (back.find("id=\"regressions\"").unwrap(), back.find("id=\"fixes\"").unwrap());
    assert!(
        back[regressions..fixes].contains("data-case=\"2\"") && back[fixes..].contains("data-case=\"10\"")
    );

    // Itself, or an experiment on another dataset: a clear 400.
    let other = experiment(&s, "owner").await;
    for (path, why) in
        [(format!("/experiments/{a}/compare/{a}")), (format!("/experiments/{a}/compare/{other}"))]
            .into_iter()
            .zip(["the same experiment", "different datasets"])
    {
        let r = owner.get(&s, &path).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{path}");
        assert!(r.text().await.unwrap().contains(why), "{path}");
    }

    // Either side unreadable is a 404 that shows nothing: eve's experiment
    // for the owner, the owner's for eve, and either for bob.
    let eve = Visitor::sign_in(&s, "eve").await;
    let bob = Visitor::sign_in(&s, "bob").await;
    let none = "00000000-0000-4000-8000-000000000000";
    for (who, path) in [
        (&owner, format!("/experiments/{a}/compare/{eves}")),
        (&owner, format!("/experiments/{eves}/compare/{a}")),
        (&owner, format!("/experiments/{a}/compare/{none}")),
        (&owner, format!("/experiments/{a}/compare/not-an-id")),
        (&eve, format!("/experiments/{a}/compare/{b}")),
        (&eve, format!("/experiments/{eves}/compare/{a}")),
        (&bob, format!("/experiments/{a}/compare/{b}")),
        (&bob, format!("/experiments/{eves}/compare/{b}")),
    ] {
        let r = who.get(&s, &path).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
        let html = r.text().await.unwrap();
        assert!(!html.contains("model-one") && !html.contains("Regressions"), "{path}: {html}");
    }
    let r = client().get(s.url(&format!("/experiments/{a}/compare/{b}"))).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER, "no session: to the sign-in");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_runs_graph_and_log() {
    let s = Server::with(people()).await;
    let (wf, run) = workflow_run(&s, "owner").await;
    let owner = Visitor::sign_in(&s, "owner").await;
    let page = owner.get(&s, &format!("/workflows/{wf}/runs/{run}")).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("<h1>Notes &lt;fork&gt; · run</h1>"), "the title, escaped: {html}");
    assert!(html.contains("<svg class=\"graph\""), "{html}");
    for step in ["start", "left", "right", "after"] {
        assert!(
            html.contains(&format!("<g class=\"step st-completed\" data-step=\"{step}\"")),
            "{step}: {html}"
        );
    }
    // Three layers: the trigger, the two steps it feeds, the one after the first.
    assert!(html.contains("<rect x=\"15\" y=\"10\"") && html.contains("<rect x=\"255\" y=\"80\""), "{html}");
    assert!(html.contains("<rect x=\"495\" y=\"10\""), "{html}");
    assert_eq!(html.matches("class=\"edge\"").count(), 3);
    assert!(html.contains("left &lt;script&gt;"), "the log line, escaped: {html}");
    assert!(!html.contains(SCRIPT_ANSWER), "never markup");
    assert!(html.contains("<table class=\"log\">") && html.contains("logger"));

    let eve = Visitor::sign_in(&s, "eve").await;
    let other = "00000000-0000-4000-8000-000000000000";
    for (who, path) in [
        (&eve, format!("/workflows/{wf}/runs/{run}")),
        (&owner, format!("/workflows/{other}/runs/{run}")),
        (&owner, format!("/workflows/{wf}/runs/{other}")),
        (&owner, format!("/workflows/{wf}/runs/not-a-run")),
    ] {
        let r = who.get(&s, &path).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
        assert!(!r.text().await.unwrap().contains("Notes"), "{path}");
    }
    s.stop().await;
}

#[tokio::test]
async fn the_leaderboard_filters_as_the_tool_does() {
    let s = Server::with(people()).await;
    let (id, _) = battle(&s, "owner", ["wri_a", "wri_b"], false).await;
    let bob = Visitor::sign_in(&s, "bob").await;
    let html = bob.get(&s, &format!("/battles/{id}")).await.text().await.unwrap();
    let csrf = hidden(&html, "csrf");
    let r = bob.post(&s, &format!("/battles/{id}/vote"), &[("pick", "a"), ("csrf", &csrf)]).await;
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let token = s.token("owner", Scopes::READ_WRITE).await;
    for status in ["scoring", "closed"] {
        let args = json!({"battle_id": id, "status": status, "confirm": true});
        let moved = call_tool(&s, Some(&token), "set_battle_status", args).await;
        assert_ne!(moved["isError"], true, "{moved}");
    }

    let all = bob.get(&s, "/leaderboard?min_battles=1").await.text().await.unwrap();
    assert!(all.contains("<p>1 battles counted"), "{all}");
    assert!(all.contains("Writer wri_a") && all.contains("Writer wri_b"), "{all}");
    // A tag no battle carries: nothing counted, the filter shown as given.
    let tagged = bob.get(&s, "/leaderboard?category=Rust&min_battles=1").await.text().await.unwrap();
    assert!(tagged.contains("<p>0 battles counted") && !tagged.contains("Writer wri_a"), "{tagged}");
    assert!(tagged.contains("name=\"category\" value=\"Rust\""), "{tagged}");
    let long = "x".repeat(300);
    let r = bob.get(&s, &format!("/leaderboard?category={long}")).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST, "the tool's rule for a tag");
    // Style control asked: said which fit was made (these human answers
    // carry styles, or the page says none were recorded).
    let styled = bob.get(&s, "/leaderboard?style_control=on&min_battles=1").await.text().await.unwrap();
    assert!(styled.contains("name=\"style_control\" checked"), "{styled}");
    assert!(styled.contains("Style-controlled") || styled.contains("Style control was asked"), "{styled}");
    assert!(!all.contains("Style-controlled") && !all.contains("Style control was asked"), "{all}");
    // The contender type still filters the rows.
    let models = bob.get(&s, "/leaderboard?kind=ai_model&min_battles=1").await.text().await.unwrap();
    assert!(!models.contains("Writer wri_a"), "{models}");
    s.stop().await;
}
