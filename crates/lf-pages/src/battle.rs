//! Blind voting: `/battles/{id}`, its vote form, and `/arena`.
//!
//! The answers are shown side by side labelled only by position (A, B, …),
//! in an order of the viewer's own ([`order`]). Who wrote which is shown
//! once the viewer has voted or the battle has results. A vote goes through
//! [`lf_battle::BattleService::cast_vote`], the call `cast_battle_vote`
//! makes, so its every rule (voting only, not for one's own contender)
//! holds here as there.

use axum::extract::{Path, Request, State as AxumState};
use axum::response::Response;
use http::{HeaderMap, StatusCode};
use lf_auth::SecretHash;
use lf_battle::{BattleFilter, BattleSheet, BattleStatus, VotePick};
use lf_core::{BattleId, ContenderId, ErrorCode, LenserId, LfError, PageRequest};

use crate::State;
use crate::html::{self, Html};
use crate::session::{Form, Viewer, to_sign_in};

/// The order `viewer` sees these contenders of `battle` in: by a hash of
/// the three, so it is the same on every visit and in every process, and
/// differs from person to person.
pub fn order(viewer: LenserId, battle: BattleId, contenders: &[ContenderId]) -> Vec<ContenderId> {
    let mut keyed: Vec<([u8; 32], ContenderId)> = contenders
        .iter()
        .map(|c| (*SecretHash::of(&format!("lf-pages order {viewer} {battle} {c}")).as_bytes(), *c))
        .collect();
    keyed.sort();
    keyed.into_iter().map(|(_, c)| c).collect()
}

/// The label of position `n` (0: A).
fn position(n: usize) -> char {
    char::from(b'A' + u8::try_from(n % 26).unwrap_or(0))
}

/// The contenders with an answer, in the viewer's order.
fn answered(sheet: &BattleSheet, viewer: LenserId) -> Vec<ContenderId> {
    let ids: Vec<ContenderId> = sheet.submissions.iter().map(|s| s.contender_id).collect();
    order(viewer, sheet.battle.id, &ids)
}

/// Where the page is shown from: its own address, or the arena (then a
/// vote leads on to the next battle).
#[derive(Clone, Copy, PartialEq, Eq)]
enum From {
    Battle,
    Arena,
}

fn view(
    sheet: &BattleSheet,
    viewer: &Viewer,
    mine: Option<VotePick>,
    from: From,
    error: Option<&str>,
) -> Html {
    let b = &sheet.battle;
    let revealed = mine.is_some() || b.status.has_results();
    let shown = answered(sheet, viewer.lenser);
    let mut h = Html::raw("<h1>");
    h.push_text(b.title.as_str()).push_raw("</h1><p>Status: <strong>");
    h.push_text(b.status.as_str()).push_raw("</strong></p><h2>Task</h2><div class=\"prompt\">");
    h.push_text(b.task_prompt.as_str()).push_raw("</div>");
    if let Some(e) = error {
        h.push_raw("<p class=\"error\" role=\"alert\">").push_text(e).push_raw("</p>");
    }
    h.push_raw("<div class=\"answers\">");
    for (n, id) in shown.iter().enumerate() {
        let (Some(s), Some(c)) = (sheet.submission_of(*id), sheet.contenders.iter().find(|c| c.id == *id))
        else {
            continue;
        };
        let picked = mine == Some(VotePick::Contender(*id));
        h.push_raw(if picked { "<section class=\"answer mine\"" } else { "<section class=\"answer\"" });
        h.push_raw(" data-position=\"").push_display(position(n)).push_raw("\"><h2>Answer ");
        h.push_display(position(n)).push_raw("</h2>");
        if revealed {
            h.push_raw("<p class=\"author\">").push_text(c.display_name.as_str()).push_raw(" <small>(");
            h.push_text(c.contender_type.as_str()).push_raw(")</small>");
            if picked {
                h.push_raw(" — your vote");
            }
            h.push_raw("</p>");
        }
        h.push_raw("<pre>").push_text(s.text.as_str()).push_raw("</pre></section>");
    }
    h.push_raw("</div>");
    if revealed {
        let t = &sheet.votes;
        h.push_raw("<p class=\"tally\">");
        for (n, id) in shown.iter().enumerate() {
            let votes = t.per_contender.iter().find(|e| e.contender_id == *id).map_or(0, |e| e.votes);
            h.push_raw("Answer ")
                .push_display(position(n))
                .push_raw(": ")
                .push_display(votes)
                .push_raw(" · ");
        }
        h.push_raw("Tie: ")
            .push_display(t.ties)
            .push_raw(" · Votes: ")
            .push_display(t.total)
            .push_raw("</p>");
        if mine == Some(VotePick::Tie) {
            h.push_raw("<p>You called it a tie.</p>");
        }
        h.push_raw("<p><a href=\"/arena\">Next battle →</a></p>");
    } else if b.status == BattleStatus::Voting && shown.len() >= 2 {
        h.push_raw("<form class=\"vote\" method=\"post\" action=\"/battles/");
        h.push_display(b.id).push_raw("/vote\"><input type=\"hidden\" name=\"csrf\" value=\"");
        h.push_text(&viewer.csrf).push_raw("\">");
        if from == From::Arena {
            h.push_raw("<input type=\"hidden\" name=\"from\" value=\"arena\">");
        }
        h.push_raw("<p>Which answer is better?</p>");
        for n in 0..shown.len() {
            let p = position(n);
            h.push_raw("<button type=\"submit\" name=\"pick\" value=\"").push_display(p.to_ascii_lowercase());
            h.push_raw("\" data-key=\"").push_display(p.to_ascii_lowercase()).push_raw("\">");
            h.push_display(p).push_raw(" is better <kbd>").push_display(p).push_raw("</kbd></button>");
        }
        h.push_raw(
            "<button type=\"submit\" name=\"pick\" value=\"tie\" data-key=\"t\">Tie <kbd>T</kbd></button>",
        );
        h.push_raw("</form>");
    }
    h
}

