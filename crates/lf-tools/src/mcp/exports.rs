//! An experiment's results as files: `lenserfight://experiments/{id}/results.jsonl`
//! (one cell a line, as `list_experiment_results` gives it, with the
//! contender's name) and `results.csv` (the same columns, RFC 4180
//! quoting). Read through the experiment service with the caller's
//! principal, so whoever reads the experiment reads its export and
//! anyone else gets NOT_FOUND; written a window of whole cases (at most
//! [`EXPORT_PAGE`] results) at a time, never holding the cells as
//! records, and refused past
//! [`MAX_EXPORT_BYTES`] (a whole export is one MCP message).

use lf_core::{LfError, LfResult, PageRequest, Principal};
use lf_eval::experiment::{CellResult, Experiment, ExperimentId, ResultFilter};
use serde_json::{Map, Value};

use crate::catalog::services::Services;
use crate::groups::eval::experiment_shapes::CellOut;
use crate::mcp::documents::SCHEME;

/// Results read from the store at a time.
const EXPORT_PAGE: u32 = 500;

/// The largest export: past it, the results are read a page at a time
/// with `list_experiment_results`.
pub(crate) const MAX_EXPORT_BYTES: usize = 32 << 20;

/// The CSV columns, in order.
pub(crate) const CSV_COLUMNS: [&str; 15] = [
    "position",
    "contender",
    "model",
    "repeat",
    "tags",
    "passed",
    "score",
    "answer",
    "error",
    "assertions",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "latency_ms",
    "attempts",
];

/// The format of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Jsonl,
    Csv,
}

impl Format {
    fn file(self) -> &'static str {
        match self {
            Format::Jsonl => "results.jsonl",
            Format::Csv => "results.csv",
        }
    }

    pub(crate) fn mime(self) -> &'static str {
        match self {
            Format::Jsonl => "application/jsonl",
            Format::Csv => "text/csv",
        }
    }
}

/// One experiment's results in one format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Export {
    pub experiment: ExperimentId,
    pub format: Format,
}

impl Export {
    /// The export a URI names, exactly as [`Export::uri`] writes it.
    pub(crate) fn from_uri(uri: &str) -> Option<Self> {
        let rest = uri.strip_prefix(SCHEME)?.strip_prefix("experiments/")?;
        let (id, file) = rest.split_once('/')?;
        let format = [Format::Jsonl, Format::Csv].into_iter().find(|f| f.file() == file)?;
        let experiment = ExperimentId::parse("uri", id).ok()?;
        Some(Self { experiment, format })
    }

    #[cfg(test)]
    pub(crate) fn uri(self) -> String {
        format!("{SCHEME}experiments/{}/{}", self.experiment, self.format.file())
    }
}

/// The URI templates of the exports: `(uri, name, description, mime)`.
pub(crate) const TEMPLATES: [(&str, &str, &str, &str); 2] = [
    (
        "lenserfight://experiments/{experiment_id}/results.jsonl",
        "experiment_results_jsonl",
        "An experiment's results, one cell a line as list_experiment_results gives it, with the contender's name.",
        "application/jsonl",
    ),
    (
        "lenserfight://experiments/{experiment_id}/results.csv",
        "experiment_results_csv",
        "An experiment's results as CSV, one cell a row.",
        "text/csv",
    ),
];

/// The export as `p` may read it: NOT_FOUND when the experiment does not
/// exist or is out of `p`'s reach, alike.
///
/// Read a window of whole cases at a time (as many as one page of
/// [`EXPORT_PAGE`] cells holds: a case has at most 100 cells), never by
/// offset: a running experiment writing cells meanwhile adds them to
/// windows not yet read (or, in one already read, leaves them out), and
/// never moves a cell already written into or out of the pages, so no row
/// comes twice or goes missing.
pub(crate) async fn read(services: &Services, p: &Principal, export: Export) -> LfResult<String> {
    let mut out = String::new();
    if export.format == Format::Csv {
        out.push_str(&CSV_COLUMNS.join(","));
        out.push_str("\r\n");
    }
    let page = PageRequest::within(Some(i64::from(EXPORT_PAGE)), Some(0), EXPORT_PAGE, EXPORT_PAGE)?;
    // One case until the experiment (how many cells a case has) is known.
    let (mut first, mut window, mut cases) = (1u32, 1u32, 1u32);
    while first <= cases {
        let filter = ResultFilter { positions: Some((first, first + window - 1)), ..ResultFilter::default() };
        let (experiment, results) = services.experiments.results(p, export.experiment, &filter, page).await?;
        if results.has_more() {
            return Err(LfError::internal("a window of an experiment's cases is over one page"));
        }
        for r in results.items {
            match export.format {
                Format::Jsonl => {
                    out.push_str(&Value::Object(row(&experiment, r)).to_string());
                    out.push('\n');
                }
                Format::Csv => csv_row(&mut out, &experiment, r),
            }
        }
        if out.len() > MAX_EXPORT_BYTES {
            return Err(LfError::invalid_argument(format!(
                "This experiment's results are over {} MiB as {}: read them a page at a time with list_experiment_results.",
                MAX_EXPORT_BYTES >> 20,
                export.format.file()
            ))
            .with_field("uri"));
        }
        first += window;
        cases = experiment.case_count;
        let per_case = (experiment.contenders.len() as u32 * u32::from(experiment.repeats)).max(1);
        window = (EXPORT_PAGE / per_case).max(1);
    }
    Ok(out)
}

