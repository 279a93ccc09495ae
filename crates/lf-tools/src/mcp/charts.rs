//! Results as pictures, for clients that show images:
//! `lenserfight://battles/{id}/chart.svg` (each contender's votes, and its
//! place and score once the battle is closed) and
//! `lenserfight://experiments/{id}/chart.svg` (each contender's pass rate
//! with its 95% interval and mean score), and the same charts as
//! `chart.png` for hosts that show PNG only. Read through the same
//! service calls as `get_battle` and `get_experiment`, so a chart is
//! readable exactly when its battle or experiment is.
//!
//! One layout ([`Picture`]: rectangles and text at whole pixels, in the
//! [`Colour`]s of one palette) is drawn either as SVG (names escaped,
//! [`Html::text`]) or as pixels: with the bitmap font of [`font`] and
//! encoded by [`png`], both in-house (no image crate).

mod font;
mod png;

use lf_battle::BattleView;
use lf_core::{BattleId, LfResult, Principal};
use lf_eval::experiment::{ExperimentId, ExperimentView};

use crate::catalog::services::Services;
use crate::markup::Html;
use crate::mcp::documents::SCHEME;

/// The URI templates of the charts: `(uri, name, description, mime)`.
pub(crate) const TEMPLATES: [(&str, &str, &str, &str); 4] = [
    ("lenserfight://battles/{battle_id}/chart.svg", "battle_chart", BATTLE, Format::Svg.mime()),
    (
        "lenserfight://experiments/{experiment_id}/chart.svg",
        "experiment_chart",
        EXPERIMENT,
        Format::Svg.mime(),
    ),
    ("lenserfight://battles/{battle_id}/chart.png", "battle_chart_png", AS_PNG, Format::Png.mime()),
    (
        "lenserfight://experiments/{experiment_id}/chart.png",
        "experiment_chart_png",
        AS_PNG,
        Format::Png.mime(),
    ),
];
const BATTLE: &str = "A battle's votes per contender, and places and scores once closed, as an SVG chart.";
const EXPERIMENT: &str = "An experiment's pass rate per contender with its 95% interval, as an SVG chart.";
const AS_PNG: &str = "The same chart as the .svg one, as a PNG image (for hosts that show PNG only).";

/// Whose results a chart draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Subject {
    Battle(BattleId),
    Experiment(ExperimentId),
}

/// How a chart is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Svg,
    Png,
}

impl Format {
    pub(crate) const fn mime(self) -> &'static str {
        match self {
            Format::Svg => "image/svg+xml",
            Format::Png => "image/png",
        }
    }
}

/// One chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chart {
    pub(crate) subject: Subject,
    pub(crate) format: Format,
}

impl Chart {
    pub(crate) fn from_uri(uri: &str) -> Option<Chart> {
        let (kind, rest) = uri.strip_prefix(SCHEME)?.split_once('/')?;
        let (id, format) = match rest.strip_suffix("/chart.svg") {
            Some(id) => (id, Format::Svg),
            None => (rest.strip_suffix("/chart.png")?, Format::Png),
        };
        let subject = match kind {
            "battles" => Subject::Battle(BattleId::parse("uri", id).ok()?),
            "experiments" => Subject::Experiment(ExperimentId::parse("uri", id).ok()?),
            _ => return None,
        };
        Some(Chart { subject, format })
    }
}

/// A chart drawn: SVG's text or PNG's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Drawn {
    Text(String),
    Bytes(Vec<u8>),
}

/// The chart as `p` may read it: NOT_FOUND as for its battle or experiment.
pub(crate) async fn read(services: &Services, p: &Principal, chart: Chart) -> LfResult<Drawn> {
    let picture = match chart.subject {
        Subject::Battle(id) => battle(&services.battle.view(p, id).await?),
        Subject::Experiment(id) => experiment(&services.experiments.get(p, id).await?),
    };
    Ok(match chart.format {
        Format::Svg => Drawn::Text(picture.svg()),
        Format::Png => Drawn::Bytes(picture.png()),
    })
}

/// A chart's width, fixed.
const WIDTH: u32 = 640;
/// Where the bars start and how long a full one is.
const BAR_X: u32 = 200;
const BAR_W: u32 = 240;
const ROW: u32 = 28;
const TOP: u32 = 40;

