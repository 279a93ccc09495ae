//! Cases read from what a caller gives: a list of JSON objects, JSONL text
//! (one case a line) or CSV text (a header, then one case a record). Every
//! bad case is reported by its place (`cases[3]`, `line 7`), up to
//! [`MAX_REPORTED`] of them, and then none is kept.

use lf_core::{DetailValue, LfError, LfResult};
use serde_json::Value;

use super::model::{Case, JsonObject, MAX_CASES_PER_CALL};

/// Most bad cases an error lists (it counts them all).
pub const MAX_REPORTED: usize = 20;

/// The CSV columns a case reads by name; every other column is a lens
/// parameter (an `inputs.` prefix is dropped).
const CSV_FIELDS: [&str; 5] = ["prompt", "expected", "tags", "assertions", "metadata"];

/// Where cases come from.
#[derive(Clone, Debug)]
pub enum CaseSource {
    /// JSON objects, one a case (places are `cases[i]`, from 0).
    Inline(Vec<Value>),
    /// One JSON object a line; blank lines are skipped (places are lines, from 1).
    Jsonl(String),
    /// A header row, then one case a record: `prompt`, `expected` (text),
    /// `tags` (separated by `;`), `assertions` and `metadata` (JSON), and
    /// any other column a lens parameter (places are lines, from 1).
    Csv(String),
}

impl CaseSource {
    /// The argument the cases came in, as errors name it.
    pub fn field(&self) -> &'static str {
        match self {
            Self::Inline(_) => "cases",
            Self::Jsonl(_) => "jsonl",
            Self::Csv(_) => "csv",
        }
    }
}

/// A CSV record: the line it starts on, and its fields.
type Record = (usize, Vec<String>);

/// A place and what is wrong there.
struct Problem {
    place: String,
    problem: String,
}

/// The cases of `source`, all checked: INVALID_ARGUMENT on the source's
/// field listing each bad case by its place (`details.problems`), or when
/// there are none or more than [`MAX_CASES_PER_CALL`].
pub fn read_cases(source: CaseSource) -> LfResult<Vec<Case>> {
    let field = source.field();
    let read: Vec<(String, Result<Value, String>)> = match source {
        CaseSource::Inline(items) => {
            too_many(field, items.len(), || format!("cases[{MAX_CASES_PER_CALL}]"))?;
            items.into_iter().enumerate().map(|(i, v)| (format!("cases[{i}]"), Ok(v))).collect()
        }
        CaseSource::Jsonl(text) => {
            let lines: Vec<(usize, &str)> = text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| (i + 1, l))
                .collect();
            too_many(field, lines.len(), || format!("line {}", lines[MAX_CASES_PER_CALL].0))?;
            lines
                .into_iter()
                .map(|(n, l)| {
                    let v = serde_json::from_str::<Value>(l).map_err(|e| format!("not JSON ({e})"));
                    (format!("line {n}"), v)
                })
                .collect()
        }
        CaseSource::Csv(text) => csv_cases(field, &text)?,
    };
    if read.is_empty() {
        return Err(
            LfError::invalid_argument(format!("{field} holds no case: give at least one.")).with_field(field)
        );
    }
    let mut cases = Vec::with_capacity(read.len());
    let mut problems = Vec::new();
    let mut bad = 0usize;
    for (place, v) in read {
        match v.and_then(Case::from_json) {
            Ok(c) => cases.push(c),
            Err(problem) => {
                bad += 1;
                if problems.len() < MAX_REPORTED {
                    problems.push(Problem { place, problem });
                }
            }
        }
    }
    if bad > 0 {
        return Err(rejected(field, bad, problems));
    }
    Ok(cases)
}

fn too_many(field: &str, n: usize, first_beyond: impl FnOnce() -> String) -> LfResult<()> {
    if n > MAX_CASES_PER_CALL {
        let place = first_beyond();
        return Err(LfError::invalid_argument(format!(
            "{field} holds {n} cases; a call takes at most {MAX_CASES_PER_CALL} (the first beyond is {place}). Nothing was saved: split them, then add the rest with add_dataset_cases."
        ))
        .with_field(field)
        .with_detail("place", DetailValue::Str(place)));
    }
    Ok(())
}

