//! Results as pictures, for clients that show images:
//! `lenserfight://battles/{id}/chart.svg` (each contender's votes, and its
//! place and score once the battle is closed) and
//! `lenserfight://experiments/{id}/chart.svg` (each contender's pass rate
//! with its 95% interval and mean score). Read through the same service
//! calls as `get_battle` and `get_experiment`, so a chart is readable
//! exactly when its battle or experiment is. Names are escaped
//! ([`Html::text`]); no PNG (it would take a rasterizer crate).

use lf_battle::BattleView;
use lf_core::{BattleId, LfResult, Principal};
use lf_eval::experiment::{ExperimentId, ExperimentView};

use crate::catalog::services::Services;
use crate::markup::Html;
use crate::mcp::documents::SCHEME;

pub(crate) const MIME: &str = "image/svg+xml";

/// The URI templates of the charts: `(uri, name, description, mime)`.
pub(crate) const TEMPLATES: [(&str, &str, &str, &str); 2] = [
    (
        "lenserfight://battles/{battle_id}/chart.svg",
        "battle_chart",
        "A battle's votes per contender, and places and scores once closed, as an SVG chart.",
        MIME,
    ),
    (
        "lenserfight://experiments/{experiment_id}/chart.svg",
        "experiment_chart",
        "An experiment's pass rate per contender with its 95% interval, as an SVG chart.",
        MIME,
    ),
];

/// One chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chart {
    Battle(BattleId),
    Experiment(ExperimentId),
}

impl Chart {
    pub(crate) fn from_uri(uri: &str) -> Option<Chart> {
        let (kind, rest) = uri.strip_prefix(SCHEME)?.split_once('/')?;
        let id = rest.strip_suffix("/chart.svg")?;
        match kind {
            "battles" => BattleId::parse("uri", id).ok().map(Chart::Battle),
            "experiments" => ExperimentId::parse("uri", id).ok().map(Chart::Experiment),
            _ => None,
        }
    }
}

/// The chart as `p` may read it: NOT_FOUND as for its battle or experiment.
pub(crate) async fn read(services: &Services, p: &Principal, chart: Chart) -> LfResult<String> {
    Ok(match chart {
        Chart::Battle(id) => battle_svg(&services.battle.view(p, id).await?),
        Chart::Experiment(id) => experiment_svg(&services.experiments.get(p, id).await?),
    })
}

const WIDTH: f64 = 560.0;
/// Where the bars start and how long a full one is.
const BAR_X: f64 = 200.0;
const BAR_W: f64 = 240.0;
const ROW: f64 = 28.0;
const TOP: f64 = 40.0;

/// Text of at most `max` bytes: escaped, without the control characters
/// XML refuses.
fn text(s: &str, max: usize) -> Html {
    let clean: String = s.chars().filter(|c| !c.is_control()).collect();
    Html::text(&lf_core::clip(&clean, max))
}

/// A label, clipped to fit left of the bars.
fn label(s: &str) -> Html {
    text(s, 28)
}