/// The charts' colours: the PNG's palette, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Colour {
    Paper,
    Track,
    Bar,
    Ink,
    Note,
    Faint,
}

impl Colour {
    const ALL: [Colour; 6] =
        [Colour::Paper, Colour::Track, Colour::Bar, Colour::Ink, Colour::Note, Colour::Faint];

    const fn rgb(self) -> [u8; 3] {
        match self {
            Colour::Paper => [0xff, 0xff, 0xff],
            Colour::Track => [0xee, 0xee, 0xee],
            Colour::Bar => [0x3b, 0x6f, 0xd8],
            Colour::Ink => [0x11, 0x11, 0x11],
            Colour::Note => [0x33, 0x33, 0x33],
            Colour::Faint => [0x66, 0x66, 0x66],
        }
    }

    fn hex(self) -> String {
        let [r, g, b] = self.rgb();
        format!("#{r:02x}{g:02x}{b:02x}")
    }
}

/// What a chart draws, in order.
#[derive(Clone, Debug, PartialEq)]
enum Mark {
    Rect {
        x: u32,
        y: u32,
        w: u32,
        h: u32,
        colour: Colour,
    },
    /// Text from `(x, y)` on its baseline: clipped, no control characters.
    Text {
        x: u32,
        y: u32,
        text: String,
        colour: Colour,
        bold: bool,
    },
}

/// A chart's layout, drawn as SVG or PNG alike.
#[derive(Clone, Debug, PartialEq)]
struct Picture {
    width: u32,
    height: u32,
    title: String,
    marks: Vec<Mark>,
}

/// One bar of a chart: its label, its share (0 to 1), the note after it
/// and the interval drawn over it, if any.
struct Row {
    name: String,
    share: f64,
    note: String,
    interval: Option<(f64, f64)>,
}

/// At most `max` characters of `s` (then `…`), without control characters.
fn fit(s: &str, max: usize) -> String {
    let clean: String = s.chars().filter(|c| !c.is_control()).collect();
    lf_core::clip(&clean, max).into_owned()
}

/// A share of the bar's length, in whole pixels.
fn along(share: f64) -> u32 {
    (share.clamp(0.0, 1.0) * f64::from(BAR_W)).round() as u32
}

/// The layout of a chart titled `title` with `rows`. A title, a label
/// and a note are clipped to 80, 28 and 30 characters (then `…`), which
/// fit their places in the PNG's font (6 pixels a character, 7 in bold).
fn layout(title: &str, rows: &[Row]) -> Picture {
    let height = TOP + ROW * rows.len().max(1) as u32 + 16;
    let title = fit(title, 80);
    let text = |x, y, text: String, colour| Mark::Text { x, y, text, colour, bold: false };
    let mut marks = vec![
        Mark::Rect { x: 0, y: 0, w: WIDTH, h: height, colour: Colour::Paper },
        Mark::Text { x: 8, y: 20, text: title.clone(), colour: Colour::Ink, bold: true },
    ];
    if rows.is_empty() {
        marks.push(text(8, TOP + 16, "Nothing yet".to_owned(), Colour::Faint));
    }
    for (i, row) in rows.iter().enumerate() {
        let y = TOP + ROW * i as u32;
        marks.push(text(8, y + 14, fit(&row.name, 28), Colour::Ink));
        marks.push(Mark::Rect { x: BAR_X, y: y + 1, w: BAR_W, h: 18, colour: Colour::Track });
        let w = along(row.share);
        if w > 0 {
            marks.push(Mark::Rect { x: BAR_X, y: y + 1, w, h: 18, colour: Colour::Bar });
        }
        marks.push(text(BAR_X + BAR_W + 6, y + 14, fit(&row.note, 30), Colour::Note));
        if let Some((lo, hi)) = row.interval {
            // A whisker: a line from `lo` to `hi` with a tick at each end.
            let (lo, hi, mid) = (BAR_X + along(lo), BAR_X + along(hi), y + 10);
            let line = |x, y, w, h| Mark::Rect { x, y, w, h, colour: Colour::Ink };
            marks.extend([
                line(lo, mid, hi.max(lo) - lo + 1, 1),
                line(lo, mid - 4, 1, 9),
                line(hi, mid - 4, 1, 9),
            ]);
        }
    }
    Picture { width: WIDTH, height, title, marks }
}

