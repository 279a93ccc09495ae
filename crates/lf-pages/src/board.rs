//! `/leaderboard`: the ratings `get_leaderboard` gives, as a table with
//! each 95% interval drawn as inline SVG, filtered as the tool filters
//! (battle type, category: a battle's or a case's tag, style control) and
//! by contender type, with the mean cost and latency of model answers.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State as AxumState};
use axum::response::Response;
use http::{HeaderMap, StatusCode};
use lf_battle::{BattleType, ContenderType, LeaderboardOptions, Rating};
use serde::Deserialize;

use crate::State;
use crate::html::{self, Html};
use crate::session::to_sign_in;

#[derive(Deserialize, Default)]
pub(crate) struct Filters {
    battle_type: Option<String>,
    /// A tag, as `get_leaderboard {category}`.
    category: Option<String>,
    /// A contender type.
    kind: Option<String>,
    min_battles: Option<String>,
    /// `on` (the checkbox) when answer style is controlled for.
    style_control: Option<String>,
}

/// The SVG's width, in pixels.
const W: f64 = 240.0;

/// One row's interval on the scale `lo..hi` shared by the table.
fn interval_svg(r: &Rating, lo: f64, hi: f64) -> Html {
    let span = (hi - lo).max(1.0);
    let x = |v: f64| ((v - lo) / span * (W - 8.0) + 4.0).clamp(0.0, W);
    let mut h = Html::raw(
        "<svg class=\"iv\" width=\"240\" height=\"16\" viewBox=\"0 0 240 16\" role=\"img\"><title>",
    );
    match r.interval {
        Some(i) => {
            h.push_display(format_args!("{:.1} to {:.1}", i.lower, i.upper)).push_raw("</title>");
            h.push_display(format_args!(
                "<line x1=\"{:.1}\" y1=\"8\" x2=\"{:.1}\" y2=\"8\"></line>",
                x(i.lower),
                x(i.upper)
            ));
        }
        None => {
            h.push_raw("no interval yet</title>");
        }
    }
    h.push_display(format_args!("<circle cx=\"{:.1}\" cy=\"8\" r=\"4\"></circle></svg>", x(r.rating)));
    h
}

fn select(name: &str, label: &str, words: &[&str], chosen: Option<&str>) -> Html {
    let mut h = Html::raw("<label>");
    h.push_text(label)
        .push_raw(" <select name=\"")
        .push_text(name)
        .push_raw("\"><option value=\"\">any</option>");
    for w in words {
        h.push_raw(if chosen == Some(*w) { "<option selected>" } else { "<option>" });
        h.push_text(w).push_raw("</option>");
    }
    h.push_raw("</select></label>");
    h
}