/// The contender's name of a cell.
fn model(experiment: &Experiment, contender: u16) -> String {
    experiment.contenders.get(usize::from(contender)).map(|c| c.key().to_owned()).unwrap_or_default()
}

/// One cell as `list_experiment_results` gives it, `model` after `contender`.
fn row(experiment: &Experiment, r: CellResult) -> Map<String, Value> {
    let name = model(experiment, r.key.contender);
    let Ok(Value::Object(cell)) = serde_json::to_value(CellOut::of(r)) else { return Map::new() };
    let mut row = Map::with_capacity(cell.len() + 1);
    for (k, v) in cell {
        let after_contender = k == "contender";
        row.insert(k, v);
        if after_contender {
            row.insert("model".to_owned(), Value::from(name.as_str()));
        }
    }
    row
}

/// One cell as a CSV row of [`CSV_COLUMNS`], ended by CRLF.
fn csv_row(out: &mut String, experiment: &Experiment, r: CellResult) {
    let model = model(experiment, r.key.contender);
    let c = CellOut::of(r);
    let fields: [String; 15] = [
        c.position.to_string(),
        c.contender.to_string(),
        model,
        c.repeat.to_string(),
        c.tags.join(";"),
        c.passed.to_string(),
        c.score.to_string(),
        c.answer.unwrap_or_default(),
        c.error.unwrap_or_default(),
        c.assertions.to_string(),
        c.tokens[0].to_string(),
        c.tokens[1].to_string(),
        c.cost_usd.to_string(),
        c.latency_ms.to_string(),
        c.attempts.to_string(),
    ];
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        csv_field(out, f);
    }
    out.push_str("\r\n");
}

/// `field` as RFC 4180 writes it: in quotes, its quotes doubled, when it
/// holds a quote, a comma or a line break (or starts or ends with a space,
/// which some readers trim); as it is otherwise.
fn csv_field(out: &mut String, field: &str) {
    let quoted = field.contains(['"', ',', '\n', '\r'])
        || field.starts_with(char::is_whitespace)
        || field.ends_with(char::is_whitespace);
    if quoted {
        out.push('"');
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(s: &str) -> String {
        let mut out = String::new();
        csv_field(&mut out, s);
        out
    }

    #[test]
    fn csv_fields_are_quoted_when_they_must_be() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field(""), "");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(field("cr\r"), "\"cr\r\"");
        assert_eq!(field(" padded"), "\" padded\"");
    }

    #[test]
    fn uris_round_trip_and_refuse_the_rest() {
        let id = ExperimentId::new();
        for format in [Format::Jsonl, Format::Csv] {
            let e = Export { experiment: id, format };
            assert_eq!(Export::from_uri(&e.uri()), Some(e));
        }
        assert_eq!(
            Export { experiment: id, format: Format::Csv }.uri(),
            format!("lenserfight://experiments/{id}/results.csv")
        );
        for bad in [
            format!("lenserfight://experiments/{id}"),
            format!("lenserfight://experiments/{id}/results.json"),
            format!("lenserfight://experiments/{id}/results.csv?x=1"),
            format!("lenserfight://experiments/{id}x/results.csv"),
            format!("lenserfight://battles/{id}/results.csv"),
            "lenserfight://experiments//results.csv".to_owned(),
        ] {
            assert_eq!(Export::from_uri(&bad), None, "{bad}");
        }
    }
}