impl Picture {
    fn svg(&self) -> String {
        let (w, h) = (self.width, self.height);
        let mut svg = Html::raw("<svg xmlns=\"http://www.w3.org/2000/svg\" ");
        svg.push_display(format_args!("width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\""))
            .push_raw(" role=\"img\" font-family=\"sans-serif\" font-size=\"12\"><title>")
            .push_text(&self.title)
            .push_raw("</title>");
        for mark in &self.marks {
            match mark {
                Mark::Rect { x, y, w, h, colour } => svg.push_display(format_args!(
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{}\"/>",
                    colour.hex()
                )),
                Mark::Text { x, y, text, colour, bold } => svg
                    .push_display(format_args!("<text x=\"{x}\" y=\"{y}\" fill=\"{}\"", colour.hex()))
                    .push_raw(if *bold { " font-size=\"14\" font-weight=\"bold\">" } else { ">" })
                    .push_text(text)
                    .push_raw("</text>"),
            };
        }
        svg.push_raw("</svg>\n");
        svg.into_string()
    }

    fn png(&self) -> Vec<u8> {
        let (width, height) = (self.width as usize, self.height as usize);
        let mut pixels = vec![0u8; width * height];
        let mut dot = |x: u32, y: u32, colour: Colour| {
            if (x as usize) < width && (y as usize) < height {
                pixels[y as usize * width + x as usize] = colour as u8;
            }
        };
        for mark in &self.marks {
            match mark {
                Mark::Rect { x, y, w, h, colour } => {
                    for py in *y..y + h {
                        for px in *x..x + w {
                            dot(px, py, *colour);
                        }
                    }
                }
                Mark::Text { x, y, text, colour, bold } => {
                    // Bold is each glyph twice, a pixel apart, a pixel wider.
                    let advance = font::ADVANCE + u32::from(*bold);
                    for (i, c) in text.chars().enumerate() {
                        let left = x + advance * i as u32;
                        for gy in 0..font::HEIGHT {
                            for gx in 0..font::WIDTH {
                                if font::ink(c, gx, gy) {
                                    let py = (y + gy).saturating_sub(font::ASCENT);
                                    dot(left + gx, py, *colour);
                                    if *bold {
                                        dot(left + gx + 1, py, *colour);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        png::encode(self.width, self.height, &Colour::ALL.map(Colour::rgb), &pixels)
    }
}

/// A battle: each contender's share of the votes, with its place and
/// score once closed.
fn battle(view: &BattleView) -> Picture {
    let s = &view.sheet;
    let total = s.votes.total.max(1);
    let rows: Vec<Row> = s
        .contenders
        .iter()
        .map(|c| {
            let votes = s.votes.per_contender.iter().find(|v| v.contender_id == c.id).map_or(0, |v| v.votes);
            let mut note = format!("{votes} vote{}", if votes == 1 { "" } else { "s" });
            if let Some(st) = s.standings.iter().find(|st| st.contender_id == c.id) {
                note = format!("#{} {note}", st.position);
                if let Some(score) = st.score {
                    note.push_str(&format!(", {score}"));
                }
            }
            let name = format!("{}: {}", c.slot, c.display_name);
            Row { name, share: f64::from(votes) / f64::from(total), note, interval: None }
        })
        .collect();
    layout(s.battle.title.as_str(), &rows)
}

/// An experiment: each contender's pass rate, its 95% interval as a
/// whisker over the bar.
fn experiment(view: &ExperimentView) -> Picture {
    let rows: Vec<Row> = view
        .contenders
        .iter()
        .map(|c| Row {
            name: c.contender.key().to_owned(),
            share: c.pass_rate,
            note: format!("{:.0}% of {} (score {:.2})", c.pass_rate * 100.0, c.tally.cells, c.mean_score),
            interval: (c.tally.cells > 0).then_some(c.interval),
        })
        .collect();
    let e = &view.experiment;
    let title = format!(
        "Experiment {}: {}, {} of {} cells",
        short(&e.id.to_string()),
        e.status.as_str(),
        view.done,
        e.cell_count()
    );
    layout(&title, &rows)
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_a_battle_or_an_experiment_and_a_format() {
        let b = BattleId::new();
        let e = ExperimentId::new();
        let chart = |subject, format| Some(Chart { subject, format });
        assert_eq!(
            Chart::from_uri(&format!("lenserfight://battles/{b}/chart.svg")),
            chart(Subject::Battle(b), Format::Svg)
        );
        assert_eq!(
            Chart::from_uri(&format!("lenserfight://experiments/{e}/chart.png")),
            chart(Subject::Experiment(e), Format::Png)
        );
        for bad in [
            format!("lenserfight://battles/{b}"),
            format!("lenserfight://battles/{b}/chart.gif"),
            format!("lenserfight://lenses/{b}/chart.svg"),
            format!("lenserfight://battles/{b}/x/chart.png"),
        ] {
            assert_eq!(Chart::from_uri(&bad), None, "{bad}");
        }
    }

    fn rows(names: &[&str]) -> Vec<Row> {
        let row = |(i, n): (usize, &&str)| Row {
            name: (*n).to_owned(),
            share: i as f64 / 4.0,
            note: format!("{i} votes"),
            interval: Some((0.25, 0.75)),
        };
        names.iter().enumerate().map(row).collect()
    }

    #[test]
    fn labels_are_clipped_escaped_and_clean() {
        let long = "x".repeat(100);
        let p = layout("<b>", &rows(&["A: \"x\"\u{1}&", &long]));
        let svg = p.svg();
        assert!(
            svg.contains(">A: &quot;x&quot;&amp;</text>") && svg.contains("<title>&lt;b&gt;</title>"),
            "{svg}"
        );
        assert!(svg.contains(&format!(">{}…</text>", "x".repeat(28))), "{svg}");
        assert!(svg.contains("width=\"60\" height=\"18\" fill=\"#3b6fd8\""), "a quarter of 240: {svg}");
    }

    /// The colour of every pixel of `picture`'s PNG, decoded by the
    /// encoder's own test inflate.
    fn pixels(picture: &Picture) -> Vec<Vec<u8>> {
        let png = picture.png();
        let (w, h) = (picture.width as usize, picture.height as usize);
        let raw = png::tests::inflate(&png::tests::idat(&png));
        assert_eq!(raw.len(), h * (w + 1));
        raw.chunks(w + 1).map(|r| r[1..].to_vec()).collect()
    }

    #[test]
    fn the_png_draws_the_layout_of_the_svg() {
        let p = layout("Rivers", &rows(&["A: Nile", "B: Amazon", "C: 漢字"]));
        let img = pixels(&p);
        for i in 0..3u32 {
            // The bar's top line: `share` of 240 pixels in the bar's colour, the rest its track's.
            let top = &img[(TOP + ROW * i + 1) as usize][BAR_X as usize..(BAR_X + BAR_W) as usize];
            let bar = top.iter().filter(|c| **c == Colour::Bar as u8).count();
            assert_eq!(bar, along(f64::from(i) / 4.0) as usize);
            assert!(top[bar..].iter().all(|c| *c == Colour::Track as u8));
            // The whisker's line across its middle, in ink from 25% to 75%.
            let mid = &img[(TOP + ROW * i + 10) as usize];
            let ink: Vec<usize> = (0..WIDTH as usize)
                .filter(|x| mid[*x] == Colour::Ink as u8 && *x >= BAR_X as usize)
                .collect();
            assert_eq!((ink[0], *ink.last().unwrap()), ((BAR_X + 60) as usize, (BAR_X + 180) as usize));
        }
        // Text is ink left of the bars and notes right of them.
        let label = &img[(TOP + 14 - 4) as usize][..BAR_X as usize];
        assert!(label.contains(&(Colour::Ink as u8)));
        let note = &img[(TOP + 14 - 4) as usize][(BAR_X + BAR_W) as usize..];
        assert!(note.contains(&(Colour::Note as u8)));
        assert!(p.png().len() < 10_000, "{} bytes", p.png().len());
    }

    #[test]
    fn ten_long_contenders_stay_small_and_within_the_width() {
        let names: Vec<String> = (0..10).map(|i| format!("{i}: {}", "Wide name ".repeat(20))).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let p = layout(&"Title ".repeat(40), &rows(&names));
        for mark in &p.marks {
            if let Mark::Text { x, text, bold, .. } = mark {
                let advance = font::ADVANCE + u32::from(*bold);
                assert!(x + advance * text.chars().count() as u32 <= WIDTH, "{text}");
            }
        }
        let png = p.png();
        assert!(png.len() < 20_000, "{} bytes (9,708 when written)", png.len());
        assert_eq!(p.height, TOP + ROW * 10 + 16);
    }
}
