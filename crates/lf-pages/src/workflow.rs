//! `/workflows/{id}/runs/{run_id}`: a run's graph drawn as SVG (the steps
//! of the version it runs, in layers from its triggers along its
//! connections, each coloured by its status with its time) and its log,
//! read through [`lf_workflow::run::RunService::log`] as
//! `get_workflow_run_status` and `get_workflow_run_logs` read it, in the
//! order the latter gives ([`lf_tools::groups::workflow::entries`]), secret-
//! named fields redacted as there. A run the viewer may not read, or of
//! another workflow, is 404.

use std::collections::HashMap;

use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use http::{HeaderMap, StatusCode};
use lf_core::{ErrorCode, Timestamp, WorkflowId};
use lf_tools::groups::workflow::{Entry, entries};
use lf_workflow::WorkflowVersion;
use lf_workflow::engine::NodeStatus;
use lf_workflow::run::{RunId, RunLog};
use serde_json::Value;

use crate::State;
use crate::battle::{failed, signed_in};
use crate::html::{self, Html};

/// Each step's layer (its longest path of connections from a step with
/// none into it) and place in its layer, by index of `v.nodes`; a step on a
/// cycle (a graph the validator would refuse) stays in layer 0.
pub fn layers(v: &WorkflowVersion) -> Vec<(usize, usize)> {
    let index: HashMap<_, _> = v.nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let n = v.nodes.len();
    let mut into = vec![0usize; n];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in &v.edges {
        if let (Some(&a), Some(&b)) = (index.get(&e.from), index.get(&e.to)) {
            out[a].push(b);
            into[b] += 1;
        }
    }
    let mut layer = vec![0usize; n];
    let mut ready: Vec<usize> = (0..n).filter(|&i| into[i] == 0).collect();
    while let Some(a) = ready.pop() {
        for &b in &out[a] {
            layer[b] = layer[b].max(layer[a] + 1);
            into[b] -= 1;
            if into[b] == 0 {
                ready.push(b);
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (layer[i], v.nodes[i].ordinal, i));
    let mut place = vec![(0, 0); n];
    let mut count: HashMap<usize, usize> = HashMap::new();
    for i in order {
        let k = count.entry(layer[i]).or_default();
        place[i] = (layer[i], *k);
        *k += 1;
    }
    place
}

/// A step's status over its entries (each loop item apart): the one that
/// says most, from failed down to pending.
fn status_of(entries: &[&Entry<'_>]) -> NodeStatus {
    use NodeStatus::*;
    let rank = |s: NodeStatus| match s {
        Failed => 7,
        Running => 6,
        Retrying => 5,
        Cancelled => 4,
        Pending => 3,
        Completed => 2,
        Skipped => 1,
    };
    let statuses: Vec<NodeStatus> = entries.iter().map(|e| e.status()).collect();
    let worst = statuses.iter().copied().max_by_key(|s| rank(*s)).unwrap_or(Pending);
    // A loop partly done is running, not pending.
    if worst == Pending && statuses.contains(&Completed) { Running } else { worst }
}

fn duration(from: Option<Timestamp>, to: Option<Timestamp>) -> Option<String> {
    let (from, to) = (from?, to?);
    let ms = (to.as_micros() - from.as_micros()).max(0) / 1000;
    Some(if ms < 1000 { format!("{ms} ms") } else { format!("{:.1} s", ms as f64 / 1000.0) })
}

/// A step's time over its entries: from the first start to the last end.
fn time_of(entries: &[&Entry<'_>]) -> Option<String> {
    let runs = entries.iter().filter_map(|e| e.result);
    let start = runs.clone().filter_map(|r| r.started_at).min();
    let end = runs.filter_map(|r| r.finished_at).max();
    duration(start, end)
}

/// The name a box can hold.
fn clipped(s: &str, chars: usize) -> String {
    if s.chars().count() <= chars {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(chars.saturating_sub(1)).collect();
    out.push('…');
    out
}

const BOX_W: usize = 180;
const BOX_H: usize = 50;
const GAP_X: usize = 60;
const GAP_Y: usize = 20;

/// The run's graph as SVG.
pub fn graph_svg(log: &RunLog, all: &[Entry<'_>]) -> Html {
    let v = &log.version;
    let place = layers(v);
    let columns = place.iter().map(|p| p.0 + 1).max().unwrap_or(0);
    let rows = place.iter().map(|p| p.1 + 1).max().unwrap_or(0);
    let (width, height) = (columns * (BOX_W + GAP_X) + GAP_X / 2, rows * (BOX_H + GAP_Y) + GAP_Y);
    let at = |i: usize| {
        let (l, k) = place[i];
        (GAP_X / 4 + l * (BOX_W + GAP_X), GAP_Y / 2 + k * (BOX_H + GAP_Y))
    };
    let index: HashMap<_, _> = v.nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let mut h = Html::raw("<svg class=\"graph\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\" width=\"");
    h.push_display(width).push_raw("\" height=\"").push_display(height).push_raw("\" viewBox=\"0 0 ");
    h.push_display(width).push_raw(" ").push_display(height);
    h.push_raw(
        "\"><title>The run's steps and their connections</title><defs><marker id=\"arrow\" \
viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\">\
<path d=\"M 0 0 L 10 5 L 0 10 z\"></path></marker></defs>",
    );
    for e in &v.edges {
        let (Some(&a), Some(&b)) = (index.get(&e.from), index.get(&e.to)) else { continue };
        let ((ax, ay), (bx, by)) = (at(a), at(b));
        let (x1, y1, x2, y2) = (ax + BOX_W, ay + BOX_H / 2, bx, by + BOX_H / 2);
        let mid = (x1 + x2) / 2;
        h.push_display(format_args!(
            "<path class=\"edge\" d=\"M {x1} {y1} C {mid} {y1}, {mid} {y2}, {x2} {y2}\" marker-end=\"url(#arrow)\"><title>"
        ));
        h.push_text(&format!("{} → {}", e.output_key.as_str(), e.input_parameter.as_str()));
        h.push_raw("</title></path>");
    }
    for (i, node) in v.nodes.iter().enumerate() {
        let mine: Vec<&Entry<'_>> = all.iter().filter(|e| e.node.id == node.id).collect();
        let status = status_of(&mine);
        let (x, y) = at(i);
        h.push_raw("<g class=\"step st-").push_raw(status.as_str()).push_raw("\" data-step=\"");
        h.push_text(node.key.as_str()).push_raw("\"><title>");
        h.push_text(&format!("{} ({}): {}", node.key.as_str(), node.node_type.as_str(), status.as_str()));
        h.push_display(format_args!(
            "</title><rect x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"6\"></rect>\
<text x=\"{}\" y=\"{}\" class=\"name\">",
            x + 8,
            y + 20
        ));
        h.push_text(&clipped(node.name.as_str(), 24)).push_raw("</text>");
        h.push_display(format_args!("<text x=\"{}\" y=\"{}\" class=\"status\">", x + 8, y + 39));
        h.push_text(status.as_str());
        if let Some(t) = time_of(&mine) {
            h.push_raw(" · ").push_text(&t);
        }
        if mine.len() > 1 {
            h.push_raw(" · ").push_display(mine.len()).push_raw(" items");
        }
        h.push_raw("</text></g>");
    }
    h.push_raw("</svg>");
    h
}

/// `v` as indented JSON with secret-named fields redacted, escaped.
fn json_block(label: &str, v: &Value) -> Html {
    let mut v = v.clone();
    lf_workflow::secrets::redact_value(&mut v);
    let text = serde_json::to_string_pretty(&v).unwrap_or_default();
    let mut h = Html::raw("<details><summary>");
    h.push_text(label).push_raw("</summary><pre>").push_text(&text).push_raw("</pre></details>");
    h
}

fn time(t: Option<Timestamp>) -> String {
    t.map_or_else(|| "—".to_owned(), |t| t.to_rfc3339())
}

fn logs(all: &[Entry<'_>]) -> Html {
    let mut h = Html::raw(
        "<h2>Log</h2><table class=\"log\"><thead><tr><th>Step</th><th>Type</th><th>Status</th><th>Started</th>\
<th>Took</th><th>Attempts</th><th>Tokens</th><th>Credits</th><th>Details</th></tr></thead><tbody>",
    );
    for e in all {
        let r = e.result;
        let status = e.status();
        h.push_raw("<tr class=\"st-").push_raw(status.as_str()).push_raw("\"><td>");
        h.push_text(e.node.key.as_str());
        if let Some(item) = e.item {
            h.push_raw(" <small>item ").push_display(item).push_raw("</small>");
        }
        h.push_raw("</td><td>").push_text(e.node.node_type.as_str()).push_raw("</td><td>");
        h.push_raw(status.as_str()).push_raw("</td><td>").push_text(&time(r.and_then(|r| r.started_at)));
        h.push_raw("</td><td class=\"n\">");
        h.push_text(
            &duration(r.and_then(|r| r.started_at), r.and_then(|r| r.finished_at)).unwrap_or_default(),
        );
        h.push_raw("</td><td class=\"n\">").push_display(r.map_or(0, |r| r.attempt));
        h.push_raw("</td><td class=\"n\">").push_display(r.map_or(0, |r| r.usage.tokens));
        h.push_raw("</td><td class=\"n\">")
            .push_display(r.map_or(0, |r| r.usage.credits))
            .push_raw("</td><td>");
        if let Some(r) = r {
            if let Some(line) = &r.log {
                h.push_raw("<p class=\"logline\"><span class=\"level\">").push_text(line.level.as_str());
                h.push_raw("</span> ").push_text(&line.message).push_raw("</p>");
            }
            if let Some(f) = &r.error {
                h.push_raw("<p class=\"error\">").push_text(&f.code).push_raw(": ").push_text(&f.message);
                h.push_raw("</p>");
            }
            if let Some(input) = &r.input {
                h.push(&json_block("Input", input));
            }
            if let Some(output) = &r.output {
                h.push(&json_block("Output", output));
            }
        }
        h.push_raw("</td></tr>");
    }
    h.push_raw("</tbody></table>");
    h
}

/// `GET /workflows/{id}/runs/{run_id}`.
pub(crate) async fn run_page(
    AxumState(state): AxumState<State>,
    Path((id, run)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let viewer = match signed_in(&state, &headers, &format!("/workflows/{id}/runs/{run}")).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let who = viewer.header();
    let (Ok(id), Ok(run)) = (WorkflowId::parse("workflow_id", &id), RunId::parse("run_id", &run)) else {
        return html::not_found(Some(&who));
    };
    let services = state.services();
    let log = match services.runs.log(&viewer.principal, run).await {
        Ok(log) if log.run.workflow_id == id => log,
        Ok(_) => return html::not_found(Some(&who)),
        Err(e) if e.code() == ErrorCode::NotFound => return html::not_found(Some(&who)),
        Err(e) => return failed(&viewer, &e),
    };
    // Its title when the viewer reads the workflow too (a run's starter may
    // read the run of a workflow they no longer read).
    let title = match services.workflow.store().get_workflow(viewer.principal.reach(), id).await {
        Ok(w) => Some(w.title.as_str().to_owned()),
        Err(e) if e.code() == ErrorCode::NotFound => None,
        Err(e) => return failed(&viewer, &e),
    };
    let all = entries(&log);
    let r = &log.run;
    let s = &r.state;
    let usage = s.usage();
    let mut body = Html::raw("<h1>");
    match &title {
        Some(t) => body.push_text(t),
        None => body.push_raw("Workflow"),
    };
    body.push_raw(" · run</h1><p class=\"meta\">Status: <strong class=\"st-");
    body.push_raw(s.status.as_str())
        .push_raw("\">")
        .push_raw(s.status.as_str())
        .push_raw("</strong> · version ");
    body.push_display(r.version).push_raw(" · started ").push_text(&time(s.started_at));
    if let Some(took) = duration(s.started_at, s.finished_at) {
        body.push_raw(" · took ").push_text(&took);
    }
    body.push_raw(" · ").push_display(usage.credits).push_raw(" credits · ").push_display(usage.model_calls);
    body.push_raw(" model calls · ").push_display(usage.tokens).push_raw(" tokens · started as ");
    body.push_raw(r.origin.as_str()).push_raw("</p>");
    if let Some(e) = &s.error {
        body.push_raw("<p class=\"error\" role=\"alert\">")
            .push_text(&e.code)
            .push_raw(": ")
            .push_text(&e.message);
        if let Some(step) = &e.node {
            body.push_raw(" (step ").push_text(step).push_raw(")");
        }
        body.push_raw("</p>");
    }
    body.push_raw("<h2>Graph</h2><div class=\"graph\">").push(&graph_svg(&log, &all)).push_raw("</div>");
    body.push(&logs(&all));
    html::page(StatusCode::OK, title.as_deref().unwrap_or("Workflow run"), Some(&who), &body)
}
