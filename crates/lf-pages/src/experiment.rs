//! `/experiments/{id}`: an experiment's case × contender matrix as a heat
//! map of pass and score, a page of cases at a time, under each
//! contender's figures (those `get_experiment` gives: pass rate with its
//! 95% interval, mean score, cost, latency p50/p95). Each cell links to
//! `/experiments/{id}/cells/{position}/{contender}`: its answers,
//! assertions and verdicts, one per repeat. Everything is read through
//! [`lf_eval::experiment::ExperimentService`], as the tools read it: an
//! experiment the viewer may not read is 404.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State as AxumState};
use axum::response::Response;
use http::{HeaderMap, StatusCode};
use lf_core::{ErrorCode, LfResult, PageRequest};
use lf_eval::experiment::{
    CellResult, ContenderFigures, Experiment, ExperimentId, ExperimentView, MAX_REPEATS, ResultFilter,
};
use serde::Deserialize;

use crate::State;
use crate::battle::{failed, signed_in};
use crate::html::{self, Html};
use crate::session::Viewer;

/// About how many cells one page of the matrix shows: a 10,000-cell
/// experiment is read and drawn a page of cases at a time.
pub const CELLS_PER_PAGE: u64 = 500;
/// The newest experiments on the dataset offered to compare with.
const OTHERS: i64 = 20;
/// Most cases on one page of the matrix.
pub const MAX_CASES_PER_PAGE: u32 = 50;

/// How many cases a page of `e`'s matrix shows.
pub fn cases_per_page(e: &Experiment) -> u32 {
    let per_case = (e.contenders.len() as u64 * u64::from(e.repeats)).max(1);
    u32::try_from(CELLS_PER_PAGE / per_case).unwrap_or(MAX_CASES_PER_PAGE).clamp(1, MAX_CASES_PER_PAGE)
}

/// The positions (from 1) of page `page` (from 1) of `e`'s matrix, or
/// `None` past its last.
pub fn page_positions(e: &Experiment, page: u32) -> Option<(u32, u32)> {
    let per = cases_per_page(e);
    let first = page.checked_sub(1)?.checked_mul(per)?.checked_add(1)?;
    (first <= e.case_count).then(|| (first, first.saturating_add(per - 1).min(e.case_count)))
}

#[derive(Deserialize, Default)]
pub(crate) struct MatrixQuery {
    page: Option<String>,
}

/// The experiment, or the page to answer instead (404 for one the viewer
/// may not read, or that does not exist).
async fn view_of(state: &State, viewer: &Viewer, id: &str) -> Result<ExperimentView, Response> {
    let Ok(id) = ExperimentId::parse("experiment_id", id) else {
        return Err(html::not_found(Some(&viewer.header())));
    };
    match state.services().experiments.get(&viewer.principal, id).await {
        Ok(v) => Ok(v),
        Err(e) if e.code() == ErrorCode::NotFound => Err(html::not_found(Some(&viewer.header()))),
        Err(e) => Err(failed(viewer, &e)),
    }
}

/// Every result `filter` keeps, through the service's pages.
async fn all_results(
    state: &State,
    viewer: &Viewer,
    id: ExperimentId,
    filter: &ResultFilter,
) -> LfResult<Vec<CellResult>> {
    let experiments = &state.services().experiments;
    let mut out = Vec::new();
    loop {
        let page = PageRequest::new(Some(i64::from(PageRequest::MAX_LIMIT)), Some(out.len() as i64))?;
        let (_, got) = experiments.results(&viewer.principal, id, filter, page).await?;
        let n = got.items.len();
        out.extend(got.items);
        if n == 0 || out.len() as u64 >= got.total {
            return Ok(out);
        }
    }
}