/// `GET /leaderboard?battle_type=&category=&kind=&min_battles=&style_control=on`.
pub(crate) async fn leaderboard(
    AxumState(state): AxumState<State>,
    headers: HeaderMap,
    filters: Result<Query<Filters>, QueryRejection>,
) -> Response {
    let Some(viewer) = state.sessions.viewer(&state, &headers).await else {
        return to_sign_in("/leaderboard");
    };
    let who = viewer.header();
    let Ok(Query(f)) = filters else {
        return html::problem(StatusCode::BAD_REQUEST, Some(&who), "The filters could not be read.");
    };
    let nonempty =
        |s: &Option<String>| s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    let (battle_type, category, kind, min) =
        (nonempty(&f.battle_type), nonempty(&f.category), nonempty(&f.kind), nonempty(&f.min_battles));
    let styled = nonempty(&f.style_control).is_some();
    let parsed = (|| {
        let bt = battle_type.as_deref().map(BattleType::parse).transpose()?;
        let cat = kind.as_deref().map(ContenderType::parse).transpose()?;
        let min = min
            .as_deref()
            .map(|m| {
                m.parse::<i64>().map_err(|_| lf_core::LfError::invalid_argument("min_battles is a number"))
            })
            .transpose()?;
        let options = LeaderboardOptions { style_control: styled, ..LeaderboardOptions::new(min, None)? };
        Ok::<_, lf_core::LfError>((bt, cat, options))
    })();
    let (bt, cat, options) = match parsed {
        Ok(p) => p,
        Err(e) => return html::problem(StatusCode::BAD_REQUEST, Some(&who), e.message()),
    };
    let battle = &state.services().battle;
    let board = match battle
        .leaderboard_with(
            &viewer.principal,
            bt,
            category.as_deref(),
            options,
            lf_tools::groups::battle::rate_battles,
        )
        .await
    {
        Ok(b) => b,
        Err(e) => return crate::battle::refused(&viewer, &e),
    };
    let means = battle.cost_means(bt).await.unwrap_or_else(|e| {
        lf_tools::log_error("the leaderboard page's costs", &e);
        Vec::new()
    });
    let rows: Vec<(usize, &Rating)> =
        board.ratings.iter().enumerate().filter(|(_, r)| cat.is_none_or(|c| r.reference.kind == c)).collect();
    let ends = rows.iter().flat_map(|(_, r)| {
        [r.rating, r.interval.map_or(r.rating, |i| i.lower), r.interval.map_or(r.rating, |i| i.upper)]
    });
    let (lo, hi) = ends.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let mut body =
        Html::raw("<h1>Leaderboard</h1><form class=\"filters\" method=\"get\" action=\"/leaderboard\">");
    let types: Vec<&str> = BattleType::ALL.iter().map(|t| t.as_str()).collect();
    let kinds: Vec<&str> = ContenderType::ALL.iter().map(|t| t.as_str()).collect();
    body.push_raw("<label>Category (a tag) <input type=\"text\" name=\"category\" value=\"");
    body.push_text(category.as_deref().unwrap_or("")).push_raw("\"></label>");
    body.push(&select("kind", "Contender type", &kinds, kind.as_deref()));
    body.push(&select("battle_type", "Battle type", &types, battle_type.as_deref()));
    body.push_raw("<label><input type=\"checkbox\" name=\"style_control\"");
    body.push_raw(if styled { " checked" } else { "" }).push_raw("> Control for style</label>");
    body.push_raw(
        "<label>Fewest battles <input type=\"text\" inputmode=\"numeric\" name=\"min_battles\" value=\"",
    );
    body.push_display(board.options.min_battles)
        .push_raw("\"></label><button type=\"submit\">Show</button></form>");
    body.push_raw("<p>")
        .push_display(board.battles)
        .push_raw(" battles counted (closed battles, and shared experiments' judged pairwise cells); ");
    body.push_display(board.unrated.len()).push_raw(" contenders not rated yet.</p>");
    match (&board.style, styled) {
        (Some(st), _) => {
            body.push_display(format_args!(
                "<p>Style-controlled: answer length and markdown density fitted as covariates over {} comparisons \
                 with both answers' styles (one answer all the length of the two: {:+.1} rating points; all the \
                 markdown density: {:+.1}); the ratings are what is left.</p>",
                st.comparisons, st.length, st.markdown
            ));
        }
        (None, true) => {
            body.push_raw("<p>Style control was asked, but no answer styles are recorded for these battles: plain ratings.</p>");
        }
        (None, false) => {}
    }
    if rows.is_empty() {
        body.push_raw("<p>No one is rated yet with these filters.</p>");
    } else {
        body.push_raw(
            "<table><thead><tr><th>#</th><th>Name</th><th>Category</th><th>Rating</th><th>95% interval</th>\
<th>Battles</th><th>W / L / T</th><th>Mean cost</th><th>Mean latency</th></tr></thead><tbody>",
        );
        for (n, r) in rows {
            let mean = means.iter().find(|m| m.reference == r.reference);
            body.push_raw("<tr><td class=\"n\">").push_display(n + 1).push_raw("</td><td>");
            body.push_text(&r.display_name).push_raw("</td><td>").push_text(r.reference.kind.as_str());
            body.push_raw("</td><td class=\"n\">")
                .push_display(format_args!("{:.1}", r.rating))
                .push_raw("</td><td>");
            body.push(&interval_svg(r, lo, hi)).push_raw("</td><td class=\"n\">").push_display(r.battles);
            body.push_raw("</td><td>").push_display(format_args!("{} / {} / {}", r.wins, r.losses, r.ties));
            body.push_raw("</td><td class=\"n\">");
            match mean {
                Some(m) => body.push_display(format_args!("${:.4}", m.mean_cost_usd)),
                None => body.push_raw("—"),
            };
            body.push_raw("</td><td class=\"n\">");
            match mean {
                Some(m) => body.push_display(format_args!("{:.0} ms", m.mean_total_ms)),
                None => body.push_raw("—"),
            };
            body.push_raw("</td></tr>");
        }
        body.push_raw("</tbody></table>");
    }
    html::page(StatusCode::OK, "Leaderboard", Some(&who), &body)
}