/// The frame of a chart of `rows` rows titled `title`; `body` draws them.
fn frame(title: &str, rows: usize, body: &Html) -> String {
    let height = TOP + ROW * rows.max(1) as f64 + 16.0;
    let mut h = Html::raw("<svg xmlns=\"http://www.w3.org/2000/svg\" ");
    h.push_display(format_args!("width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\""))
        .push_raw(" role=\"img\" font-family=\"sans-serif\" font-size=\"12\"><title>")
        .push(&text(title, 80))
        .push_raw("</title><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>")
        .push_raw("<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">")
        .push(&text(title, 80))
        .push_raw("</text>");
    if rows == 0 {
        h.push_display(format_args!("<text x=\"8\" y=\"{}\" fill=\"#666\">Nothing yet</text>", TOP + 16.0));
    }
    h.push(body).push_raw("</svg>\n");
    h.into_string()
}

/// Row `i`: its label, a bar of `share` (0 to 1) and `note` after it.
fn bar(h: &mut Html, i: usize, name: &str, share: f64, note: &str) {
    let y = TOP + ROW * i as f64;
    let w = (share.clamp(0.0, 1.0) * BAR_W).round();
    h.push_display(format_args!("<text x=\"8\" y=\"{}\">", y + 14.0))
        .push(&label(name))
        .push_raw("</text>")
        .push_display(format_args!(
            "<rect x=\"{BAR_X}\" y=\"{}\" width=\"{BAR_W}\" height=\"18\" fill=\"#eee\"/>\
<rect x=\"{BAR_X}\" y=\"{}\" width=\"{w}\" height=\"18\" fill=\"#3b6fd8\"/>",
            y + 1.0,
            y + 1.0
        ))
        .push_display(format_args!("<text x=\"{}\" y=\"{}\" fill=\"#333\">", BAR_X + BAR_W + 6.0, y + 14.0))
        .push(&text(note, 40))
        .push_raw("</text>");
}

/// A battle: each contender's share of the votes, with its place and
/// score once closed.
fn battle_svg(view: &BattleView) -> String {
    let s = &view.sheet;
    let total = s.votes.total.max(1);
    let mut body = Html::default();
    for (i, c) in s.contenders.iter().enumerate() {
        let votes = s.votes.per_contender.iter().find(|v| v.contender_id == c.id).map_or(0, |v| v.votes);
        let mut note = format!("{votes} vote{}", if votes == 1 { "" } else { "s" });
        if let Some(st) = s.standings.iter().find(|st| st.contender_id == c.id) {
            note = format!("#{} {note}", st.position);
            if let Some(score) = st.score {
                note.push_str(&format!(", {score}"));
            }
        }
        let name = format!("{}: {}", c.slot, c.display_name);
        bar(&mut body, i, &name, f64::from(votes) / f64::from(total), &note);
    }
    frame(s.battle.title.as_str(), s.contenders.len(), &body)
}

/// An experiment: each contender's pass rate, its 95% interval as a
/// whisker over the bar.
fn experiment_svg(view: &ExperimentView) -> String {
    let mut body = Html::default();
    for (i, c) in view.contenders.iter().enumerate() {
        let note = format!("{:.0}% of {} (score {:.2})", c.pass_rate * 100.0, c.tally.cells, c.mean_score);
        bar(&mut body, i, c.contender.key(), c.pass_rate, &note);
        if c.tally.cells > 0 {
            let y = TOP + ROW * i as f64 + 10.0;
            let (lo, hi) = (BAR_X + c.interval.0 * BAR_W, BAR_X + c.interval.1 * BAR_W);
            body.push_display(format_args!(
                "<path d=\"M{lo:.1} {y0}V{y1}M{lo:.1} {y}H{hi:.1}M{hi:.1} {y0}V{y1}\" stroke=\"#111\" fill=\"none\"/>",
                y0 = y - 4.0,
                y1 = y + 4.0,
            ));
        }
    }
    let e = &view.experiment;
    let title = format!(
        "Experiment {}: {}, {} of {} cells",
        short(&e.id.to_string()),
        e.status.as_str(),
        view.done,
        e.cell_count()
    );
    frame(&title, view.contenders.len(), &body)
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_a_battle_or_an_experiment() {
        let b = BattleId::new();
        let e = ExperimentId::new();
        assert_eq!(Chart::from_uri(&format!("lenserfight://battles/{b}/chart.svg")), Some(Chart::Battle(b)));
        assert_eq!(
            Chart::from_uri(&format!("lenserfight://experiments/{e}/chart.svg")),
            Some(Chart::Experiment(e))
        );
        for bad in [
            format!("lenserfight://battles/{b}"),
            format!("lenserfight://battles/{b}/chart.png"),
            format!("lenserfight://lenses/{b}/chart.svg"),
            format!("lenserfight://battles/{b}/x/chart.svg"),
        ] {
            assert_eq!(Chart::from_uri(&bad), None, "{bad}");
        }
    }

    #[test]
    fn labels_are_escaped_and_clean() {
        assert_eq!(label("<script>\u{1}&").as_str(), "&lt;script&gt;&amp;");
        let mut h = Html::default();
        bar(&mut h, 0, "A: \"x\"", 0.5, "1 vote");
        assert!(
            h.as_str().contains("A: &quot;x&quot;") && h.as_str().contains("width=\"120\""),
            "{}",
            h.as_str()
        );
    }
}