fn percent(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

fn ms(v: Option<u64>) -> String {
    v.map_or_else(|| "—".to_owned(), |v| format!("{v} ms"))
}

/// A contender's name as the page shows it: its index and model.
fn contender_label(h: &mut Html, index: u16, model: &str) {
    h.push_raw("<span class=\"idx\">#").push_display(index).push_raw("</span> ").push_text(model);
}

/// The 95% interval of a pass rate, drawn on 0–100%.
fn rate_svg(f: &ContenderFigures) -> Html {
    let x = |v: f64| 4.0 + v.clamp(0.0, 1.0) * 152.0;
    let mut h = Html::raw(
        "<svg class=\"iv\" width=\"160\" height=\"16\" viewBox=\"0 0 160 16\" role=\"img\"><title>",
    );
    h.push_display(format_args!("{} to {}", percent(f.interval.0), percent(f.interval.1)));
    h.push_display(format_args!(
        "</title><line x1=\"{:.1}\" y1=\"8\" x2=\"{:.1}\" y2=\"8\"></line><circle cx=\"{:.1}\" cy=\"8\" r=\"4\"></circle></svg>",
        x(f.interval.0),
        x(f.interval.1),
        x(f.pass_rate)
    ));
    h
}

fn figures(v: &ExperimentView) -> Html {
    let mut h = Html::raw(
        "<h2>Contenders</h2><table class=\"figures\"><thead><tr><th>Contender</th><th>Cells</th>\
<th>Pass rate</th><th>95% interval</th><th>Mean score</th><th>Errors</th><th>Cost</th>\
<th>Latency p50</th><th>p95</th></tr></thead><tbody>",
    );
    for f in &v.contenders {
        let t = &f.tally;
        h.push_raw("<tr><td>");
        contender_label(&mut h, f.index, f.contender.key());
        h.push_raw("</td><td class=\"n\">").push_display(t.cells);
        h.push_raw("</td><td class=\"n\">").push_text(&percent(f.pass_rate)).push_raw("</td><td>");
        h.push(&rate_svg(f)).push_raw(" <small>");
        h.push_text(&format!("{}–{}", percent(f.interval.0), percent(f.interval.1)));
        h.push_raw("</small></td><td class=\"n\">").push_display(format_args!("{:.2}", f.mean_score));
        h.push_raw("</td><td class=\"n\">").push_display(t.errors);
        h.push_raw("</td><td class=\"n\">").push_display(format_args!("${:.4}", t.cost_usd));
        h.push_raw(" <small>(").push_display(t.credits).push_raw(" credits)</small>");
        h.push_raw("</td><td class=\"n\">").push_text(&ms(t.latency_p50_ms));
        h.push_raw("</td><td class=\"n\">").push_text(&ms(t.latency_p95_ms)).push_raw("</td></tr>");
    }
    h.push_raw("</tbody></table>");
    h
}

/// The heat class of a mean score: `h0` (0) to `h10` (1).
fn heat(score: f64) -> String {
    format!("h{}", (score.clamp(0.0, 1.0) * 10.0).round() as u8)
}

fn matrix(e: &Experiment, (first, last): (u32, u32), results: &[CellResult]) -> Html {
    let mut h = Html::raw("<table class=\"matrix\"><thead><tr><th>Case</th>");
    for (i, c) in e.contenders.iter().enumerate() {
        h.push_raw("<th>");
        contender_label(&mut h, i as u16, c.key());
        h.push_raw("</th>");
    }
    h.push_raw("</tr></thead><tbody>");
    for position in first..=last {
        let row: Vec<&CellResult> = results.iter().filter(|r| r.key.position == position).collect();
        h.push_raw("<tr><th scope=\"row\">").push_display(position);
        if let Some(tags) = row.first().map(|r| &r.tags).filter(|t| !t.is_empty()) {
            h.push_raw(" <small>").push_text(&tags.join(", ")).push_raw("</small>");
        }
        h.push_raw("</th>");
        for contender in 0..e.contenders.len() as u16 {
            let cells: Vec<&&CellResult> = row.iter().filter(|r| r.key.contender == contender).collect();
            if cells.is_empty() {
                h.push_raw("<td class=\"cell pending\" title=\"no result yet\">…</td>");
                continue;
            }
            let n = cells.len();
            let passed = cells.iter().filter(|r| r.passed).count();
            let errors = cells.iter().filter(|r| r.error.is_some()).count();
            let score = cells.iter().map(|r| r.score).sum::<f64>() / n as f64;
            let verdict = if passed == n {
                "pass"
            } else if errors == n {
                "error"
            } else {
                "fail"
            };
            h.push_raw("<td class=\"cell ").push_text(&heat(score)).push_raw(" ").push_raw(verdict);
            h.push_raw("\"><a href=\"/experiments/").push_display(e.id).push_raw("/cells/");
            h.push_display(position).push_raw("/").push_display(contender).push_raw("\" title=\"");
            h.push_display(format_args!("{verdict}: {passed} of {n} passed, mean score {score:.2}"));
            h.push_raw("\">").push_raw(match verdict {
                "pass" => "✓",
                "error" => "!",
                _ => "✗",
            });
            h.push_display(format_args!(" {passed}/{n} · {score:.2}")).push_raw("</a></td>");
        }
        h.push_raw("</tr>");
    }
    h.push_raw("</tbody></table>");
    h
}

fn summary(v: &ExperimentView) -> Html {
    let e = &v.experiment;
    let mut h = Html::raw("<h1>Experiment</h1><p class=\"meta\">Status: <strong>");
    h.push_text(e.status.as_str()).push_raw("</strong> · ").push_display(v.done).push_raw(" of ");
    h.push_display(e.cell_count()).push_raw(" cells done · ").push_display(e.case_count);
    h.push_raw(" cases of dataset version ").push_display(e.dataset_version).push_raw(" × ");
    h.push_display(e.contenders.len()).push_raw(" contenders × ").push_display(e.repeats);
    h.push_raw(" repeats · ").push_display(v.spent_credits).push_raw(" credits spent · ");
    h.push_text(e.visibility.as_str()).push_raw("</p>");
    h
}

/// `GET /experiments/{id}?page=N`.
pub(crate) async fn experiment_page(
    AxumState(state): AxumState<State>,
    Path(id): Path<String>,
    headers: HeaderMap,
    query: Result<Query<MatrixQuery>, QueryRejection>,
) -> Response {
    let viewer = match signed_in(&state, &headers, &format!("/experiments/{id}")).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let v = match view_of(&state, &viewer, &id).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let who = viewer.header();
    let page = match query.map(|Query(q)| q.page) {
        Ok(None) => 1,
        Ok(Some(p)) => match p.trim().parse::<u32>() {
            Ok(p) if p >= 1 => p,
            _ => return html::problem(StatusCode::BAD_REQUEST, Some(&who), "The page is a number from 1."),
        },
        Err(_) => return html::problem(StatusCode::BAD_REQUEST, Some(&who), "The page could not be read."),
    };
    let e = &v.experiment;
    let mut body = summary(&v);
    let newest = PageRequest::new(Some(OTHERS), Some(0)).expect("a valid page");
    let others = match state.services().experiments.on_its_dataset(&viewer.principal, e.id, newest).await {
        Ok(o) => o,
        Err(err) => return failed(&viewer, &err),
    };
    body.push(&crate::compare::form(e.id, &others));
    body.push(&figures(&v));
    body.push_raw("<h2>Cases</h2>");
    if e.case_count == 0 || e.contenders.is_empty() {
        body.push_raw("<p>This experiment has no cells.</p>");
        return html::page(StatusCode::OK, "Experiment", Some(&who), &body);
    }
    let pages = e.case_count.div_ceil(cases_per_page(e));
    let Some(range) = page_positions(e, page) else {
        let mut body = Html::raw("<h1>Not found</h1><p>This experiment has ");
        body.push_display(pages).push_raw(" pages of cases.</p>");
        return html::page(StatusCode::NOT_FOUND, "Not found", Some(&who), &body);
    };
    let filter = ResultFilter { positions: Some(range), ..ResultFilter::default() };
    let results = match all_results(&state, &viewer, e.id, &filter).await {
        Ok(r) => r,
        Err(err) => return failed(&viewer, &err),
    };
    body.push_raw("<p class=\"pager\">Cases ").push_display(range.0).push_raw("–").push_display(range.1);
    body.push_raw(" of ").push_display(e.case_count).push_raw(" · page ").push_display(page);
    body.push_raw(" of ").push_display(pages);
    if page > 1 {
        body.push_raw(" · <a rel=\"prev\" href=\"/experiments/").push_display(e.id);
        body.push_raw("?page=").push_display(page - 1).push_raw("\">← previous</a>");
    }
    if page < pages {
        body.push_raw(" · <a rel=\"next\" href=\"/experiments/").push_display(e.id);
        body.push_raw("?page=").push_display(page + 1).push_raw("\">next →</a>");
    }
    body.push_raw(
        "</p><p class=\"legend\">Each cell: passed of repeats and mean score, coloured from red (0) to green (1); \
open it for its answers, assertions and verdicts.</p>",
    );
    body.push(&matrix(e, range, &results));
    html::page(StatusCode::OK, "Experiment", Some(&who), &body)
}

fn cell_view(e: &Experiment, position: u32, contender: u16, results: &[CellResult]) -> Html {
    let model = e.contenders.get(usize::from(contender)).map_or("", |c| c.key());
    let mut h = Html::raw("<p><a href=\"/experiments/");
    h.push_display(e.id).push_raw("?page=");
    h.push_display((position - 1) / cases_per_page(e) + 1).push_raw("\">← the matrix</a></p><h1>Case ");
    h.push_display(position).push_raw(", contender ");
    contender_label(&mut h, contender, model);
    h.push_raw("</h1>");
    if results.is_empty() {
        h.push_raw("<p>No result yet.</p>");
    }
    for r in results {
        let verdict = if r.passed {
            "passed"
        } else if r.error.is_some() {
            "error"
        } else {
            "failed"
        };
        h.push_raw("<section class=\"result ").push_raw(verdict).push_raw("\"><h2>Repeat ");
        h.push_display(r.key.repeat).push_raw(": <span class=\"verdict\">").push_raw(verdict);
        h.push_raw("</span></h2><p class=\"meta\">Score ").push_display(format_args!("{:.2}", r.score));
        h.push_raw(" · ").push_display(r.latency_ms).push_raw(" ms · ").push_display(r.input_tokens);
        h.push_raw(" + ").push_display(r.output_tokens).push_raw(" tokens · ");
        h.push_display(format_args!("${:.4}", r.cost_usd)).push_raw(" · ").push_display(r.credits);
        h.push_raw(" credits · ").push_display(r.attempts).push_raw(" attempts");
        if !r.tags.is_empty() {
            h.push_raw(" · tags ").push_text(&r.tags.join(", "));
        }
        h.push_raw("</p>");
        if let Some(err) = &r.error {
            h.push_raw("<p class=\"error\">").push_text(err).push_raw("</p>");
        }
        if let Some(answer) = &r.answer {
            h.push_raw("<h3>Answer</h3><pre class=\"prompt\">").push_text(answer).push_raw("</pre>");
        }
        if r.outcomes.is_empty() {
            h.push_raw("<p>No assertions.</p>");
        } else {
            h.push_raw(
                "<table class=\"outcomes\"><thead><tr><th>Assertion</th><th>From</th><th>Verdict</th>\
<th>Why</th></tr></thead><tbody>",
            );
            for o in &r.outcomes {
                h.push_raw(if o.passed { "<tr class=\"pass\"><td>" } else { "<tr class=\"fail\"><td>" });
                h.push_text(&o.kind).push_raw("</td><td>").push_text(&o.from).push_raw("</td><td>");
                h.push_raw(if o.passed { "passed" } else { "failed" }).push_raw("</td><td>");
                h.push_text(&o.reason).push_raw("</td></tr>");
            }
            h.push_raw("</tbody></table>");
        }
        h.push_raw("</section>");
    }
    h
}

/// `GET /experiments/{id}/cells/{position}/{contender}`: every repeat of
/// one cell.
pub(crate) async fn cell_page(
    AxumState(state): AxumState<State>,
    Path((id, position, contender)): Path<(String, String, String)>,
    headers: HeaderMap,
) -> Response {
    let path = format!("/experiments/{id}/cells/{position}/{contender}");
    let viewer = match signed_in(&state, &headers, &path).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let v = match view_of(&state, &viewer, &id).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let e = &v.experiment;
    let (Ok(position), Ok(contender)) = (position.parse::<u32>(), contender.parse::<u16>()) else {
        return html::not_found(Some(&viewer.header()));
    };
    if position == 0 || position > e.case_count || usize::from(contender) >= e.contenders.len() {
        return html::not_found(Some(&viewer.header()));
    }
    let filter = ResultFilter {
        positions: Some((position, position)),
        contender: Some(contender),
        ..ResultFilter::default()
    };
    let page = PageRequest::new(Some(i64::from(MAX_REPEATS)), None);
    let got = match page {
        Ok(page) => state.services().experiments.results(&viewer.principal, e.id, &filter, page).await,
        Err(err) => Err(err),
    };
    match got {
        Ok((_, results)) => {
            let body = cell_view(e, position, contender, &results.items);
            html::page(StatusCode::OK, "Experiment cell", Some(&viewer.header()), &body)
        }
        Err(err) => failed(&viewer, &err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lf_eval::experiment::Contender;

    fn experiment(cases: u32, contenders: usize, repeats: u8) -> Experiment {
        Experiment {
            id: ExperimentId::new(),
            owner: lf_core::LenserId::new(),
            visibility: lf_eval::dataset::Visibility::Private,
            dataset: lf_eval::dataset::DatasetId::new(),
            dataset_version: 1,
            case_count: cases,
            contenders: vec![Contender::model("m"); contenders],
            assertions: Vec::new(),
            repeats,
            concurrency: 1,
            budget_credits: None,
            status: lf_eval::experiment::ExperimentStatus::Running,
            created_at: lf_core::Timestamp::from_micros(0),
            updated_at: lf_core::Timestamp::from_micros(0),
            created_by: lf_core::LenserId::new(),
            agent: None,
            judge: None,
        }
    }

    #[test]
    fn a_ten_thousand_cell_experiment_is_paged() {
        let e = experiment(1000, 10, 1);
        assert_eq!(e.cell_count(), 10_000);
        assert_eq!(cases_per_page(&e), 50);
        assert_eq!(page_positions(&e, 1), Some((1, 50)));
        assert_eq!(page_positions(&e, 20), Some((951, 1000)));
        assert_eq!(page_positions(&e, 21), None);
        assert_eq!(page_positions(&e, 0), None);
        let big = experiment(7, 10, 10);
        assert_eq!((cases_per_page(&big), page_positions(&big, 2)), (5, Some((6, 7))));
    }

    #[test]
    fn heat_runs_from_red_to_green() {
        assert_eq!(
            (heat(0.0), heat(0.46), heat(1.0), heat(7.0)),
            ("h0".into(), "h5".into(), "h10".into(), "h10".into())
        );
    }
}