/// The sheet and the viewer's vote, or the 404 page for a battle that does
/// not exist or they may not read (one answer for both).
async fn read(state: &State, viewer: &Viewer, id: &str) -> Result<(BattleSheet, Option<VotePick>), Response> {
    let not_found = || html::not_found(Some(&viewer.header()));
    let Ok(id) = BattleId::parse("battle_id", id) else { return Err(not_found()) };
    let battle = &state.services().battle;
    let found = async {
        let sheet = battle.get(&viewer.principal, id).await?;
        let mine = battle.my_vote(&viewer.principal, id).await?;
        Ok::<_, LfError>((sheet, mine))
    };
    match found.await {
        Ok(found) => Ok(found),
        Err(e) if e.code() == ErrorCode::NotFound => Err(not_found()),
        Err(e) => Err(failed(viewer, &e)),
    }
}

pub(crate) fn failed(viewer: &Viewer, e: &LfError) -> Response {
    lf_tools::log_error("a page's read", e);
    html::problem(
        StatusCode::SERVICE_UNAVAILABLE,
        Some(&viewer.header()),
        "Reading failed. Try again shortly.",
    )
}

/// A service's refusal of a read as a page: 404 for what the viewer may
/// not read (alike whether it exists), 400 with the service's message for
/// what was asked wrong, else [`failed`].
pub(crate) fn refused(viewer: &Viewer, e: &LfError) -> Response {
    match e.code() {
        ErrorCode::NotFound => html::not_found(Some(&viewer.header())),
        ErrorCode::InvalidArgument => {
            html::problem(StatusCode::BAD_REQUEST, Some(&viewer.header()), e.message())
        }
        _ => failed(viewer, e),
    }
}

pub(crate) async fn signed_in(state: &State, headers: &HeaderMap, path: &str) -> Result<Viewer, Response> {
    state.sessions.viewer(state, headers).await.ok_or_else(|| to_sign_in(path))
}

/// `GET /battles/{id}`.
pub(crate) async fn battle_page(
    AxumState(state): AxumState<State>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let viewer = match signed_in(&state, &headers, &format!("/battles/{id}")).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    match read(&state, &viewer, &id).await {
        Ok((sheet, mine)) => {
            let body = view(&sheet, &viewer, mine, From::Battle, None);
            html::page(StatusCode::OK, sheet.battle.title.as_str(), Some(&viewer.header()), &body)
        }
        Err(r) => r,
    }
}