fn rejected(field: &str, bad: usize, problems: Vec<Problem>) -> LfError {
    let first = format!("{}: {}", problems[0].place, problems[0].problem);
    let more = if bad > 1 { format!(" (and {} more: see details.problems)", bad - 1) } else { String::new() };
    let list = problems
        .into_iter()
        .map(|p| {
            DetailValue::Map(vec![
                ("place".to_owned(), DetailValue::Str(p.place)),
                ("problem".to_owned(), DetailValue::Str(p.problem)),
            ])
        })
        .collect();
    LfError::invalid_argument(format!(
        "{field}: {first}{more}. Nothing was saved: fix these cases and send them all again."
    ))
    .with_field(field)
    .with_detail("bad_cases", DetailValue::Int(bad as i64))
    .with_detail("problems", DetailValue::List(list))
}

/// The records of a CSV text as cases in JSON, each with its line.
fn csv_cases(field: &str, text: &str) -> LfResult<Vec<(String, Result<Value, String>)>> {
    let mut records = csv_records(text).map_err(|(line, problem)| {
        rejected(field, 1, vec![Problem { place: format!("line {line}"), problem }])
    })?;
    if records.is_empty() {
        return Ok(Vec::new());
    }
    let (_, header) = records.remove(0);
    let header: Vec<String> = header.iter().map(|h| h.trim().to_owned()).collect();
    for (i, h) in header.iter().enumerate() {
        if h.is_empty() || header[..i].contains(h) {
            let problem =
                format!("column {} of the header is empty or repeated ({})", i + 1, LfError::excerpt(h));
            return Err(rejected(field, 1, vec![Problem { place: "line 1".into(), problem }]));
        }
    }
    too_many(field, records.len(), || format!("line {}", records[MAX_CASES_PER_CALL].0))?;
    Ok(records
        .into_iter()
        .map(|(line, cells)| {
            let v = if cells.len() == header.len() {
                csv_case(&header, cells)
            } else {
                Err(format!("has {} fields; the header has {}", cells.len(), header.len()))
            };
            (format!("line {line}"), v)
        })
        .collect())
}

/// One CSV record as a case's JSON object.
fn csv_case(header: &[String], cells: Vec<String>) -> Result<Value, String> {
    let mut case = JsonObject::new();
    let mut inputs = JsonObject::new();
    for (h, cell) in header.iter().zip(cells) {
        if cell.is_empty() {
            continue;
        }
        let json = |what: &str| {
            serde_json::from_str::<Value>(&cell)
                .map_err(|e| format!("the {h} column must be {what} in JSON ({e})"))
        };
        let v = match h.as_str() {
            "prompt" | "expected" => Value::String(cell.clone()),
            "tags" => {
                cell.split(';').filter(|t| !t.trim().is_empty()).map(|t| Value::String(t.into())).collect()
            }
            "assertions" => json("a list")?,
            "metadata" => json("an object")?,
            _ => {
                inputs.insert(h.strip_prefix("inputs.").unwrap_or(h).to_owned(), Value::String(cell));
                continue;
            }
        };
        debug_assert!(CSV_FIELDS.contains(&h.as_str()));
        case.insert(h.clone(), v);
    }
    if !inputs.is_empty() {
        case.insert("inputs".into(), Value::Object(inputs));
    }
    Ok(Value::Object(case))
}

