//! `/experiments/{a}/compare/{b}`: what changed from experiment `a` to
//! experiment `b` on one dataset, as `compare_experiments` computes it
//! (`ExperimentService::compare_with` with lf-tools' `compare_changes`, as
//! the viewer, the tests off the async threads):
//! per contender the pass rates and their change, McNemar's exact p, the
//! score's change with its paired-bootstrap interval, significant or not;
//! then the cases that went from pass to fail (regressions, first), then
//! those that went from fail to pass, each linking to its cells in `a`
//! and in `b`. Either experiment unreadable is 404, as everywhere.
//!
//! `GET /experiments/{a}/compare?with={b}` (the experiment page's form)
//! leads there.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State as AxumState};
use axum::response::Response;
use http::{HeaderMap, StatusCode};
use lf_core::Page;
use lf_eval::experiment::{CaseChange, Comparison, ContenderChange, Experiment, ExperimentId};
use serde::Deserialize;

use crate::State;
use crate::battle::{refused, signed_in};
use crate::html::{self, Html};

/// Most cases of each kind a contender's list shows.
pub const CASES_SHOWN: usize = 200;

#[derive(Deserialize, Default)]
pub(crate) struct WithQuery {
    with: Option<String>,
}

fn percent(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// A change shown with its sign.
fn signed(v: f64, digits: usize) -> String {
    let v = if v.abs() < 0.5 * 10f64.powi(-(digits as i32)) { 0.0 } else { v };
    format!("{v:+.digits$}")
}

fn p_value(p: f64) -> String {
    if p < 0.0001 { "< 0.0001".to_owned() } else { format!("{p:.4}") }
}

fn significance(h: &mut Html, significant: bool) {
    h.push_raw(if significant {
        "<td class=\"sig yes\">significant</td>"
    } else {
        "<td class=\"sig no\">not significant</td>"
    });
}

fn figures(c: &Comparison) -> Html {
    let mut h = Html::raw(
        "<h2>Contenders</h2><table class=\"figures compare\"><thead><tr><th>Contender</th><th>Pairs</th>\
<th>Pass rate a → b</th><th>Change</th><th>Pass → fail</th><th>Fail → pass</th><th>McNemar p</th><th></th>\
<th>Score change</th><th>95% interval</th><th></th></tr></thead><tbody>",
    );
    for x in &c.contenders {
        let m = &x.mcnemar;
        h.push_raw("<tr><td>")
            .push_text(&x.contender)
            .push_raw("</td><td class=\"n\">")
            .push_display(x.pairs);
        h.push_raw("</td><td class=\"n\">").push_text(&percent(x.pass_rate.0)).push_raw(" → ");
        h.push_text(&percent(x.pass_rate.1)).push_raw("</td><td class=\"n\">");
        h.push_text(&signed(100.0 * (x.pass_rate.1 - x.pass_rate.0), 1)).push_raw(" points</td>");
        h.push_raw("<td class=\"n\">").push_display(m.pass_to_fail).push_raw("</td><td class=\"n\">");
        h.push_display(m.fail_to_pass).push_raw("</td><td class=\"n\">").push_text(&p_value(m.p_value));
        h.push_raw("</td>");
        significance(&mut h, m.significant);
        h.push_raw("<td class=\"n\">").push_text(&signed(x.score.mean, 3)).push_raw("</td><td class=\"n\">");
        h.push_text(&format!("{} to {}", signed(x.score.lower, 3), signed(x.score.upper, 3)))
            .push_raw("</td>");
        significance(&mut h, x.score.significant);
        h.push_raw("</tr>");
    }
    h.push_raw("</tbody></table>");
    h
}

/// One contender's cases of one kind, each linking to its cell in a and b.
fn cases(h: &mut Html, c: &Comparison, x: &ContenderChange, list: &[CaseChange], kind: &str) {
    h.push_raw("<section class=\"changes ").push_raw(kind).push_raw("\"><h3>").push_text(&x.contender);
    h.push_raw(" <small>(").push_display(list.len()).push_raw(")</small></h3><ul>");
    for case in list.iter().take(CASES_SHOWN) {
        let cell = |h: &mut Html, id: ExperimentId, index: u16, (passed, cells): (u32, u32)| {
            h.push_raw("<a href=\"/experiments/").push_display(id).push_raw("/cells/");
            h.push_display(case.position).push_raw("/").push_display(index).push_raw("\">");
            h.push_display(passed).push_raw(" of ").push_display(cells).push_raw(" passed</a>");
        };
        h.push_raw("<li class=\"case\" data-case=\"").push_display(case.position).push_raw("\">Case ");
        h.push_display(case.position).push_raw(": ");
        cell(h, c.a.id, x.index.0, case.a);
        h.push_raw(" → ");
        cell(h, c.b.id, x.index.1, case.b);
        h.push_raw("</li>");
    }
    h.push_raw("</ul>");
    if list.len() > CASES_SHOWN {
        h.push_raw("<p class=\"meta\">and ").push_display(list.len() - CASES_SHOWN).push_raw(" more.</p>");
    }
    h.push_raw("</section>");
}

fn view(c: &Comparison) -> Html {
    let link = |h: &mut Html, id: ExperimentId| {
        h.push_raw("<a href=\"/experiments/")
            .push_display(id)
            .push_raw("\">")
            .push_display(id)
            .push_raw("</a>");
    };
    let mut h = Html::raw("<h1>Comparison</h1><p class=\"meta\">From a, ");
    link(&mut h, c.a.id);
    h.push_raw(" (dataset version ").push_display(c.a.dataset_version).push_raw(", ");
    h.push_display(c.a.repeats).push_raw(" repeats), to b, ");
    link(&mut h, c.b.id);
    h.push_raw(" (version ").push_display(c.b.dataset_version).push_raw(", ").push_display(c.b.repeats);
    h.push_raw(" repeats): cases 1–").push_display(c.cases_compared).push_raw(", paired ");
    h.push_raw(match c.pairing {
        lf_eval::experiment::Pairing::CaseAndRepeat => "cell by cell (same case and repeat)",
        lf_eval::experiment::Pairing::CaseMajority => "case by case (passed when most repeats passed)",
    });
    h.push_raw(" · <a href=\"/experiments/").push_display(c.b.id).push_raw("/compare/").push_display(c.a.id);
    h.push_raw("\">the other way round</a></p>");
    if c.contenders.is_empty() {
        h.push_raw("<p>The two experiments have no contender in common.</p>");
    } else {
        h.push(&figures(c));
        h.push_raw(
            "<p class=\"legend\">Pass rates over the pairs both have; McNemar's exact test on the pairs that \
changed; the score's change (b − a) with its 95% paired-bootstrap interval. Significant at 5%.</p>",
        );
    }
    let unmatched: Vec<&String> = c.only_in_a.iter().chain(&c.only_in_b).collect();
    if !unmatched.is_empty() {
        h.push_raw("<p class=\"meta\">In one experiment only, not compared: ");
        for (i, name) in unmatched.into_iter().enumerate() {
            if i > 0 {
                h.push_raw(", ");
            }
            h.push_text(name);
        }
        h.push_raw("</p>");
    }
    for (kind, title, none) in [
        ("regressions", "Regressions: pass → fail", "No case passes less in b."),
        ("fixes", "Fixes: fail → pass", "No case passes more in b."),
    ] {
        h.push_raw("<h2 id=\"").push_raw(kind).push_raw("\">").push_raw(title).push_raw("</h2>");
        let mut any = false;
        for x in &c.contenders {
            let list = if kind == "regressions" { &x.regressions } else { &x.fixes };
            if !list.is_empty() {
                any = true;
                cases(&mut h, c, x, list, kind);
            }
        }
        if !any {
            h.push_raw("<p>").push_raw(none).push_raw("</p>");
        }
    }
    h
}

/// `GET /experiments/{a}/compare/{b}`.
pub(crate) async fn compare_page(
    AxumState(state): AxumState<State>,
    Path((a, b)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let viewer = match signed_in(&state, &headers, &format!("/experiments/{a}/compare/{b}")).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let who = viewer.header();
    let (Ok(a), Ok(b)) = (ExperimentId::parse("a", &a), ExperimentId::parse("b", &b)) else {
        return html::not_found(Some(&who));
    };
    let experiments = &state.services().experiments;
    match experiments.compare_with(&viewer.principal, a, b, lf_tools::groups::eval::compare_changes).await {
        Ok(c) => html::page(StatusCode::OK, "Comparison", Some(&who), &view(&c)),
        // 400 when both are readable: the same experiment, or two datasets.
        Err(e) => refused(&viewer, &e),
    }
}

/// `GET /experiments/{a}/compare?with={b}`: to the comparison's page.
pub(crate) async fn compare_with(
    AxumState(state): AxumState<State>,
    Path(a): Path<String>,
    headers: HeaderMap,
    query: Result<Query<WithQuery>, QueryRejection>,
) -> Response {
    let viewer = match signed_in(&state, &headers, &format!("/experiments/{a}")).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let with = query.ok().and_then(|Query(q)| q.with).unwrap_or_default();
    let (Ok(a), Ok(b)) = (ExperimentId::parse("a", &a), ExperimentId::parse("with", with.trim())) else {
        return html::problem(
            StatusCode::BAD_REQUEST,
            Some(&viewer.header()),
            "Give the other experiment's id (a UUID).",
        );
    };
    html::see_other(&format!("/experiments/{a}/compare/{b}"))
}

/// The experiment page's form: compare this one (as a) with another.
pub(crate) fn form(id: ExperimentId, others: &Page<Experiment>) -> Html {
    let mut h = Html::raw("<section class=\"compare\"><h2>Compare</h2>");
    let listed: Vec<&Experiment> = others.items.iter().filter(|o| o.id != id).collect();
    if !listed.is_empty() {
        h.push_raw("<p>With another experiment on this dataset (this one as the baseline):</p><ul>");
        for o in &listed {
            h.push_raw("<li><a href=\"/experiments/");
            h.push_display(id).push_raw("/compare/").push_display(o.id).push_raw("\">");
            h.push_text(&o.created_at.to_rfc3339()).push_raw("</a>: ");
            let names: Vec<&str> = o.contenders.iter().map(|c| c.key()).collect();
            h.push_text(&names.join(", ")).push_raw(" (").push_text(o.status.as_str()).push_raw(")</li>");
        }
        h.push_raw("</ul>");
        if others.has_more() {
            h.push_raw("<p>Older ones by id:</p>");
        }
    }
    h.push_raw("<form method=\"get\" action=\"/experiments/");
    h.push_display(id).push_raw(
        "/compare\"><label>Compare with another experiment on this dataset (this one as the baseline): \
<input type=\"text\" name=\"with\" placeholder=\"its id\" required></label> <button type=\"submit\">Compare</button></form></section>",
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_show_their_sign_and_small_p_values_a_bound() {
        assert_eq!(
            (signed(0.25, 3), signed(-0.7272, 3), signed(-0.00001, 3)),
            ("+0.250".into(), "-0.727".into(), "+0.000".into())
        );
        assert_eq!((p_value(0.021484375), p_value(1e-9)), ("0.0215".to_owned(), "< 0.0001".to_owned()));
    }
}