/// `POST /battles/{id}/vote`: `pick` is a position (`a`, `b`, …) of the
/// viewer's order, or `tie`.
pub(crate) async fn vote(
    AxumState(state): AxumState<State>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let viewer = match signed_in(&state, &parts.headers, &format!("/battles/{id}")).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let form = Form::read(body).await;
    if !viewer.csrf_ok(form.as_ref().and_then(|f| f.get("csrf"))) {
        return html::problem(
            StatusCode::FORBIDDEN,
            Some(&viewer.header()),
            "This form expired or came from elsewhere. Reload the page and vote again.",
        );
    }
    let (sheet, _) = match read(&state, &viewer, &id).await {
        Ok(found) => found,
        Err(r) => return r,
    };
    let from =
        if form.as_ref().and_then(|f| f.get("from")) == Some("arena") { From::Arena } else { From::Battle };
    let shown = answered(&sheet, viewer.lenser);
    let pick = match form.as_ref().and_then(|f| f.get("pick")) {
        Some("tie") => Some(VotePick::Tie),
        Some(p) if p.len() == 1 => p
            .bytes()
            .next()
            .filter(u8::is_ascii_lowercase)
            .and_then(|b| shown.get(usize::from(b - b'a')))
            .map(|c| VotePick::Contender(*c)),
        _ => None,
    };
    let Some(pick) = pick else {
        let body = view(&sheet, &viewer, None, from, Some("Pick an answer, or tie."));
        return html::page(
            StatusCode::BAD_REQUEST,
            sheet.battle.title.as_str(),
            Some(&viewer.header()),
            &body,
        );
    };
    let battle = &state.services().battle;
    match battle.cast_vote(&viewer.principal, sheet.battle.id, pick, None).await {
        Ok(_) => html::see_other(&format!("/battles/{}", sheet.battle.id)),
        Err(e)
            if matches!(
                e.code(),
                ErrorCode::Forbidden | ErrorCode::Conflict | ErrorCode::InvalidArgument
            ) =>
        {
            let status =
                if e.code() == ErrorCode::Forbidden { StatusCode::FORBIDDEN } else { StatusCode::CONFLICT };
            let message = e.message().to_owned();
            let mine = battle.my_vote(&viewer.principal, sheet.battle.id).await.ok().flatten();
            let body = view(&sheet, &viewer, mine, from, Some(&message));
            html::page(status, sheet.battle.title.as_str(), Some(&viewer.header()), &body)
        }
        Err(e) if e.code() == ErrorCode::NotFound => html::not_found(Some(&viewer.header())),
        Err(e) => failed(&viewer, &e),
    }
}

/// Battles the arena looks through for the next one, at most.
const ARENA_SCAN: u64 = 500;

/// The next battle in voting the viewer may vote on and has not: two
/// answers or more, and no vote of theirs yet; newest first.
async fn next_battle(state: &State, viewer: &Viewer) -> Result<Option<BattleSheet>, LfError> {
    let battle = &state.services().battle;
    let filter = BattleFilter { status: Some(BattleStatus::Voting), ..BattleFilter::default() };
    let mut offset = 0u64;
    while offset < ARENA_SCAN {
        let page = battle
            .list(&viewer.principal, &filter, PageRequest::new(Some(100), Some(offset as i64))?)
            .await?;
        for summary in &page.items {
            if summary.contenders < 2 {
                continue;
            }
            let id = summary.battle.id;
            if battle.my_vote(&viewer.principal, id).await?.is_some() {
                continue;
            }
            let sheet = match battle.get(&viewer.principal, id).await {
                Ok(s) => s,
                // Moved on or out of reach since the listing.
                Err(e) if e.code() == ErrorCode::NotFound => continue,
                Err(e) => return Err(e),
            };
            if sheet.battle.status == BattleStatus::Voting && sheet.submissions.len() >= 2 {
                return Ok(Some(sheet));
            }
        }
        offset += page.items.len() as u64;
        if page.items.is_empty() || offset >= page.total {
            break;
        }
    }
    Ok(None)
}

/// `GET /arena`: the next battle to vote on, one after another.
pub(crate) async fn arena(AxumState(state): AxumState<State>, headers: HeaderMap) -> Response {
    let viewer = match signed_in(&state, &headers, "/arena").await {
        Ok(v) => v,
        Err(r) => return r,
    };
    match next_battle(&state, &viewer).await {
        Ok(Some(sheet)) => {
            let mut body = Html::raw("<p class=\"arena\">Arena: vote blind; names show after your vote.</p>");
            body.push(&view(&sheet, &viewer, None, From::Arena, None));
            html::page(StatusCode::OK, "Arena", Some(&viewer.header()), &body)
        }
        Ok(None) => html::page(
            StatusCode::OK,
            "Arena",
            Some(&viewer.header()),
            &Html::raw(
                "<h1>Arena</h1><p>Nothing to vote on right now: you have voted on every battle in voting.</p>",
            ),
        ),
        Err(e) => failed(&viewer, &e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_a_viewers_own_and_stable() {
        let battle = BattleId::new();
        let cs: Vec<ContenderId> = (0..4).map(|_| ContenderId::new()).collect();
        let alice = LenserId::new();
        let first = order(alice, battle, &cs);
        assert_eq!(order(alice, battle, &cs), first, "the same every time");
        let mut sorted = first.clone();
        sorted.sort();
        let mut given = cs.clone();
        given.sort();
        assert_eq!(sorted, given, "a permutation");
        let others = (0..20).map(|_| order(LenserId::new(), battle, &cs)).filter(|o| *o != first).count();
        assert!(others > 0, "other people see other orders");
    }
}