/// The records of an RFC 4180 text, each with the line it starts on:
/// fields split by commas, quoted with `"` (a quote doubled inside), lines
/// ended by LF or CRLF; blank lines are skipped. The error names the line
/// of a quote left open or a quote inside an unquoted field.
fn csv_records(text: &str) -> Result<Vec<Record>, (usize, String)> {
    let mut records = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while chars.peek().is_some() {
        let start = line;
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut was_quoted = false;
        loop {
            let Some(c) = chars.next() else {
                if quoted {
                    return Err((start, "a quoted field is not closed".to_owned()));
                }
                break;
            };
            if quoted {
                match c {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    '"' => quoted = false,
                    '\n' => {
                        line += 1;
                        field.push('\n');
                    }
                    c => field.push(c),
                }
                continue;
            }
            match c {
                '"' if field.is_empty() && !was_quoted => {
                    quoted = true;
                    was_quoted = true;
                }
                '"' => {
                    return Err((
                        line,
                        "a quote inside an unquoted field (quote the whole field)".to_owned(),
                    ));
                }
                ',' => {
                    fields.push(std::mem::take(&mut field));
                    was_quoted = false;
                }
                '\r' if chars.peek() == Some(&'\n') => {}
                '\n' => {
                    line += 1;
                    break;
                }
                c => field.push(c),
            }
        }
        fields.push(field);
        if !(fields.len() == 1 && fields[0].trim().is_empty() && !was_quoted) {
            records.push((start, fields));
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dataset::CaseInput;

    fn problems(e: &LfError) -> Vec<String> {
        let Some((_, DetailValue::List(items))) = e.details().iter().find(|(k, _)| k == "problems") else {
            return Vec::new();
        };
        items
            .iter()
            .map(|i| match i {
                DetailValue::Map(m) => match &m[0].1 {
                    DetailValue::Str(s) => s.clone(),
                    _ => String::new(),
                },
                _ => String::new(),
            })
            .collect()
    }

    #[test]
    fn jsonl_reports_each_bad_line() {
        let mut text = String::new();
        for i in 1..=9 {
            text.push_str(&if i == 7 {
                "{\"prompt\": oops}\n".to_owned()
            } else {
                format!("{{\"prompt\": \"q{i}\"}}\n")
            });
            if i == 3 {
                text.push('\n');
            }
        }
        let e = read_cases(CaseSource::Jsonl(text)).unwrap_err();
        assert_eq!(problems(&e), ["line 8"], "line 7 of the cases is line 8 of the text, after a blank one");
        assert!(e.message().starts_with("jsonl: line 8: not JSON"), "{}", e.message());
    }

    #[test]
    fn csv_reads_quotes_inputs_and_tags() {
        let text = "topic,inputs.tone,expected,tags\r\n\"tides, and moons\",dry,\"say \"\"moon\"\"\",a;b\n\nwind,,\"two\nlines\",\n";
        let cases = read_cases(CaseSource::Csv(text.into())).unwrap();
        assert_eq!(cases.len(), 2);
        let CaseInput::Inputs(i) = &cases[0].input else { panic!("inputs") };
        assert_eq!(i.get("topic"), Some(&json!("tides, and moons")));
        assert_eq!(i.get("tone"), Some(&json!("dry")));
        assert_eq!(cases[0].expected, Some(json!("say \"moon\"")));
        assert_eq!(cases[0].tags, ["a", "b"]);
        assert_eq!(cases[1].expected, Some(json!("two\nlines")));
        let e = read_cases(CaseSource::Csv("prompt,expected\nhi,there\n,x\nok,\"open\n".into())).unwrap_err();
        assert_eq!(problems(&e), ["line 4"]);
        let e = read_cases(CaseSource::Csv("prompt,expected\nhi\n,x\n".into())).unwrap_err();
        assert_eq!(problems(&e), ["line 2", "line 3"]);
    }

    #[test]
    fn too_many_cases_name_the_first_beyond() {
        let items = vec![json!({"prompt": "x"}); MAX_CASES_PER_CALL + 1];
        let e = read_cases(CaseSource::Inline(items)).unwrap_err();
        assert!(e.message().contains("cases[10000]"), "{}", e.message());
        assert!(read_cases(CaseSource::Inline(Vec::new())).is_err());
    }
}
